#include "tessera/gravity/self_gravity.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <numbers>

#include "coarse_potential.hpp"
#include "device_correction.hpp"
#include "device_potential.hpp"
#include "device_root.hpp"
#include "device_rows.hpp"
#include "kernels/gravity.hpp"
#include "resident_gather.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/partition.hpp"

namespace tessera::gravity {

mesh::FieldInfo potential_field() {
  mesh::FieldInfo f;
  f.name = kPotentialField;
  f.time_levels = 2;
  f.flux_corrected = false;
  // A potential has no conservation law to keep, and every level solves for its own.
  f.restricted = false;
  // New patches of a regrid: the first guess of their solve (the solves' ghost values are
  // interpolated quadratically by gather_potential).
  f.prolongation = mesh::Prolongation::kLinear;
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
}

SelfGravity::SelfGravity(const Params& p, const physics::Model& model, const mesh::Geometry& g,
                         int phi_field, int source_field, bool gpu)
    : model_(model),
      phi_field_(phi_field),
      source_field_(source_field),
      n_(g.root_cells),
      h_(g.dx0),
      four_pi_g_(4 * std::numbers::pi * p.real("gravity.G")),
      periodic_(p.string("gravity.boundary") == "periodic"),
      gpu_(gpu),
      slabs_wanted_(p.string("mpi.root_fft") == "slabs"),
      route_(p.string("mpi.device_exchange")) {
  sor_.omega = Real(p.real("gravity.sor_omega"));
  sor_.tolerance = Real(p.real("gravity.sor_tolerance"));
  sor_.max_iterations = static_cast<int>(p.integer("gravity.sor_max_iterations"));
  // (The potential's room: make_solver, which knows whether the slabs cut it.)
}

SelfGravity::~SelfGravity() = default;

std::string SelfGravity::describe() const {
  std::string s = strprintf("root-level FFT Poisson solve (%s) on %d x %d x %d cells%s, G = %g, ",
                            gpu_ ? "cuFFT" : "FFTW", n_[0], n_[1], n_[2],
                            slabs() ? strprintf(" in z-slabs over %d ranks", comm_->size()).c_str()
                            : comm_ && comm_->size() > 1 ? " (the whole grid on every rank)"
                                                         : "",
                            four_pi_g_ / (4 * std::numbers::pi));
  if (periodic_)
    return s + strprintf(
                   "periodic boundaries: the mean density %.9g is subtracted from the "
                   "source (Jeans swindle)",
                   mean_);
  return s + "isolated boundaries (zero padding to twice the root grid)";
}

namespace {

// Calls f(patch, corner) for every root patch this rank holds, in parallel.
template <class F>
void for_root_patches(const mesh::Mesh& m, F&& f) {
  const auto& groups = m.groups(0);
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (m.holds(groups[g]))
      for (int c = 0; c < mesh::kFamilySize; ++c) f(groups[g] + c, m.patch(groups[g] + c).corner);
}

constexpr int kN = mesh::kPatchSize;

}  // namespace

void SelfGravity::make_solver() {
  // Slabs only when every rank solves on the same side (with run.backend = "auto" the ranks
  // of a job may differ): every rank must take the same collectives.
  if (comm_ && comm_->size() > 1 && comm_->max(gpu_ ? 1.0 : 0.0) != comm_->min(gpu_ ? 1.0 : 0.0))
    slabs_wanted_ = false;
  if (slabs()) {
    slab_solver_ = std::make_unique<SlabPoisson>(n_, h_, periodic_, *comm_, gpu_, route_);
    // A rank keeps only the potential it reads, the boxes around the root families it holds
    // (follow_held); what it reads outside them is NaN, so that such a read cannot go
    // unnoticed. Until the first solve it holds no box: every read is that NaN.
    boxed_ = true;
    constexpr int f = RootBoxes::kFamilyCells;
    box_slot_.assign(std::size_t(n_[0] / f) * (n_[1] / f) * (n_[2] / f), -1);
    box_count_ = 0;
    phi_.assign(1, std::numeric_limits<double>::quiet_NaN());
    phi_prev_ = phi_;
    if (gpu_ && comm_->rank() == 0)
      log_line("root FFT on the GPUs in z-slabs over %d ranks: %s", comm_->size(),
               slab_solver_->routes().c_str());
  } else {
    solver_ = gpu_ ? make_cufft_poisson(n_, h_, periodic_) : make_fftw_poisson(n_, h_, periodic_);
    phi_.assign(boxes().size(), 0.0);
    phi_prev_ = phi_;
  }
}

void SelfGravity::solve(mesh::Mesh& m, exec::DeviceMesh* resident) {
  if (!solver_ && !slab_solver_) make_solver();
  if (resident && on_device()) {
    // The root level's data are on the GPU only: its solve must be too.
    if (!solver_ || !solver_->on_device())
      throw Error(ErrorKind::kInternal,
                  "a device-resident root level with a root solve that does not run on its GPU");
    make_device_current();  // the last potential becomes the previous one there
    mean_ =
        device_->solve(m, *resident, *solver_, four_pi_g_, periodic_, phi_field_, source_field_);
    m.set_host_stale(m.current_slot(0), true);  // the root's phi was written on the device
    host_current_ = false;
    ++solves_;
    return;
  }
  if (resident && slab_solver_ && gpu_) {
    solve_on_gpus(m, *resident);
    return;
  }
  // Several ranks with a resident root level, gathered: the ranks' solve, as below, from
  // this rank's root density (and source) read from the GPU; the potential goes back up for
  // the kicks.
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point& t) {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - t).count();
    t = now;
    return s;
  };
  auto t = Clock::now();
  std::vector<Real>& own = own_density_;
  if (resident) {
    if (!gpu_)
      throw Error(ErrorKind::kInternal, "a device-resident root level without the GPU solve");
    make_device_current();  // the previous potential there, before set_potential's swap
    std::vector<int> fields = {0};
    if (source_field_ >= 0) fields.push_back(source_field_);
    resident->read_fields(m, own_root_patches(m), m.current_slot(0), fields, own);
    root_times_.read += since(t);
  }
  make_host_current();
  device_current_ = false;
  if (slab_solver_) follow_held(m);
  phi_prev_.swap(phi_);
  if (slab_solver_) {
    scatter_root(m, *slab_solver_, rho_, resident ? &own : nullptr);
    root_times_.to_slabs += since(t);
    mean_ = slab_solver_->solve(rho_.data(), four_pi_g_);
    root_times_.fft += since(t);
    root_times_.fft_device += slab_solver_->last_device_seconds();
    scatter_potential(m, *slab_solver_);
    root_times_.to_readers += since(t);
  } else {
    const int n0 = n_[0], n1 = n_[1];
    rho_.resize(std::size_t(n_[0]) * n_[1] * n_[2]);
    auto fill = [&](const std::array<int, 3>& c, const Real* u, const Real* src) {
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i) {
            const int a = (k * kN + j) * kN + i;
            rho_[(std::size_t(c[2] + k) * n1 + c[1] + j) * n0 + c[0] + i] =
                src ? double(u[a]) + double(src[a]) : double(u[a]);
          }
    };
    if (resident) {
      // This rank's own patches; gather_root fills the others'.
      const std::vector<int> patches = own_root_patches(m);
      const std::size_t fields = source_field_ >= 0 ? 2 : 1;
#pragma omp parallel for schedule(static)
      for (std::size_t p = 0; p < patches.size(); ++p) {
        const Real* u = own.data() + p * fields * mesh::kPatchCells;
        fill(m.patch(patches[p]).corner, u, fields == 2 ? u + mesh::kPatchCells : nullptr);
      }
    } else {
      for_root_patches(m, [&](int p, const std::array<int, 3>& c) {
        const Real* u = m.current(p);
        fill(c, u,
             source_field_ >= 0 ? u + std::size_t(source_field_) * mesh::kPatchCells : nullptr);
      });
    }
    gather_root(m, rho_);
    root_times_.to_slabs += since(t);
    mean_ = solver_->solve(rho_.data(), four_pi_g_, phi_.data());
    root_times_.fft += since(t);
  }
  ++solves_;
  if (resident) {
    // Up to the GPU: the ghosted planes around the root families this rank holds.
    device_->set_potential(m, *resident, phi_.data(), phi_field_);
    root_times_.up += since(t);
    device_current_ = true;
    m.set_host_stale(m.current_slot(0), true);  // the root's phi was written on the device
    return;
  }
  const RootBoxes at = boxes();
  for_root_patches(m, [&](int p, const std::array<int, 3>& c) {
    Real* phi = m.current(p) + std::size_t(phi_field_) * mesh::kPatchCells;
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i)
          phi[(k * kN + j) * kN + i] =
              Real(phi_[at.at(c[0] + i, c[1] + j, c[2] + k, c[0], c[1], c[2])]);
  });
}

