// CUDA executor (Schive et al. 2010 §3.1, Fig. 5): a batch of prepared patch groups is
// split over several streams; each stream copies its part to the GPU, runs the solver
// kernels and copies the new interiors, flux planes and per-group results back, so that
// copies of one part overlap the kernels of another. Host staging is pinned and double
// buffered by the pipeline, which prepares the next batch while this one runs.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/coarse_fine_gather.hpp"
#include "kernels/exact_ops.hpp"
#include "kernels/resident_gather.hpp"
#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/device_mesh.cuh"
#include "tessera/core/log.hpp"
#include "tessera/exec/executor.hpp"

namespace tessera::exec {

namespace {

using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;
using cuda::Stream;

struct ChunkEvents {
  Event start, copied_in, computed, scattered, done;
  int count = 0;
  bool resident = false;
};

// Device residency (resident.hpp): ghost zones gathered from the device pool, interiors
// scattered back into it.
using gpu::CudaDeviceMesh;
using gpu::FieldSigns;
using gpu::kMaxFields;
using gpu::ProblemArgs;

// The parent level's data at the batch's time weight, as gather_box interpolates them
// (kernels/coarse_fine_gather.hpp reads it per coarse cell).
struct CoarseValue {
  const Real* now;
  const Real* before;
  std::size_t patch_reals;
  double weight;
  __device__ Real operator()(int patch, int v, int cell, bool one_level) const {
    const std::size_t i =
        std::size_t(patch) * patch_reals + std::size_t(v) * mesh::kPatchCells + cell;
    if (weight == 1 || one_level) return now[i];
    if (weight == 0) return before[i];
    return kernels::mul_rn(Real(1 - weight), before[i]) + kernels::mul_rn(Real(weight), now[i]);
  }
};

// The coarse-fine side of a batch's gather: the groups' parent-level neighbourhoods.
struct CoarseArgs {
  const int* coarse;  // kernels::kCoarseBlocks per group
  const int* clamp;   // kernels::kCoarseClamp per group
  CoarseValue value;
};

// One thread per box cell and group (blockIdx.y), looping over the fields: the source
// cell is found once (kernels::gather_source, the host's prepare semantics) and each
// field's plane read from it; consecutive threads read consecutive x, so rows coalesce.
// A cell of a block on the coarser level is prolonged from it (coarse_fine_gather.hpp).
__global__ void gather_kernel(const Real* __restrict__ pool, std::size_t patch_reals,
                              const int* __restrict__ blocks, const int* __restrict__ codes,
                              int ghost, int first_field, int nfields, FieldSigns signs,
                              CoarseArgs ca, const __grid_constant__ kernels::ProlongFields pf,
                              ProblemArgs pa, Real* __restrict__ in, std::size_t in_reals,
                              const int* __restrict__ list) {
  const int n3 = kernels::box_cells(ghost);
  const int cell = blockIdx.x * blockDim.x + threadIdx.x;
  if (cell >= n3) return;
  // g: the box in the batch; t: the group's entry in the tables (a listed batch's own).
  const int g = blockIdx.y, t = list ? list[g] : g;
  // Problem-defined sides: the tables of this group's sides.
  const int* sides[6] = {};
  if (pa.side)
    for (int i = 0; i < 6; ++i) {
      const int at = pa.side[std::size_t(t) * 6 + i];
      sides[i] = at >= 0 ? pa.entries + at : nullptr;
    }
  const kernels::GatherSource src =
      kernels::gather_source(blocks + std::size_t(t) * kernels::kGatherBlocks, codes[t], ghost,
                             cell, pa.side ? sides : nullptr);
  // A problem-defined side's state, where it is the cell's value (the problem's fields).
  const auto state = [&](int v, Real& x) {
    if (src.state < 0 || first_field + v >= pa.nvar) return false;
    x = pa.states[std::size_t(src.state) * pa.nvar + first_field + v];
    const int d = signs.component[v];
    if (d >= 0 && ((src.state_flip >> d) & 1)) x = -x;
    return true;
  };
  Real* out = in + g * in_reals + cell;
  if (src.patch == kernels::kGatherCoarse) {
    kernels::prolong_ghost_cell(ca.value, ca.coarse + std::size_t(t) * kernels::kCoarseBlocks,
                                ca.clamp + std::size_t(t) * kernels::kCoarseClamp, pf, ghost,
                                src.at, first_field, nfields, [&](int field, Real x) {
                                  const int v = field - first_field;
                                  Real y;
                                  if (state(v, y)) {
                                    out[std::size_t(v) * n3] = y;
                                    return;
                                  }
                                  const int d = signs.component[v];
                                  out[std::size_t(v) * n3] =
                                      d >= 0 && ((src.flip >> d) & 1) ? -x : x;
                                });
    return;
  }
  if (src.patch < 0) {  // a malformed table: make the cell unphysical rather than read anywhere
    for (int v = 0; v < nfields; ++v) out[std::size_t(v) * n3] = Real(NAN);
    return;
  }
  const Real* from = pool + std::size_t(src.patch) * patch_reals +
                     std::size_t(first_field) * mesh::kPatchCells + src.cell;
  for (int v = 0; v < nfields; ++v) {
    Real x;
    if (state(v, x)) {
      out[std::size_t(v) * n3] = x;
      continue;
    }
    x = from[std::size_t(v) * mesh::kPatchCells];
    const int d = signs.component[v];
    out[std::size_t(v) * n3] = d >= 0 && ((src.flip >> d) & 1) ? -x : x;
  }
}

// One thread per interior cell and group: the 16^3 interior goes to the group's 8 patches.
__global__ void scatter_kernel(const Real* __restrict__ interior, std::size_t out_reals,
                               const int* __restrict__ first_patch, int first_field, int nfields,
                               Real* __restrict__ pool, std::size_t patch_reals,
                               const int* __restrict__ list) {
  constexpr int G = kernels::kGroupSize, P = kernels::kPatchSize;
  const int cell = blockIdx.x * blockDim.x + threadIdx.x;
  if (cell >= kernels::kGroupCells) return;
  const int g = blockIdx.y, t = list ? list[g] : g;
  const int i = cell % G, j = (cell / G) % G, k = cell / (G * G);
  const int child = (i / P) + 2 * (j / P) + 4 * (k / P);
  const int local = ((k % P) * P + (j % P)) * P + (i % P);
  Real* to = pool + std::size_t(first_patch[t] + child) * patch_reals +
             std::size_t(first_field) * mesh::kPatchCells + local;
  const Real* from = interior + g * out_reals + cell;
  for (int v = 0; v < nfields; ++v)
    to[std::size_t(v) * mesh::kPatchCells] = from[std::size_t(v) * kernels::kGroupCells];
}

// Host and device buffers of one batch, sized for the solver's group shape; the device
// scratch is the solver's, per group.
class CudaStaging final : public Staging {
 public:
  CudaStaging(int groups, int streams, const GroupSolver& solver)
      : h_in(groups * solver.shape().in_reals()),
        h_out(groups * solver.shape().out_reals()),
        h_flux(groups * solver.shape().flux_reals()),
        h_results(groups),
        d_in(groups * solver.shape().in_reals()),
        d_out(groups * solver.shape().out_reals()),
        d_flux(groups * solver.shape().flux_reals()),
        d_scratch(groups * solver.device_scratch_reals()),
        d_results(groups),
        h_list(groups),
        d_list(groups),
        scratch_reals(solver.device_scratch_reals()),
        chunks(streams) {
    set_shape(groups, solver.shape());
    in = h_in.get(), out = h_out.get(), flux = h_flux.get(), results = h_results.get();
  }
  PinnedBuffer<Real> h_in, h_out, h_flux;
  PinnedBuffer<kernels::GroupResult> h_results;
  DeviceBuffer<Real> d_in, d_out, d_flux, d_scratch;
  DeviceBuffer<kernels::GroupResult> d_results;
  PinnedBuffer<int> h_list;  // a listed resident batch's groups (ResidentBatch::groups)
  DeviceBuffer<int> d_list;
  std::size_t scratch_reals;
  std::vector<ChunkEvents> chunks;
};

class CudaExecutor final : public Executor {
 public:
  CudaExecutor(int groups_per_batch, int streams) {
    int device = 0;
    TESSERA_CUDA_CHECK(cudaGetDevice(&device));
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&props_, device));
    // One group per multiprocessor per batch, in 4 streams: measured fastest on an H200
    // (uniform 256^3: 3.0e8 cell-updates/s, against 2.4e8 with 2 groups per SM and 2.0e8
    // with 8; docs/performance.md). Smaller batches start the pipeline sooner and let
    // the CPU's prepare of the next batch hide more of the device time.
    batch_ = groups_per_batch > 0 ? groups_per_batch : props_.multiProcessorCount;
    nstreams_ = streams > 0 ? streams : 4;
    for (int s = 0; s < nstreams_; ++s) streams_.push_back(std::make_unique<Stream>());
  }
  ~CudaExecutor() override { cudaDeviceSynchronize(); }

