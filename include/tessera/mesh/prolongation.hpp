// Moving data between levels: limited linear prolongation or injection (coarse -> fine, as
// each field's FieldInfo::prolongation says), volume-average restriction (fine -> coarse,
// fields with FieldInfo::restricted), and the time-interpolated gather of coarse data they
// work from (Schive et al. 2010 §2.1: conservative, monotonic interpolation).
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::mesh {

// A cube of cells of one level, copied out of the patches and interpolated in time.
struct CoarseBox {
  std::array<int, 3> lo{};  // first cell, in the level's index space (may lie outside)
  int n = 0;                // edge length in cells
  int nvar = 0;
  std::vector<Real> data;  // [nvar][n][n][n]
  // How each variable is prolonged (gather_box copies it from the mesh's fields); empty:
  // every variable limited linear.
  std::vector<Prolongation> prolongation;
  // The mesh's admissibility check (FieldRegistry::admissible), or null: none.
  const AdmissibleState* admissible = nullptr;

  Prolongation kind(int v) const {
    return prolongation.empty() ? Prolongation::kLimitedLinear : prolongation[v];
  }

  Real& at(int v, int i, int j, int k) { return data[((std::size_t(v) * n + k) * n + j) * n + i]; }
  Real at(int v, int i, int j, int k) const {
    return data[((std::size_t(v) * n + k) * n + j) * n + i];
  }
};

// Gathers cells [lo, lo + n)^3 of `level` at time weight w between the level's previous
// state (w = 0) and its current state (w = 1); a field with one time level gives its
// current state at every weight. Periodic images are wrapped; cells beyond
// a non-periodic boundary take the value of the nearest cell inside (they only serve
// as slope stencils). Throws tessera::Error(kInternal) if a cell inside the domain has
// no patch on `level` (proper nesting violated). With count >= 0 only the fields
// [first_field, first_field + count) are gathered (box variable v is field first_field + v).
void gather_box(const Mesh& mesh, int level, std::array<int, 3> lo, int n, double w, CoarseBox& box,
                int first_field = 0, int count = -1);

// Value of the fine cell with index `fine` (index space of the level below the box's).
// kLimitedLinear: linear interpolation with minmod-limited slopes of the conserved
// variables; the 8 children of a coarse cell average exactly to it, and each child keeps
// at least a quarter of a positive coarse density or energy (3 slopes of at most the cell
// value / 4). kInjection: the coarse cell's value.
Real prolong_cell(const CoarseBox& box, int var, std::array<int, 3> fine);

// Fills the fine cells [lo, hi) (index space of the level below the box's) of the box
// `dst` [nvar][dst_n]^3, whose first cell is fine cell `origin`, with the values of
// prolong_cell, bit for bit; the slopes of each coarse cell are computed once for its
// (up to 8) fine cells. Where the box has an admissibility check (MHD) and one of a coarse
// cell's fine cells fails it, all of that coarse cell's fine cells in the region take the
// coarse values instead (injection: conservative, and admissible when the parent is;
// GAMER reduces its slopes the same way).
void prolong_region(const CoarseBox& box, std::array<int, 3> lo, std::array<int, 3> hi, Real* dst,
                    int dst_n, std::array<int, 3> origin);

// Sets the current state of the family starting at first_child by prolongation from the
// parent level's current state: the data of newly refined patches.
void prolong_family(Mesh& mesh, int first_child, CoarseBox& scratch);

// Replaces the parent's current data of every restricted field by the volume average of
// its 8 children; the other fields keep the parent's values.
void restrict_family(Mesh& mesh, int first_child);

// Largest |parent - average of its children| over every refined cell and restricted
// field, relative to the largest |value| of that field: 0 when restriction is consistent.
// With `include`, only the patches p for which include(p) holds (scale and check; the
// patches of one rank, which hold data on several ranks).
double max_restriction_mismatch(const Mesh& mesh,
                                const std::function<bool(int)>& include = nullptr);

}  // namespace tessera::mesh
