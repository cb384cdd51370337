// Relaxing TVD hydro on patch groups (hydro.scheme = "relaxing_tvd"): Trac & Pen 2003
// (PASP 115, 303), after Jin & Xin 1995, as GAMER uses it (Schive, Tsai & Chiueh 2010,
// §2.2 eqs. 6-14, §3.1), written once for every loop backend (loop_cpu.hpp, loop_cuda.cuh).
//
// One 1D sweep along direction d, for every conserved variable u with flux F(u):
// - the freezing speed c >= |v_d| + c_s of each cell (>= every wave speed there, what the
//   TVD property needs; |v_d| smoothed near 0, see relaxed_fluxes), and the right- and
//   left-moving fluxes (eq. 8)
//   F^R = (c u + F) / 2, F^L = (c u - F) / 2, which have well-defined upwind directions;
// - half step (eq. 13), first-order upwind: F_{i+1/2} = F^R_i - F^L_{i+1} and
//   u^{n+1/2} = u^n - dt/(2 dx) (F_{i+1/2} - F_{i-1/2});
// - full step (eq. 14), second-order TVD on the half-step fluxes (eqs. 9-12):
//   F^R_{i+1/2} = F^R_i + phi(dF^R_{i-1/2}, dF^R_{i+1/2}),
//   F^L_{i+1/2} = F^L_{i+1} - phi(dF^L_{i+1/2}, dF^L_{i+3/2}),  dF_{i+1/2} = (F_{i+1} - F_i)/2,
//   with the flux limiter phi (van Leer's harmonic mean, eq. 11, as Trac & Pen; minmod,
//   MC and superbee selectable), and u^{n+1} = u^n - dt/dx (F_{i+1/2} - F_{i-1/2}).
// The stencil is seven cells, so three ghost layers per group (seed 001 §2.2).
//
// 3D by dimensional splitting (Strang 1968): a forward sweep x -> y -> z, then, in the
// level's next step, a backward sweep z -> y -> x (GAMER alternates them the same way);
// two consecutive steps of equal dt form the symmetric, second-order product. Each sweep
// updates the cells the later sweeps of the same step read: a sweep along d covers the
// interior along d, the whole box along the directions still to come, and the interior
// along those already done. With subcycling the two steps of a finer level have the same
// dt, so the pair is exact Strang splitting there.
//
// The face fluxes on the group's flux planes are the full-step fluxes, weight 1 (each
// direction is swept once per step), which is what the flux registers need.
// Passive scalars are conserved variables with the flux rho*s v_d and the cell's freezing
// speed; the limiters are homogeneous of degree one, so a uniform s stays uniform.
#pragma once

#include <cstddef>

#include "kernels/mol_stages.hpp"

