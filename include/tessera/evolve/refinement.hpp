// Where to refine: cell criteria (Löhner's error estimator, relative gradients, a
// density threshold, the problem's own), the flag buffer, derefinement hysteresis and
// proper nesting, turned into the hierarchy the mesh should have (Schive et al. 2010
// §2.1; Löhner 1987 in the form used by FLASH and GAMER).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "kernels/flagging.hpp"
#include "tessera/core/params.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/partition.hpp"
#include "tessera/physics/model.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::evolve {

// Thresholds are per level (the last value serves the levels beyond the list); a refine
// threshold of 0 switches its criterion off on that level.
struct RefinementParams {
  int max_level = 0;
  int flag_buffer = 2;  // cells around a flagged cell that are flagged too
  std::vector<double> lohner_refine{0}, lohner_derefine{0};
  double lohner_filter = 0.01;  // epsilon of the estimator's noise filter
  bool lohner_density = true;
  bool lohner_pressure = true;
  bool lohner_field = false;  // Löhner on |B| (MHD)
  // |curl B| dx / |B| (central differences; MHD)
  std::vector<double> current_refine{0}, current_derefine{0};
  bool field_criteria = false;  // some criterion reads the magnetic field
  // max_d |q(i+1) - q(i-1)| / (2 |q(i)|), q = density and pressure
  std::vector<double> gradient_refine{0}, gradient_derefine{0};
  std::vector<double> density_refine{0}, density_derefine{0};  // density above this
  // Jeans length shorter than jeans_cells cells (0: off): pi Gamma p / (G rho^2) <
  // (jeans_cells h)^2, with jeans_coefficient = pi Gamma / G (Gamma: the adiabatic index,
  // 1 for isothermal gas, so that Gamma p / rho = c_s^2).
  double jeans_cells = 0;
  double jeans_coefficient = 0;

  static double at(const std::vector<double>& v, int level) {
    return v[std::min<std::size_t>(level, v.size() - 1)];
  }
  // Reads [amr]; throws tessera::Error(kInput) for a list of the wrong length or a
  // derefine threshold above its refine threshold.
  static RefinementParams from_params(const Params& params);
};

// Löhner's estimator of variable q at the centre of a 3x3x3 stencil s[k][j][i]: second
// derivatives over first-derivative magnitudes plus a filter on |q|; in [0, 1].
double lohner_estimator(const double s[3][3][3], double filter);
// The same at q[0] of an array with strides (x, y, z).
double lohner_estimator(const double* q, const int stride[3], double filter);
// Whether the estimator sqrt(num / den) (0 where den = 0), from the sums of its numerator
// and denominator, exceeds `threshold`: the same answer as computing it, with the
// division and square root done only where the comparison is within 1e-9 of equality.
bool lohner_exceeds(double num, double den, double threshold);

// Patches marked for refinement, per level: [level] the keys (mark_key) of the patches'
// coordinates on their level, sorted, each once.
using Marks = std::vector<std::vector<std::uint64_t>>;
std::uint64_t mark_key(mesh::PatchCoord pc);  // non-negative coordinates below 2^21
mesh::PatchCoord mark_coord(std::uint64_t key);
void sort_marks(std::vector<std::uint64_t>& keys);  // sorted, each once
// Proper nesting's demand of a refined patch of `level` (key `k`): appends to `out` the
// keys of the parents (level - 1) of its 26 neighbours and itself, those in the domain.
void nesting_parents(const mesh::Mesh& mesh, int level, std::uint64_t k,
                     std::vector<std::uint64_t>& out);
// Every rank's lists, per level, concatenated in rank order onto every rank (a collective).
void gather_marks(Marks& marks, parallel::Comm& comm);

// The patches this rank's families mark (below max_level): refined are the patches with a
// flagged cell within flag_buffer cells, where leaves flag on the refine thresholds and
// refined patches on the (lower) derefine thresholds. On several ranks (`part` and `comm`
// given), each rank flags the families it owns, whose one-cell halo its buffer patches
// must hold; the marks may name buffer patches (the flag buffer spills across families).
// `marks` (one rank): the patches each patch marks, computed elsewhere (a device-resident
// mesh flags on the GPU): [level][8 g + c] for child c of the level's g-th group
// (Mesh::groups order), bits as kernels::flag_marks; levels it lacks are flagged here.
Marks mark_patches(const mesh::Mesh& mesh, const RefinementParams& rp, const physics::Model& model,
                   const Problem& problem, double time, const parallel::Partition* part = nullptr,
                   parallel::Comm* comm = nullptr,
                   const std::vector<std::vector<std::uint32_t>>* marks = nullptr);

// The hierarchy of every rank's marks (gathered when `comm` has several ranks): the
// marked patches refined, then the parents of every refined patch's 26 neighbours refined
// too (proper nesting), level by level downward. Every rank plans the same hierarchy, the
// one a single rank would. Its work follows the whole mesh (every refined patch is listed).
mesh::Hierarchy settle_hierarchy(const mesh::Mesh& mesh, int max_level, Marks marks,
                                 parallel::Comm* comm = nullptr);

// settle_hierarchy(mark_patches(...)): the hierarchy the mesh should have now.
mesh::Hierarchy plan_hierarchy(const mesh::Mesh& mesh, const RefinementParams& rp,
                               const physics::Model& model, const Problem& problem, double time,
                               const parallel::Partition* part = nullptr,
                               parallel::Comm* comm = nullptr,
                               const std::vector<std::vector<std::uint32_t>>* marks = nullptr);

// The same hierarchy as settle_hierarchy, as the change of the mesh's own, computed from
// the changes alone (refinement_change.cpp): each rank hands over the marked leaves, the
// refined patches of its families that it did not mark, and its marks of other ranks'
// refined patches; proper nesting is then settled from the added and the removable
// families. Its work follows the changes and the pieces' boundaries, not the mesh.
// `own`: this rank's marks (mark_patches with the same `part` and `comm`).
mesh::HierarchyChange settle_change(const mesh::Mesh& mesh, int max_level, const Marks& own,
                                    const parallel::Partition* part = nullptr,
                                    parallel::Comm* comm = nullptr);

// settle_change(mark_patches(...)): how the mesh should change now.
mesh::HierarchyChange plan_change(const mesh::Mesh& mesh, const RefinementParams& rp,
                                  const physics::Model& model, const Problem& problem, double time,
                                  const parallel::Partition* part = nullptr,
                                  parallel::Comm* comm = nullptr,
                                  const std::vector<std::vector<std::uint32_t>>* marks = nullptr);

// The criteria of `level` that the device can evaluate (kernels::FlagCriteria), or none
// when a criterion of the run needs the host (the problem's own, Jeans, the magnetic
// field's).
std::optional<kernels::FlagCriteria> device_flag_criteria(const RefinementParams& rp,
                                                          const Problem& problem, int level);

}  // namespace tessera::evolve
