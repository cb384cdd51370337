// Method-of-lines hydro on patch groups, written once for every backend: the per-cell and
// per-face operations (TESSERA_HD function objects) and the stage sequence of each time
// integrator. A loop backend runs each operation over a range of cells: loop_cpu.hpp
// (nested loops over one group, on one CPU thread) or loop_cuda.cuh (a kernel launch over
// a batch of groups, one thread per cell). Both execute the same arithmetic in the same
// order, so compiled with --fmad=false the GPU reproduces the CPU bit for bit.
//
// Scheme (hydro.integrator; ghost widths in group_layout.hpp):
// - rk2: SSP-RK2 (Wang, Abel & Kaehler 2009, eq. 8: u1 = u0 + dt L(u0),
//   u2 = (u0 + u1 + dt L(u1)) / 2) in one pass over a (16+2*4)^3 box (16+2*6 with the
//   mc_ep slopes, which read three cells beside a face): stage 1 updates the interior plus
//   two (three) ghost layers so that stage 2 has the stencil it needs. The fluxes on
//   the patch faces (outer faces and sibling interfaces) are averaged over the two stages.
// - vl2: the van Leer predictor-corrector of Stone & Gardiner 2009 (New Astronomy 14,
//   139; Athena's "vl2") over a (16+2*3)^3 box (16+2*4 with mc_ep): a donor-cell (PCM)
//   predictor u^{n+1/2} = u^n - dt/2 div F(PCM states of u^n) on the interior plus two
//   (three) ghost layers,
//   then the corrector u^{n+1} = u^n - dt div F(reconstructed states of u^{n+1/2}) on
//   the interior. The patch-face fluxes are the corrector's, with weight 1.
// Either way the returned face fluxes are the time-integrated flux the update used (what
// coarse-fine flux correction needs).
//
// Passive scalars (conserved rho*s, after the physics' variables) are reconstructed as
// s = rho*s / rho and carried by the mass flux from the upwind side (the method of
// Athena++ and of Plewa & Mueller 1999 without their consistency correction), so a
// uniform s stays uniform and rho*s is conserved exactly as the mass is.
#pragma once

#include <cstddef>

#include "kernels/scheme.hpp"

namespace tessera::kernels {

// Device-copyable pointers of a batch of `count` groups; per group g every array starts
// at g times its per-group size. Box arrays have the integrator's ghost width.
struct BoxArrays {
  const Real* in;        // [nvar][N^3] conserved input
  Real* prim;            // [nvar][N^3] primitives of the current stage
  Real* u1;              // [nvar][N^3] stage-1 (rk2) or half-step (vl2) state
  Real* flux;            // [3][nvar][N^3] face fluxes per direction; face i-1/2 at cell i
  Real* out;             // [nvar][16^3] new interior
  Real* planes;          // [9][nvar][16^2] fluxes on the group's flux planes
  GroupResult* results;  // [count]
  int count;
  int nvar;  // the physics' variables, then passive scalars
};

// How a flux operation treats the group's flux planes: rk2 averages its two stages; the
// vl2 predictor's fluxes do not enter them, the corrector's are stored with weight 1.
enum class PlaneMode { kNone, kFirstHalf, kAddHalf, kStore };

// What the final stage reports of one cell, reduced over the group by the loop backend.
struct CellOutcome {
  FloorResult floor;
  Real speed;  // max signal speed of the new state (0 when unphysical)
};

template <int G>
struct BoxShape {
  static constexpr int kN = box_size(G);
  static constexpr int kN3 = box_cells(G);
  TESSERA_HD static constexpr int index(int i, int j, int k) { return (k * kN + j) * kN + i; }
  TESSERA_HD static constexpr int stride(int dir) {
    return dir == 0 ? 1 : (dir == 1 ? kN : kN * kN);
  }
};

template <class Phys>
TESSERA_HD inline typename Phys::Vars load_vars(const Real* a, int n3, int idx) {
  typename Phys::Vars x;
  for (int v = 0; v < Phys::kNumVars; ++v) x[v] = a[v * n3 + idx];
  return x;
}

template <class Phys>
TESSERA_HD inline void store_vars(Real* a, int n3, int idx, const typename Phys::Vars& x) {
  for (int v = 0; v < Phys::kNumVars; ++v) a[v * n3 + idx] = x[v];
}

// Flux through face idx-1/2 along `dir` (stride = index distance between neighbours).
// Reads Recon::kReach cells on each side of the face, no more: the vl2 predictor runs
// donor cell up to one cell from the edge of the box.
template <class Phys, class Recon, class Riemann>
TESSERA_HD inline typename Phys::Vars face_flux(const Real* w, int n3, int idx, int stride, int dir,
                                                const typename Phys::Params& p) {
  using Vars = typename Phys::Vars;
  const Vars wm1 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx - stride), dir);
  const Vars w0 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx), dir);
  Vars left, right;
  if constexpr (Recon::kReach == 1) {
    face_states<Recon>(wm1, wm1, w0, w0, left, right);  // outer arguments unused
  } else if constexpr (Recon::kReach == 3) {
    const Vars wm3 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx - 3 * stride), dir);
    const Vars wm2 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx - 2 * stride), dir);
    const Vars wp1 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx + stride), dir);
    const Vars wp2 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx + 2 * stride), dir);
    for (int v = 0; v < Phys::kNumVars; ++v) {
      const Real a[6] = {wm3[v], wm2[v], wm1[v], w0[v], wp1[v], wp2[v]};
      Recon::face_values(a, Phys::positive_primitive(v), left[v], right[v]);
    }
  } else {
    const Vars wm2 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx - 2 * stride), dir);
    const Vars wp1 = rotate_to<Phys>(load_vars<Phys>(w, n3, idx + stride), dir);
    face_states<Recon>(wm2, wm1, w0, wp1, left, right);
  }
  if constexpr (Phys::kGlm) Phys::glm_face(left, right, p);  // GLM-MHD: Bn*, psi* first
  return rotate_from<Phys>(Riemann::flux(left, right, p), dir);
}

