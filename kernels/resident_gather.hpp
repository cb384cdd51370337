// Where each cell of a patch group's input box comes from when the patch data stay on the
// GPU (docs/architecture.md, "Data residency"): the same answer as the host's prepare stage
// (src/exec/prepare.cpp) for a level whose ghost zones all come from same-level
// neighbours (periodic images included) and physical boundaries, as a function the gather
// kernel evaluates per cell and the CPU tests evaluate on the host.
#pragma once

#include "kernels/group_layout.hpp"

namespace tessera::kernels {

// A group's neighbourhood: the source patch of each 8^3 block (bx, by, bz) in {-1..2}^3
// around it (the group itself is blocks 0..1), block index (bx+1) + 4 (by+1) + 16 (bz+1);
// -1 for a block beyond a physical boundary (never read: such cells are mapped inside);
// kGatherCoarse (-2) for a block inside the domain without a same-level patch, whose cells
// are prolonged from the coarser level (coarse_fine_gather.hpp).
inline constexpr int kGatherBlocks = 64;

// Physical boundary kinds per group side, 2 bits each at bit 4 dim + 2 side (side 0 low,
// 1 high): 0 none (a neighbour or a periodic image), 1 outflow, 2 reflecting.
inline constexpr int kSideNone = 0, kSideOutflow = 1, kSideReflecting = 2;
TESSERA_HD constexpr int side_kind(int code, int dim, int side) {
  return (code >> (4 * dim + 2 * side)) & 3;
}

struct GatherSource {
  int patch;  // source patch; kGatherCoarse (coarse_fine_gather.hpp): the coarser level;
              // -1: none, a malformed table
  int cell;   // cell within the patch, (z * 8 + y) * 8 + x
  int flip;   // bit d set: the vector components along d change sign (reflecting wall)
  int at[3];  // the cell it maps to, relative to the group's first cell (inside the domain)
};

// Source of box cell `cell` ([n][n][n], n = 16 + 2 ghost) of a group with the
// neighbourhood `blocks` and boundary code `code`. The host fills physical ghosts by
// sweeps along x, then y, then z, each copying from the mirror image (reflecting, with
// the normal component's sign flipped) or the nearest interior cell (outflow) over the
// whole box extent (mesh/boundary.cpp); the sweeps compose dimension by dimension, so
// each coordinate is mapped on its own and the flips accumulate.
TESSERA_HD inline GatherSource gather_source(const int* blocks, int code, int ghost, int cell) {
  const int n = kGroupSize + 2 * ghost;
  int c[3] = {cell % n - ghost, (cell / n) % n - ghost, cell / (n * n) - ghost};
  int flip = 0, block = 0, local = 0;
  const int stride[3] = {1, 4, 16}, cstride[3] = {1, kPatchSize, kPatchSize * kPatchSize};
  for (int d = 0; d < 3; ++d) {
    if (c[d] < 0) {
      const int kind = side_kind(code, d, 0);
      if (kind == kSideOutflow) c[d] = 0;
      if (kind == kSideReflecting) c[d] = -1 - c[d], flip |= 1 << d;
    } else if (c[d] >= kGroupSize) {
      const int kind = side_kind(code, d, 1);
      if (kind == kSideOutflow) c[d] = kGroupSize - 1;
      if (kind == kSideReflecting) c[d] = 2 * kGroupSize - 1 - c[d], flip |= 1 << d;
    }
    // Block -1..2 (c >= -8: ghost widths stay below a patch).
    const int b = (c[d] + kPatchSize) / kPatchSize - 1;
    block += (b + 1) * stride[d];
    local += (c[d] - b * kPatchSize) * cstride[d];
  }
  return {blocks[block], local, flip, {c[0], c[1], c[2]}};
}

}  // namespace tessera::kernels
