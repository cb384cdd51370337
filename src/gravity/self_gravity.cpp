#include "tessera/gravity/self_gravity.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/gravity.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/gravity/fft_poisson.hpp"

namespace tessera::gravity {

mesh::FieldInfo potential_field() {
  mesh::FieldInfo f;
  f.name = kPotentialField;
  f.time_levels = 1;
  f.flux_corrected = false;
  // Restricted and injected rather than slope-limited: a potential has no conservation
  // law to keep, and refined levels will solve for their own (SOR) anyway.
  f.restricted = true;
  f.prolongation = mesh::Prolongation::kInjection;
  f.checkpointed = true;
  f.plotted = true;
  f.plot_dataset = "grav";
  return f;
}

void check_params(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("gravity.enabled")) return;
  if (p.string("gravity.boundary") == "periodic") {
    for (int d = 0; d < 3; ++d)
      if (!g.periodic(d))
        throw Error(ErrorKind::kInput,
                    strprintf("gravity.boundary = \"periodic\" needs periodic mesh boundaries, "
                              "and mesh.bc_%clo = \"%s\": a periodic potential subtracts the "
                              "mean density (the Jeans swindle), which is wrong for a bounded "
                              "domain; set gravity.boundary = \"isolated\"",
                              "xyz"[d], mesh::boundary_name(g.boundary[d][0])));
  }
  if (p.integer("amr.max_level") > 0)
    throw Error(ErrorKind::kInput,
                strprintf("gravity.enabled = true with amr.max_level = %lld: self-gravity "
                          "solves the root level only so far (the refined levels' Poisson "
                          "solver is not available yet); set amr.max_level = 0",
                          static_cast<long long>(p.integer("amr.max_level"))));
  if (p.string("gpu.resident") == "on")
    throw Error(ErrorKind::kInput,
                "gravity.enabled = true with gpu.resident = \"on\": the potential is solved "
                "on the host between the GPU's hydro steps, so the patch data cannot stay on "
                "the GPU; set gpu.resident = \"auto\" or \"off\"");
}

SelfGravity::SelfGravity(const Params& p, const physics::Model& model, const mesh::Geometry& g,
                         int phi_field, bool gpu)
    : model_(model),
      phi_field_(phi_field),
      n_(g.root_cells),
      h_(g.dx0),
      four_pi_g_(4 * std::numbers::pi * p.real("gravity.G")),
      periodic_(p.string("gravity.boundary") == "periodic") {
  solver_ = gpu ? make_cufft_poisson(n_, h_, periodic_) : make_fftw_poisson(n_, h_, periodic_);
  rho_.assign(std::size_t(n_[0]) * n_[1] * n_[2], 0.0);
  phi_.assign(std::size_t(n_[0] + 2) * (n_[1] + 2) * (n_[2] + 2), 0.0);
}

SelfGravity::~SelfGravity() = default;

std::string SelfGravity::describe() const {
  std::string s =
      strprintf("root-level FFT Poisson solve (%s) on %d x %d x %d cells, G = %g, ",
                solver_->library(), n_[0], n_[1], n_[2], four_pi_g_ / (4 * std::numbers::pi));
  if (periodic_)
    return s + strprintf(
                   "periodic boundaries: the mean density %.9g is subtracted from the "
                   "source (Jeans swindle)",
                   mean_);
  return s + "isolated boundaries (zero padding to twice the root grid)";
}

namespace {

// Calls f(patch, corner) for every root patch, in parallel.
template <class F>
void for_root_patches(const mesh::Mesh& m, F&& f) {
  const auto& groups = m.groups(0);
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int c = 0; c < mesh::kFamilySize; ++c) f(groups[g] + c, m.patch(groups[g] + c).corner);
}

constexpr int kN = mesh::kPatchSize;

}  // namespace

void SelfGravity::solve(mesh::Mesh& m) {
  const int n0 = n_[0], n1 = n_[1];
  for_root_patches(m, [&](int p, const std::array<int, 3>& c) {
    const Real* u = m.current(p);
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i)
          rho_[(std::size_t(c[2] + k) * n1 + c[1] + j) * n0 + c[0] + i] = u[(k * kN + j) * kN + i];
  });
  mean_ = solver_->solve(rho_.data(), four_pi_g_, phi_.data());
  for_root_patches(m, [&](int p, const std::array<int, 3>& c) {
    Real* phi = m.current(p) + std::size_t(phi_field_) * mesh::kPatchCells;
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i)
          phi[(k * kN + j) * kN + i] = Real(phi_[ghosted(c[0] + i, c[1] + j, c[2] + k)]);
  });
  ++solves_;
}