// u + coef * du: an Euler step with coef = dt/dx (or dt/(2 dx) for the vl2 predictor)
// and du = minus the flux divergence times dx.
template <int N>
TESSERA_HD inline State<N> euler_step(const State<N>& u, Real coef, const State<N>& du) {
  State<N> r;
  for (int v = 0; v < N; ++v) r[v] = u[v] + coef * du[v];
  return r;
}

// Final SSP-RK2 stage (Wang et al. 2009 eq. 8): (u0 + u1 + coef * du(u1)) / 2.
template <int N>
TESSERA_HD inline State<N> rk2_final(const State<N>& u0, const State<N>& u1, Real coef,
                                     const State<N>& du) {
  State<N> r;
  for (int v = 0; v < N; ++v) r[v] = Real(0.5) * (u0[v] + u1[v] + coef * du[v]);
  return r;
}

// Minus the flux divergence (times dx) of variable v at cell c, summed x, y, z.
template <int G>
TESSERA_HD inline Real divergence(const Real* flux_g, int nvar, int v, int c) {
  using B = BoxShape<G>;
  const std::size_t var = std::size_t(nvar) * B::kN3;
  const Real* fx = flux_g + v * B::kN3;
  const Real* fy = fx + var;
  const Real* fz = fy + var;
  Real du = -(fx[c + 1] - fx[c]);
  du = du - (fy[c + B::kN] - fy[c]);
  return du - (fz[c + B::kN * B::kN] - fz[c]);
}

template <class Phys, int G>
TESSERA_HD inline typename Phys::Vars divergence_vars(const Real* flux_g, int nvar, int c) {
  typename Phys::Vars du;
  for (int v = 0; v < Phys::kNumVars; ++v) du[v] = divergence<G>(flux_g, nvar, v, c);
  return du;
}

// Primitives of a conserved state into box cell c of w (scalars as s = rho*s / rho).
template <class Phys, int G>
TESSERA_HD inline void store_primitive(const typename Phys::Vars& u, const Real* u_scalars, Real* w,
                                       int nvar, int c, const typename Phys::Params& p) {
  constexpr int n3 = BoxShape<G>::kN3;
  const typename Phys::Vars x = Phys::cons_to_prim(u, p);
  store_vars<Phys>(w, n3, c, x);
  if (nvar > Phys::kNumVars) {
    const Real inv = Real(1) / x[Phys::kRho];
    for (int v = Phys::kNumVars; v < nvar; ++v) w[v * n3 + c] = u_scalars[v * n3 + c] * inv;
  }
}

// Primitives of the whole input box.
template <class Phys, int G>
struct ToPrimitive {
  static constexpr int kGhost = G;
  const Real* u;
  Real* w;
  int nvar;
  typename Phys::Params prm;
  TESSERA_HD void operator()(int g, int i, int j, int k) const {
    using B = BoxShape<G>;
    const std::size_t off = std::size_t(g) * nvar * B::kN3;
    const int c = B::index(i, j, k);
    store_primitive<Phys, G>(load_vars<Phys>(u + off, B::kN3, c), u + off, w + off, nvar, c, prm);
  }
};

// Fluxes through the low face of a cell along dir; those on the group's flux planes are
// handled as `mode` says.
template <class Phys, class Recon, class Riemann, int G>
struct FaceFlux {
  static constexpr int kGhost = G;
  const Real* w;
  Real* flux;
  Real* planes;
  int nvar;
  typename Phys::Params prm;
  PlaneMode mode;

