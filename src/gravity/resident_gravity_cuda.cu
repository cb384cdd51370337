// The root level's self-gravity of a device-resident run (device_root.hpp): the gathers,
// the kicks and the potential's copy into the pool as kernels on the device's pool, around
// the cuFFT root solve. Compiled without contractions (CMakeLists.txt: --fmad=false): the
// kicks and the speeds equal the host's SelfGravity::kick bit for bit, so that a resident
// run equals the staged one.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/gravity.hpp"
#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/device_mesh.cuh"
#include "src/gravity/device_root.hpp"
#include "src/gravity/kick_launch.cuh"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/root_boxes.hpp"

namespace tessera::gravity {

namespace {

using cuda::DeviceBuffer;
constexpr int kN = mesh::kPatchSize;
constexpr int kCells = static_cast<int>(mesh::kPatchCells);

// One block per root patch, one thread per cell: rho[k][j][i] of the root grid from the
// patch's density (and the correction's source), as SelfGravity::solve gathers it.
__global__ void gather_density(const Real* pool, std::size_t patch_reals,
                               const int* __restrict__ position, const int* __restrict__ corner,
                               int source_field, double* rho, int n0, int n1) {
  const int p = blockIdx.x, a = threadIdx.x;
  const Real* u = pool + std::size_t(position[p]) * patch_reals;
  const int i = a % kN, j = (a / kN) % kN, k = a / (kN * kN);
  const int* c = corner + 3 * p;
  const double v = source_field >= 0
                       ? double(u[a]) + double(u[std::size_t(source_field) * kCells + a])
                       : double(u[a]);
  rho[(std::size_t(c[2] + k) * n1 + c[1] + j) * n0 + c[0] + i] = v;
}

// One block per root patch, one thread per cell: the patch's density (and the correction's
// source) into patch p of `out` ([patch][cells]), as SelfGravity::scatter_root forms it.
__global__ void own_density_kernel(const Real* pool, std::size_t patch_reals,
                                   const int* __restrict__ position, int source_field,
                                   double* out) {
  const int p = blockIdx.x, a = threadIdx.x;
  const Real* u = pool + std::size_t(position[p]) * patch_reals;
  out[std::size_t(p) * kCells + a] =
      source_field >= 0 ? double(u[a]) + double(u[std::size_t(source_field) * kCells + a])
                        : double(u[a]);
}

// The mean as SlabPoisson::solve forms it: each z-plane summed in order (one thread per
// plane), then the planes in order, divided by the cells.
__global__ void plane_sums_kernel(const double* rho, std::size_t plane, int n2, double* sums) {
  const int z = blockIdx.x * blockDim.x + threadIdx.x;
  if (z >= n2) return;
  const double* r = rho + std::size_t(z) * plane;
  double s = 0;
  for (std::size_t c = 0; c < plane; ++c) s += r[c];
  sums[z] = s;
}
__global__ void grid_mean_of(const double* sums, int n2, double cells, double* mean) {
  double sum = 0;
  for (int z = 0; z < n2; ++z) sum += sums[z];
  *mean = sum / cells;
}

// The potential of each root cell into the patch's field phi.
__global__ void scatter_potential(Real* pool, std::size_t patch_reals,
                                  const int* __restrict__ position, const int* __restrict__ corner,
                                  int phi_field, const double* __restrict__ phi, RootBoxes boxes) {
  const int p = blockIdx.x, a = threadIdx.x;
  const int i = a % kN, j = (a / kN) % kN, k = a / (kN * kN);
  const int* c = corner + 3 * p;
  pool[std::size_t(position[p]) * patch_reals + std::size_t(phi_field) * kCells + a] =
      Real(phi[boxes.at(c[0] + i, c[1] + j, c[2] + k, c[0], c[1], c[2])]);
}

// A new layout's boxes (one block each) from the old one's (from[b], -1: none, left as it
// is).
__global__ void keep_boxes(const double* __restrict__ old_phi, double* __restrict__ phi,
                           const long long* __restrict__ from) {
  const std::size_t b = blockIdx.x;
  if (from[b] < 0) return;
  const double* in = old_phi + std::size_t(from[b]) * RootBoxes::kBoxCells;
  double* out = phi + b * RootBoxes::kBoxCells;
  for (std::size_t c = threadIdx.x; c < RootBoxes::kBoxCells; c += blockDim.x) out[c] = in[c];
}

// SelfGravity::kick on one cell per thread (kernels::gravity_acceleration from the ghosted
// potential, kernels::gravity_kick), and the largest of the gas's signal speed and
// sqrt(h |g|) over the block into *speed (a maximum: exact in any order; non-negative
// doubles order as their bit patterns).
template <class Phys>
__global__ void kick_kernel(Real* pool, std::size_t patch_reals, const int* __restrict__ position,
                            const int* __restrict__ corner, const double* __restrict__ phi,
                            RootBoxes boxes, double inv_2h, double h, Real dt, bool energy,
                            const typename Phys::Params params, unsigned long long* speed) {
  __shared__ double most[kCells];
  const int p = blockIdx.x, a = threadIdx.x;
  const int* c = corner + 3 * p;
  const int I = c[0] + a % kN, J = c[1] + (a / kN) % kN, K = c[2] + a / (kN * kN);
  // (The patch's family's box holds the cells around it.)
  const auto at = [&](int i, int j, int k) { return phi[boxes.at(i, j, k, c[0], c[1], c[2])]; };
  const double lo[3] = {at(I - 1, J, K), at(I, J - 1, K), at(I, J, K - 1)};
  const double hi[3] = {at(I + 1, J, K), at(I, J + 1, K), at(I, J, K + 1)};
  Real acc[3];
  kernels::gravity_acceleration(lo, hi, inv_2h, acc);
  Real* cell = pool + std::size_t(position[p]) * patch_reals + a;
  kernels::gravity_kick(cell, mesh::kPatchCells, acc, dt, energy);
  typename Phys::Vars u;
  for (int v = 0; v < Phys::kNumVars; ++v) u[v] = cell[std::size_t(v) * kCells];
  const double g2 = double(acc[0]) * acc[0] + double(acc[1]) * acc[1] + double(acc[2]) * acc[2];
  most[a] = fmax(double(Phys::max_signal_speed(Phys::cons_to_prim(u, params), params)),
                 sqrt(h * sqrt(g2)));
  __syncthreads();
  for (int s = kCells / 2; s > 0; s /= 2) {
    if (a < s) most[a] = fmax(most[a], most[a + s]);
    __syncthreads();
  }
  if (a == 0) atomicMax(speed, static_cast<unsigned long long>(__double_as_longlong(most[0])));
}

// The pool positions and corners of the root patches of some groups, on the device (made
// again when a regrid moved them or the groups changed).
struct RootPatchTable {
  DeviceBuffer<int> position, corner;
  std::vector<int> host_position, host_corner;
  int count = 0;