namespace tessera::kernels {

inline constexpr int kGhostRtvd = 3;

// The freezing speed's smoothing of |v_d| near zero, relative to c_s (relaxed_fluxes).
inline constexpr Real kRtvdSmoothing = Real(0.01);

enum class TvdLimiter { kVanLeer, kMinmod, kMc, kSuperbee };

// Flux limiters of the second-order correction, on half differences a, b (eq. 10).
struct TvdVanLeer {  // eq. 11: the harmonic mean
  TESSERA_HD static Real limit(Real a, Real b) {
    const Real ab = a * b;
    return ab > 0 ? Real(2) * ab / (a + b) : Real(0);
  }
};
struct TvdMinmod {
  TESSERA_HD static Real limit(Real a, Real b) {
    return a * b > 0 ? (a > 0 ? min_of(a, b) : max_of(a, b)) : Real(0);
  }
};
struct TvdMc {  // monotonized central: minmod(2a, 2b, (a + b) / 2)
  TESSERA_HD static Real limit(Real a, Real b) {
    if (!(a * b > 0)) return Real(0);
    const Real m = min_of(Real(2) * fabs(a), min_of(Real(2) * fabs(b), Real(0.5) * fabs(a + b)));
    return a > 0 ? m : -m;
  }
};
struct TvdSuperbee {
  TESSERA_HD static Real limit(Real a, Real b) {
    if (!(a * b > 0)) return Real(0);
    const Real fa = fabs(a), fb = fabs(b);
    const Real m = max_of(min_of(Real(2) * fa, fb), min_of(fa, Real(2) * fb));
    return a > 0 ? m : -m;
  }
};

// What one step of the relaxing-TVD group solver needs besides the data.
struct RtvdParams {
  PhysicsParams phys;
  Real dt_over_dx;
  int scalars = 0;
  bool forward = true;  // x -> y -> z (else z -> y -> x)
};

// Device-copyable pointers of a batch of `count` groups (per group g every array starts at
// g times its per-group size); box arrays have kGhostRtvd layers.
struct RtvdArrays {
  const Real* in;        // [nvar][N^3] conserved input
  Real* u;               // [nvar][N^3] the state between sweeps
  Real* fr;              // [nvar][N^3] F^R of a sweep's input state
  Real* fl;              // [nvar][N^3] F^L of it
  Real* frh;             // [nvar][N^3] F^R of the half-step state
  Real* flh;             // [nvar][N^3] F^L of it
  Real* out;             // [nvar][16^3] new interior
  Real* planes;          // [9][nvar][16^2] fluxes on the group's flux planes
  GroupResult* results;  // [count]
  int count;
  int nvar;
  // [N^3] per group: nonzero where a half step of this step, or the full step of a sweep
  // before the last, floored the cell's state, so that RtvdFinish counts every floor of the
  // step, not only its own (a cell floored in the x sweep and physical after z is still
  // floored).
  Real* marks;
};

// Records in a.marks whether a sweep's floor changed cell c of group g; the first write of
// the step (`first`) sets the mark, later ones can only raise it.
TESSERA_HD inline void rtvd_mark(Real* marks, std::size_t at, FloorResult f, bool first) {
  if (first)
    marks[at] = f == FloorResult::kOk ? Real(0) : Real(1);
  else if (f != FloorResult::kOk)
    marks[at] = Real(1);
}

// Cells [lo, hi) of each dimension of a group's box.
struct Range3 {
  int lo[3];
  int hi[3];
};

using RtvdBox = BoxShape<kGhostRtvd>;

// F^R and F^L (eq. 8) of the physics' variables of conserved state u along Dir into cell c
// of fr, fl; returns v_d and the freezing speed c = |v_d| + c_s through vn, speed.
// (`n3`: the distance between variables in fr, fl; RtvdBox::kN3 in the box arrays.)
template <class Phys, int Dir>
TESSERA_HD inline void relaxed_fluxes(const typename Phys::Vars& u, Real* fr, Real* fl, int c,
                                      int n3, const typename Phys::Params& p, Real& vn,
                                      Real& speed) {
  const typename Phys::Vars w = Phys::cons_to_prim(u, p);
  const typename Phys::Vars wr = rotate_to<Phys>(w, Dir), ur = rotate_to<Phys>(u, Dir);
  vn = wr[Phys::kVelX];
  // c >= |v_d| + c_s with |v_d| smoothed where |v_d| < 1% of c_s: |v_d| alone has a kink
  // where v_d changes sign, which in a small-amplitude wave is as large as the wave and
  // costs convergence order (acoustic wave: 1.59 with |v_d|, 1.80 smoothed, van Leer).
  const Real cs = Phys::sound_speed(w, p);
  speed = cs + sqrt(vn * vn + kRtvdSmoothing * kRtvdSmoothing * cs * cs);
  const typename Phys::Vars f = rotate_from<Phys>(Phys::flux(wr, ur, p), Dir);
  for (int v = 0; v < Phys::kNumVars; ++v) {
    fr[v * n3 + c] = Real(0.5) * (speed * u[v] + f[v]);
    fl[v * n3 + c] = Real(0.5) * (speed * u[v] - f[v]);
  }
}

// Step 1 of a sweep: F^R, F^L of the sweep's input state.
template <class Phys, int Dir>
struct RtvdCellFluxes {
  static constexpr int kGhost = kGhostRtvd;
  const Real* src;
  Real* fr;
  Real* fl;
  int nvar;
  typename Phys::Params prm;
  TESSERA_HD void operator()(int g, int i, int j, int k) const {
    constexpr int n3 = RtvdBox::kN3;
    const std::size_t off = std::size_t(g) * nvar * n3;
    const int c = RtvdBox::index(i, j, k);
    Real vn, speed;
    relaxed_fluxes<Phys, Dir>(load_vars<Phys>(src + off, n3, c), fr + off, fl + off, c, n3, prm, vn,
                              speed);
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const Real s = src[off + v * n3 + c];
      fr[off + v * n3 + c] = Real(0.5) * (speed * s + s * vn);
      fl[off + v * n3 + c] = Real(0.5) * (speed * s - s * vn);
    }
  }
};