  TESSERA_HD void operator()(int g, int i, int j, int k, int dir) const {
    using B = BoxShape<G>;
    const int c = B::index(i, j, k), s = B::stride(dir);
    const std::size_t var = std::size_t(nvar) * B::kN3;
    const Real* wg = w + g * var;
    Real* fg = flux + (std::size_t(g) * 3 + dir) * var;
    const typename Phys::Vars f = face_flux<Phys, Recon, Riemann>(wg, B::kN3, c, s, dir, prm);
    store_vars<Phys>(fg, B::kN3, c, f);
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const Real* a = wg + v * B::kN3;
      Real left, right;
      if constexpr (Recon::kReach == 1) {
        Recon::face_values(a[c - s], a[c - s], a[c], a[c], left, right);
      } else if constexpr (Recon::kReach == 3) {
        const Real six[6] = {a[c - 3 * s], a[c - 2 * s], a[c - s], a[c], a[c + s], a[c + 2 * s]};
        Recon::face_values(six, false, left, right);
      } else {
        Recon::face_values(a[c - 2 * s], a[c - s], a[c], a[c + s], left, right);
      }
      const Real mass = f[Phys::kDens];
      fg[v * B::kN3 + c] = mass * (mass >= 0 ? left : right);
    }
    if (mode != PlaneMode::kNone) to_plane(g, i, j, k, dir, fg + c);
  }

  // Adds the face's fluxes (fc[v * N^3]) to the flux plane it lies on, if any.
  TESSERA_HD void to_plane(int g, int i, int j, int k, int dir, const Real* fc) const {
    using B = BoxShape<G>;
    const int pos[3] = {i, j, k};
    const int along = pos[dir] - G;
    const int a = pos[dir == 2 ? 1 : 2] - G, b = pos[dir == 0 ? 1 : 0] - G;
    if (along % kPatchSize != 0 || along < 0 || along > kGroupSize || a < 0 || a >= kGroupSize ||
        b < 0 || b >= kGroupSize)
      return;
    Real* plane = planes + (std::size_t(g) * kNumFluxPlanes + flux_plane(dir, along / kPatchSize)) *
                               nvar * kFaceCells;
    for (int v = 0; v < nvar; ++v) {
      Real& p = plane[v * kFaceCells + a * kGroupSize + b];
      const Real f = fc[v * B::kN3];
      // Planes start from zero: 0 + weight * flux, then += weight * flux.
      if (mode == PlaneMode::kAddHalf)
        p = p + Real(0.5) * f;
      else
        p = Real(0) + (mode == PlaneMode::kFirstHalf ? Real(0.5) * f : f);
    }
  }
};

// First stage on a range: u1 = u0 + coef * du(u0), floored, and its primitives (rk2:
// coef = dt/dx on [2, N-2); vl2 predictor: coef = dt/(2 dx) on [1, N-1)). A state left
// unphysical here is caught after the final stage.
template <class Phys, int G>
struct FirstStage {
  static constexpr int kGhost = G;
  const Real* u0;
  const Real* flux;
  Real* u1;
  Real* w;
  int nvar;
  typename Phys::Params prm;
  Real coef;
  TESSERA_HD void operator()(int g, int i, int j, int k) const {
    using B = BoxShape<G>;
    const std::size_t var = std::size_t(nvar) * B::kN3, off = g * var;
    const int c = B::index(i, j, k);
    const Real* fg = flux + 3 * off;
    typename Phys::Vars u = euler_step(load_vars<Phys>(u0 + off, B::kN3, c), coef,
                                       divergence_vars<Phys, G>(fg, nvar, c));
    Phys::apply_floors(u, prm);
    store_vars<Phys>(u1 + off, B::kN3, c, u);
    for (int v = Phys::kNumVars; v < nvar; ++v)
      u1[off + v * B::kN3 + c] = u0[off + v * B::kN3 + c] + coef * divergence<G>(fg, nvar, v, c);
    store_primitive<Phys, G>(u, u1 + off, w + off, nvar, c, prm);
  }
};