  void set(const mesh::Mesh& m, const std::vector<int>& groups) {
    std::vector<int> p, c;
    p.reserve(groups.size() * mesh::kFamilySize);
    c.reserve(3 * groups.size() * mesh::kFamilySize);
    for (const int g : groups)
      for (int f = 0; f < mesh::kFamilySize; ++f) {
        p.push_back(exec::gpu::CudaDeviceMesh::position(m, g + f));
        for (const int x : m.patch(g + f).corner) c.push_back(x);
      }
    if (p == host_position && c == host_corner) return;
    position = exec::gpu::CudaDeviceMesh::to_device(p);
    corner = exec::gpu::CudaDeviceMesh::to_device(c);
    host_position = std::move(p);
    host_corner = std::move(c);
    count = static_cast<int>(host_position.size());
  }
};

class CudaRootGravity final : public DeviceRootGravity {
 public:
  // (The potentials' room: layout().)
  explicit CudaRootGravity(std::array<int, 3> n) : n_(n) {
    boxes_ = RootBoxes{n[0], n[1], n[2]};
    speed_ = DeviceBuffer<unsigned long long>(1);
  }
  ~CudaRootGravity() override {
    for (const auto& [p, ok] : locked_)
      if (ok) cudaHostUnregister(const_cast<double*>(p));
  }
  CudaRootGravity(const CudaRootGravity&) = delete;
  CudaRootGravity& operator=(const CudaRootGravity&) = delete;