// Step 2: the first-order upwind half step (eq. 13), floored, and its F^R, F^L.
template <class Phys, int Dir>
struct RtvdHalfStep {
  static constexpr int kGhost = kGhostRtvd;
  const Real* src;
  const Real* fr;
  const Real* fl;
  Real* frh;
  Real* flh;
  Real* marks;
  int nvar;
  typename Phys::Params prm;
  Real half_coef;  // dt / (2 dx)
  bool first;      // the step's first sweep: sets the marks of every interior cell
  TESSERA_HD Real half(std::size_t at, int s) const {
    // u - dt/(2dx) [(F^R_i - F^L_{i+1}) - (F^R_{i-1} - F^L_i)]
    return src[at] - half_coef * ((fr[at] - fl[at + s]) - (fr[at - s] - fl[at]));
  }
  TESSERA_HD void operator()(int g, int i, int j, int k) const {
    constexpr int n3 = RtvdBox::kN3, s = RtvdBox::stride(Dir);
    const std::size_t off = std::size_t(g) * nvar * n3;
    const int c = RtvdBox::index(i, j, k);
    typename Phys::Vars u;
    for (int v = 0; v < Phys::kNumVars; ++v) u[v] = half(off + v * n3 + c, s);
    // Floored, and counted at the end of the step (a state left unphysical is caught there).
    rtvd_mark(marks, std::size_t(g) * n3 + c, Phys::apply_floors(u, prm), first);
    Real vn, speed;
    relaxed_fluxes<Phys, Dir>(u, frh + off, flh + off, c, n3, prm, vn, speed);
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const std::size_t at = off + v * n3 + c;
      const Real sc = half(at, s);
      frh[at] = Real(0.5) * (speed * sc + sc * vn);
      flh[at] = Real(0.5) * (speed * sc - sc * vn);
    }
  }
};

// Where the full step of the cell at box position `pos` (sweep along Dir) stores its low
// and high face fluxes on group g's flux planes (variable 0; variable v is v * kFaceCells
// further): a face on a patch boundary across the group's 16^2 cells has a plane, the
// others null. The CPU's RtvdFullStep and the GPU's fused sweep both use it.
template <int Dir>
struct RtvdPlaneSlots {
  Real* low = nullptr;
  Real* high = nullptr;
  TESSERA_HD RtvdPlaneSlots(Real* planes, int g, int nvar, const int pos[3]) {
    constexpr int G = kGhostRtvd;
    const int along = pos[Dir] - G;
    const int a = pos[Dir == 2 ? 1 : 2] - G, b = pos[Dir == 0 ? 1 : 0] - G;
    if (a < 0 || a >= kGroupSize || b < 0 || b >= kGroupSize) return;
    Real* pg = planes + std::size_t(g) * kNumFluxPlanes * nvar * kFaceCells + a * kGroupSize + b;
    if (along % kPatchSize == 0)
      low = pg + std::size_t(flux_plane(Dir, along / kPatchSize)) * nvar * kFaceCells;
    if (along == kGroupSize - 1) high = pg + std::size_t(flux_plane(Dir, 2)) * nvar * kFaceCells;
  }
};

