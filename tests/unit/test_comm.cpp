// The communicator seam (parallel/comm.hpp) on one rank and on virtual ranks: reductions,
// ordered sums equal to one rank's bit for bit, exchanges and error agreement.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>

#include "point_to_point_check.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera::parallel {
namespace {

// Values whose sum depends on the order of addition in every digit: magnitudes from 1e-8
// to 1e16 with both signs.
std::vector<double> hard_values(int n, int width) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(-1, 1);
  std::uniform_int_distribution<int> expo(-8, 16);
  std::vector<double> v(std::size_t(n) * width);
  for (auto& x : v) x = mant(rng) * std::pow(10.0, expo(rng));
  return v;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(SerialComm, OrderedSumAddsInKeyOrder) {
  SerialComm comm;
  const std::vector<std::int64_t> keys = {2, 0, 1};
  const std::vector<double> values = {1.0, 10.0, 1e16, 20.0, -1e16, -30.0};
  // Key order: (1e16, 20), (-1e16, -30), (1, 10): 1e16 - 1e16 + 1 = 1 exactly, whereas the
  // order given would lose the 1.
  const auto s = comm.ordered_sum(keys, values, 2);
  EXPECT_EQ(s[0], 1.0);
  EXPECT_EQ(s[1], 0.0);
  EXPECT_THROW(comm.ordered_sum(std::vector<std::int64_t>{3, 3}, std::vector<double>{1, 2}, 1),
               Error);
}

// Items 0..n-1 dealt to the ranks in contiguous pieces (as the partition deals the curve)
// and, within each rank, in shuffled order: the sums equal one rank's bit for bit.
TEST(VirtualRanks, OrderedSumEqualsOneRankForAnyRankCount) {
  const int n = 1000, width = 3;
  const auto values = hard_values(n, width);
  std::vector<std::int64_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  const auto serial = SerialComm().ordered_sum(all, values, width);
  // Per-rank partial sums added afterwards (what an MPI_Allreduce of local sums gives)
  // differ: the test can tell.
  double naive = 0;
  for (int half = 0; half < 2; ++half) {
    double part = 0;
    for (int i = half * n / 2; i < (half + 1) * n / 2; ++i) part += values[i * width];
    naive += part;
  }
  ASSERT_NE(naive, serial[0]);
  for (const int ranks : {2, 3, 4, 7}) {
    VirtualRanks vr(ranks);
    std::vector<std::vector<double>> got(ranks);
    vr.run([&](Comm& comm) {
      const int r = comm.rank();
      std::vector<std::int64_t> keys;
      for (int i = n * r / ranks; i < n * (r + 1) / ranks; ++i) keys.push_back(i);
      std::shuffle(keys.begin(), keys.end(), std::mt19937(r));
      std::vector<double> mine;
      for (const auto k : keys)
        mine.insert(mine.end(), values.begin() + k * width, values.begin() + (k + 1) * width);
      got[r] = comm.ordered_sum(keys, mine, width);
    });
    for (int r = 0; r < ranks; ++r) EXPECT_TRUE(same_bits(got[r], serial)) << ranks << " ranks";
  }
}

TEST(VirtualRanks, ScalarReductionsExchangeAndAllgather) {
  VirtualRanks vr(4);
  vr.run([](Comm& comm) {
    const int r = comm.rank(), n = comm.size();
    EXPECT_EQ(comm.max(double(r)), n - 1);
    EXPECT_EQ(comm.min(double(r) - 5), -5);
    EXPECT_EQ(comm.sum(r + 1), n * (n + 1) / 2);
    std::vector<std::vector<double>> send(n);
    for (int q = 0; q < n; ++q) send[q] = std::vector<double>(q + 1, 10.0 * r + q);
    const auto got = comm.exchange(send);
    ASSERT_EQ(static_cast<int>(got.size()), n);
    for (int q = 0; q < n; ++q) EXPECT_EQ(got[q], std::vector<double>(r + 1, 10.0 * q + r));
    // Every rank's list on every rank, rank 0's empty.
    const auto all = comm.allgather(std::vector<double>(r, 1.5 * r));
    ASSERT_EQ(static_cast<int>(all.size()), n);
    for (int q = 0; q < n; ++q) EXPECT_EQ(all[q], std::vector<double>(q, 1.5 * q));
  });
}

// Ranks that share a GPU count each other: four ranks on two GPUs (by rank parity), and
// one rank alone with its own.
TEST(VirtualRanks, CountAlikeCountsTheRanksOfEachText) {
  VirtualRanks(5).run([](Comm& comm) {
    const int r = comm.rank();
    const std::string gpu =
        r == 4 ? "host b, 0000:3b:00.0" : "host a, 0000:" + std::to_string(r % 2);
    EXPECT_EQ(count_alike(comm, gpu), r == 4 ? 1 : 2) << "rank " << r;
    EXPECT_EQ(count_alike(comm, "one host"), 5);
  });
  EXPECT_EQ(count_alike(serial_comm(), "x"), 1);
}

TEST(VirtualRanks, PointToPointMessagesArriveInOrderWithTheirBytes) {
  for (const int n : {2, 3, 4}) {
    std::vector<long long> wrong(n, -1);
    VirtualRanks(n).run(
        [&](Comm& comm) { wrong[comm.rank()] = testing::check_point_to_point(comm, 5); });
    for (int r = 0; r < n; ++r) EXPECT_EQ(wrong[r], 0) << n << " ranks, rank " << r;
  }
}

TEST(VirtualRanks, PointToPointRefusesAMessageOfAnotherSize) {
  std::vector<char> a(16), b(8);
  try {
    VirtualRanks(2).run([&](Comm& comm) {
      if (comm.rank() == 0) comm.post({{1, a.data(), a.size()}}, {}, 1)->wait();
      std::vector<char> mine(8);
      if (comm.rank() == 1) comm.post({}, {{0, mine.data(), mine.size()}}, 1)->wait();
    });
    ADD_FAILURE() << "16 bytes were received where 8 were posted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("16 bytes"), std::string::npos) << e.what();
  }
}

TEST(SerialComm, PointToPointHasNoPeer) {
  SerialComm comm;
  EXPECT_TRUE(comm.post({}, {}, 0)->test());
  char c = 0;
  EXPECT_THROW(comm.post({{0, &c, 1}}, {}, 0), Error);
}

TEST(VirtualRanks, EveryRankThrowsTheLowestRanksError) {
  VirtualRanks vr(5);
  std::vector<std::string> seen(5);
  vr.run([&](Comm& comm) {
    std::exception_ptr mine;
    if (comm.rank() == 3 || comm.rank() == 1)
      mine = std::make_exception_ptr(std::runtime_error("rank " + std::to_string(comm.rank())));
    try {
      comm.agree(mine);
    } catch (const std::runtime_error& e) {
      seen[comm.rank()] = e.what();
    }
    comm.agree(nullptr);  // nothing pending: returns on every rank
  });
  for (const auto& s : seen) EXPECT_EQ(s, "rank 1");
}

// A rank that leaves early (an ASSERT's return, an exception) must not leave the others
// waiting forever: their next collective throws, and run() reports the first rank's error.
TEST(VirtualRanks, ARankThatLeavesEarlyReleasesTheOthers) {
  VirtualRanks vr(3);
  std::vector<int> released(3, 0);
  try {
    vr.run([&](Comm& comm) {
      if (comm.rank() == 1) throw std::runtime_error("rank 1 failed");
      try {
        comm.max(1.0);
      } catch (const Error&) {
        released[comm.rank()] = 1;
        throw;
      }
    });
    ADD_FAILURE() << "run() returned normally";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank 1 failed");
  }
  EXPECT_EQ(released, (std::vector<int>{1, 0, 1}));
  // The object runs again afterwards.
  vr.run([](Comm& comm) { EXPECT_EQ(comm.sum(1), 3); });
}

// Only rank 0 logs; the warnings and notes of the others reach its log once, with the ranks
// they came from, at the next forward_rank_messages. What rank 0 logged itself is not
// repeated, and lines of the log that are neither warnings nor notes stay unforwarded.
TEST(VirtualRanks, OtherRanksWarningsReachRankZerosLogOnce) {
  set_log_quiet(false);
  VirtualRanks vr(4);
  ::testing::internal::CaptureStdout();
  vr.run([](Comm& comm) {
    set_log_rank(comm.rank());
    log_line("warning: the same on every rank");
    log_line("step line of rank %d", comm.rank());
    if (comm.rank() > 0) log_line("note: rank %d has its own note", comm.rank());
    if (comm.rank() == 1 || comm.rank() == 3) log_line("warning: ranks 1 and 3 only");
    if (comm.rank() == 3) log_line("note: a message of\ntwo lines");
    forward_rank_messages(comm);
    forward_rank_messages(comm);  // nothing new: nothing printed
    if (comm.rank() == 2)
      for (int i = 0; i < kHeldMessages + 5; ++i) log_line("warning: many %d", i);
    forward_rank_messages(comm);
    set_log_rank(0);
  });
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string expected =
      "warning: the same on every rank\n"
      "step line of rank 0\n"
      "note (rank 1): rank 1 has its own note\n"
      "warning (ranks 1, 3): ranks 1 and 3 only\n"
      "note (rank 2): rank 2 has its own note\n"
      "note (rank 3): rank 3 has its own note\n"
      "note (rank 3): a message of\ntwo lines\n";
  EXPECT_EQ(out.substr(0, expected.size()), expected);
  // The third call: rank 2's first kHeldMessages lines and a count of the rest.
  std::string rest;
  for (int i = 0; i < kHeldMessages; ++i) rest += strprintf("warning (rank 2): many %d\n", i);
  rest += "warning (rank 2): 5 more warnings and notes were not kept\n";
  EXPECT_EQ(out.substr(std::min(out.size(), expected.size())), rest);
  take_rank_messages();
}

}  // namespace
}  // namespace tessera::parallel
