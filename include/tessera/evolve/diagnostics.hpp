// Diagnostics of the magnetic field: the divergence of the cell-centred field by central
// differences (the quantity GLM cleaning keeps small), per leaf patch for plot files and
// reduced over the leaf cells for the log.
#pragma once

#include "tessera/core/real.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/partition.hpp"

namespace tessera::evolve {

// div B = sum_d (B_d(i + e_d) - B_d(i - e_d)) / (2 dx) at every cell of leaf patch p, with
// B_d the fields first_var + d. A neighbour the patch's level lacks is the covering cell of
// the finest coarser level that has it; beyond a non-periodic boundary the cell itself. When
// `relative` is not null it receives |div B| dx / |B|max, |B|max the largest |B| of the
// 7-point stencil (0 where the stencil has no field).
void magnetic_divergence(const mesh::Mesh& mesh, int p, int first_var, Real* div, Real* relative);

struct DivergenceStats {
  double max_relative = 0;   // max over leaf cells of |div B| dx / |B|max
  double mean_relative = 0;  // its volume-weighted mean
};
// Over the leaf patches this rank owns (`part`), reduced over the ranks of `comm`: the same
// bits on any number of ranks (the mean's sums in canonical order).
DivergenceStats divergence_stats(const mesh::Mesh& mesh, int first_var,
                                 parallel::Comm& comm = parallel::serial_comm(),
                                 const parallel::Partition& part = {});

}  // namespace tessera::evolve