// Step 3: the second-order TVD full step (eqs. 9-12, 14) on the interior along Dir, in
// place (dst may be src: a cell reads only its own state), with the floors unless it is
// the step's last sweep (RtvdFinish floors and counts). Faces on the group's flux planes
// are stored there (weight 1).
template <class Phys, class Limiter, int Dir>
struct RtvdFullStep {
  static constexpr int kGhost = kGhostRtvd;
  const Real* src;
  const Real* frh;
  const Real* flh;
  Real* dst;
  Real* planes;
  Real* marks;
  int nvar;
  typename Phys::Params prm;
  Real coef;  // dt / dx
  bool floors;

  // Flux through the low face of box cell `at` (variable offset included), stride s.
  TESSERA_HD Real face(std::size_t at, int s) const {
    const Real r0 = frh[at - s];
    const Real right =
        r0 + Limiter::limit(Real(0.5) * (r0 - frh[at - 2 * s]), Real(0.5) * (frh[at] - r0));
    const Real l0 = flh[at];
    const Real left =
        l0 - Limiter::limit(Real(0.5) * (l0 - flh[at - s]), Real(0.5) * (flh[at + s] - l0));
    return right - left;
  }

  TESSERA_HD void operator()(int g, int i, int j, int k) const {
    constexpr int n3 = RtvdBox::kN3, s = RtvdBox::stride(Dir);
    const std::size_t off = std::size_t(g) * nvar * n3;
    const int c = RtvdBox::index(i, j, k);
    const int pos[3] = {i, j, k};
    const RtvdPlaneSlots<Dir> plane(planes, g, nvar, pos);
    typename Phys::Vars u;
    for (int v = 0; v < nvar; ++v) {
      const std::size_t at = off + v * n3 + c;
      const Real lo = face(at, s), hi = face(at + s, s);
      const Real nu = src[at] - coef * (hi - lo);
      if (v < Phys::kNumVars)
        u[v] = nu;
      else
        dst[at] = nu;
      if (plane.low) plane.low[v * kFaceCells] = lo;
      if (plane.high) plane.high[v * kFaceCells] = hi;
    }
    if (floors) rtvd_mark(marks, std::size_t(g) * n3 + c, Phys::apply_floors(u, prm), false);
    store_vars<Phys>(dst + off, n3, c, u);
  }
};

// The end of the step on interior cell (i, j, k): floors, the new interior, the outcome
// (floored if this or an earlier sweep of the step floored the cell).
template <class Phys>
struct RtvdFinish {
  static constexpr int kGhost = kGhostRtvd;
  const Real* u;
  Real* out;
  const Real* marks;
  int nvar;
  typename Phys::Params prm;
  TESSERA_HD CellOutcome operator()(int g, int i, int j, int k) const {
    constexpr int n3 = RtvdBox::kN3, G = kGhostRtvd;
    const std::size_t off = std::size_t(g) * nvar * n3;
    const int c = RtvdBox::index(i + G, j + G, k + G);
    const int cell = (k * kGroupSize + j) * kGroupSize + i;
    typename Phys::Vars x = load_vars<Phys>(u + off, n3, c);
    FloorResult fr = Phys::apply_floors(x, prm);
    if (fr == FloorResult::kOk && marks[std::size_t(g) * n3 + c] != Real(0))
      fr = FloorResult::kFloored;
    Real* og = out + std::size_t(g) * nvar * kGroupCells;
    store_vars<Phys>(og, kGroupCells, cell, x);
    for (int v = Phys::kNumVars; v < nvar; ++v) og[v * kGroupCells + cell] = u[off + v * n3 + c];
    const Real speed = fr == FloorResult::kUnphysical
                           ? Real(0)
                           : Phys::max_signal_speed(Phys::cons_to_prim(x, prm), prm);
    return {fr, speed};
  }
};

