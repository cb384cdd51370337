// CUDA error checking that names the failing call, and RAII owners of device and pinned
// host memory, streams and events (nothing leaks on an error path).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "tessera/core/error.hpp"

namespace tessera::cuda {

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  if (status == cudaErrorMemoryAllocation)
    throw Error(ErrorKind::kResources, std::string("out of GPU (or pinned host) memory: ") + call +
                                           " failed (" + cudaGetErrorString(status) +
                                           "); lower gpu.groups_per_batch, or run " +
                                           "fewer processes on this GPU");
  throw Error(ErrorKind::kInternal, std::string("CUDA call ") + call + " failed at " + file + ":" +
                                        std::to_string(line) + ": " + cudaGetErrorName(status) +
                                        " (" + cudaGetErrorString(status) + ")");
}

#define TESSERA_CUDA_CHECK(call) ::tessera::cuda::check((call), #call, __FILE__, __LINE__)

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n) TESSERA_CUDA_CHECK(cudaMalloc(&ptr_, n * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(o.n_) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(n_, o.n_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return ptr_; }
  std::size_t size() const { return n_; }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : n_(n) {
    if (n)
      TESSERA_CUDA_CHECK(
          cudaHostAlloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T), cudaHostAllocDefault));
  }
  ~PinnedBuffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(o.n_) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(n_, o.n_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  T* get() const { return ptr_; }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

class Stream {
 public:
  Stream() { TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_{};
};

class Event {
 public:
  Event() { TESSERA_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};

}  // namespace tessera::cuda