std::vector<int> SelfGravity::own_root_patches(const mesh::Mesh& m) const {
  std::vector<int> patches;
  for (const int g : m.groups(0))
    if (!comm_ || partition_->owns(comm_->rank(), g))
      for (int c = 0; c < mesh::kFamilySize; ++c) patches.push_back(g + c);
  return patches;
}

double SelfGravity::kick(mesh::Mesh& m, double dt, const std::vector<int>* only,
                         exec::DeviceMesh* resident) const {
  if (resident) {
    // One rank kicks every group; several ranks their own (`only`).
    if (!gpu_ || (on_device() && only && only->size() != m.groups(0).size()))
      throw Error(ErrorKind::kInternal, "a kick of some groups of a device-resident root level");
    make_device_current();
    m.set_host_stale(m.current_slot(0), true);
    return device_->kick(m, *resident, dt, h_, model_.physics(), model_.params(), only);
  }
  make_host_current();
  const double inv_2h = 0.5 / h_;
  const bool energy = model_.has_energy();
  const auto& groups = only ? *only : m.groups(0);
  const RootBoxes at = boxes();
  double speed = 0;
#pragma omp parallel for schedule(static) reduction(max : speed)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int f = 0; f < mesh::kFamilySize; ++f) {
      const int p = groups[g] + f;
      const auto c = m.patch(p).corner;
      Real* u = m.current(p);
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i) {
            const int I = c[0] + i, J = c[1] + j, K = c[2] + k;
            // (The patch's family's box holds the cell around it.)
            const auto phi = [&](int a, int b, int e) {
              return phi_[at.at(a, b, e, c[0], c[1], c[2])];
            };
            const double lo[3] = {phi(I - 1, J, K), phi(I, J - 1, K), phi(I, J, K - 1)};
            const double hi[3] = {phi(I + 1, J, K), phi(I, J + 1, K), phi(I, J, K + 1)};
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

namespace {

// Calls f(index into groups, phi box) for every group of `groups`, in parallel, each with
// the group's potential and its ghost layer (gather_potential, same-level neighbours'
// values where they exist). The gather reads only the potential, which f may not write: f
// may write the level's other fields while other groups are gathered.
template <class F>
void for_level_potentials(const mesh::Mesh& m, const SelfGravity* root, int phi_field,
                          const std::vector<int>& groups, double weight, F&& f) {
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t g = 0; g < groups.size(); ++g)
    errors.run(static_cast<std::int64_t>(g), [&] {
      thread_local std::vector<Real> box;
      box.resize(kernels::box_cells(1));
      gather_potential(m, phi_field, groups[g], weight, nullptr, box.data(), false, -1, root);
      f(g, box.data());
    });
  errors.rethrow();
}

}  // namespace

