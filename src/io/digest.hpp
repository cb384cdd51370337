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
#include <vector>

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

// The digest of a dataset (checkpoint format 3 on): XXH3-64 of its rows' digests, a row
// being one index of its first dimension (a patch of a level's field data) and each row's
// digest the XXH3-64 of its bytes, stored little-endian. The ranks that each write some of
// a level's patches compute their rows' digests where the data are, and rank 0 combines
// them in row order: the digest is the same for any number of ranks, and a reader
// recomputes it slab by slab.
class RowDigest {
 public:
  void add_row(std::uint64_t row_digest) {
    if (buffer_.size() + 8 > kBuffer) flush();
    for (int b = 0; b < 8; ++b)
      buffer_.push_back(static_cast<unsigned char>(row_digest >> (8 * b)));
  }
  // `rows` rows of `row_bytes` bytes each, in order.
  void add_rows(const void* data, std::size_t rows, std::size_t row_bytes) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t r = 0; r < rows; ++r) add_row(digest64(bytes + r * row_bytes, row_bytes));
  }
  std::uint64_t value() {
    flush();
    return d_.value();
  }

 private:
  // Row digests go to XXH3 in blocks (equal to one update per row, and faster).
  static constexpr std::size_t kBuffer = 8192;
  void flush() {
    if (!buffer_.empty()) d_.update(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  StreamDigest d_;
  std::vector<unsigned char> buffer_;
};

inline std::uint64_t rows_digest(const void* data, std::size_t rows, std::size_t row_bytes) {
  RowDigest d;
  d.add_rows(data, rows, row_bytes);
  return d.value();
}

}  // namespace tessera::io::detail
