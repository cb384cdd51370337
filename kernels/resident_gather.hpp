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
// 1 high): 0 none (a neighbour or a periodic image), 1 outflow, 2 reflecting, 3 defined by
// the problem (mesh::ProblemBoundary; its ghost cells from a table, below).
inline constexpr int kSideNone = 0, kSideOutflow = 1, kSideReflecting = 2, kSideProblem = 3;
TESSERA_HD constexpr int side_kind(int code, int dim, int side) {
  return (code >> (4 * dim + 2 * side)) & 3;
}

struct GatherSource {
  int patch;  // source patch; kGatherCoarse (coarse_fine_gather.hpp): the coarser level;
              // -1: none, a malformed table
  int cell;   // cell within the patch, (z * 8 + y) * 8 + x
  int flip;   // bit d set: the vector components along d change sign (reflecting wall)
  int at[3];  // the cell it maps to, relative to the group's first cell (inside the domain)
  // A problem-defined side's state for the problem's fields (ProblemBoundary::nvar, the
  // first ones; the others come from the source cell): its index in the side tables, or
  // -1; and the flips that apply to it.
  int state = -1;
  int state_flip = 0;
};

// A problem-defined side's ghost cells, evaluated by the host for the batch's time
// (ProblemBoundary::state): per side of a group, an entry per ghost cell of the box's slab
// beyond it, [layer][b][a] (layer 0 next to the domain; a, b the box's coordinates along
// dims d + 1 and d + 2 mod 3, over its whole width): the index of the cell's state
// (>= 0), or one of these.
inline constexpr int kGhostOutflow = -1, kGhostReflecting = -2;
TESSERA_HD constexpr int problem_entry(int ghost, int dim, int layer, const int c[3]) {
  const int n = kGroupSize + 2 * ghost;
  return (layer * n + c[(dim + 2) % 3] + ghost) * n + c[(dim + 1) % 3] + ghost;
}

// Source of box cell `cell` ([n][n][n], n = 16 + 2 ghost) of a group with the
// neighbourhood `blocks` and boundary code `code`. The host fills physical ghosts by
// sweeps along x, then y, then z, each copying from the mirror image (reflecting, with
// the normal component's sign flipped) or the nearest interior cell (outflow) over the
// whole box extent (mesh/boundary.cpp); the sweeps compose dimension by dimension, so
// each coordinate is mapped on its own and the flips accumulate.
//
// Problem-defined sides (`problem`: the group's six side tables, side 2 d + s, null where
// the side is not problem-defined; unread without such sides): the last sweep that wrote a
// cell decides it, so the dimensions are taken from z down. A side's entry says
// reflecting or outflow (mapped as above) or a state: the state is the cell's value for
// the problem's fields (with the flips of the sweeps after it), and the other fields
// continue as from an outflow side, as the host copies the nearest inside cell first.
TESSERA_HD inline GatherSource gather_source(const int* blocks, int code, int ghost, int cell,
                                             const int* const* problem = nullptr) {
  const int n = kGroupSize + 2 * ghost;
  int c[3] = {cell % n - ghost, (cell / n) % n - ghost, cell / (n * n) - ghost};
  int flip = 0, state = -1, state_flip = 0;
  for (int d = 2; d >= 0; --d) {
    const int side = c[d] < 0 ? 0 : c[d] >= kGroupSize ? 1 : -1;
    if (side < 0) continue;
    int kind = side_kind(code, d, side);
    if (kind == kSideProblem) {
      const int layer = side == 0 ? -1 - c[d] : c[d] - kGroupSize;
      const int e = problem[2 * d + side][problem_entry(ghost, d, layer, c)];
      kind = e == kGhostReflecting ? kSideReflecting : kSideOutflow;
      if (e >= 0 && state < 0) state = e, state_flip = flip;
    }
    if (kind == kSideOutflow) c[d] = side == 0 ? 0 : kGroupSize - 1;
    if (kind == kSideReflecting)
      c[d] = side == 0 ? -1 - c[d] : 2 * kGroupSize - 1 - c[d], flip |= 1 << d;
  }
  int block = 0, local = 0;
  const int stride[3] = {1, 4, 16}, cstride[3] = {1, kPatchSize, kPatchSize * kPatchSize};
  for (int d = 0; d < 3; ++d) {
    // Block -1..2 (c >= -8: ghost widths stay below a patch).
    const int b = (c[d] + kPatchSize) / kPatchSize - 1;
    block += (b + 1) * stride[d];
    local += (c[d] - b * kPatchSize) * cstride[d];
  }
  return {blocks[block], local, flip, {c[0], c[1], c[2]}, state, state_flip};
}

}  // namespace tessera::kernels
