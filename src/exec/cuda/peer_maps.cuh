// Other ranks' GPU buffers mapped into this process (CUDA IPC), for pieces that go GPU to
// GPU between processes of one host: the root FFT's transposes (slab_poisson_cuda.cu) and
// the root density's and potential's moves (device_rows_cuda.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "src/exec/cuda/cuda_util.cuh"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/mpi.hpp"

namespace tessera::cuda {

// A collective: every rank exports `buffers` (cudaMalloc'd device memory) and opens those
// of every other rank that is a process of its host, unless `route` (mpi.device_exchange)
// is "host" or "mpi" (these pieces then go through the host). With "peer" every pair must
// be of one host (Error kInput) and every open succeed; otherwise a failed open leaves that
// rank's pointers null, with a warning that `what` goes through the host between the two.
// Returns [rank][buffer]: the mapped pointer, null for this rank, other hosts and failures
// (close the others with cudaIpcCloseMemHandle). Errors are agreed among the ranks.
inline std::vector<std::vector<void*>> map_peer_buffers(parallel::Comm& comm,
                                                        const std::vector<void*>& buffers,
                                                        const std::string& route,
                                                        const char* what) {
  const int rank = comm.rank(), ranks = comm.size();
  const std::string host = parallel::host_name();
  const bool processes = parallel::is_mpi_world(comm);
  const bool map = processes && route != "host" && route != "mpi";
  std::vector<cudaIpcMemHandle_t> handles(buffers.size());
  std::exception_ptr error;
  try {
    if (map)
      for (std::size_t b = 0; b < buffers.size(); ++b)
        TESSERA_CUDA_CHECK(cudaIpcGetMemHandle(&handles[b], buffers[b]));
  } catch (...) {
    error = std::current_exception();
  }
  comm.agree(error);
  // To every other rank: the handles, then the host's name.
  const cudaIpcMemHandle_t none{};
  const std::size_t words = parallel::bytes_as_doubles(&none, sizeof none).size();
  std::vector<double> mine;
  for (const auto& h : handles)
    for (const double x : parallel::bytes_as_doubles(&h, sizeof h)) mine.push_back(x);
  mine.push_back(double(host.size()));
  for (const double x : parallel::bytes_as_doubles(host.data(), host.size())) mine.push_back(x);
  std::vector<std::vector<double>> out(ranks);
  for (int q = 0; q < ranks; ++q)
    if (q != rank) out[q] = mine;
  const auto got = comm.exchange(std::move(out));
  std::vector<std::vector<void*>> mapped(ranks, std::vector<void*>(buffers.size(), nullptr));
  try {
    for (int q = 0; q < ranks; ++q) {
      if (q == rank) continue;
      const auto& v = got[q];
      const std::size_t at = buffers.size() * words;
      const std::size_t length = static_cast<std::size_t>(v.at(at));
      std::string their_host(length, '\0');
      if (length) std::memcpy(their_host.data(), v.data() + at + 1, length);
      const bool same_host = processes && their_host == host;
      if (route == "peer" && !same_host)
        throw Error(ErrorKind::kInput,
                    strprintf("mpi.device_exchange = \"peer\", but ranks %d (%s) and %d (%s) are "
                              "not processes of one host; use \"auto\"",
                              rank, host.c_str(), q, their_host.c_str()));
      if (!map || !same_host) continue;
      for (std::size_t b = 0; b < buffers.size(); ++b) {
        cudaIpcMemHandle_t theirs{};
        std::memcpy(&theirs, v.data() + b * words, sizeof theirs);
        const cudaError_t status =
            cudaIpcOpenMemHandle(&mapped[q][b], theirs, cudaIpcMemLazyEnablePeerAccess);
        if (status == cudaSuccess) continue;
        mapped[q][b] = nullptr;
        if (route == "peer") TESSERA_CUDA_CHECK(status);
        cudaGetLastError();  // this pair goes through the host instead
        log_line(
            "warning: rank %d cannot map rank %d's GPU memory (%s): %s between them go "
            "through the host",
            rank, q, cudaGetErrorName(status), what);
        break;
      }
    }
  } catch (...) {
    error = std::current_exception();
  }
  comm.agree(error);
  return mapped;
}

}  // namespace tessera::cuda
