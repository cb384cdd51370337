// Shapes of the data a patch-group solver consumes and produces (docs/architecture.md, "Mesh and
// data layout"): the (16+2g)^3 input box per variable, the 16^3 interior, and the six outer-face
// fluxes.
#pragma once

#include "tessera/core/real.hpp"

namespace tessera::kernels {

inline constexpr int kPatchSize = 8;               // cells per patch edge
inline constexpr int kGroupSize = 2 * kPatchSize;  // cells per patch-group edge
inline constexpr int kGroupCells = kGroupSize * kGroupSize * kGroupSize;
inline constexpr int kFaceCells = kGroupSize * kGroupSize;
inline constexpr int kNumFaces = 6;  // outer faces: f = 2 * dir + (0 low, 1 high)
// Fluxes come back on three planes per direction, at group coordinates 0, 8 and 16: the
// two outer faces and the interface between sibling patches, so that every patch face
// of the group has its flux (flux registers need the faces between a refined patch and
// its unrefined sibling too; as in GAMER). Plane index: 3 * dir + p.
inline constexpr int kPlanesPerDir = 3;
inline constexpr int kNumFluxPlanes = 3 * kPlanesPerDir;
TESSERA_HD constexpr int flux_plane(int dir, int p) {
  return kPlanesPerDir * dir + p;
}
TESSERA_HD constexpr int outer_face_plane(int face) {
  return flux_plane(face / 2, 2 * (face % 2));
}

// A flux register's layout on a patch face normal to `dir` (exec/flux_register.hpp): its
// transverse coordinates (a slower, b faster) are x: (z, y), y: (z, x), z: (y, x), as the
// solver lays out its flux planes. The patch cell beside face (dir, side) at (a, b):
TESSERA_HD constexpr int register_cell(int dir, int side, int a, int b) {
  const int n = side ? kPatchSize - 1 : 0;
  const int x = dir == 0 ? n : b, y = dir == 0 ? b : dir == 1 ? n : a, z = dir == 2 ? n : a;
  return (z * kPatchSize + y) * kPatchSize + x;
}
// The transverse coordinates (a, b) of a position, for faces normal to dir.
TESSERA_HD constexpr void register_transverse(int dir, const int pos[3], int& a, int& b) {
  a = dir == 2 ? pos[1] : pos[2];
  b = dir == 0 ? pos[1] : pos[0];
}

// Time integrators of the patch-group solver (mol_hydro.hpp). Each needs its own number
// of ghost layers around the 16^3 interior, so the input box depends on the choice.
enum class Integrator { kRk2, kVl2 };

// Cells a reconstruction reads on each side of a face, as the ghost widths count it: PLM
// reads 2 (and PCM, which would need 1, gets the same boxes); the mc_ep slopes read 3.
TESSERA_HD constexpr int stencil_reach(int recon_reach) {
  return recon_reach < 2 ? 2 : recon_reach;
}
// SSP-RK2 in one pass needs the reconstruction's stencil twice. VL2 needs it once for
// the corrector, plus the predictor's: 1 cell (donor cell), 3 with PPM (whose predictor
// takes the mc_ep slopes, mol_stages.hpp).
TESSERA_HD constexpr int ghost_width(Integrator integrator, int recon_reach,
                                     int predictor_reach = 1) {
  return integrator == Integrator::kVl2 ? predictor_reach + stencil_reach(recon_reach)
                                        : 2 * stencil_reach(recon_reach);
}
// First-order flux correction's correcting pass (mol_stages.hpp): how far, in cells along
// any axis, a flagged cell outside a group's interior can change the group's update. A
// flagged cell's faces take the first-order flux. vl2 takes it in the corrector alone, so
// only the interior cells that share a face with a flagged cell change (1). rk2 takes it in
// both stages: the first changes the states of the cells beside the flagged one, which the
// second stage's faces read up to the reconstruction's reach (cells read on each side of a
// face, not rounded up as the ghost widths round it) from the interior (reach + 1).
TESSERA_HD constexpr int flag_reach(Integrator integrator, int recon_reach) {
  return integrator == Integrator::kVl2 ? 1 : recon_reach + 1;
}
inline constexpr int kGhostRk2 = ghost_width(Integrator::kRk2, 2);  // 4
inline constexpr int kGhostVl2 = ghost_width(Integrator::kVl2, 2);  // 3
inline constexpr int kMaxGhost = ghost_width(Integrator::kRk2, 3);  // 6: the widest of all

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
  // Iterative solvers (SOR): iterations taken, and 1 when they ran out before converging.
  int iterations;
  int unconverged;
  // First-order flux correction (mol_stages.hpp): cells flagged for it by the detecting pass.
  int flagged;
};

}  // namespace tessera::kernels