  double solve(const mesh::Mesh& m, exec::DeviceMesh& dm, RootPoissonSolver& solver,
               double four_pi_g, bool periodic, int phi_field, int source_field) override {
    auto& d = dynamic_cast<exec::gpu::CudaDeviceMesh&>(dm);
    whole("the root solve on one GPU");
    if (rho_.size() == 0) {  // one rank's solve only: the root grid's density and its mean
      rho_ = DeviceBuffer<double>(std::size_t(n_[0]) * n_[1] * n_[2]);
      sums_ = DeviceBuffer<double>(std::size_t(n_[2]));
      mean_ = DeviceBuffer<double>(1);
    }
    all_.set(m, m.groups(0));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the passes before wrote the pool
    Real* pool = d.pool(m.current_slot(0));
    gather_density<<<all_.count, kCells>>>(pool, d.patch_reals(), all_.position.get(),
                                           all_.corner.get(), source_field, rho_.get(), n_[0],
                                           n_[1]);
    TESSERA_CUDA_CHECK(cudaGetLastError());
    double mean = 0;
    if (periodic) {
      const std::size_t plane = std::size_t(n_[0]) * n_[1];
      plane_sums_kernel<<<(n_[2] + 127) / 128, 128>>>(rho_.get(), plane, n_[2], sums_.get());
      TESSERA_CUDA_CHECK(cudaGetLastError());
      grid_mean_of<<<1, 1>>>(sums_.get(), n_[2], double(plane) * n_[2], mean_.get());
      TESSERA_CUDA_CHECK(cudaGetLastError());
      TESSERA_CUDA_CHECK(cudaMemcpy(&mean, mean_.get(), sizeof mean, cudaMemcpyDeviceToHost));
    } else {
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    }
    std::swap(phi_[0], phi_[1]);
    solver.solve_on_device(rho_.get(), four_pi_g, mean, phi_[0].get());
    write_potential(m, d, all_, phi_field);
    return mean;
  }

  void set_potential(const mesh::Mesh& m, exec::DeviceMesh& dm, const double* phi,
                     int phi_field) override {
    auto& d = dynamic_cast<exec::gpu::CudaDeviceMesh&>(dm);
    whole("the gathered root solve's potential");
    // The held root families, and the ghosted planes from that of the cell below the lowest
    // to that of the cell above the highest.
    int lo = 0, hi = 0;
    const std::vector<int> held = held_groups(m, lo, hi);
    const std::size_t plane = std::size_t(n_[0] + 2) * (n_[1] + 2);
    const std::size_t size = phi_[0].size(), first = std::size_t(lo) * plane,
                      count = std::size_t(hi - lo) * plane;
    if (first > size || count > size - first)
      throw Error(ErrorKind::kInternal, "a root potential's range beyond its grid");
    held_.set(m, held);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the kicks before read the last potential
    std::swap(phi_[0], phi_[1]);
    // All bytes 0xff: a NaN, so that a read of what this rank was not sent is seen.
    double* to = phi_[0].get();
    TESSERA_CUDA_CHECK(cudaMemset(to, 0xff, first * sizeof(double)));
    TESSERA_CUDA_CHECK(
        cudaMemset(to + first + count, 0xff, (size - first - count) * sizeof(double)));
    lock(phi);
    TESSERA_CUDA_CHECK(
        cudaMemcpy(to + first, phi + first, count * sizeof(double), cudaMemcpyHostToDevice));
    write_potential(m, d, held_, phi_field);
  }

  const double* own_density(const mesh::Mesh& m, exec::DeviceMesh& dm,
                            const std::vector<int>& groups, int source_field) override {
    auto& d = dynamic_cast<exec::gpu::CudaDeviceMesh&>(dm);
    own_.set(m, groups);
    grow(own_rho_, std::size_t(own_.count) * kCells);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the passes before wrote the pool
    if (own_.count > 0) {
      own_density_kernel<<<own_.count, kCells>>>(d.pool(m.current_slot(0)), d.patch_reals(),
                                                 own_.position.get(), source_field, own_rho_.get());
      TESSERA_CUDA_CHECK(cudaGetLastError());
    }
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    return own_rho_.get();
  }
  double* slab_density(std::size_t count) override {
    grow(slab_rho_, count);
    return slab_rho_.get();
  }
  double* slab_potential(std::size_t count) override {
    grow(slab_phi_, count);
    return slab_phi_.get();
  }
  std::vector<double> plane_sums(int planes, std::size_t plane) override {
    std::vector<double> sums(std::size_t(std::max(planes, 0)));
    if (planes <= 0) return sums;
    if (slab_rho_.size() < std::size_t(planes) * plane)
      throw Error(ErrorKind::kInternal, "the slab's plane sums beyond its density");
    grow(sums_, std::size_t(planes));
    plane_sums_kernel<<<(planes + 127) / 128, 128>>>(slab_rho_.get(), plane, planes, sums_.get());
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(
        cudaMemcpy(sums.data(), sums_.get(), sums.size() * sizeof(double), cudaMemcpyDeviceToHost));
    return sums;
  }
  double* begin_potential() override {
    if (!boxes_.slot) throw Error(ErrorKind::kInternal, "the slabs' potential without its boxes");
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the kicks before read the last potential
    std::swap(phi_[0], phi_[1]);
    // All bytes 0xff: a NaN, so that a read of what this rank was not sent is seen.
    TESSERA_CUDA_CHECK(cudaMemset(phi_[0].get(), 0xff, phi_[0].size() * sizeof(double)));
    return phi_[0].get();
  }
  void finish_potential(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) override {
    auto& d = dynamic_cast<exec::gpu::CudaDeviceMesh&>(dm);
    int lo = 0, hi = 0;
    held_.set(m, held_groups(m, lo, hi));
    write_potential(m, d, held_, phi_field);
  }

