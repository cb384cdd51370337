// Shapes of the data a patch-group solver consumes and produces (DESIGN.md §3): the
// (16+2g)^3 input box per variable, the 16^3 interior, and the six outer-face fluxes.
#pragma once

#include "tessera/core/real.hpp"

namespace tessera::kernels {

inline constexpr int kPatchSize = 8;               // cells per patch edge
inline constexpr int kGroupSize = 2 * kPatchSize;  // cells per patch-group edge
inline constexpr int kGroupCells = kGroupSize * kGroupSize * kGroupSize;
inline constexpr int kFaceCells = kGroupSize * kGroupSize;
inline constexpr int kNumFaces = 6;  // face f = 2 * dir + (0 low, 1 high)

// SSP-RK2 in one pass needs the PLM stencil (2 cells) twice.
inline constexpr int kGhostRk2 = 4;

TESSERA_HD constexpr int box_size(int ghost) {
  return kGroupSize + 2 * ghost;
}
TESSERA_HD constexpr int box_cells(int ghost) {
  return box_size(ghost) * box_size(ghost) * box_size(ghost);
}

// Per-group scalars returned with the new interior.
struct GroupResult {
  Real max_speed;  // max over cells and directions of |v_d| + c_s (for the CFL step)
  int floored;     // cells whose density or pressure was raised to the floor
  int bad_cell;    // first cell (z*256 + y*16 + x of the interior) left unphysical, or -1
};

}  // namespace tessera::kernels
