// Copies into memory that this core will not read again soon: the pinned staging boxes
// that the DMA engine reads next, and the patch pool that a later stage reads. An ordinary
// store first reads each cache line it writes (read for ownership), a third of prepare's
// memory traffic; non-temporal stores write whole lines without reading them. The values
// copied are the same bits either way.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tessera/core/real.hpp"

namespace tessera::exec {

inline void stream_copy(const Real* src, std::size_t n, Real* dst) {
  auto* d = reinterpret_cast<char*>(dst);
  const auto* s = reinterpret_cast<const char*>(src);
  std::size_t bytes = n * sizeof(Real);
#if defined(__SSE2__)
  // Up to the first 16-byte boundary of the destination, then whole 16-byte stores.
  const std::size_t head =
      std::min<std::size_t>(bytes, (16 - reinterpret_cast<std::uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  for (; bytes >= 16; d += 16, s += 16, bytes -= 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(d),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
#endif
  std::memcpy(d, s, bytes);
}

// Non-temporal stores are weakly ordered: each thread that made them calls this before
// another thread or the DMA engine may read what they wrote.
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace tessera::exec
