#include "tessera/core/parallel.hpp"

#include <algorithm>
#include <cstring>

namespace tessera {

void parallel_copy(double* to, const double* from, std::size_t n) {
  constexpr std::size_t kChunk = std::size_t(1) << 17;  // 1 MiB of doubles
  const auto chunks = static_cast<std::int64_t>((n + kChunk - 1) / kChunk);
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::size_t at = std::size_t(c) * kChunk;
    std::memcpy(to + at, from + at, std::min(kChunk, n - at) * sizeof(double));
  }
}

}  // namespace tessera