double SelfGravity::kick_refined(mesh::Mesh& m, int level, double dt, double weight,
                                 const std::vector<int>* only, exec::DeviceMesh* resident) const {
  if (resident) {
    // The groups of the device copy's tables: every group on one rank, its own on several.
    if (only && static_cast<int>(only->size()) != resident->tables(level).groups())
      throw Error(ErrorKind::kInternal,
                  "a device-resident refined level's kick of groups its tables do not list");
    const DeviceRootPotential root = device_root();
    m.set_host_stale(m.current_slot(level), true);
    return device_level(m, *resident, level)
        .kick(m, *resident, phi_field_, weight, dt, model_.physics(), model_.params(), root);
  }
  make_host_current();  // a resident root's last solve ran on the GPU
  const double h = m.dx(level), inv_2h = 0.5 / h;
  const bool energy = model_.has_energy();
  const auto& groups = only ? *only : m.groups(level);
  std::vector<double> speeds(groups.size(), 0.0);  // per group, then the largest
  for_level_potentials(m, this, phi_field_, groups, weight, [&](std::size_t g, const Real* phi) {
    constexpr int n = kernels::kSorBox;
    double speed = 0;
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      Real* u = m.current(groups[g] + c);
      const int ox = (c & 1) * kN, oy = ((c >> 1) & 1) * kN, oz = ((c >> 2) & 1) * kN;
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i) {
            const int b = ((k + oz + 1) * n + (j + oy + 1)) * n + (i + ox + 1);
            const Real lo[3] = {phi[b - 1], phi[b - n], phi[b - n * n]};
            const Real hi[3] = {phi[b + 1], phi[b + n], phi[b + n * n]};
            Real acc[3];
            kernels::gravity_acceleration(lo, hi, Real(inv_2h), acc);
            Real* cell = u + (k * kN + j) * kN + i;
            kernels::gravity_kick(cell, mesh::kPatchCells, acc, Real(dt), energy);
            const double g2 =
                double(acc[0]) * acc[0] + double(acc[1]) * acc[1] + double(acc[2]) * acc[2];
            speed = std::max({speed, model_.max_signal_speed(cell, mesh::kPatchCells),
                              std::sqrt(h * std::sqrt(g2))});
          }
    }
    speeds[g] = speed;
  });
  return speeds.empty() ? 0.0 : *std::max_element(speeds.begin(), speeds.end());
}

