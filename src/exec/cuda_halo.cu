// The exchange of a device-resident level's buffer patches between ranks (resident.hpp,
// DeviceHalo; docs/architecture.md, "Ranks"). The patches a rank sends are packed by one
// kernel into a device buffer, a piece per peer in the plan's order, and each piece goes by
// its pair's route:
//  - peer (one host): copied GPU to GPU into the receiver's buffer, which this rank mapped
//    at set-up (cudaIpcOpenMemHandle); then an interprocess event is recorded and a
//    one-word message tells the receiver, whose stream waits on that event before it
//    unpacks. No byte passes through host memory (Quokka's measured lesson: host-staged
//    ghost exchange cost 42% of a 4-GPU step);
//  - mpi: a CUDA-aware MPI library sends the device piece itself;
//  - host: the piece is copied to page-locked memory (asynchronously) and sent by MPI; the
//    receiver copies it up before the unpack.
// Sends by MPI are posted once the pack (and copy) has finished, from test() or finish();
// receives are posted at start. The unpack kernel writes every received patch into its
// pool position; finish() returns when it is done.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/device_mesh.cuh"
#include "tessera/parallel/mpi.hpp"

namespace tessera::exec::gpu {

namespace {

using tessera::cuda::Event;
using tessera::cuda::PinnedBuffer;
using tessera::cuda::Stream;

// Tags of the halo's point-to-point messages (Comm::post): data, and the peer route's
// "copied" word. The exchanges of Comm::exchange use tags from 0 up, one per GiB piece.
constexpr int kTagData = 7001, kTagToken = 7002;

// Patch i of a list: block (i, chunk) copies reals [chunk * 256 * 4, ...) of it.
constexpr int kThreads = 256, kPerThread = 4;

// kPack: patch positions[i] of time level slots[i] (-1: `slot`) to patch i of the buffer;
// else the reverse.
template <bool kPack>
__global__ void copy_patches(Real* pool0, Real* pool1, int slot, std::size_t patch_reals,
                             const int* __restrict__ positions, const int* __restrict__ slots,
                             Real* __restrict__ buffer) {
  const std::size_t i = blockIdx.x;
  Real* pool = (slots[i] < 0 ? slot : slots[i]) ? pool1 : pool0;
  Real* in_pool = pool + std::size_t(positions[i]) * patch_reals;
  Real* in_buffer = buffer + i * patch_reals;
  const std::size_t first = std::size_t(blockIdx.y) * kThreads * kPerThread;
  const std::size_t end =
      first + kThreads * kPerThread < patch_reals ? first + kThreads * kPerThread : patch_reals;
  for (std::size_t r = first + threadIdx.x; r < end; r += kThreads) {
    if (kPack)
      in_buffer[r] = in_pool[r];
    else
      in_pool[r] = in_buffer[r];
  }
}

dim3 copy_grid(std::size_t patches, std::size_t patch_reals) {
  return dim3(
      static_cast<unsigned>(patches),
      static_cast<unsigned>((patch_reals + kThreads * kPerThread - 1) / (kThreads * kPerThread)));
}

class CudaHalo final : public DeviceHalo {
 public:
  CudaHalo(CudaDeviceMesh& dm, const mesh::Mesh& m, parallel::Comm& comm, const HaloPlan& plan,
           const std::string& route)
      : dm_(dm),
        comm_(comm),
        ranks_(comm.size()),
        rank_(comm.rank()),
        patch_reals_(dm.patch_reals()),
        send_first_(ranks_ + 1, 0),
        recv_first_(ranks_ + 1, 0),
        to_(ranks_, HaloRoute::kNone),
        from_(ranks_, HaloRoute::kNone),
        peer_buffer_(ranks_, nullptr),
        peer_at_(ranks_, 0),
        peer_event_(ranks_, nullptr),
        tokens_in_(ranks_, 0),
        bytes_(4, 0.0) {
    if (static_cast<int>(plan.send.size()) != ranks_ ||
        static_cast<int>(plan.receive.size()) != ranks_)
      throw Error(ErrorKind::kInternal, "a halo plan without a list for every rank");
    // The pieces' patches in order: the same level's in the exchange's time level (-1),
    // the coarser level's in both.
    std::vector<int> send_pos, recv_pos, send_slot, recv_slot;
    const auto list = [&](const std::vector<int>& patches, const std::vector<std::size_t>& same,
                          int q, std::vector<int>& pos, std::vector<int>& slot) {
      const std::size_t n = same.empty() ? patches.size() : same.at(q);
      for (std::size_t i = 0; i < patches.size(); ++i)
        for (int s = i < n ? -1 : 0; s < (i < n ? 0 : 2); ++s) {
          pos.push_back(CudaDeviceMesh::position(m, patches[i]));
          slot.push_back(s);
        }
    };
    for (int q = 0; q < ranks_; ++q) {
      list(plan.send[q], plan.send_same, q, send_pos, send_slot);
      list(plan.receive[q], plan.receive_same, q, recv_pos, recv_slot);
      send_first_[q + 1] = send_pos.size();
      recv_first_[q + 1] = recv_pos.size();
    }
    d_send_pos_ = CudaDeviceMesh::to_device(send_pos);
    d_recv_pos_ = CudaDeviceMesh::to_device(recv_pos);
    d_send_slot_ = CudaDeviceMesh::to_device(send_slot);
    d_recv_slot_ = CudaDeviceMesh::to_device(recv_slot);
    d_send_ = DeviceBuffer<Real>(send_pos.size() * patch_reals_);
    d_recv_ = DeviceBuffer<Real>(recv_pos.size() * patch_reals_);
    TESSERA_CUDA_CHECK(
        cudaEventCreateWithFlags(&ipc_event_, cudaEventInterprocess | cudaEventDisableTiming));
    choose_routes(route);
    bool host = false;
    for (int q = 0; q < ranks_; ++q)
      host = host || to_[q] == HaloRoute::kHost || from_[q] == HaloRoute::kHost;
    if (host) {
      h_send_ = PinnedBuffer<Real>(send_pos.size() * patch_reals_);
      h_recv_ = PinnedBuffer<Real>(recv_pos.size() * patch_reals_);
    }
  }

