// CPU loops for mol_hydro.hpp (one thread per patch group; OpenMP parallelism is over
// groups, in the executor). The per-face and per-cell physics is the shared TESSERA_HD
// code, so the device kernels compute the same numbers. The loops are templates on the
// ghost width, so every box stride is a compile-time constant; the integrator chosen at
// run time picks the instantiation (mol_hydro_group_cpu).
#include "kernels/mol_hydro_cpu.hpp"

#include "kernels/reconstruction.hpp"
#include "kernels/riemann_hll.hpp"
#include "kernels/riemann_hllc.hpp"
#include "kernels/riemann_llf.hpp"

namespace tessera::kernels {

namespace {

// The loops over cells are [[gnu::flatten]]: every TESSERA_HD function they call is
// inlined into them. With both integrators instantiated for every scheme, GCC's
// unit-wide inlining budget otherwise leaves the Riemann solvers and limiters as calls,
// which made rk2 30% slower.

// The (16+2G)^3 input box of an integrator with G ghost layers.
template <int G>
struct Box {
  static constexpr int kN = box_size(G);
  static constexpr int kN3 = box_cells(G);
  static constexpr int kStride[3] = {1, kN, kN* kN};
  static constexpr int index(int i, int j, int k) { return (k * kN + j) * kN + i; }
  // Face-plane cell (a, b) of box cell (i, j, k) on a face normal to `dir`: a is the
  // slower transverse index.
  static int face_cell(int dir, int i, int j, int k) {
    const int x = i - G, y = j - G, z = k - G;
    return dir == 0 ? z * kGroupSize + y : (dir == 1 ? z * kGroupSize + x : y * kGroupSize + x);
  }
};

// dudt = -sum_dir (F(i+1/2) - F(i-1/2)) over the cells [lo, hi)^3 (times dx); the
// primitives must be valid on [lo-r, hi+r)^3 with r = Recon::kReach. When face_out is
// set, the fluxes on the group's flux planes (group_layout.hpp) are added to it with
// `weight`.
template <int G, class Recon, class Riemann>
[[gnu::flatten]] void flux_divergence(const Real* w, int lo, int hi, Real gamma, Real* flux,
                                      Real* dudt, Real* face_out, Real weight) {
  using B = Box<G>;
  for (int dir = 0; dir < 3; ++dir) {
    const int s = B::kStride[dir];
    const int ex = dir == 0, ey = dir == 1, ez = dir == 2;
    for (int k = lo; k < hi + ez; ++k)
      for (int j = lo; j < hi + ey; ++j)
        for (int i = lo; i < hi + ex; ++i) {
          const int idx = B::index(i, j, k);
          store_cons(flux, B::kN3, idx, face_flux<Recon, Riemann>(w, B::kN3, idx, s, dir, gamma));
        }
    for (int v = 0; v < kNumHydroVars; ++v) {
      const Real* f = flux + v * B::kN3;
      Real* du = dudt + v * B::kN3;
      for (int k = lo; k < hi; ++k)
        for (int j = lo; j < hi; ++j)
          for (int i = lo; i < hi; ++i) {
            const int idx = B::index(i, j, k);
            const Real d = f[idx + s] - f[idx];
            du[idx] = dir == 0 ? -d : du[idx] - d;
          }
    }
    if (!face_out) continue;
    for (int plane = 0; plane < kPlanesPerDir; ++plane) {
      const int c = G + plane * kPatchSize;  // face coordinate along dir
      Real* out = face_out + flux_plane(dir, plane) * kNumHydroVars * kFaceCells;
      for (int a = G; a < G + kGroupSize; ++a)
        for (int b = G; b < G + kGroupSize; ++b) {
          const int i = dir == 0 ? c : b, j = dir == 1 ? c : (dir == 0 ? b : a);
          const int k = dir == 2 ? c : a;
          const int idx = B::index(i, j, k);
          const int fc = B::face_cell(dir, i, j, k);
          for (int v = 0; v < kNumHydroVars; ++v)
            out[v * kFaceCells + fc] += weight * flux[v * B::kN3 + idx];
        }
    }
  }
}

template <int G>
[[gnu::flatten]] void to_primitive(const Real* u, Real* w, int lo, int hi, const EosParams& eos) {
  using B = Box<G>;
  for (int k = lo; k < hi; ++k)
    for (int j = lo; j < hi; ++j)
      for (int i = lo; i < hi; ++i) {
        const int idx = B::index(i, j, k);
        store_prim(w, B::kN3, idx, cons_to_prim(load_cons(u, B::kN3, idx), eos));
      }
}

// First stage of either integrator on [lo, hi)^3: u1 = u0 + coef * du, floored (a state
// left unphysical there is caught after the final stage), and its primitives.
template <int G>
[[gnu::flatten]] void first_stage(const Real* u0, const MolScratch& s, int lo, int hi, Real coef,
                                  const EosParams& eos) {
  using B = Box<G>;
  for (int k = lo; k < hi; ++k)
    for (int j = lo; j < hi; ++j)
      for (int i = lo; i < hi; ++i) {
        const int idx = B::index(i, j, k);
        Cons u = euler_step(load_cons(u0, B::kN3, idx), coef, load_cons(s.dudt, B::kN3, idx));
        apply_floors(u, eos);
        store_cons(s.u1, B::kN3, idx, u);
      }
  to_primitive<G>(s.u1, s.prim, lo, hi, eos);
}

// Final stage on the interior: new state = update(u0, u1, du) per cell, floors, the
// group's results (max signal speed, floored cells, first unphysical cell).
template <int G, class Update>
[[gnu::flatten]] void final_stage(const Real* u0, const MolScratch& s, Real* out,
                                  GroupResult* result, const EosParams& eos, Update update) {
  using B = Box<G>;
  GroupResult res{0, 0, -1};
  for (int k = 0; k < kGroupSize; ++k)
    for (int j = 0; j < kGroupSize; ++j)
      for (int i = 0; i < kGroupSize; ++i) {
        const int idx = B::index(i + G, j + G, k + G);
        Cons u = update(load_cons(u0, B::kN3, idx), load_cons(s.u1, B::kN3, idx),
                        load_cons(s.dudt, B::kN3, idx));
        const int cell = (k * kGroupSize + j) * kGroupSize + i;
        const FloorResult fr = apply_floors(u, eos);
        if (fr == FloorResult::kFloored) ++res.floored;
        if (fr == FloorResult::kUnphysical) {
          if (res.bad_cell < 0) res.bad_cell = cell;
        } else {
          res.max_speed = max_of(res.max_speed, max_signal_speed(cons_to_prim(u, eos), eos.gamma));
        }
        store_cons(out, kGroupCells, cell, u);
      }
  *result = res;
}

void clear_planes(Real* face_flux) {
  for (int n = 0; n < kNumFluxPlanes * kNumHydroVars * kFaceCells; ++n) face_flux[n] = 0;
}

// SSP-RK2 (mol_hydro.hpp): stage 1 on the interior plus two ghost layers, stage 2 on the
// interior; patch-face fluxes averaged over the stages.
template <class Recon, class Riemann>
void advance_rk2(const MolParams& prm, const Real* u0, Real* out, Real* face_flux,
                 GroupResult* result, const MolScratch& s) {
  constexpr int G = kGhostRk2, N = box_size(G);
  const EosParams& eos = prm.eos;
  clear_planes(face_flux);
  to_primitive<G>(u0, s.prim, 0, N, eos);
  flux_divergence<G, Recon, Riemann>(s.prim, 2, N - 2, eos.gamma, s.flux, s.dudt, face_flux,
                                     Real(0.5));
  first_stage<G>(u0, s, 2, N - 2, prm.dt_over_dx, eos);
  flux_divergence<G, Recon, Riemann>(s.prim, G, G + kGroupSize, eos.gamma, s.flux, s.dudt,
                                     face_flux, Real(0.5));
  const Real c = prm.dt_over_dx;
  final_stage<G>(u0, s, out, result, eos, [c](const Cons& a, const Cons& b, const Cons& du) {
    return rk2_final(a, b, c, du);
  });
}

// VL2 (Stone & Gardiner 2009; mol_hydro.hpp): donor-cell predictor over dt/2 on the
// interior plus two ghost layers (the corrector's PLM stencil), whose fluxes need one
// more layer; corrector over dt on the interior from the half-step primitives. The
// patch-face fluxes are the corrector's.
template <class Recon, class Riemann>
void advance_vl2(const MolParams& prm, const Real* u0, Real* out, Real* face_flux,
                 GroupResult* result, const MolScratch& s) {
  constexpr int G = kGhostVl2, N = box_size(G);
  const EosParams& eos = prm.eos;
  clear_planes(face_flux);
  to_primitive<G>(u0, s.prim, 0, N, eos);
  flux_divergence<G, ReconPcm, Riemann>(s.prim, 1, N - 1, eos.gamma, s.flux, s.dudt, nullptr,
                                        Real(0));
  first_stage<G>(u0, s, 1, N - 1, Real(0.5) * prm.dt_over_dx, eos);
  flux_divergence<G, Recon, Riemann>(s.prim, G, G + kGroupSize, eos.gamma, s.flux, s.dudt,
                                     face_flux, Real(1));
  const Real c = prm.dt_over_dx;
  final_stage<G>(u0, s, out, result, eos,
                 [c](const Cons& a, const Cons&, const Cons& du) { return euler_step(a, c, du); });
}

template <class Recon, class Riemann>
void dispatch_integrator(const Scheme& sc, const MolParams& p, const Real* in, Real* out, Real* ff,
                         GroupResult* r, const MolScratch& s) {
  switch (sc.integrator) {
    case Integrator::kRk2:
      return advance_rk2<Recon, Riemann>(p, in, out, ff, r, s);
    case Integrator::kVl2:
      return advance_vl2<Recon, Riemann>(p, in, out, ff, r, s);
  }
}

template <class Recon>
void dispatch_riemann(const Scheme& sc, const MolParams& p, const Real* in, Real* out, Real* ff,
                      GroupResult* r, const MolScratch& s) {
  switch (sc.riemann) {
    case RiemannSolver::kHll:
      return dispatch_integrator<Recon, RiemannHll>(sc, p, in, out, ff, r, s);
    case RiemannSolver::kHllc:
      return dispatch_integrator<Recon, RiemannHllc>(sc, p, in, out, ff, r, s);
    case RiemannSolver::kLlf:
      return dispatch_integrator<Recon, RiemannLlf>(sc, p, in, out, ff, r, s);
  }
}

}  // namespace

std::size_t mol_scratch_reals() {
  return 4 * std::size_t(kNumHydroVars) * box_cells(kMaxGhost);
}

MolScratch mol_scratch_view(Real* storage) {
  const std::size_t n = std::size_t(kNumHydroVars) * box_cells(kMaxGhost);
  return {storage, storage + n, storage + 2 * n, storage + 3 * n};
}

void mol_hydro_group_cpu(const Scheme& sc, const MolParams& p, const Real* in, Real* out,
                         Real* face_flux, GroupResult* result, const MolScratch& s) {
  switch (sc.recon) {
    case Reconstruction::kPcm:
      return dispatch_riemann<ReconPcm>(sc, p, in, out, face_flux, result, s);
    case Reconstruction::kPlmMinmod:
      return dispatch_riemann<ReconPlm<LimiterMinmod>>(sc, p, in, out, face_flux, result, s);
    case Reconstruction::kPlmMc:
      return dispatch_riemann<ReconPlm<LimiterMc>>(sc, p, in, out, face_flux, result, s);
    case Reconstruction::kPlmVanLeer:
      return dispatch_riemann<ReconPlm<LimiterVanLeer>>(sc, p, in, out, face_flux, result, s);
  }
}

}  // namespace tessera::kernels