double SelfGravity::acceleration_speed(const mesh::Mesh& m, int level,
                                       const std::vector<int>* only) const {
  make_host_current();  // a resident root's last solve ran on the GPU
  if (level == 0) return root_acceleration_speed(m);
  const double h = m.dx(level), inv_2h = 0.5 / h;
  const auto& groups = only ? *only : m.groups(level);
  std::vector<double> speeds(groups.size(), 0.0);
  for_level_potentials(m, this, phi_field_, groups, 1.0, [&](std::size_t g, const Real* box) {
    constexpr int n = kernels::kSorBox;
    double speed = 0;
    for (int k = 1; k < n - 1; ++k)
      for (int j = 1; j < n - 1; ++j)
        for (int i = 1; i < n - 1; ++i) {
          const Real* phi = box + (k * n + j) * n + i;
          const Real lo[3] = {phi[-1], phi[-n], phi[-n * n]};
          const Real hi[3] = {phi[1], phi[n], phi[n * n]};
          Real acc[3];
          kernels::gravity_acceleration(lo, hi, Real(inv_2h), acc);
          const double g2 =
              double(acc[0]) * acc[0] + double(acc[1]) * acc[1] + double(acc[2]) * acc[2];
          speed = std::max(speed, std::sqrt(h * std::sqrt(g2)));
        }
    speeds[g] = speed;
  });
  return speeds.empty() ? 0.0 : *std::max_element(speeds.begin(), speeds.end());
}

double SelfGravity::root_acceleration_speed(const mesh::Mesh& m) const {
  // Over this rank's root patches (the caller takes the maximum over the ranks).
  const double inv_2h = 0.5 / h_;
  const RootBoxes at = boxes();
  double g2 = 0;
  std::mutex lock;
  for_root_patches(m, [&](int, const std::array<int, 3>& c) {
    double local = 0;
    const auto phi = [&](int a, int b, int e) { return phi_[at.at(a, b, e, c[0], c[1], c[2])]; };
    for (int k = c[2]; k < c[2] + kN; ++k)
      for (int j = c[1]; j < c[1] + kN; ++j)
        for (int i = c[0]; i < c[0] + kN; ++i) {
          double s = 0;
          const double d[3] = {phi(i - 1, j, k) - phi(i + 1, j, k),
                               phi(i, j - 1, k) - phi(i, j + 1, k),
                               phi(i, j, k - 1) - phi(i, j, k + 1)};
          for (const double x : d) s += x * inv_2h * x * inv_2h;
          local = std::max(local, s);
        }
    std::lock_guard guard(lock);
    g2 = std::max(g2, local);
  });
  return std::sqrt(h_ * std::sqrt(g2));
}

double SelfGravity::potential_energy(const mesh::Mesh& m) const {
  make_host_current();  // a resident root's last solve ran on the GPU
  // Each root patch's sum of (rho - mean) phi, keyed by its canonical position and added in
  // that order (Comm::ordered_sum): the same bits whatever the threads and the ranks. A rank
  // sums its own root patches, whose potential it holds (with slabs, phi_ holds the boxes
  // around its families): neither the density nor the potential of the whole grid is
  // gathered on every rank.
  const std::vector<int> order = m.canonical_order();
  const int rank = comm_ ? comm_->rank() : 0;
  std::vector<std::int64_t> keys;
  for (std::size_t i = 0; i < order.size(); ++i)
    if (m.patch(order[i]).level == 0 && (!comm_ || partition_->owns(rank, order[i])))
      keys.push_back(static_cast<std::int64_t>(i));
  std::vector<double> sums(keys.size(), 0.0);
  const RootBoxes at = boxes();
#pragma omp parallel for schedule(static)
  for (std::size_t n = 0; n < keys.size(); ++n) {
    const int p = order[keys[n]];
    const auto c = m.patch(p).corner;
    const Real* rho = m.current(p);
    double s = 0;
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i)
          s += (double(rho[(k * kN + j) * kN + i]) - mean_) *
               phi_[at.at(c[0] + i, c[1] + j, c[2] + k, c[0], c[1], c[2])];
    sums[n] = s;
  }
  const double w = (comm_ ? *comm_ : parallel::serial_comm()).ordered_sum(keys, sums, 1)[0];
  return 0.5 * w * h_ * h_ * h_;
}

}  // namespace tessera::gravity