// Final stage on interior cell (i, j, k) of 16^3, with the floors. rk2:
// (u0 + u1 + dt L(u1)) / 2; vl2 corrector: u0 + dt L(u^{n+1/2}).
template <class Phys, int G, bool kVl2>
struct FinalStage {
  static constexpr int kGhost = G;
  const Real* u0;
  const Real* u1;
  const Real* flux;
  Real* out;
  int nvar;
  typename Phys::Params prm;
  Real coef;
  TESSERA_HD CellOutcome operator()(int g, int i, int j, int k) const {
    using B = BoxShape<G>;
    const std::size_t var = std::size_t(nvar) * B::kN3, off = g * var;
    const int c = B::index(i + G, j + G, k + G);
    const int cell = (k * kGroupSize + j) * kGroupSize + i;
    const Real* fg = flux + 3 * off;
    const auto a = load_vars<Phys>(u0 + off, B::kN3, c);
    const auto du = divergence_vars<Phys, G>(fg, nvar, c);
    typename Phys::Vars u;
    if constexpr (kVl2)
      u = euler_step(a, coef, du);
    else
      u = rk2_final(a, load_vars<Phys>(u1 + off, B::kN3, c), coef, du);
    if constexpr (Phys::kGlm) Phys::end_of_step(u, prm);  // parabolic decay of psi
    const FloorResult fr = Phys::apply_floors(u, prm);
    Real* og = out + std::size_t(g) * nvar * kGroupCells;
    store_vars<Phys>(og, kGroupCells, cell, u);
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const std::size_t at = off + v * B::kN3 + c;
      const Real d = divergence<G>(fg, nvar, v, c);
      og[v * kGroupCells + cell] =
          kVl2 ? u0[at] + coef * d : Real(0.5) * (u0[at] + u1[at] + coef * d);
    }
    const Real speed = fr == FloorResult::kUnphysical
                           ? Real(0)
                           : Phys::max_signal_speed(Phys::cons_to_prim(u, prm), prm);
    return {fr, speed};
  }
};

// The stage sequence of each integrator, over any loop backend (loop_cpu.hpp,
// loop_cuda.cuh): box(lo, hi, op) runs op on the cells [lo, hi)^3 of every group's box,
// faces(lo, hi, op) on the low faces of the cells [lo, hi + e_dir) for each direction,
// interior(op, results) on the 16^3 interior cells and reduces their outcomes.
// Stage 1 covers the interior plus R = stencil_reach<Recon> ghost layers, the stencil of
// stage 2's faces; the box has 2 R (group_layout.hpp, ghost_width).
struct IntegratorRk2 {
  template <class Phys, class Recon, class Riemann, class Loop>
  static void advance(const Loop& loop, const BoxArrays& a, const MolParams& m) {
    constexpr int R = stencil_reach(Recon::kReach), G = 2 * R, N = box_size(G);
    const typename Phys::Params& p = params_of<Phys>(m.phys);
    using Flux = FaceFlux<Phys, Recon, Riemann, G>;
    loop.box(0, N, ToPrimitive<Phys, G>{a.in, a.prim, a.nvar, p});
    loop.faces(R, N - R, Flux{a.prim, a.flux, a.planes, a.nvar, p, PlaneMode::kFirstHalf});
    loop.box(R, N - R, FirstStage<Phys, G>{a.in, a.flux, a.u1, a.prim, a.nvar, p, m.dt_over_dx});
    loop.faces(G, G + kGroupSize, Flux{a.prim, a.flux, a.planes, a.nvar, p, PlaneMode::kAddHalf});
    loop.interior(FinalStage<Phys, G, false>{a.in, a.u1, a.flux, a.out, a.nvar, p, m.dt_over_dx},
                  a.results);
  }
};

// The donor-cell predictor covers the interior plus R layers; the box has 1 + R.
struct IntegratorVl2 {
  template <class Phys, class Recon, class Riemann, class Loop>
  static void advance(const Loop& loop, const BoxArrays& a, const MolParams& m) {
    constexpr int G = 1 + stencil_reach(Recon::kReach), N = box_size(G);
    const typename Phys::Params& p = params_of<Phys>(m.phys);
    const Real half = Real(0.5) * m.dt_over_dx;
    loop.box(0, N, ToPrimitive<Phys, G>{a.in, a.prim, a.nvar, p});
    loop.faces(1, N - 1,
               FaceFlux<Phys, ReconPcm, Riemann, G>{a.prim, a.flux, a.planes, a.nvar, p,
                                                    PlaneMode::kNone});
    loop.box(1, N - 1, FirstStage<Phys, G>{a.in, a.flux, a.u1, a.prim, a.nvar, p, half});
    loop.faces(
        G, G + kGroupSize,
        FaceFlux<Phys, Recon, Riemann, G>{a.prim, a.flux, a.planes, a.nvar, p, PlaneMode::kStore});
    loop.interior(FinalStage<Phys, G, true>{a.in, a.u1, a.flux, a.out, a.nvar, p, m.dt_over_dx},
                  a.results);
  }
};

}  // namespace tessera::kernels

namespace tessera::kernels {

// Runs the integrator of a dispatch_scheme choice over a loop backend.
template <class Phys, class Recon, class Riemann, class Integrator, class Loop>
void run_integrator(Types<Phys, Recon, Riemann, Integrator>, const Loop& loop, const BoxArrays& a,
                    const MolParams& m) {
  Integrator::template advance<Phys, Recon, Riemann>(loop, a, m);
}

}  // namespace tessera::kernels