// One sweep along Dir over `r` (the cells the sweep must leave updated; along Dir the
// interior), reading src and writing a.u.
// A loop backend with its own fused sweep (kFusedSweeps: loop.sweep<Phys, Limiter, Dir>,
// the same arithmetic in one kernel; rtvd_cuda.cuh) runs that instead of the three calls.
template <class Phys, class Limiter, int Dir, class Loop>
void rtvd_sweep(const Loop& loop, const RtvdArrays& a, const RtvdParams& m, const Real* src,
                Range3 r, bool floors, bool first) {
  if constexpr (requires { Loop::kFusedSweeps; }) {
    loop.template sweep<Phys, Limiter, Dir>(a, m, src, r, floors, first);
  } else {
    constexpr int N = RtvdBox::kN;
    const typename Phys::Params& p = params_of<Phys>(m.phys);
    Range3 cells = r;
    cells.lo[Dir] = 0, cells.hi[Dir] = N;
    loop.range(cells, RtvdCellFluxes<Phys, Dir>{src, a.fr, a.fl, a.nvar, p});
    cells.lo[Dir] = 1, cells.hi[Dir] = N - 1;
    loop.range(cells, RtvdHalfStep<Phys, Dir>{src, a.fr, a.fl, a.frh, a.flh, a.marks, a.nvar, p,
                                              Real(0.5) * m.dt_over_dx, first});
    loop.range(r, RtvdFullStep<Phys, Limiter, Dir>{src, a.frh, a.flh, a.u, a.planes, a.marks,
                                                   a.nvar, p, m.dt_over_dx, floors});
  }
}

// The three sweeps of one step in the order m.forward says, then the interior's outcome.
struct RelaxingTvd {
  template <class Phys, class Limiter, class Loop>
  static void advance(const Loop& loop, const RtvdArrays& a, const RtvdParams& m) {
    constexpr int G = kGhostRtvd, N = RtvdBox::kN;
    const int order[3] = {m.forward ? 0 : 2, 1, m.forward ? 2 : 0};
    for (int s = 0; s < 3; ++s) {
      const int d = order[s];
      Range3 r;
      for (int e = 0; e < 3; ++e) {
        // Directions still to be swept need this sweep's result in their ghost layers.
        bool later = false;
        for (int t = s + 1; t < 3; ++t) later = later || order[t] == e;
        r.lo[e] = later ? 0 : G;
        r.hi[e] = later ? N : G + kGroupSize;
      }
      const Real* src = s == 0 ? a.in : a.u;
      const bool floors = s < 2, first = s == 0;
      if (d == 0)
        rtvd_sweep<Phys, Limiter, 0>(loop, a, m, src, r, floors, first);
      else if (d == 1)
        rtvd_sweep<Phys, Limiter, 1>(loop, a, m, src, r, floors, first);
      else
        rtvd_sweep<Phys, Limiter, 2>(loop, a, m, src, r, floors, first);
    }
    loop.interior(RtvdFinish<Phys>{a.u, a.out, a.marks, a.nvar, params_of<Phys>(m.phys)},
                  a.results);
  }
};

// Calls f(Types<Phys, Limiter>{}) for the choice; the relaxing-TVD scheme exists for the
// hydrodynamic physics only (physics::Model refuses MHD before), MHD falls back to
// adiabatic here.
template <class F>
void dispatch_rtvd(Physics physics, TvdLimiter limiter, F&& f) {
  auto with_limiter = [&](auto phys) {
    using P = decltype(phys);
    switch (limiter) {
      case TvdLimiter::kMinmod:
        return f(Types<P, TvdMinmod>{});
      case TvdLimiter::kMc:
        return f(Types<P, TvdMc>{});
      case TvdLimiter::kSuperbee:
        return f(Types<P, TvdSuperbee>{});
      case TvdLimiter::kVanLeer:
        return f(Types<P, TvdVanLeer>{});
    }
  };
  if (physics == Physics::kIsothermal) return with_limiter(HydroIsothermal{});
  with_limiter(HydroAdiabatic{});
}

template <class Phys, class Limiter, class Loop>
void run_rtvd(Types<Phys, Limiter>, const Loop& loop, const RtvdArrays& a, const RtvdParams& m) {
  RelaxingTvd::advance<Phys, Limiter>(loop, a, m);
}

}  // namespace tessera::kernels