  ~CudaHalo() override {
    cudaStreamSynchronize(stream_.get());
    for (int q = 0; q < ranks_; ++q) {
      if (peer_buffer_[q]) cudaIpcCloseMemHandle(peer_buffer_[q]);
      if (peer_event_[q]) cudaEventDestroy(peer_event_[q]);
    }
    cudaEventDestroy(ipc_event_);
  }

  void start(int slot) override {
    slot_ = slot;
    sent_ = false;
    // Receives first: data by MPI (host or device memory), and the peer route's words.
    std::vector<parallel::Message> data, words;
    for (int q = 0; q < ranks_; ++q) {
      const std::size_t n = recv_first_[q + 1] - recv_first_[q];
      if (n == 0) continue;
      if (from_[q] == HaloRoute::kPeer)
        words.push_back({q, &tokens_in_[q], sizeof(int)});
      else
        data.push_back({q,
                        (from_[q] == HaloRoute::kHost ? h_recv_.get() : d_recv_.get()) +
                            recv_first_[q] * patch_reals_,
                        n * patch_reals_ * sizeof(Real)});
    }
    receives_ = comm_.post({}, data, kTagData);
    words_in_ = comm_.post({}, words, kTagToken);
    // Pack every piece, then each goes its way.
    const std::size_t sends = send_first_[ranks_];
    cudaStream_t s = stream_.get();
    if (sends > 0) {
      copy_patches<true><<<copy_grid(sends, patch_reals_), kThreads, 0, s>>>(
          dm_.pool(0), dm_.pool(1), slot, patch_reals_, d_send_pos_.get(), d_send_slot_.get(),
          d_send_.get());
      TESSERA_CUDA_CHECK(cudaGetLastError());
    }
    std::vector<parallel::Message> copied;
    for (int q = 0; q < ranks_; ++q) {
      const std::size_t n = send_first_[q + 1] - send_first_[q];
      if (n == 0) continue;
      const std::size_t bytes = n * patch_reals_ * sizeof(Real);
      const Real* piece = d_send_.get() + send_first_[q] * patch_reals_;
      if (to_[q] == HaloRoute::kPeer) {
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(peer_buffer_[q] + peer_at_[q] * patch_reals_, piece,
                                           bytes, cudaMemcpyDeviceToDevice, s));
        copied.push_back({q, &token_out_, sizeof(int)});
      } else if (to_[q] == HaloRoute::kHost) {
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(h_send_.get() + send_first_[q] * patch_reals_, piece,
                                           bytes, cudaMemcpyDeviceToHost, s));
      }
      bytes_[static_cast<int>(to_[q])] += double(bytes);
    }
    // The peers' copies are recorded on the interprocess event before the word that
    // tells them so leaves: a receiver's stream waits on the event's latest record.
    if (!copied.empty()) {
      TESSERA_CUDA_CHECK(cudaEventRecord(ipc_event_, s));
      ++token_out_;
    }
    words_out_ = comm_.post(copied, {}, kTagToken);
    TESSERA_CUDA_CHECK(cudaEventRecord(packed_.get(), s));
  }

  bool test() override {
    if (!sent_ && cudaEventQuery(packed_.get()) == cudaSuccess) post_sends();
    bool done = sent_;
    done = receives_->test() && done;
    done = words_in_->test() && done;
    done = words_out_->test() && done;
    if (sends_) done = sends_->test() && done;
    return done;
  }

