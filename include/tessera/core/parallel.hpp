// Exceptions and OpenMP: an exception that leaves a parallel region calls std::terminate
// (an abort, exit 134, with no message naming the problem). Loops whose bodies can throw
// (problem code, allocation, checks that report bad input) run each iteration through
// ParallelErrors::run, which keeps the exception of the lowest iteration index, and
// rethrow() after the region hands it on to the caller (and so to main's error handling).
// Keeping the lowest index makes the reported error the same for any thread count.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>

namespace tessera {

class ParallelErrors {
 public:
  // Runs f() for iteration `index`; once an iteration has failed, later ones are skipped
  // (their result is never used), earlier ones still run so the lowest failure is found.
  template <class F>
  void run(std::int64_t index, F&& f) noexcept {
    if (index > first_index_.load(std::memory_order_relaxed)) return;
    try {
      f();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (index < first_index_.load(std::memory_order_relaxed)) {
        error_ = std::current_exception();
        first_index_.store(index, std::memory_order_relaxed);
      }
    }
  }
  bool failed() const {
    return first_index_.load(std::memory_order_relaxed) != std::numeric_limits<std::int64_t>::max();
  }
  // Call after the parallel region: throws the kept exception, if any.
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::atomic<std::int64_t> first_index_{std::numeric_limits<std::int64_t>::max()};
  std::exception_ptr error_;
};

// to[0, n) = from[0, n) on the OpenMP threads: one core does not fill the page-locked
// buffers that large host-GPU copies go through at the bus's rate.
void parallel_copy(double* to, const double* from, std::size_t n);

}  // namespace tessera
