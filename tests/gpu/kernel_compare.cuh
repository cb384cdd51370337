// GPU kernels against the CPU kernels on random valid patch-group inputs. Included by
// two translation units: one built as the executor is (FMA contraction allowed: relative
// difference <= 1e-12 in double) and one with --fmad=false (bit for bit).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/mol_cpu.hpp"
#include "kernels/mol_cuda.cuh"
#include "kernels/rtvd_cpu.hpp"
#include "kernels/rtvd_cuda.cuh"
#include "src/exec/cuda/cuda_util.cuh"
#include "tessera/exec/executor.hpp"

namespace tessera::kernels {
namespace {

// Per-group sizes of boxes with `ghost` layers of nvar variables.
std::size_t group_in_reals(int ghost, int nvar) {
  return exec::GroupShape{ghost, nvar, nvar, nvar}.in_reals();
}
std::size_t group_out_reals(int nvar) {
  return exec::GroupShape{0, nvar, nvar, nvar}.out_reals();
}
std::size_t group_flux_reals(int nvar) {
  return exec::GroupShape{0, nvar, nvar, nvar}.flux_reals();
}

// A scheme with its number of passive scalars.
struct Case {
  Scheme scheme;
  int scalars = 0;
  int nvar() const { return solver_vars(scheme, scalars); }
};

constexpr Real kGamma = Real(1.4);
constexpr Real kIsoSoundSpeed = Real(1.3);

constexpr Real kGlmSpeed = Real(3.1);   // ch of the MHD cases
constexpr Real kPsiDecay = Real(0.97);  // their psi decay per step

// Conserved state of (rho, v, p, B, s) for the case's physics into box cell c (B and
// psi = B_x / 10 for MHD only).
void store_state(const Case& cs, Real* b, int n3, int c, Real rho, const Real v[3], Real p,
                 const Real bf[3], const Real* s) {
  if (cs.scheme.physics == Physics::kMhd) {
    using P = MhdGlm;
    const P::Vars u =
        P::prim_to_cons({{rho, v[0], v[1], v[2], p, bf[0], bf[1], bf[2], Real(0.1) * bf[0]}},
                        {kGamma, Real(0), Real(0), kGlmSpeed, kPsiDecay});
    store_vars<P>(b, n3, c, u);
  } else if (cs.scheme.physics == Physics::kIsothermal) {
    using P = HydroIsothermal;
    const P::Vars u = P::prim_to_cons({{rho, v[0], v[1], v[2]}}, {kIsoSoundSpeed, Real(0)});
    store_vars<P>(b, n3, c, u);
  } else {
    using P = HydroAdiabatic;
    const P::Vars u = P::prim_to_cons({{rho, v[0], v[1], v[2], p}}, {kGamma, Real(0), Real(0)});
    store_vars<P>(b, n3, c, u);
  }
  const int nphys = physics_vars(cs.scheme.physics);
  for (int i = 0; i < cs.scalars; ++i) b[(nphys + i) * n3 + c] = rho * s[i];
}

// Smooth random flow plus cell noise, with a shock-like jump in some groups: positive
// density and pressure, speeds up to Mach ~2, scalar concentrations in [0, 1]. Boxes with
// `ghost` layers. With `extreme`, groups 1, 5, 9, ... hold a near-vacuum slab (density
// and pressure below the floors of compare_with_cpu) and groups 3, 7, 11, ... one
// non-finite cell, so that the floor and bad-cell paths of both backends are compared on
// something other than 0 against 0.
std::vector<Real> random_groups(const Case& cs, int count, std::uint64_t seed, int ghost,
                                bool extreme = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const std::size_t in_reals = group_in_reals(ghost, cs.nvar());
  std::vector<Real> in(count * in_reals);
  const int n = box_size(ghost), n3 = box_cells(ghost);
  for (int g = 0; g < count; ++g) {
    const double kx = 1 + 3 * u(rng), ky = 1 + 3 * u(rng), kz = 1 + 3 * u(rng);
    const double jump = g % 3 == 0 ? 5 + 5 * u(rng) : 1;
    for (int c = 0; c < n3; ++c) {
      const double x = double(c % n) / n, y = double((c / n) % n) / n, z = double(c / (n * n)) / n;
      const double side = x > 0.5 ? jump : 1;
      Real rho = Real(side * (1 + 0.3 * std::sin(6.3 * kx * x) * std::cos(6.3 * ky * y)) *
                      (1 + 0.05 * u(rng)));
      Real p = Real(side * (1 + 0.2 * std::cos(6.3 * kz * z)) * (1 + 0.05 * u(rng)));
      if (extreme && g % 4 == 1 && y < 0.4) {
        rho = Real(1e-12 * (1 + u(rng)));
        p = Real(1e-15 * (1 + u(rng)));
      }
      Real v[3], bf[3], sc[kMaxPassiveScalars];
      for (Real& vd : v) vd = Real(2 * (u(rng) - 0.5));
      // A field of plasma beta ~1 with a sign change (a current sheet) at y = 0.5.
      for (int d = 0; d < 3; ++d)
        bf[d] = Real((d == 0 ? 0.8 : (y > 0.5 ? -1.0 : 1.0)) * (0.5 + 0.5 * u(rng)));
      for (int i = 0; i < cs.scalars; ++i) sc[i] = Real(u(rng) * (x < 0.3 + 0.1 * i));
      store_state(cs, in.data() + g * in_reals, n3, c, rho, v, p, bf, sc);
    }
    if (extreme && g % 4 == 3) {
      // An interior cell away from the group's centre: density not a number.
      const int i = ghost + 3 + g % 5, j = ghost + 9, k = ghost + 5;
      in[g * in_reals + (std::size_t(k) * n + j) * n + i] = std::nan("");
    }
  }
  return in;
}

// Largest |gpu - cpu| over all outputs, relative to the largest |cpu| of the same
// variable in the same group (and the max speed relative to itself); 0: bitwise equal.
// The input boxes have the ghost width of the case's integrator, as the executor stages
// them. With `extreme` (see random_groups), `floored` and `bad_groups` return the CPU's
// number of floored cells and of groups with a non-finite cell, and a cell finite on one
// backend and not on the other fails the test.
struct ExtremeCounts {
  long long floored = 0;
  int bad_groups = 0;
  long long flagged = 0;  // cells flagged by a detecting pass (first-order flux correction)
};
double compare_outputs(int count, int nvar, const std::vector<Real>& out_cpu,
                       const std::vector<Real>& out_gpu, const std::vector<Real>& flux_cpu,
                       const std::vector<Real>& flux_gpu, const std::vector<GroupResult>& res_cpu,
                       const std::vector<GroupResult>& res_gpu, ExtremeCounts* extreme);

// Waits for the device's kernels, copies their interiors, flux planes and group results
// back and compares them with the CPU's (compare_outputs).
double compare_device_outputs(int count, int nvar, const Real* d_out, const Real* d_planes,
                              const GroupResult* d_res, const std::vector<Real>& out_cpu,
                              const std::vector<Real>& flux_cpu,
                              const std::vector<GroupResult>& res_cpu, ExtremeCounts* extreme) {
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<Real> out_gpu(out_cpu.size()), flux_gpu(flux_cpu.size());
  std::vector<GroupResult> res_gpu(count);
  TESSERA_CUDA_CHECK(
      cudaMemcpy(out_gpu.data(), d_out, out_gpu.size() * sizeof(Real), cudaMemcpyDeviceToHost));
  TESSERA_CUDA_CHECK(cudaMemcpy(flux_gpu.data(), d_planes, flux_gpu.size() * sizeof(Real),
                                cudaMemcpyDeviceToHost));
  TESSERA_CUDA_CHECK(
      cudaMemcpy(res_gpu.data(), d_res, count * sizeof(GroupResult), cudaMemcpyDeviceToHost));
  return compare_outputs(count, nvar, out_cpu, out_gpu, flux_cpu, flux_gpu, res_cpu, res_gpu,
                         extreme);
}

// First-order flux correction (mol_stages.hpp): the detecting pass, or the correcting
// pass with random flags (one cell in 40, and every cell of the extreme slabs) as the
// boxes' last variable.
enum class FofcMode { kOff, kDetect, kCorrect };

double compare_with_cpu(const Case& cs, int count, std::uint64_t seed,
                        ExtremeCounts* extreme = nullptr, FofcMode fofc = FofcMode::kOff) {
  const Scheme& scheme = cs.scheme;
  const int nvar = cs.nvar();
  MolParams prm{{{kGamma, Real(1e-10), Real(1e-12)},
                 {kIsoSoundSpeed, Real(1e-10)},
                 {kGamma, Real(1e-10), Real(1e-12), kGlmSpeed, kPsiDecay}},
                Real(0.05),
                cs.scalars};
  prm.flag_unphysical = fofc == FofcMode::kDetect;
  prm.floor_first_stage = fofc == FofcMode::kOff;
  const int ghost = ghost_width(scheme);
  const std::size_t out_reals = group_out_reals(nvar);
  const std::size_t flux_reals = group_flux_reals(nvar);
  const std::vector<Real> boxes = random_groups(cs, count, seed, ghost, extreme != nullptr);
  // The correcting pass's boxes: the conserved variables, then the flags.
  const int in_vars = fofc == FofcMode::kCorrect ? nvar + 1 : nvar;
  const int n3 = box_cells(ghost);
  const std::size_t in_reals = std::size_t(in_vars) * n3;
  std::vector<Real> in(count * in_reals, Real(0));
  std::mt19937_64 rng(seed + 17);
  for (int g = 0; g < count; ++g) {
    const Real* b = boxes.data() + g * group_in_reals(ghost, nvar);
    std::copy(b, b + std::size_t(nvar) * n3, in.data() + g * in_reals);
    if (in_vars > nvar)
      for (int c = 0; c < n3; ++c)
        in[g * in_reals + std::size_t(nvar) * n3 + c] = Real(rng() % 40 == 0 || b[c] < 1e-6);
  }
  std::vector<Real> out_cpu(count * out_reals), flux_cpu(count * flux_reals);
  std::vector<GroupResult> res_cpu(count);
  std::vector<Real> scratch(mol_scratch_reals(nvar));
  for (int g = 0; g < count; ++g)
    mol_group_cpu(scheme, prm, in.data() + g * in_reals, out_cpu.data() + g * out_reals,
                  flux_cpu.data() + g * flux_reals, &res_cpu[g],
                  mol_scratch_view(scratch.data(), nvar), in_vars);

  const std::size_t box = std::size_t(count) * nvar * n3;
  cuda::DeviceBuffer<Real> d_in(in.size()), d_prim(box), d_u1(box), d_flux(3 * box),
      d_out(out_cpu.size()), d_planes(flux_cpu.size());
  cuda::DeviceBuffer<GroupResult> d_res(count);
  TESSERA_CUDA_CHECK(
      cudaMemcpy(d_in.get(), in.data(), in.size() * sizeof(Real), cudaMemcpyHostToDevice));
  const BoxArrays view{d_in.get(),     d_prim.get(), d_u1.get(), d_flux.get(), d_out.get(),
                       d_planes.get(), d_res.get(),  count,      nvar,         in_vars};
  launch_mol(scheme, view, prm, 0);
  return compare_device_outputs(count, nvar, d_out.get(), d_planes.get(), d_res.get(), out_cpu,
                                flux_cpu, res_cpu, extreme);
}

// The comparison of compare_with_cpu (above) on two backends' outputs of `count` groups.
double compare_outputs(int count, int nvar, const std::vector<Real>& out_cpu,
                       const std::vector<Real>& out_gpu, const std::vector<Real>& flux_cpu,
                       const std::vector<Real>& flux_gpu, const std::vector<GroupResult>& res_cpu,
                       const std::vector<GroupResult>& res_gpu, ExtremeCounts* extreme) {
  const std::size_t out_reals = group_out_reals(nvar), flux_reals = group_flux_reals(nvar);
  double worst = 0;
  long long finite_mismatch = 0;
  auto rel = [](double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); };
  // Non-finite values (only with `extreme`) are compared by kind, not by difference.
  auto differ = [&](double a, double b, double scale) {
    if (std::isfinite(a) != std::isfinite(b)) ++finite_mismatch;
    if (!std::isfinite(a) || !std::isfinite(b)) return;
    worst = std::max(worst, std::fabs(a - b) / scale);
  };
  // Relative to each variable's largest magnitude in the group: momenta pass through zero.
  for (int g = 0; g < count; ++g)
    for (int v = 0; v < nvar; ++v) {
      const Real* a = out_gpu.data() + g * out_reals + v * kGroupCells;
      const Real* b = out_cpu.data() + g * out_reals + v * kGroupCells;
      double scale = 1e-300;
      for (int c = 0; c < kGroupCells; ++c)
        if (std::isfinite(b[c])) scale = std::max(scale, std::fabs(double(b[c])));
      for (int c = 0; c < kGroupCells; ++c) differ(a[c], b[c], scale);
    }
  // Fluxes can vanish by cancellation; compare them relative to their variable's scale.
  for (int g = 0; g < count; ++g)
    for (int p = 0; p < kNumFluxPlanes * nvar; ++p) {
      const Real* a = flux_gpu.data() + g * flux_reals + p * kFaceCells;
      const Real* b = flux_cpu.data() + g * flux_reals + p * kFaceCells;
      double scale = 1e-300;
      for (int f = 0; f < kFaceCells; ++f)
        if (std::isfinite(b[f])) scale = std::max(scale, std::fabs(double(b[f])));
      for (int f = 0; f < kFaceCells; ++f) differ(a[f], b[f], scale);
    }
  for (int g = 0; g < count; ++g) {
    if (res_cpu[g].bad_cell < 0)  // a group with a non-finite cell has no meaningful speed
      worst = std::max(worst, rel(res_gpu[g].max_speed, res_cpu[g].max_speed));
    EXPECT_EQ(res_gpu[g].floored, res_cpu[g].floored) << "group " << g;
    EXPECT_EQ(res_gpu[g].flagged, res_cpu[g].flagged) << "group " << g;
    EXPECT_EQ(res_gpu[g].bad_cell == INT_MAX ? -1 : res_gpu[g].bad_cell, res_cpu[g].bad_cell)
        << "group " << g;
    if (extreme) {
      extreme->floored += res_cpu[g].floored;
      extreme->bad_groups += res_cpu[g].bad_cell >= 0;
      extreme->flagged += res_cpu[g].flagged;
    }
  }
  EXPECT_EQ(finite_mismatch, 0) << "values finite on one backend and not on the other";
  return worst;
}

// The relaxing-TVD solver on both backends (cs.scheme gives the physics; boxes with its 3
// ghost layers), compared as compare_with_cpu does; forward or backward sweeps.
double compare_rtvd_with_cpu(const Case& cs, TvdLimiter limiter, bool forward, int count,
                             std::uint64_t seed, ExtremeCounts* extreme = nullptr) {
  const int nvar = cs.nvar();
  RtvdParams prm;
  prm.phys = {{kGamma, Real(1e-10), Real(1e-12)},
              {kIsoSoundSpeed, Real(1e-10)},
              {kGamma, Real(1e-10), Real(1e-12), kGlmSpeed, kPsiDecay}};
  prm.dt_over_dx = Real(0.1);
  prm.scalars = cs.scalars;
  prm.forward = forward;
  const std::size_t in_reals = group_in_reals(kGhostRtvd, nvar), out_reals = group_out_reals(nvar);
  const std::size_t flux_reals = group_flux_reals(nvar);
  const std::vector<Real> in = random_groups(cs, count, seed, kGhostRtvd, extreme != nullptr);
  std::vector<Real> out_cpu(count * out_reals), flux_cpu(count * flux_reals);
  std::vector<GroupResult> res_cpu(count);
  std::vector<Real> scratch(rtvd_scratch_reals(nvar));
  for (int g = 0; g < count; ++g)
    rtvd_group_cpu(cs.scheme.physics, limiter, prm, in.data() + g * in_reals,
                   out_cpu.data() + g * out_reals, flux_cpu.data() + g * flux_reals, &res_cpu[g],
                   scratch.data());
  const std::size_t marks = std::size_t(count) * box_cells(kGhostRtvd);
  cuda::DeviceBuffer<Real> d_in(in.size()), d_scratch(5 * in.size() + marks), d_out(out_cpu.size()),
      d_planes(flux_cpu.size());
  cuda::DeviceBuffer<GroupResult> d_res(count);
  TESSERA_CUDA_CHECK(
      cudaMemcpy(d_in.get(), in.data(), in.size() * sizeof(Real), cudaMemcpyHostToDevice));
  Real* sc = d_scratch.get();
  const std::size_t box = in.size();
  const RtvdArrays view{d_in.get(),   sc,           sc + box,    sc + 2 * box,
                        sc + 3 * box, sc + 4 * box, d_out.get(), d_planes.get(),
                        d_res.get(),  count,        nvar,        sc + 5 * box};
  launch_rtvd(cs.scheme.physics, limiter, view, prm, 0);
  return compare_device_outputs(count, nvar, d_out.get(), d_planes.get(), d_res.get(), out_cpu,
                                flux_cpu, res_cpu, extreme);
}

// Every physics x reconstruction x Riemann solver x integrator: adiabatic gas without
// scalars (the hydro runs' path), isothermal gas with one scalar, and adiabatic gas with
// three scalars for one reconstruction and solver per integrator.
std::vector<Case> all_schemes() {
  std::vector<Case> out;
  for (auto ph : {Physics::kAdiabatic, Physics::kIsothermal})
    for (auto it : {Integrator::kRk2, Integrator::kVl2})
      for (auto r : {Reconstruction::kPcm, Reconstruction::kPlmMinmod, Reconstruction::kPlmMc,
                     Reconstruction::kPlmVanLeer, Reconstruction::kPlmMcEp, Reconstruction::kPpm,
                     Reconstruction::kPpmChar})
        for (auto s : {RiemannSolver::kHll, RiemannSolver::kHllc, RiemannSolver::kLlf})
          out.push_back({{r, s, it, ph}, ph == Physics::kIsothermal ? 1 : 0});
  for (auto it : {Integrator::kRk2, Integrator::kVl2})
    out.push_back({{Reconstruction::kPlmMc, RiemannSolver::kHllc, it, Physics::kAdiabatic}, 3});
  // Scalars with the wide (three-cell) stencil of mc_ep.
  out.push_back(
      {{Reconstruction::kPlmMcEp, RiemannSolver::kHllc, Integrator::kRk2, Physics::kAdiabatic}, 2});
  out.push_back(
      {{Reconstruction::kPpm, RiemannSolver::kHllc, Integrator::kVl2, Physics::kIsothermal}, 2});
  out.push_back(
      {{Reconstruction::kPpmChar, RiemannSolver::kHllc, Integrator::kRk2, Physics::kAdiabatic}, 2});
  // MHD: every reconstruction and MHD solver per integrator, and one case with 2 scalars.
  for (auto it : {Integrator::kRk2, Integrator::kVl2}) {
    for (auto r : {Reconstruction::kPcm, Reconstruction::kPlmMinmod, Reconstruction::kPlmMc,
                   Reconstruction::kPlmVanLeer, Reconstruction::kPlmMcEp, Reconstruction::kPpm})
      for (auto s : {RiemannSolver::kHll, RiemannSolver::kHlld, RiemannSolver::kLlf})
        out.push_back({{r, s, it, Physics::kMhd}, 0});
    out.push_back({{Reconstruction::kPlmMc, RiemannSolver::kHlld, it, Physics::kMhd}, 2});
  }
  return out;
}

// Seed offset of a case, distinct for each of all_schemes().
int scheme_seed(const Case& c) {
  return 1000 * c.scalars + int(c.scheme.physics) * 200 + int(c.scheme.integrator) * 100 +
         int(c.scheme.recon) * 10 + int(c.scheme.riemann);
}

std::string case_name(const Case& c) {
  const char* names[3] = {"adiabatic", "isothermal", "mhd"};
  return std::string(names[int(c.scheme.physics)]) + " integrator " +
         std::to_string(int(c.scheme.integrator)) + " recon " +
         std::to_string(int(c.scheme.recon)) + " riemann " + std::to_string(int(c.scheme.riemann)) +
         " scalars " + std::to_string(c.scalars);
}

}  // namespace
}  // namespace tessera::kernels
