// Strong digests of checkpoint contents: XXH3-64 (xxHash, Collet 2019), a non-cryptographic
// 64-bit hash whose every output bit depends on every input bit. Fletcher-32, the HDF5
// chunk filter, sums 16-bit words modulo 65535 and so cannot tell 0x0000 from 0xFFFF: a
// checkpoint whose bytes were overwritten with 0xFF can pass it. A changed byte escapes
// XXH3-64 with probability 2^-64. Header-only (XXH_INLINE_ALL): no library to ship.
#pragma once

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tessera::io::detail {

inline constexpr const char* kDigestPrefix = "xxh3-64:";

inline std::uint64_t digest64(const void* data, std::size_t bytes) {
  return XXH3_64bits(data, bytes);
}

// "xxh3-64:0123456789abcdef": names its algorithm, so that a later format can change it.
inline std::string digest_text(std::uint64_t digest) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%016" PRIx64, kDigestPrefix, digest);
  return buf;
}

// The digest a text written by digest_text() holds; nullopt for any other text.
inline std::optional<std::uint64_t> parse_digest_text(const std::string& text) {
  const std::string prefix = kDigestPrefix;
  if (text.size() != prefix.size() + 16 || text.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = prefix.size(); i < text.size(); ++i) {
    const char c = text[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    value = value << 4 | static_cast<std::uint64_t>(d);
  }
  return value;
}

// Incremental XXH3-64 over a stream of blocks (equal to digest64 of their concatenation).
class StreamDigest {
 public:
  StreamDigest() : state_(XXH3_createState()) { XXH3_64bits_reset(state_); }
  ~StreamDigest() { XXH3_freeState(state_); }
  StreamDigest(const StreamDigest&) = delete;
  StreamDigest& operator=(const StreamDigest&) = delete;
  void update(const void* data, std::size_t bytes) { XXH3_64bits_update(state_, data, bytes); }
  std::uint64_t value() const { return XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

}  // namespace tessera::io::detail
