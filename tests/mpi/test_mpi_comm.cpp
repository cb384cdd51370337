// The MPI Comm's collectives, run under `mpirun -np N` (N >= 2): each test checks on every
// rank what the serial Comm gives for the same items (ordered sums bit for bit), and a
// failure on any rank fails the job (gtest's exit code, gathered by mpirun).
#include <gtest/gtest.h>

#include <cmath>
#include <new>
#include <numeric>

#include "../unit/point_to_point_check.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/mpi.hpp"

namespace tessera {
namespace {

parallel::Comm& comm() {
  return parallel::world_comm();
}

TEST(MpiComm, RunsOnSeveralRanks) {
  ASSERT_TRUE(parallel::mpi_built());
  EXPECT_GE(comm().size(), 2) << "run under mpirun -np 2 or more";
  EXPECT_GE(parallel::node_size(), 1);
  EXPECT_LT(parallel::node_rank(), parallel::node_size());
}

TEST(MpiComm, MinMaxAndIntegerSum) {
  const int r = comm().rank(), n = comm().size();
  EXPECT_EQ(comm().max(double(r)), double(n - 1));
  EXPECT_EQ(comm().min(double(r) - 0.5), -0.5);
  EXPECT_EQ(comm().sum(static_cast<long long>(r) << 40), (static_cast<long long>(n) * (n - 1) / 2)
                                                             << 40);
}

// Items whose sum depends on the order of addition (1e16 and 1 do not associate): every
// rank holds every n-th item, keys interleaved, and the result must be the serial Comm's
// over all items in key order, on every rank.
TEST(MpiComm, OrderedSumIsTheSerialSumInKeyOrder) {
  const int r = comm().rank(), n = comm().size();
  const int items = 37, width = 2;
  std::vector<std::int64_t> all_keys(items), keys;
  std::vector<double> all_values, values;
  for (int i = 0; i < items; ++i) {
    all_keys[i] = 1000 - 7 * i;  // descending: the order of arrival is not the key order
    const double a = (i % 3 == 0) ? 1e16 : 1.0 + i * 1e-3, b = std::sin(i) * (i % 5 ? 1 : -1e15);
    all_values.insert(all_values.end(), {a, b});
    if (i % n == r) {
      keys.push_back(all_keys[i]);
      values.insert(values.end(), {a, b});
    }
  }
  const auto expected = parallel::serial_comm().ordered_sum(all_keys, all_values, width);
  const auto got = comm().ordered_sum(keys, values, width);
  ASSERT_EQ(got.size(), expected.size());
  for (int w = 0; w < width; ++w) EXPECT_EQ(got[w], expected[w]) << "component " << w;
}

// Rank r sends r + q + 1 values to q (none to itself when r == q is odd: empty messages).
TEST(MpiComm, ExchangeDeliversEveryMessageFromItsSender) {
  const int r = comm().rank(), n = comm().size();
  std::vector<std::vector<double>> send(n);
  for (int q = 0; q < n; ++q) {
    if (q == r && r % 2) continue;
    for (int i = 0; i < r + q + 1; ++i) send[q].push_back(1000.0 * r + 10.0 * q + i);
  }
  const auto got = comm().exchange(send);
  ASSERT_EQ(static_cast<int>(got.size()), n);
  for (int s = 0; s < n; ++s) {
    if (s == r && r % 2) {
      EXPECT_TRUE(got[s].empty());
      continue;
    }
    ASSERT_EQ(static_cast<int>(got[s].size()), s + r + 1) << "from rank " << s;
    for (int i = 0; i < s + r + 1; ++i) EXPECT_EQ(got[s][i], 1000.0 * s + 10.0 * r + i);
  }
}

// Rank r contributes 3 r values (rank 0 none); every rank receives every rank's, in order,
// by either of MPI's paths.
TEST(MpiComm, AllgatherDeliversEveryRanksValues) {
  const int r = comm().rank(), n = comm().size();
  std::vector<double> mine;
  for (int i = 0; i < 3 * r; ++i) mine.push_back(100.0 * r + i);
  // One MPI_Allgatherv, then the messages from the one buffer (the path of more values).
  for (const std::int64_t limit : {std::int64_t(1) << 30, std::int64_t(0)}) {
    parallel::set_allgather_collective_limit(limit);
    const auto got = comm().allgather(mine);
    ASSERT_EQ(static_cast<int>(got.size()), n);
    for (int s = 0; s < n; ++s) {
      ASSERT_EQ(static_cast<int>(got[s].size()), 3 * s) << "from rank " << s << ", limit " << limit;
      for (int i = 0; i < 3 * s; ++i) EXPECT_EQ(got[s][i], 100.0 * s + i);
    }
  }
  parallel::set_allgather_collective_limit(std::int64_t(1) << 30);
}

TEST(MpiComm, PointToPointMessagesArriveInOrderWithTheirBytes) {
  EXPECT_EQ(comm().sum(testing::check_point_to_point(comm(), 9)), 0);
  // A library that says it reads GPU memory is only asked to where it says so.
  if (!parallel::mpi_device_messages()) GTEST_LOG_(INFO) << "MPI is not CUDA-aware here";
}

TEST(MpiComm, BroadcastAndGatherOfTexts) {
  const int r = comm().rank(), n = comm().size();
  EXPECT_EQ(parallel::broadcast(comm(), r == 0 ? "/path/to/chk é.h5" : "other"),
            "/path/to/chk é.h5");
  const auto all = parallel::gather_to_root(comm(), "rank " + std::to_string(r));
  if (r == 0) {
    ASSERT_EQ(static_cast<int>(all.size()), n);
    for (int q = 0; q < n; ++q) EXPECT_EQ(all[q], "rank " + std::to_string(q));
  } else {
    EXPECT_TRUE(all.empty());
  }
}

// The ranks of each text counted across processes (ranks sharing a GPU count each other).
TEST(MpiComm, CountAlikeAcrossProcesses) {
  const int r = comm().rank(), n = comm().size();
  EXPECT_EQ(parallel::count_alike(comm(), "gpu " + std::to_string(r % 2)), (n - r % 2 + 1) / 2);
  EXPECT_EQ(parallel::count_alike(comm(), "host"), n);
}

// Every rank but 0 logs a note of its own: rank 0's log shows each once, naming its rank.
TEST(MpiComm, OtherRanksNotesReachRankZerosLog) {
  const int r = comm().rank(), n = comm().size();
  set_log_rank(r);
  if (r == 0) ::testing::internal::CaptureStdout();
  log_line("note: on every rank");
  if (r > 0) log_line("note: rank %d's own", r);
  parallel::forward_rank_messages(comm());
  set_log_rank(0);
  if (r != 0) return;
  const std::string out = ::testing::internal::GetCapturedStdout();
  std::string expected = "note: on every rank\n";
  for (int q = 1; q < n; ++q) expected += strprintf("note (rank %d): rank %d's own\n", q, q);
  EXPECT_EQ(out, expected);
}

TEST(MpiComm, AgreeReturnsWhenNoRankFailed) {
  EXPECT_NO_THROW(comm().agree(nullptr));
}

// Ranks 1 and 2 (of 3 or more) fail with different errors: every rank throws rank 1's, with
// its kind and message, and knows it came from rank 1.
TEST(MpiComm, AgreeThrowsTheLowestFailingRanksErrorOnEveryRank) {
  const int r = comm().rank();
  std::exception_ptr mine;
  if (r == 1) mine = std::make_exception_ptr(Error(ErrorKind::kNumerical, "bad cell on one"));
  if (r == 2) mine = std::make_exception_ptr(Error(ErrorKind::kIo, "bad file on two"));
  try {
    comm().agree(mine);
    ADD_FAILURE() << "no error on rank " << r;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNumerical);
    EXPECT_STREQ(e.what(), "bad cell on one");
    EXPECT_EQ(parallel::agreed_error_rank(e), 1);
  }
  // Not a tessera::Error: an allocation failure stays one on every rank.
  try {
    comm().agree(r == comm().size() - 1 ? std::make_exception_ptr(std::bad_alloc()) : nullptr);
    ADD_FAILURE() << "no error on rank " << r;
  } catch (const std::bad_alloc& e) {
    EXPECT_EQ(parallel::agreed_error_rank(e), comm().size() - 1);
  }
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  tessera::parallel::start_mpi();
  const int failed = RUN_ALL_TESTS();
  tessera::parallel::end_mpi(failed, true);
  return failed;
}