  double kick(const mesh::Mesh& m, exec::DeviceMesh& dm, double dt, double h,
              kernels::Physics physics, const kernels::PhysicsParams& params,
              const std::vector<int>* groups) override {
    auto& d = dynamic_cast<exec::gpu::CudaDeviceMesh&>(dm);
    kicked_.set(m, groups ? *groups : m.groups(0));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    TESSERA_CUDA_CHECK(cudaMemset(speed_.get(), 0, sizeof(unsigned long long)));
    if (kicked_.count == 0) return 0.0;
    Real* pool = d.pool(m.current_slot(0));
    const double inv_2h = 0.5 / h;
    const auto launch = [&](auto phys, const auto& prm, bool energy) {
      using P = decltype(phys);
      kick_kernel<P><<<kicked_.count, kCells>>>(pool, d.patch_reals(), kicked_.position.get(),
                                                kicked_.corner.get(), phi_[0].get(), boxes_, inv_2h,
                                                h, Real(dt), energy, prm, speed_.get());
    };
    gpu::launch_kick(physics, params, launch);
    return gpu::kick_speed(speed_.get());
  }

  void download(double* phi, double* phi_prev) override {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    TESSERA_CUDA_CHECK(
        cudaMemcpy(phi, phi_[0].get(), phi_[0].size() * sizeof(double), cudaMemcpyDeviceToHost));
    TESSERA_CUDA_CHECK(cudaMemcpy(phi_prev, phi_[1].get(), phi_[1].size() * sizeof(double),
                                  cudaMemcpyDeviceToHost));
  }
  void upload(const double* phi, const double* phi_prev) override {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    TESSERA_CUDA_CHECK(
        cudaMemcpy(phi_[0].get(), phi, phi_[0].size() * sizeof(double), cudaMemcpyHostToDevice));
    TESSERA_CUDA_CHECK(cudaMemcpy(phi_[1].get(), phi_prev, phi_[1].size() * sizeof(double),
                                  cudaMemcpyHostToDevice));
  }
  const double* potential(int which) const override { return phi_[which].get(); }
  void layout(const RootBoxes& b, const std::vector<std::int64_t>* from) override {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // nothing still reads the old potentials
    const std::size_t size = b.size();
    DeviceBuffer<double> next[2] = {DeviceBuffer<double>(size), DeviceBuffer<double>(size)};
    DeviceBuffer<int> slot;
    if (b.slot) {
      constexpr int f = RootBoxes::kFamilyCells;
      slot = exec::gpu::CudaDeviceMesh::to_device(
          std::vector<int>(b.slot, b.slot + std::size_t(n_[0] / f) * (n_[1] / f) * (n_[2] / f)));
    }
    const bool keep = from && b.slot && boxes_.slot && from->size() == b.boxes && b.boxes > 0 &&
                      phi_[0].size() == boxes_.size();
    DeviceBuffer<long long> from_device;
    if (keep) {
      from_device = DeviceBuffer<long long>(from->size());
      TESSERA_CUDA_CHECK(cudaMemcpy(from_device.get(), from->data(),
                                    from->size() * sizeof(long long), cudaMemcpyHostToDevice));
    }
    for (int w = 0; w < 2; ++w) {
      // All bytes 0xff: a NaN, as in begin_potential.
      TESSERA_CUDA_CHECK(cudaMemset(next[w].get(), 0xff, size * sizeof(double)));
      if (!keep) continue;
      keep_boxes<<<static_cast<unsigned>(b.boxes), 256>>>(phi_[w].get(), next[w].get(),
                                                          from_device.get());
      TESSERA_CUDA_CHECK(cudaGetLastError());
    }
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    for (int w = 0; w < 2; ++w) phi_[w] = std::move(next[w]);
    slot_ = std::move(slot);
    boxes_ = b;
    boxes_.slot = slot_.get();
  }
  RootBoxes boxes() const override { return boxes_; }
  double bytes() const override {
    double ints = 0;
    for (const RootPatchTable* t : {&all_, &held_, &kicked_, &own_})
      ints += double(t->position.size() + t->corner.size());
    ints += double(slot_.size());
    return double(rho_.size() + 2 * phi_[0].size() + sums_.size() + own_rho_.size() +
                  slab_rho_.size() + slab_phi_.size()) *
               sizeof(double) +
           ints * sizeof(int);
  }