  void finish() override {
    if (!sent_) {
      TESSERA_CUDA_CHECK(cudaEventSynchronize(packed_.get()));
      post_sends();
    }
    receives_->wait();
    words_in_->wait();
    cudaStream_t s = stream_.get();
    for (int q = 0; q < ranks_; ++q) {
      const std::size_t n = recv_first_[q + 1] - recv_first_[q];
      if (n == 0) continue;
      if (from_[q] == HaloRoute::kHost)
        TESSERA_CUDA_CHECK(cudaMemcpyAsync(d_recv_.get() + recv_first_[q] * patch_reals_,
                                           h_recv_.get() + recv_first_[q] * patch_reals_,
                                           n * patch_reals_ * sizeof(Real), cudaMemcpyHostToDevice,
                                           s));
      else if (from_[q] == HaloRoute::kPeer)
        TESSERA_CUDA_CHECK(cudaStreamWaitEvent(s, peer_event_[q], 0));
    }
    const std::size_t receives = recv_first_[ranks_];
    if (receives > 0) {
      copy_patches<false><<<copy_grid(receives, patch_reals_), kThreads, 0, s>>>(
          dm_.pool(0), dm_.pool(1), slot_, patch_reals_, d_recv_pos_.get(), d_recv_slot_.get(),
          d_recv_.get());
      TESSERA_CUDA_CHECK(cudaGetLastError());
    }
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(s));
    words_out_->wait();
    if (sends_) sends_->wait();
  }

  HaloRoute route_to(int peer) const override { return to_[peer]; }
  std::vector<double> bytes_sent() const override { return bytes_; }

 private:
  // The sends of the MPI routes, once the pack (and the copy to the host) has finished.
  void post_sends() {
    std::vector<parallel::Message> out;
    for (int q = 0; q < ranks_; ++q) {
      const std::size_t n = send_first_[q + 1] - send_first_[q];
      if (n == 0 || to_[q] == HaloRoute::kPeer) continue;
      out.push_back({q,
                     (to_[q] == HaloRoute::kHost ? h_send_.get() : d_send_.get()) +
                         send_first_[q] * patch_reals_,
                     n * patch_reals_ * sizeof(Real)});
    }
    sends_ = comm_.post(out, {}, kTagData);
    sent_ = true;
  }

  // A collective: every pair learns the route of its messages. Each rank tells each peer
  // its host, the IPC handles of its receiving buffer and event, and where in that buffer
  // the peer's piece goes; a sender on the same host maps the buffer and event (route
  // peer), and tells the receiver which route it took.
  void choose_routes(const std::string& route) {
    const std::string host = parallel::host_name();
    // Ranks that are threads of one process (virtual ranks) cannot map each other's memory
    // through IPC, nor hand it to MPI: they take the host route.
    const bool processes = parallel::is_mpi_world(comm_);
    const bool device_mpi = processes && parallel::mpi_device_messages();
    cudaIpcMemHandle_t mem{};
    cudaIpcEventHandle_t event{};
    std::exception_ptr error;
    try {
      if (processes && route != "host" && route != "mpi") {
        if (d_recv_.get()) TESSERA_CUDA_CHECK(cudaIpcGetMemHandle(&mem, d_recv_.get()));
        TESSERA_CUDA_CHECK(cudaIpcGetEventHandle(&event, ipc_event_));
      }
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
    std::vector<std::vector<double>> out(ranks_);
    for (int q = 0; q < ranks_; ++q) {
      if (q == rank_) continue;
      auto& v = out[q];
      v.push_back(double(recv_first_[q]));
      for (const double x : parallel::bytes_as_doubles(&mem, sizeof mem)) v.push_back(x);
      for (const double x : parallel::bytes_as_doubles(&event, sizeof event)) v.push_back(x);
      v.push_back(double(host.size()));
      for (const double x : parallel::bytes_as_doubles(host.data(), host.size())) v.push_back(x);
    }
    const auto got = comm_.exchange(std::move(out));
    const std::size_t mem_words = parallel::bytes_as_doubles(&mem, sizeof mem).size();
    const std::size_t event_words = parallel::bytes_as_doubles(&event, sizeof event).size();
    try {
      for (int q = 0; q < ranks_; ++q) {
        if (q == rank_ || send_first_[q + 1] == send_first_[q]) continue;
        const auto& v = got[q];
        std::size_t at = 0;
        const std::size_t offset = static_cast<std::size_t>(v.at(at++));
        cudaIpcMemHandle_t their_mem{};
        cudaIpcEventHandle_t their_event{};
        std::memcpy(&their_mem, v.data() + at, sizeof their_mem);
        at += mem_words;
        std::memcpy(&their_event, v.data() + at, sizeof their_event);
        at += event_words;
        const std::size_t length = static_cast<std::size_t>(v.at(at++));
        std::string their_host(length, '\0');
        if (length) std::memcpy(their_host.data(), v.data() + at, length);
        const bool same_host = processes && their_host == host;
        if (route == "host") {
          to_[q] = HaloRoute::kHost;
        } else if (route == "mpi" || (route == "auto" && !same_host && device_mpi)) {
          if (!device_mpi)
            throw Error(ErrorKind::kInput,
                        "mpi.device_exchange = \"mpi\", but this MPI library does not say it "
                        "reads GPU memory (it is not CUDA-aware); use \"auto\" or \"host\"");
          to_[q] = HaloRoute::kMpi;
        } else if (route == "peer" || (route == "auto" && same_host)) {
          if (!same_host)
            throw Error(ErrorKind::kInput,
                        strprintf("mpi.device_exchange = \"peer\", but ranks %d (%s) and %d (%s) "
                                  "are on different hosts; use \"auto\"",
                                  rank_, host.c_str(), q, their_host.c_str()));
          void* mapped = nullptr;
          cudaError_t status =
              cudaIpcOpenMemHandle(&mapped, their_mem, cudaIpcMemLazyEnablePeerAccess);
          if (status != cudaSuccess && route == "auto") {
            cudaGetLastError();  // this pair goes through the host instead
            to_[q] = HaloRoute::kHost;
            log_line(
                "warning: rank %d cannot map rank %d's GPU memory (%s): the halo between "
                "them goes through the host",
                rank_, q, cudaGetErrorName(status));
            continue;
          }
          TESSERA_CUDA_CHECK(status);
          peer_buffer_[q] = static_cast<Real*>(mapped);
          peer_at_[q] = offset;
          to_[q] = HaloRoute::kPeer;
        } else {
          to_[q] = HaloRoute::kHost;
        }
      }
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
    // The receivers learn each route, and open the peers' events.
    std::vector<std::vector<double>> routes(ranks_);
    for (int q = 0; q < ranks_; ++q)
      if (q != rank_) routes[q] = {double(static_cast<int>(to_[q]))};
    const auto theirs = comm_.exchange(std::move(routes));
    try {
      for (int q = 0; q < ranks_; ++q) {
        if (q == rank_ || recv_first_[q + 1] == recv_first_[q]) continue;
        from_[q] = static_cast<HaloRoute>(static_cast<int>(theirs[q].at(0)));
        if (from_[q] == HaloRoute::kNone)
          throw Error(
              ErrorKind::kInternal,
              strprintf("rank %d expects buffer patches from rank %d, which sends none", rank_, q));
        if (from_[q] != HaloRoute::kPeer) continue;
        cudaIpcEventHandle_t their_event{};
        std::memcpy(&their_event, got[q].data() + 1 + mem_words, sizeof their_event);
        TESSERA_CUDA_CHECK(cudaIpcOpenEventHandle(&peer_event_[q], their_event));
      }
    } catch (...) {
      error = std::current_exception();
    }
    comm_.agree(error);
  }

  CudaDeviceMesh& dm_;
  parallel::Comm& comm_;
  int ranks_, rank_;
  std::size_t patch_reals_;
  // [peer]: its piece of the send and receive buffers is [first[q], first[q + 1]) patches
  // (a coarser level's patch counts twice, one per time level).
  std::vector<std::size_t> send_first_, recv_first_;
  std::vector<HaloRoute> to_, from_;  // [peer]: the route of what goes to it, comes from it
  // Each piece's patches, as pool positions and time levels (-1: the exchange's).
  DeviceBuffer<int> d_send_pos_, d_recv_pos_, d_send_slot_, d_recv_slot_;
  DeviceBuffer<Real> d_send_, d_recv_;
  PinnedBuffer<Real> h_send_, h_recv_;
  std::vector<Real*> peer_buffer_;       // [peer]: its receiving buffer, mapped (route peer)
  std::vector<std::size_t> peer_at_;     // [peer]: where this rank's piece goes in it
  std::vector<cudaEvent_t> peer_event_;  // [peer]: its interprocess event (route peer)
  cudaEvent_t ipc_event_ = nullptr;      // recorded after this rank's peer copies
  std::vector<int> tokens_in_;
  int token_out_ = 0;
  Stream stream_;
  Event packed_;
  std::unique_ptr<parallel::Requests> receives_, words_in_, words_out_, sends_;
  bool sent_ = true;
  int slot_ = 0;
  std::vector<double> bytes_;
};

}  // namespace

std::unique_ptr<DeviceHalo> make_halo(CudaDeviceMesh& dm, const mesh::Mesh& m, parallel::Comm& comm,
                                      const HaloPlan& plan, const std::string& route) {
  return std::make_unique<CudaHalo>(dm, m, comm, plan, route);
}

}  // namespace tessera::exec::gpu
