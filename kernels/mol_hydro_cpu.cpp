// CPU loops for mol_hydro.hpp (one thread per patch group; OpenMP parallelism is over
// groups, in the executor). The per-face and per-cell physics is the shared TESSERA_HD
// code, so the device kernels compute the same numbers.
#include "kernels/mol_hydro_cpu.hpp"

#include "kernels/reconstruction.hpp"
#include "kernels/riemann_hll.hpp"
#include "kernels/riemann_hllc.hpp"
#include "kernels/riemann_llf.hpp"

namespace tessera::kernels {

namespace {

constexpr int kG = kGhostRk2;
constexpr int kN = box_size(kG);
constexpr int kN3 = box_cells(kG);
constexpr int kStride[3] = {1, kN, kN* kN};

constexpr int box_index(int i, int j, int k) {
  return (k * kN + j) * kN + i;
}

// Face f's cell (a, b) for a face normal to `dir`: a is the slower transverse index.
inline int face_cell(int dir, int i, int j, int k) {
  const int x = i - kG, y = j - kG, z = k - kG;
  return dir == 0 ? z * kGroupSize + y : (dir == 1 ? z * kGroupSize + x : y * kGroupSize + x);
}

// dudt = -sum_dir (F(i+1/2) - F(i-1/2)) over the cells [lo, hi)^3 (times dx); the
// primitives must be valid on [lo-2, hi+2)^3. When face_out is set, the fluxes on the
// group's flux planes (group_layout.hpp) are added to it with `weight`.
template <class Recon, class Riemann>
void flux_divergence(const Real* w, int lo, int hi, Real gamma, Real* flux, Real* dudt,
                     Real* face_out, Real weight) {
  for (int dir = 0; dir < 3; ++dir) {
    const int s = kStride[dir];
    const int ex = dir == 0, ey = dir == 1, ez = dir == 2;
    for (int k = lo; k < hi + ez; ++k)
      for (int j = lo; j < hi + ey; ++j)
        for (int i = lo; i < hi + ex; ++i) {
          const int idx = box_index(i, j, k);
          store_cons(flux, kN3, idx, face_flux<Recon, Riemann>(w, kN3, idx, s, dir, gamma));
        }
    for (int v = 0; v < kNumHydroVars; ++v) {
      const Real* f = flux + v * kN3;
      Real* du = dudt + v * kN3;
      for (int k = lo; k < hi; ++k)
        for (int j = lo; j < hi; ++j)
          for (int i = lo; i < hi; ++i) {
            const int idx = box_index(i, j, k);
            const Real d = f[idx + s] - f[idx];
            du[idx] = dir == 0 ? -d : du[idx] - d;
          }
    }
    if (!face_out) continue;
    for (int plane = 0; plane < kPlanesPerDir; ++plane) {
      const int c = kG + plane * kPatchSize;  // face coordinate along dir
      Real* out = face_out + flux_plane(dir, plane) * kNumHydroVars * kFaceCells;
      for (int a = kG; a < kG + kGroupSize; ++a)
        for (int b = kG; b < kG + kGroupSize; ++b) {
          const int i = dir == 0 ? c : b, j = dir == 1 ? c : (dir == 0 ? b : a);
          const int k = dir == 2 ? c : a;
          const int idx = box_index(i, j, k);
          const int fc = face_cell(dir, i, j, k);
          for (int v = 0; v < kNumHydroVars; ++v)
            out[v * kFaceCells + fc] += weight * flux[v * kN3 + idx];
        }
    }
  }
}

void to_primitive(const Real* u, Real* w, int lo, int hi, const EosParams& eos) {
  for (int k = lo; k < hi; ++k)
    for (int j = lo; j < hi; ++j)
      for (int i = lo; i < hi; ++i) {
        const int idx = box_index(i, j, k);
        store_prim(w, kN3, idx, cons_to_prim(load_cons(u, kN3, idx), eos));
      }
}

template <class Recon, class Riemann>
void advance_group(const MolParams& prm, const Real* u0, Real* out, Real* face_flux,
                   GroupResult* result, const MolScratch& s) {
  const EosParams& eos = prm.eos;
  for (int n = 0; n < kNumFluxPlanes * kNumHydroVars * kFaceCells; ++n) face_flux[n] = 0;

  // Stage 1 on the interior plus two ghost layers.
  constexpr int lo1 = 2, hi1 = kN - 2;
  to_primitive(u0, s.prim, 0, kN, eos);
  flux_divergence<Recon, Riemann>(s.prim, lo1, hi1, eos.gamma, s.flux, s.dudt, face_flux,
                                  Real(0.5));
  for (int k = lo1; k < hi1; ++k)
    for (int j = lo1; j < hi1; ++j)
      for (int i = lo1; i < hi1; ++i) {
        const int idx = box_index(i, j, k);
        Cons u = load_cons(u0, kN3, idx);
        const Cons du = load_cons(s.dudt, kN3, idx);
        u.dens += prm.dt_over_dx * du.dens;
        for (int d = 0; d < 3; ++d) u.mom[d] += prm.dt_over_dx * du.mom[d];
        u.engy += prm.dt_over_dx * du.engy;
        apply_floors(u, eos);  // a state left unphysical is caught after stage 2
        store_cons(s.u1, kN3, idx, u);
      }

  // Stage 2 on the interior.
  to_primitive(s.u1, s.prim, lo1, hi1, eos);
  flux_divergence<Recon, Riemann>(s.prim, kG, kG + kGroupSize, eos.gamma, s.flux, s.dudt, face_flux,
                                  Real(0.5));
  GroupResult res{0, 0, -1};
  for (int k = 0; k < kGroupSize; ++k)
    for (int j = 0; j < kGroupSize; ++j)
      for (int i = 0; i < kGroupSize; ++i) {
        const int idx = box_index(i + kG, j + kG, k + kG);
        const Cons a = load_cons(u0, kN3, idx), b = load_cons(s.u1, kN3, idx);
        const Cons du = load_cons(s.dudt, kN3, idx);
        Cons u;
        u.dens = Real(0.5) * (a.dens + b.dens + prm.dt_over_dx * du.dens);
        for (int d = 0; d < 3; ++d)
          u.mom[d] = Real(0.5) * (a.mom[d] + b.mom[d] + prm.dt_over_dx * du.mom[d]);
        u.engy = Real(0.5) * (a.engy + b.engy + prm.dt_over_dx * du.engy);
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

template <class Recon>
void dispatch_riemann(const Scheme& sc, const MolParams& p, const Real* in, Real* out, Real* ff,
                      GroupResult* r, const MolScratch& s) {
  switch (sc.riemann) {
    case RiemannSolver::kHll:
      return advance_group<Recon, RiemannHll>(p, in, out, ff, r, s);
    case RiemannSolver::kHllc:
      return advance_group<Recon, RiemannHllc>(p, in, out, ff, r, s);
    case RiemannSolver::kLlf:
      return advance_group<Recon, RiemannLlf>(p, in, out, ff, r, s);
  }
}

}  // namespace

std::size_t mol_scratch_reals() {
  return 4 * std::size_t(kNumHydroVars) * kN3;
}

MolScratch mol_scratch_view(Real* storage) {
  const std::size_t n = std::size_t(kNumHydroVars) * kN3;
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
