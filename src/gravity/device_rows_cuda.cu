// DeviceRows on the GPU (device_rows.hpp). A move packs every row this rank sends into one
// device buffer, a piece per receiver in rank order (its own rows too), and each piece goes
// by its pair's route into the receiver's receive buffer at the place the receiver gave at
// set-up:
//  - peer (processes of one host): copied GPU to GPU into the receiver's buffer, mapped at
//    set-up through CUDA IPC; no byte passes through host memory;
//  - host (other hosts, virtual ranks, mpi.device_exchange = "host"): copied to page-locked
//    memory and sent by Comm::exchange, then copied up by the receiver.
// Two agreements fence the copies, as in the root FFT's transposes (slab_poisson_cuda.cu):
// every rank has packed (so the receive buffers are free: the last unpack on every rank
// ended before it), and every piece has landed; then one kernel unpacks the buffer's rows
// into the destination.
#include <cstring>
#include <exception>
#include <numeric>

#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/peer_maps.cuh"
#include "src/gravity/device_rows.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/mpi.hpp"

namespace tessera::gravity {

namespace {

using cuda::DeviceBuffer;
using cuda::PinnedBuffer;
constexpr int kThreads = 256;

// kPack: row r of `rows` (starting at offsets[r] of `array`) to row r of `buffer`; else the
// reverse. One thread per value.
template <bool kPack>
__global__ void copy_rows(double* array, const std::int64_t* __restrict__ offsets, int width,
                          long long count, double* buffer) {
  const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= count * width) return;
  const long long r = v / width;
  double* in_array = array + offsets[r] + (v - r * width);
  if (kPack)
    buffer[v] = *in_array;
  else
    *in_array = buffer[v];
}

unsigned blocks_for(long long values) {
  return static_cast<unsigned>((values + kThreads - 1) / kThreads);
}

class CudaRows final : public DeviceRows {
 public:
  CudaRows(const RowPlan& plan, parallel::Comm& comm, const std::string& route)
      : comm_(comm),
        rank_(comm.rank()),
        ranks_(comm.size()),
        width_(plan.width),
        send_at_(ranks_ + 1, 0),
        receive_at_(ranks_ + 1, 0),
        their_at_(ranks_, 0),
        peer_(ranks_, nullptr),
        from_peer_(ranks_, false) {
    std::exception_ptr error;
    try {
      if (int(plan.send.size()) != ranks_ || int(plan.receive.size()) != ranks_)
        throw Error(ErrorKind::kInternal, "rows between ranks: a plan of another rank count");
      check_rows(plan);
      if (plan.send[rank_].size() != plan.receive[rank_].size())
        throw Error(ErrorKind::kInternal,
                    strprintf("rows between ranks: rank %d keeps %zu rows of its own and places "
                              "%zu",
                              rank_, plan.send[rank_].size(), plan.receive[rank_].size()));
      std::vector<std::int64_t> sends, receives;
      for (int q = 0; q < ranks_; ++q) {
        send_at_[q + 1] = send_at_[q] + plan.send[q].size();
        receive_at_[q + 1] = receive_at_[q] + plan.receive[q].size();
        sends.insert(sends.end(), plan.send[q].begin(), plan.send[q].end());
        receives.insert(receives.end(), plan.receive[q].begin(), plan.receive[q].end());
      }
      sends_ = upload(sends);
      receives_ = upload(receives);
      send_ = DeviceBuffer<double>(std::max<std::size_t>(send_at_[ranks_] * width_, 1));
      receive_ = DeviceBuffer<double>(std::max<std::size_t>(receive_at_[ranks_] * width_, 1));
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
    connect(plan, route);
  }

  ~CudaRows() override {
    cudaDeviceSynchronize();
    disconnect();
  }

  void disconnect() override {
    for (double*& p : peer_)
      if (p) {
        cudaIpcCloseMemHandle(p);
        p = nullptr;
      }
  }

  void move(const double* source, double* destination) override {
    const std::size_t w = static_cast<std::size_t>(width_);
    std::exception_ptr error;
    try {
      // The kernels that wrote `source` ran on other streams: wait for them.
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
      const long long rows = static_cast<long long>(send_at_[ranks_]);
      if (rows > 0) {
        copy_rows<true><<<blocks_for(rows * width_), kThreads>>>(
            const_cast<double*>(source), sends_.get(), width_, rows, send_.get());
        TESSERA_CUDA_CHECK(cudaGetLastError());
      }
      for (int q = 0; q < ranks_; ++q) {
        const std::size_t n = (send_at_[q + 1] - send_at_[q]) * w;
        if (q == rank_ || peer_[q] || n == 0) continue;
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(h_send_.get() + send_at_[q] * w,
                                           send_.get() + send_at_[q] * w, n * sizeof(double),
                                           cudaMemcpyDeviceToHost));
      }
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);  // packed everywhere: the receive buffers are free
    std::vector<std::vector<double>> out(ranks_);
    try {
      for (int q = 0; q < ranks_; ++q) {
        const std::size_t n = (send_at_[q + 1] - send_at_[q]) * w;
        if (n == 0) continue;
        const double* piece = send_.get() + send_at_[q] * w;
        if (q == rank_) {
          TESSERA_CUDA_CHECK(cudaMemcpyAsync(receive_.get() + receive_at_[q] * w, piece,
                                             n * sizeof(double), cudaMemcpyDeviceToDevice));
        } else if (peer_[q]) {
          TESSERA_CUDA_CHECK(cudaMemcpyAsync(peer_[q] + their_at_[q] * w, piece, n * sizeof(double),
                                             cudaMemcpyDefault));
          peer_bytes_ += double(n * sizeof(double));
        } else {
          out[q].assign(h_send_.get() + send_at_[q] * w, h_send_.get() + send_at_[q] * w + n);
          host_bytes_ += double(n * sizeof(double));
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
    const auto got = comm_.exchange(std::move(out));
    try {
      for (int q = 0; q < ranks_; ++q) {
        if (q == rank_ || from_peer_[q]) continue;
        const std::size_t n = (receive_at_[q + 1] - receive_at_[q]) * w;
        if (got[q].size() != n)
          throw Error(ErrorKind::kInternal,
                      strprintf("rows between ranks: rank %d sent %zu values, %zu expected", q,
                                got[q].size(), n));
        if (n)
          TESSERA_CUDA_CHECK(cudaMemcpyAsync(receive_.get() + receive_at_[q] * w, got[q].data(),
                                             n * sizeof(double), cudaMemcpyHostToDevice));
      }
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);  // every piece has landed
    try {
      const long long rows = static_cast<long long>(receive_at_[ranks_]);
      if (rows > 0) {
        copy_rows<false><<<blocks_for(rows * width_), kThreads>>>(destination, receives_.get(),
                                                                  width_, rows, receive_.get());
        TESSERA_CUDA_CHECK(cudaGetLastError());
      }
      TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
  }

  double peer_bytes() const override { return peer_bytes_; }
  double host_bytes() const override { return host_bytes_; }
  std::string routes() const override { return routes_; }

 private:
  static DeviceBuffer<std::int64_t> upload(const std::vector<std::int64_t>& v) {
    DeviceBuffer<std::int64_t> d(std::max<std::size_t>(v.size(), 1));
    if (!v.empty())
      TESSERA_CUDA_CHECK(
          cudaMemcpy(d.get(), v.data(), v.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    return d;
  }

  // A collective: pairs of processes of one host map each other's receive buffer (CUDA
  // IPC) unless told to use the host; each sender learns where its piece lands in each
  // receiver's buffer and checks that the receiver expects as many rows as it sends, and
  // each receiver learns which route each sender takes (a pair may map one way only).
  void connect(const RowPlan& plan, const std::string& route) {
    const auto mapped =
        cuda::map_peer_buffers(comm_, {receive_.get()}, route, "the root density and potential");
    std::vector<std::vector<double>> out(ranks_);
    for (int q = 0; q < ranks_; ++q) {
      if (q == rank_) continue;
      peer_[q] = static_cast<double*>(mapped[q][0]);
      // To sender q: where its rows land here, how many, and this rank's route to q.
      out[q] = {double(receive_at_[q]), double(plan.receive[q].size()), peer_[q] ? 1.0 : 0.0};
    }
    const auto got = comm_.exchange(std::move(out));
    long long peers = 0, hosts = 0;
    std::exception_ptr error;
    try {
      for (int q = 0; q < ranks_; ++q) {
        if (q == rank_) continue;
        const auto& v = got[q];
        their_at_[q] = static_cast<std::size_t>(v.at(0));
        if (static_cast<std::size_t>(v.at(1)) != plan.send[q].size())
          throw Error(ErrorKind::kInternal,
                      strprintf("rows between ranks: rank %d sends %zu rows to rank %d, which "
                                "expects %zu",
                                rank_, plan.send[q].size(), q, static_cast<std::size_t>(v[1])));
        from_peer_[q] = v.at(2) != 0;
        ++(peer_[q] ? peers : hosts);
      }
      if (hosts > 0)
        h_send_ = PinnedBuffer<double>(std::max<std::size_t>(send_at_[ranks_] * width_, 1));
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
    peers = comm_.sum(peers);
    hosts = comm_.sum(hosts);
    routes_ = strprintf(
        "GPU to GPU (CUDA IPC) between %lld rank pairs, through host memory "
        "between %lld",
        peers / 2, hosts / 2);
  }

  parallel::Comm& comm_;
  int rank_, ranks_, width_;
  std::vector<std::size_t> send_at_, receive_at_;  // [q]: first row of q's piece; total last
  std::vector<std::size_t> their_at_;              // [q]: where this rank's piece lands in q's
  DeviceBuffer<std::int64_t> sends_, receives_;    // the rows' offsets, in buffer order
  DeviceBuffer<double> send_, receive_;
  PinnedBuffer<double> h_send_;  // the host route's pieces
  std::vector<double*> peer_;    // [q]: q's receive buffer, mapped (peer route)
  std::vector<bool> from_peer_;  // [q]: q copies its piece straight into this rank's buffer
  double peer_bytes_ = 0, host_bytes_ = 0;
  std::string routes_;
};

}  // namespace

std::unique_ptr<DeviceRows> make_device_rows(const RowPlan& plan, parallel::Comm& comm,
                                             const std::string& route) {
  return std::make_unique<CudaRows>(plan, comm, route);
}

}  // namespace tessera::gravity
