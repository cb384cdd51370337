// Comm::post checked on any Comm of several ranks (virtual ranks in test_comm.cpp, MPI in
// tests/mpi/test_mpi_comm.cpp): every rank sends two messages of one tag to every other
// rank, of sizes that depend on the pair, posts its receives first and its sends later
// (as the device halo does), and checks every byte and the order of the two messages.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tessera/parallel/comm.hpp"

namespace tessera::testing {

inline std::uint8_t p2p_byte(int from, int to, int message, std::size_t i) {
  return static_cast<std::uint8_t>(from * 37 + to * 11 + message * 101 + i * 7);
}

// Returns the number of wrong bytes this rank received (0 expected).
inline long long check_point_to_point(parallel::Comm& comm, int tag) {
  const int r = comm.rank(), n = comm.size();
  auto bytes = [](int from, int to, int message) {
    return std::size_t(1000 * (from + 1) + 13 * to + 3 * message);  // distinct per message
  };
  std::vector<std::vector<std::uint8_t>> in(2 * n), out(2 * n);
  std::vector<parallel::Message> receives, sends;
  for (int message = 0; message < 2; ++message)
    for (int q = 0; q < n; ++q) {
      if (q == r) continue;
      auto& i = in[2 * q + message];
      i.assign(bytes(q, r, message), 0);
      receives.push_back({q, i.data(), i.size()});
      auto& o = out[2 * q + message];
      o.resize(bytes(r, q, message));
      for (std::size_t k = 0; k < o.size(); ++k) o[k] = p2p_byte(r, q, message, k);
      sends.push_back({q, o.data(), o.size()});
    }
  auto got = comm.post({}, receives, tag);
  // The sends of the first message to every peer, then the second: one tag keeps them in
  // order.
  std::vector<parallel::Message> first(sends.begin(), sends.begin() + (n - 1)),
      second(sends.begin() + (n - 1), sends.end());
  auto sent1 = comm.post(first, {}, tag);
  auto sent2 = comm.post(second, {}, tag);
  while (!got->test()) {
  }
  got->wait();
  sent1->wait();
  sent2->wait();
  long long wrong = 0;
  for (int message = 0; message < 2; ++message)
    for (int q = 0; q < n; ++q) {
      if (q == r) continue;
      const auto& i = in[2 * q + message];
      for (std::size_t k = 0; k < i.size(); ++k) wrong += i[k] != p2p_byte(q, r, message, k);
    }
  return wrong;
}

}  // namespace tessera::testing