  const char* name() const override { return "cuda"; }
  int preferred_batch() const override { return batch_; }
  DeviceTimes device_times() const override { return times_; }

  // Best of five 256 MiB copies from pinned memory: the transfer ceiling of the pipeline.
  double pinned_h2d_bandwidth() override {
    if (bandwidth_ > 0) return bandwidth_;
    const std::size_t bytes = std::size_t(256) << 20;
    PinnedBuffer<char> host(bytes);
    DeviceBuffer<char> dev(bytes);
    std::memset(host.get(), 1, bytes);
    Event a, b;
    for (int rep = 0; rep < 5; ++rep) {
      TESSERA_CUDA_CHECK(cudaEventRecord(a.get(), 0));
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.get(), bytes, cudaMemcpyHostToDevice, 0));
      TESSERA_CUDA_CHECK(cudaEventRecord(b.get(), 0));
      TESSERA_CUDA_CHECK(cudaEventSynchronize(b.get()));
      float ms = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
      bandwidth_ = std::max(bandwidth_, bytes / (1e-3 * ms));
    }
    return bandwidth_;
  }

  std::unique_ptr<Staging> allocate(int groups, const GroupSolver& solver) override {
    return std::make_unique<CudaStaging>(groups, nstreams_, solver);
  }

  // The solver's kernels on groups [first, first + n) of a batch, on `stream`: the same for
  // staged and resident batches.
  static void solve_chunk(const GroupSolver& solver, CudaStaging& st, int first, int n,
                          cudaStream_t stream) {
    const DeviceBatch batch{
        st.d_in.get() + first * st.in_reals,           st.d_out.get() + first * st.out_reals,
        st.d_flux.get() + first * st.flux_reals,       st.d_results.get() + first,
        st.d_scratch.get() + first * st.scratch_reals, n};
    solver.solve_device(batch, stream);
    TESSERA_CUDA_CHECK(cudaGetLastError());
  }

  void submit(const GroupSolver& solver, Staging& base, int count) override {
    auto& st = static_cast<CudaStaging&>(base);
    const std::size_t in_reals = st.in_reals, out_reals = st.out_reals;
    const std::size_t flux_reals = st.flux_reals;
    const int per = (count + nstreams_ - 1) / nstreams_;
    for (int s = 0; s < nstreams_; ++s) {
      const int first = s * per, n = std::max(0, std::min(per, count - first));
      ChunkEvents& ev = st.chunks[s];
      ev.count = n;
      ev.resident = false;
      if (n == 0) continue;
      cudaStream_t stream = streams_[s]->get();
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.start.get(), stream));
      TESSERA_CUDA_CHECK(
          cudaMemcpyAsync(st.d_in.get() + first * in_reals, st.h_in.get() + first * in_reals,
                          n * in_reals * sizeof(Real), cudaMemcpyHostToDevice, stream));
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.copied_in.get(), stream));
      solve_chunk(solver, st, first, n, stream);
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.computed.get(), stream));
      TESSERA_CUDA_CHECK(
          cudaMemcpyAsync(st.h_out.get() + first * out_reals, st.d_out.get() + first * out_reals,
                          n * out_reals * sizeof(Real), cudaMemcpyDeviceToHost, stream));
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(
          st.h_flux.get() + first * flux_reals, st.d_flux.get() + first * flux_reals,
          n * flux_reals * sizeof(Real), cudaMemcpyDeviceToHost, stream));
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(st.h_results.get() + first, st.d_results.get() + first,
                                         n * sizeof(kernels::GroupResult), cudaMemcpyDeviceToHost,
                                         stream));
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.done.get(), stream));
    }
  }

  std::unique_ptr<DeviceMesh> make_resident(const mesh::Mesh& m,
                                            const std::vector<std::vector<int>>& groups) override {
    return std::make_unique<CudaDeviceMesh>(m, groups);
  }
  std::unique_ptr<DeviceHalo> make_halo(DeviceMesh& dm, const mesh::Mesh& m, parallel::Comm& comm,
                                        const HaloPlan& plan, const std::string& route) override {
    return gpu::make_halo(static_cast<CudaDeviceMesh&>(dm), m, comm, plan, route);
  }

  void submit_resident(const GroupSolver& solver, Staging& base, int count, DeviceMesh& dmb,
                       const ResidentBatch& rb) override {
    auto& st = static_cast<CudaStaging&>(base);
    auto& dm = static_cast<CudaDeviceMesh&>(dmb);
    const std::size_t in_reals = st.in_reals, out_reals = st.out_reals;
    const GroupShape shape = st.shape;
    // Fields gathered from the device copy; the box's other variables come from the host
    // staging (the flags of a correcting pass).
    const int gathered = rb.in_count >= 0 ? rb.in_count : shape.in_vars;
    const bool listed = rb.groups != nullptr;
    bool outside = rb.level < 0 || rb.level >= dm.levels() || gathered < 1 ||
                   gathered > shape.in_vars ||
                   (!rb.gather && rb.in_first + gathered > kMaxFields) ||
                   rb.out_first + shape.out_vars > kMaxFields;
    if (!outside && listed) {
      // Listed groups: within the tables and increasing (a group twice would race in the
      // scatter and add its fluxes twice).
      outside = count < 1 || count > st.capacity;
      for (int g = 0; g < count && !outside; ++g)
        outside = rb.groups[g] < 0 || rb.groups[g] >= dm.tables(rb.level).groups() ||
                  (g > 0 && rb.groups[g] <= rb.groups[g - 1]);
      if (!outside) std::copy(rb.groups, rb.groups + count, st.h_list.get());
      if (rb.gather)  // a pass's own gather takes a first group
        throw Error(ErrorKind::kInternal, "a listed device-resident batch with its own gather");
    } else if (!outside) {
      outside = rb.first_group < 0 || rb.first_group + count > dm.tables(rb.level).groups();
    }
    if (outside) throw Error(ErrorKind::kInternal, "a device-resident batch outside its mesh");
    FieldSigns signs{};
    for (int v = 0; v < kMaxFields; ++v)
      signs.component[v] = v + rb.in_first < kMaxFields ? dm.signs().component[v + rb.in_first]
                                                        : static_cast<signed char>(-1);
    const GatherTables& tables = dm.tables(rb.level);
    const int level = rb.level;
    if (rb.coarse.now < 0 || rb.coarse.now > 1 || rb.coarse.before < 0 || rb.coarse.before > 1)
      throw Error(ErrorKind::kInternal,
                  "a device-resident batch without the coarser level's slots");
    const ProblemArgs problem = dm.problem_args(level, shape.ghost, rb.time);
    const CoarseArgs coarse{dm.coarse(level), dm.clamp(level),
                            CoarseValue{dm.pool(rb.coarse.now), dm.pool(rb.coarse.before),
                                        dm.patch_reals(), rb.coarse.weight}};
    const int per = (count + nstreams_ - 1) / nstreams_;
    constexpr int kThreads = 256;
    const int n3 = kernels::box_cells(shape.ghost);
    for (int s = 0; s < nstreams_; ++s) {
      const int first = s * per, n = std::max(0, std::min(per, count - first));
      ChunkEvents& ev = st.chunks[s];
      ev.count = n;
      ev.resident = true;
      if (n == 0) continue;
      cudaStream_t stream = streams_[s]->get();
      // A listed chunk's tables are indexed through its part of the list (`list`), from the
      // tables' start.
      const int group = listed ? 0 : rb.first_group + first;
      const int* list = listed ? st.d_list.get() + first : nullptr;
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.start.get(), stream));
      if (listed)
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(st.d_list.get() + first, st.h_list.get() + first,
                                           n * sizeof(int), cudaMemcpyHostToDevice, stream));
      if (rb.gather)
        rb.gather->gather(dm, group, n, st.d_in.get() + first * in_reals, in_reals, stream);
      else
        gather_kernel<<<dim3((n3 + kThreads - 1) / kThreads, n), kThreads, 0, stream>>>(
            dm.pool(rb.read), dm.patch_reals(),
            dm.blocks(level) + std::size_t(group) * kernels::kGatherBlocks, dm.codes(level) + group,
            shape.ghost, rb.in_first, gathered, signs,
            CoarseArgs{coarse.coarse + std::size_t(group) * kernels::kCoarseBlocks,
                       coarse.clamp + std::size_t(group) * kernels::kCoarseClamp, coarse.value},
            tables.prolong,
            ProblemArgs{problem.side ? problem.side + std::size_t(group) * 6 : nullptr,
                        problem.entries, problem.states, problem.nvar},
            st.d_in.get() + first * in_reals, in_reals, list);
      TESSERA_CUDA_CHECK(cudaGetLastError());
      if (gathered < shape.in_vars) {
        const std::size_t skip = std::size_t(gathered) * n3, pitch = in_reals * sizeof(Real);
        TESSERA_CUDA_CHECK(cudaMemcpy2DAsync(
            st.d_in.get() + first * in_reals + skip, pitch, st.h_in.get() + first * in_reals + skip,
            pitch, (in_reals - skip) * sizeof(Real), n, cudaMemcpyHostToDevice, stream));
      }
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.copied_in.get(), stream));
      solve_chunk(solver, st, first, n, stream);
      if (rb.reflux_dt != 0)
        dm.close_registers(level, group, n, st.d_flux.get() + first * st.flux_reals, st.flux_reals,
                           rb.reflux_dt, stream, list);
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.computed.get(), stream));
      if (rb.scatter) {
        scatter_kernel<<<dim3(kernels::kGroupCells / kThreads, n), kThreads, 0, stream>>>(
            st.d_out.get() + first * out_reals, out_reals, dm.first_position(level) + group,
            rb.out_first, shape.out_vars, dm.pool(rb.write), dm.patch_reals(), list);
        TESSERA_CUDA_CHECK(cudaGetLastError());
      }
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.scattered.get(), stream));
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(st.h_results.get() + first, st.d_results.get() + first,
                                         n * sizeof(kernels::GroupResult), cudaMemcpyDeviceToHost,
                                         stream));
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.done.get(), stream));
    }
  }

  void fetch_resident_output(Staging& base, int g) override {
    auto& st = static_cast<CudaStaging&>(base);
    // wait() has seen the batch's chunks done, so no device-wide synchronisation: the
    // other batch in flight (the streams are non-blocking) keeps running during the copy.
    TESSERA_CUDA_CHECK(cudaMemcpy(st.h_out.get() + g * st.out_reals,
                                  st.d_out.get() + g * st.out_reals, st.out_reals * sizeof(Real),
                                  cudaMemcpyDeviceToHost));
  }

  void fetch_resident(Staging& base, int count) override {
    auto& st = static_cast<CudaStaging&>(base);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    TESSERA_CUDA_CHECK(cudaMemcpy(st.h_in.get(), st.d_in.get(), count * st.in_reals * sizeof(Real),
                                  cudaMemcpyDeviceToHost));
    TESSERA_CUDA_CHECK(cudaMemcpy(st.h_out.get(), st.d_out.get(),
                                  count * st.out_reals * sizeof(Real), cudaMemcpyDeviceToHost));
  }

  void wait(Staging& base) override {
    auto& st = static_cast<CudaStaging&>(base);
    for (auto& ev : st.chunks) {
      if (ev.count == 0) continue;
      TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.done.get()));
      if (ev.resident) {
        float gather = 0, kernel = 0, scatter = 0, d2h = 0;
        TESSERA_CUDA_CHECK(cudaEventElapsedTime(&gather, ev.start.get(), ev.copied_in.get()));
        TESSERA_CUDA_CHECK(cudaEventElapsedTime(&kernel, ev.copied_in.get(), ev.computed.get()));
        TESSERA_CUDA_CHECK(cudaEventElapsedTime(&scatter, ev.computed.get(), ev.scattered.get()));
        TESSERA_CUDA_CHECK(cudaEventElapsedTime(&d2h, ev.scattered.get(), ev.done.get()));
        times_.gather += 1e-3 * (gather + scatter);
        times_.kernel += 1e-3 * kernel;
        times_.d2h += 1e-3 * d2h;
        times_.bytes_d2h += double(ev.count) * sizeof(kernels::GroupResult);
        ev.count = 0;
        ev.resident = false;
        continue;
      }
      float h2d = 0, kernel = 0, d2h = 0;
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&h2d, ev.start.get(), ev.copied_in.get()));
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&kernel, ev.copied_in.get(), ev.computed.get()));
      TESSERA_CUDA_CHECK(cudaEventElapsedTime(&d2h, ev.computed.get(), ev.done.get()));
      times_.h2d += 1e-3 * h2d;
      times_.kernel += 1e-3 * kernel;
      times_.d2h += 1e-3 * d2h;
      times_.bytes_h2d += double(ev.count) * st.in_reals * sizeof(Real);
      times_.bytes_d2h += double(ev.count) * ((st.out_reals + st.flux_reals) * sizeof(Real) +
                                              sizeof(kernels::GroupResult));
      ev.count = 0;
    }
    for (int g = 0; g < st.capacity; ++g)
      if (st.results[g].bad_cell == INT_MAX) st.results[g].bad_cell = -1;
  }

 private:
  cudaDeviceProp props_{};
  int batch_ = 0, nstreams_ = 0;
  std::vector<std::unique_ptr<Stream>> streams_;
  DeviceTimes times_;
  double bandwidth_ = 0;
};

}  // namespace

std::unique_ptr<Executor> make_cuda_executor(int groups_per_batch, int streams) {
  if (!cuda_device_available())
    throw Error(ErrorKind::kInput, "run.backend = \"cuda\", but no CUDA device is available");
  return std::make_unique<CudaExecutor>(groups_per_batch, streams);
}

bool cuda_backend_built() {
  return true;
}

bool cuda_device_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

int select_cuda_device(int node_rank) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return -1;
  const int device = node_rank % n;
  TESSERA_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

std::string cuda_device_description() {
  if (!cuda_device_available()) return "no CUDA device found";
  cudaDeviceProp p{};
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return strprintf("%s (compute capability %d.%d, %d SMs, %.1f GiB)", p.name, p.major, p.minor,
                   p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
}

std::string cuda_device_bus_id() {
  if (!cuda_device_available()) return {};
  int device = 0;
  char id[32] = {};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(id, sizeof id, device) != cudaSuccess)
    return {};
  return id;
}

std::optional<std::pair<double, double>> device_memory() {
  if (!cuda_device_available()) return std::nullopt;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return std::nullopt;
  return std::make_pair(static_cast<double>(free_bytes), static_cast<double>(total_bytes));
}

}  // namespace tessera::exec
