// CUDA executor (Schive et al. 2010 §3.1, Fig. 5): a batch of prepared patch groups is
// split over several streams; each stream copies its part to the GPU, runs the solver
// kernels and copies the new interiors, flux planes and per-group results back, so that
// copies of one part overlap the kernels of another. Host staging is pinned and double
// buffered by the pipeline, which prepares the next batch while this one runs.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <vector>

#include "src/evolve/cuda/cuda_util.cuh"
#include "tessera/core/log.hpp"
#include "tessera/evolve/executor.hpp"
#include "tessera/evolve/memory.hpp"

namespace tessera::evolve {

namespace {

using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;
using cuda::Stream;

struct ChunkEvents {
  Event start, copied_in, computed, done;
  int count = 0;
};

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
        scratch_reals(solver.device_scratch_reals()),
        chunks(streams) {
    set_shape(groups, solver.shape());
    in = h_in.get(), out = h_out.get(), flux = h_flux.get(), results = h_results.get();
  }
  PinnedBuffer<Real> h_in, h_out, h_flux;
  PinnedBuffer<kernels::GroupResult> h_results;
  DeviceBuffer<Real> d_in, d_out, d_flux, d_scratch;
  DeviceBuffer<kernels::GroupResult> d_results;
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

  void submit(const GroupSolver& solver, Staging& base, int count) override {
    auto& st = static_cast<CudaStaging&>(base);
    const std::size_t in_reals = st.in_reals, out_reals = st.out_reals;
    const std::size_t flux_reals = st.flux_reals;
    const int per = (count + nstreams_ - 1) / nstreams_;
    for (int s = 0; s < nstreams_; ++s) {
      const int first = s * per, n = std::max(0, std::min(per, count - first));
      ChunkEvents& ev = st.chunks[s];
      ev.count = n;
      if (n == 0) continue;
      cudaStream_t stream = streams_[s]->get();
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.start.get(), stream));
      TESSERA_CUDA_CHECK(
          cudaMemcpyAsync(st.d_in.get() + first * in_reals, st.h_in.get() + first * in_reals,
                          n * in_reals * sizeof(Real), cudaMemcpyHostToDevice, stream));
      TESSERA_CUDA_CHECK(cudaEventRecord(ev.copied_in.get(), stream));
      const DeviceBatch batch{st.d_in.get() + first * in_reals,
                              st.d_out.get() + first * out_reals,
                              st.d_flux.get() + first * flux_reals,
                              st.d_results.get() + first,
                              st.d_scratch.get() + first * st.scratch_reals,
                              n};
      solver.solve_device(batch, stream);
      TESSERA_CUDA_CHECK(cudaGetLastError());
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

  void wait(Staging& base) override {
    auto& st = static_cast<CudaStaging&>(base);
    for (auto& ev : st.chunks) {
      if (ev.count == 0) continue;
      TESSERA_CUDA_CHECK(cudaEventSynchronize(ev.done.get()));
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

std::string cuda_device_description() {
  if (!cuda_device_available()) return "no CUDA device found";
  cudaDeviceProp p{};
  int device = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&device));
  TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  return strprintf("%s (compute capability %d.%d, %d SMs, %.1f GiB)", p.name, p.major, p.minor,
                   p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
}

std::optional<std::pair<double, double>> device_memory() {
  if (!cuda_device_available()) return std::nullopt;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return std::nullopt;
  return std::make_pair(static_cast<double>(free_bytes), static_cast<double>(total_bytes));
}

}  // namespace tessera::evolve