double SelfGravity::kick(mesh::Mesh& m, double dt) const {
  const double inv_2h = 0.5 / h_;
  const bool energy = model_.has_energy();
  const auto& groups = m.groups(0);
  double speed = 0;
#pragma omp parallel for schedule(static) reduction(max : speed)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int f = 0; f < mesh::kFamilySize; ++f) {
      const int p = groups[g] + f;
      const auto& c = m.patch(p).corner;
      Real* u = m.current(p);
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i) {
            const int I = c[0] + i, J = c[1] + j, K = c[2] + k;
            const double lo[3] = {phi_[ghosted(I - 1, J, K)], phi_[ghosted(I, J - 1, K)],
                                  phi_[ghosted(I, J, K - 1)]};
            const double hi[3] = {phi_[ghosted(I + 1, J, K)], phi_[ghosted(I, J + 1, K)],
                                  phi_[ghosted(I, J, K + 1)]};
            Real acc[3];
            kernels::gravity_acceleration(lo, hi, inv_2h, acc);
            Real* cell = u + (k * kN + j) * kN + i;
            kernels::gravity_kick(cell, mesh::kPatchCells, acc, Real(dt), energy);
            // The time step's speed: the gas's signal speed, or sqrt(h |g|), whichever is
            // larger, so that dt <= cfl sqrt(h / |g|) too (a particle starting at rest falls
            // at most cfl^2 h / 2 in a step).
            const double g2 =
                double(acc[0]) * acc[0] + double(acc[1]) * acc[1] + double(acc[2]) * acc[2];
            speed = std::max({speed, model_.max_signal_speed(cell, mesh::kPatchCells),
                              std::sqrt(h_ * std::sqrt(g2))});
          }
    }
  return speed;
}

double SelfGravity::acceleration_speed() const {
  const int n0 = n_[0], n1 = n_[1], n2 = n_[2];
  const double inv_2h = 0.5 / h_;
  double g2 = 0;
#pragma omp parallel for schedule(static) reduction(max : g2)
  for (int k = 0; k < n2; ++k)
    for (int j = 0; j < n1; ++j)
      for (int i = 0; i < n0; ++i) {
        double s = 0;
        const double d[3] = {phi_[ghosted(i - 1, j, k)] - phi_[ghosted(i + 1, j, k)],
                             phi_[ghosted(i, j - 1, k)] - phi_[ghosted(i, j + 1, k)],
                             phi_[ghosted(i, j, k - 1)] - phi_[ghosted(i, j, k + 1)]};
        for (const double x : d) s += x * inv_2h * x * inv_2h;
        g2 = std::max(g2, s);
      }
  return std::sqrt(h_ * std::sqrt(g2));
}

double SelfGravity::potential_energy(const mesh::Mesh& m) const {
  // Summed per z-plane of the root grid, then in order: the same bits whatever the threads.
  const int n0 = n_[0], n1 = n_[1], n2 = n_[2];
  std::vector<double> plane(n2, 0.0);
  std::vector<double> rho(std::size_t(n0) * n1 * n2);
  for_root_patches(m, [&](int p, const std::array<int, 3>& c) {
    const Real* u = m.current(p);
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i)
          rho[(std::size_t(c[2] + k) * n1 + c[1] + j) * n0 + c[0] + i] = u[(k * kN + j) * kN + i];
  });
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n2; ++k) {
    double s = 0;
    for (int j = 0; j < n1; ++j)
      for (int i = 0; i < n0; ++i)
        s += (rho[(std::size_t(k) * n1 + j) * n0 + i] - mean_) * phi_[ghosted(i, j, k)];
    plane[k] = s;
  }
  double w = 0;
  for (const double s : plane) w += s;
  return 0.5 * w * h_ * h_ * h_;
}

}  // namespace tessera::gravity