 private:
  // The root families the mesh holds, and the ghosted planes [lo, hi) from that of the cell
  // below the lowest to that of the cell above the highest (0, 0 when none).
  std::vector<int> held_groups(const mesh::Mesh& m, int& lo, int& hi) const {
    std::vector<int> held;
    lo = n_[2] + 2, hi = 0;
    for (const int g : m.groups(0))
      if (m.holds(g)) {
        held.push_back(g);
        int z = m.patch(g).corner[2];
        for (int c = 1; c < mesh::kFamilySize; ++c) z = std::min(z, m.patch(g + c).corner[2]);
        lo = std::min(lo, z);               // the ghosted plane of cell z - 1
        hi = std::max(hi, z + 2 * kN + 2);  // past that of cell z + 2 kN
      }
    if (hi < lo) lo = hi = 0;
    return held;
  }

  // The potentials are laid out whole (the one-rank and the gathered solves write the
  // ghosted grid); `what` names the caller.
  void whole(const char* what) const {
    if (boxes_.slot || phi_[0].size() != boxes_.size())
      throw Error(ErrorKind::kInternal, strprintf("%s without the whole ghosted grid", what));
  }

  // `b` holds at least `count` doubles (made again, larger, when it does not).
  static void grow(DeviceBuffer<double>& b, std::size_t count) {
    if (b.size() < std::max<std::size_t>(count, 1)) {
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // no kernel still reads the old one
      b = DeviceBuffer<double>(std::max<std::size_t>(count, 1));
    }
  }

  // A host potential set_potential copies from, page-locked once (a copy from pageable
  // memory runs at a fraction of the bus's rate: 15 ms for 256^3 on an H100's host); if
  // the lock fails, the copies stay pageable.
  void lock(const double* phi) {
    for (const auto& l : locked_)
      if (l.first == phi) return;  // locked, or tried
    const bool ok = cudaHostRegister(const_cast<double*>(phi), phi_[0].size() * sizeof(double),
                                     cudaHostRegisterDefault) == cudaSuccess;
    if (!ok) cudaGetLastError();
    locked_.emplace_back(phi, ok);
  }

  // The last potential into the field phi of the patches of `t`.
  void write_potential(const mesh::Mesh& m, exec::gpu::CudaDeviceMesh& d, const RootPatchTable& t,
                       int phi_field) {
    if (t.count > 0) {
      scatter_potential<<<t.count, kCells>>>(d.pool(m.current_slot(0)), d.patch_reals(),
                                             t.position.get(), t.corner.get(), phi_field,
                                             phi_[0].get(), boxes_);
      TESSERA_CUDA_CHECK(cudaGetLastError());
    }
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::array<int, 3> n_;
  DeviceBuffer<double> rho_, sums_, mean_;
  // Several ranks, the moves on the GPUs: this rank's own root density, its slab's density
  // planes and ghosted potential planes.
  DeviceBuffer<double> own_rho_, slab_rho_, slab_phi_;
  DeviceBuffer<double> phi_[2];  // ghosted: the last solve's, the one before
  RootBoxes boxes_;              // their layout (its table: slot_)
  DeviceBuffer<int> slot_;
  DeviceBuffer<unsigned long long> speed_;
  // The root patches: all of them (one rank's solve), those the mesh holds (a potential
  // from the ranks' solve), those of the last kick.
  RootPatchTable all_, held_, kicked_, own_;
  std::vector<std::pair<const double*, bool>> locked_;  // lock()'s pointers, and whether it did
};

}  // namespace

std::unique_ptr<DeviceRootGravity> make_device_root_gravity(std::array<int, 3> n) {
  return std::make_unique<CudaRootGravity>(n);
}

}  // namespace tessera::gravity
