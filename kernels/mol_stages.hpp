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
//   the interior. The patch-face fluxes are the corrector's, with weight 1. With PPM the
//   predictor reconstructs with the mc_ep slopes instead, over a (16+2*6)^3 box: a
//   donor-cell predictor's error is 10-70 times PPM's on smooth waves, and PPM with rk2 is
//   a centred scheme that SSP-RK2 does not keep stable (docs/validation.md, "PPM
//   reconstruction").
// Either way the returned face fluxes are the time-integrated flux the update used (what
// coarse-fine flux correction needs).
//
// First-order flux correction (FOFC; Lemaster & Stone 2009, ApJ 691, 1092, §2; Beckwith &
// Stone 2011, ApJS 193, 6, §3.3; as Athena++ and AthenaK): a step is taken twice where it
// fails. The detecting pass (MolParams::flag_unphysical) leaves a cell that the step makes
// unphysical (non-finite, or density or pressure below its floor) as it came and flags
// it. The correcting pass re-solves every group with a flagged cell within flag_reach of
// its interior (group_layout.hpp; exec/fofc.cpp), with the flags of its box as one more
// input variable (in_vars = nvar + 1, 1 on a flagged cell): every face
// of a flagged cell takes the first-order LLF flux of the step's initial states, in every
// stage (rk2: both stages, so the time-averaged flux is that flux and the flagged cell gets
// the first-order update u0 - dt/dx sum F; vl2: the corrector). A face's flux depends only
// on the flags and the data around it, which every group holding the face has alike, so
// groups agree on shared faces and the update stays conservative. Floors remain the last
// resort.
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
  const Real* in;        // [in_vars][N^3] conserved input (and the flags of FOFC)
  Real* prim;            // [nvar][N^3] primitives of the current stage
  Real* u1;              // [nvar][N^3] stage-1 (rk2) or half-step (vl2) state
  Real* flux;            // [3][nvar][N^3] face fluxes per direction; face i-1/2 at cell i
  Real* out;             // [nvar][16^3] new interior
  Real* planes;          // [9][nvar][16^2] fluxes on the group's flux planes
  GroupResult* results;  // [count]
  int count;
  int nvar;  // the physics' variables, then passive scalars
  // Variables of `in` per group: nvar, or nvar + 1 for the correcting pass of FOFC (the
  // flags, 0 or 1, after the conserved variables). 0 means nvar.
  int in_vars = 0;
  int in_stride() const { return in_vars > 0 ? in_vars : nvar; }
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
    if constexpr (IsCharacteristic<Recon>::value) {
      Recon::template face_states<Phys>(wm3, wm2, wm1, w0, wp1, wp2, p, left, right);
    } else {
      for (int v = 0; v < Phys::kNumVars; ++v) {
        const Real a[6] = {wm3[v], wm2[v], wm1[v], w0[v], wp1[v], wp2[v]};
        Recon::face_values(a, Phys::positive_primitive(v), left[v], right[v]);
      }
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

// Primitives of the whole input box (`in_vars` variables per group in u).
template <class Phys, int G>
struct ToPrimitive {
  static constexpr int kGhost = G;
  const Real* u;
  Real* w;
  int nvar;
  typename Phys::Params prm;
  int in_vars;
  TESSERA_HD void operator()(int g, int i, int j, int k) const {
    using B = BoxShape<G>;
    const std::size_t off = std::size_t(g) * nvar * B::kN3;
    const Real* ug = u + std::size_t(g) * in_vars * B::kN3;
    const int c = B::index(i, j, k);
    store_primitive<Phys, G>(load_vars<Phys>(ug, B::kN3, c), ug, w + off, nvar, c, prm);
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
  // FOFC's correcting pass: the input box (in_vars = nvar + 1 variables per group, the
  // flags last); faces of flagged cells take the first-order flux of its states. Null: no
  // correction (every other pass, and the vl2 predictor).
  const Real* u0 = nullptr;
  int in_vars = 0;

  TESSERA_HD void operator()(int g, int i, int j, int k, int dir) const {
    using B = BoxShape<G>;
    const int c = B::index(i, j, k), s = B::stride(dir);
    const std::size_t var = std::size_t(nvar) * B::kN3;
    const Real* wg = w + g * var;
    Real* fg = flux + (std::size_t(g) * 3 + dir) * var;
    if (u0) {
      const Real* ug = u0 + std::size_t(g) * in_vars * B::kN3;
      const Real* flags = ug + var;
      if (flags[c] != 0 || flags[c - s] != 0) {
        first_order(ug, fg, c, s, dir);
        if (mode != PlaneMode::kNone) to_plane(g, i, j, k, dir, fg + c);
        return;
      }
    }
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

  // The first-order (LLF) flux through face c-1/2 of the conserved states ug (the step's
  // initial ones), converted as ToPrimitive converts them, and the scalars' upwind flux.
  TESSERA_HD void first_order(const Real* ug, Real* fg, int c, int s, int dir) const {
    using B = BoxShape<G>;
    using Vars = typename Phys::Vars;
    const Vars pl = Phys::cons_to_prim(load_vars<Phys>(ug, B::kN3, c - s), prm);
    const Vars pr = Phys::cons_to_prim(load_vars<Phys>(ug, B::kN3, c), prm);
    Vars left = rotate_to<Phys>(pl, dir), right = rotate_to<Phys>(pr, dir);
    if constexpr (Phys::kGlm) Phys::glm_face(left, right, prm);
    const Vars f = rotate_from<Phys>(RiemannLlf<Phys>::flux(left, right, prm), dir);
    store_vars<Phys>(fg, B::kN3, c, f);
    const Real mass = f[Phys::kDens];
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const Real* a = ug + v * B::kN3;
      fg[v * B::kN3 + c] = mass * (mass >= 0 ? a[c - s] * (Real(1) / pl[Phys::kRho])
                                             : a[c] * (Real(1) / pr[Phys::kRho]));
    }
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
// coef = dt/dx on [2, N-2); vl2 predictor: coef = dt/(2 dx) on [1, N-1)). Floored only
// without first-order flux correction (MolParams::floor_first_stage); a state left
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
  int in_vars;  // variables of u0 per group
  bool floors;  // MolParams::floor_first_stage
  TESSERA_HD void operator()(int g, int i, int j, int k) const {
    using B = BoxShape<G>;
    const std::size_t var = std::size_t(nvar) * B::kN3, off = g * var;
    const Real* ug = u0 + std::size_t(g) * in_vars * B::kN3;
    const int c = B::index(i, j, k);
    const Real* fg = flux + 3 * off;
    typename Phys::Vars u =
        euler_step(load_vars<Phys>(ug, B::kN3, c), coef, divergence_vars<Phys, G>(fg, nvar, c));
    if (floors) Phys::apply_floors(u, prm);
    store_vars<Phys>(u1 + off, B::kN3, c, u);
    for (int v = Phys::kNumVars; v < nvar; ++v)
      u1[off + v * B::kN3 + c] = ug[v * B::kN3 + c] + coef * divergence<G>(fg, nvar, v, c);
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
  int in_vars;           // variables of u0 per group
  bool flag_unphysical;  // FOFC's detecting pass: flag, do not floor (header)
  TESSERA_HD CellOutcome operator()(int g, int i, int j, int k) const {
    using B = BoxShape<G>;
    const std::size_t var = std::size_t(nvar) * B::kN3, off = g * var;
    const Real* ug = u0 + std::size_t(g) * in_vars * B::kN3;
    const int c = B::index(i + G, j + G, k + G);
    const int cell = (k * kGroupSize + j) * kGroupSize + i;
    const Real* fg = flux + 3 * off;
    const auto a = load_vars<Phys>(ug, B::kN3, c);
    const auto du = divergence_vars<Phys, G>(fg, nvar, c);
    typename Phys::Vars u;
    if constexpr (kVl2)
      u = euler_step(a, coef, du);
    else
      u = rk2_final(a, load_vars<Phys>(u1 + off, B::kN3, c), coef, du);
    if constexpr (Phys::kGlm) Phys::end_of_step(u, prm);  // parabolic decay of psi
    Real* og = out + std::size_t(g) * nvar * kGroupCells;
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const std::size_t at = off + v * B::kN3 + c;
      const Real d = divergence<G>(fg, nvar, v, c);
      const Real a0 = ug[v * B::kN3 + c];
      og[v * kGroupCells + cell] = kVl2 ? a0 + coef * d : Real(0.5) * (a0 + u1[at] + coef * d);
    }
    if (flag_unphysical) {
      typename Phys::Vars floored = u;
      if (Phys::apply_floors(floored, prm) != FloorResult::kOk) {
        store_vars<Phys>(og, kGroupCells, cell, u);  // as it came: the host finds it so
        return {FloorResult::kFlagged, Real(0)};
      }
    }
    const FloorResult fr = Phys::apply_floors(u, prm);
    store_vars<Phys>(og, kGroupCells, cell, u);
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
    const int in_vars = a.in_stride();
    const Real* flags = in_vars > a.nvar ? a.in : nullptr;  // FOFC's correcting pass
    loop.box(0, N, ToPrimitive<Phys, G>{a.in, a.prim, a.nvar, p, in_vars});
    loop.faces(R, N - R,
               Flux{a.prim, a.flux, a.planes, a.nvar, p, PlaneMode::kFirstHalf, flags, in_vars});
    loop.box(R, N - R,
             FirstStage<Phys, G>{a.in, a.flux, a.u1, a.prim, a.nvar, p, m.dt_over_dx, in_vars,
                                 m.floor_first_stage});
    loop.faces(G, G + kGroupSize,
               Flux{a.prim, a.flux, a.planes, a.nvar, p, PlaneMode::kAddHalf, flags, in_vars});
    loop.interior(FinalStage<Phys, G, false>{a.in, a.u1, a.flux, a.out, a.nvar, p, m.dt_over_dx,
                                             in_vars, m.flag_unphysical},
                  a.results);
  }
};

// The predictor's reconstruction: donor cell, or what the corrector's names (PPM: mc_ep).
template <class Recon, class = void>
struct Vl2PredictorOf {
  using type = ReconPcm;
};
template <class Recon>
struct Vl2PredictorOf<Recon, std::void_t<typename Recon::Vl2Predictor>> {
  using type = typename Recon::Vl2Predictor;
};

// The predictor covers the interior plus R layers; the box has its reach P + R.
struct IntegratorVl2 {
  template <class Phys, class Recon, class Riemann, class Loop>
  static void advance(const Loop& loop, const BoxArrays& a, const MolParams& m) {
    using Predictor = typename Vl2PredictorOf<Recon>::type;
    constexpr int P = Predictor::kReach, G = P + stencil_reach(Recon::kReach), N = box_size(G);
    const typename Phys::Params& p = params_of<Phys>(m.phys);
    const Real half = Real(0.5) * m.dt_over_dx;
    const int in_vars = a.in_stride();
    const Real* flags = in_vars > a.nvar ? a.in : nullptr;  // FOFC's correcting pass
    loop.box(0, N, ToPrimitive<Phys, G>{a.in, a.prim, a.nvar, p, in_vars});
    // The predictor's fluxes do not reach the update of a flagged cell: no correction.
    loop.faces(P, N - P,
               FaceFlux<Phys, Predictor, Riemann, G>{a.prim, a.flux, a.planes, a.nvar, p,
                                                     PlaneMode::kNone});
    loop.box(P, N - P,
             FirstStage<Phys, G>{a.in, a.flux, a.u1, a.prim, a.nvar, p, half, in_vars,
                                 m.floor_first_stage});
    loop.faces(G, G + kGroupSize,
               FaceFlux<Phys, Recon, Riemann, G>{a.prim, a.flux, a.planes, a.nvar, p,
                                                 PlaneMode::kStore, flags, in_vars});
    loop.interior(FinalStage<Phys, G, true>{a.in, a.u1, a.flux, a.out, a.nvar, p, m.dt_over_dx,
                                            in_vars, m.flag_unphysical},
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
