// A refined level's potential boxes from tables (kernels/potential_gather.hpp): what a
// device-resident level needs to gather its Poisson solves' and kicks' boxes on the GPU,
// and the host evaluation of the same tables, which equals gravity::gather_potential bit
// for bit (tests/unit/test_potential_gather.cpp).
#pragma once

#include <vector>

#include "kernels/potential_gather.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::gravity {

class SelfGravity;
class CorrectionTerms;

// Per group of a refined level (in the order given): its first patch; the mesh's neighbour
// table row (kernels::kGatherBlocks blocks: a same-level patch where >= 0); the parent
// level's patches around its parent and where the domain ends (kernels::kCoarseBlocks,
// kernels::kCoarseClamp, as exec::ProlongTable has them); where the parent's box lies.
// `root_exterior`: the parent level is the root of an isolated solve, whose free-space
// potential bounds the box beyond the domain.
struct PotentialTables {
  int level = 0;
  std::vector<int> first_patch;
  std::vector<int> blocks;
  std::vector<int> coarse;
  std::vector<int> clamp;
  std::vector<kernels::PotentialBoxPlace> place;
  // Per group, bit 2 axis + (low ? 0 : 1): the parent's face beyond which lies a leaf or
  // the domain's boundary (where the potential correction takes the finer level's gradient).
  std::vector<unsigned char> gradient_faces;
  bool root_exterior = false;
  int groups() const { return static_cast<int>(first_patch.size()); }
};

// For `level` >= 1; `groups`: first patches (all of the level's when null); `root`: the
// run's self-gravity (null: no isolated root exterior).
PotentialTables build_potential_tables(const mesh::Mesh& m, int level,
                                       const std::vector<int>* groups = nullptr,
                                       const SelfGravity* root = nullptr);

// The parent's potential box of group g (kernels::kPotentialBoxCells reals) at time
// `weight`, made in the kernels' passes.
void parent_potential_box(const mesh::Mesh& m, const PotentialTables& t, int g, int phi_field,
                          double weight, Real* box, const SelfGravity* root);

// gather_potential (self_gravity.hpp) for group g of the tables, from them.
void gather_potential_tables(const mesh::Mesh& m, const PotentialTables& t, int g, int phi_field,
                             double weight, Real* rho, Real* phi, bool coarse_ghosts,
                             int source_field, const SelfGravity* root);

// add_coarse_change (self_gravity.hpp) for group g of the tables (built without a root:
// the change is not bounded by the root's exterior): the change of the coarser level, in
// its other time level, interpolated to the group's cells (kernels::interpolate_group_cell)
// and added to its potential.
void add_coarse_change_tables(mesh::Mesh& m, const PotentialTables& t, int g, int phi_field);

// fine_terms (self_gravity.hpp) of the parent of group g of the tables (of level + 1), into
// `terms` (CorrectionTerms::kReals doubles; the faces that need no gradient are left as
// they are), from the tables' potential boxes: `mean` the periodic solve's mean density (0
// when isolated), `root` for level 1's exterior.
void fine_terms_tables(const mesh::Mesh& m, const PotentialTables& t, int g, int phi_field,
                       int source_field, double four_pi_g, double mean, const SelfGravity* root,
                       double* terms);

// correction_source (self_gravity.hpp) on every patch of `level`, a covered patch's
// potential box being the parent box of its group in `fine` (the tables of level + 1), with
// the finer level's `terms`; `mean` the periodic solve's mean density (0 when isolated).
void correction_source_tables(mesh::Mesh& m, int level, const PotentialTables& fine,
                              const CorrectionTerms& terms, int phi_field, int source_field,
                              double four_pi_g, double mean, const SelfGravity* root);

}  // namespace tessera::gravity
