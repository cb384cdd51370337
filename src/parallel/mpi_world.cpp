// The MPI Comm and the process's MPI life (tessera/parallel/mpi.hpp). Built without MPI,
// the same functions describe one rank.
#include "tessera/parallel/mpi.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

#ifdef TESSERA_HAVE_MPI
// The C interface only (the C++ bindings are deprecated and need their own library).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_Query_cuda_support (Open MPI)
#endif
#endif

namespace tessera::parallel {

namespace {

// The message of the last error Comm::agree threw on this process (every rank threw it).
std::string g_agreed_what;
int g_agreed_rank = -1;

}  // namespace

int agreed_error_rank(const std::exception& error) {
  return g_agreed_rank >= 0 && g_agreed_what == error.what() ? g_agreed_rank : -1;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown host";
  return name;
}

#ifdef TESSERA_HAVE_MPI

namespace {

bool g_started = false;
int g_node_rank = 0, g_node_size = 1;

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(ErrorKind::kInternal, strprintf("MPI: %s failed: %s", what, text));
}

// MPI counts are ints: a message of more doubles goes in pieces of at most this many
// (the 2^31 limit of one call; 2^27 doubles = 1 GiB).
constexpr std::int64_t kPiece = std::int64_t(1) << 27;
// Comm::allgather's limit for one MPI_Allgatherv (2^30 values: int displacements).
std::int64_t g_allgather_limit = kPiece * 8;

// An exchange in flight: its buffers and requests (the send buffers must live until the
// sends complete).
struct MpiExchange final : PendingExchange {
  int rank = 0;
  std::vector<std::vector<double>> send, received;
  std::vector<MPI_Request> requests;
  bool done = false;

  bool test() override {
    if (done || requests.empty()) return true;
    int flag = 0;
    check(
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, MPI_STATUSES_IGNORE),
        "MPI_Testall");
    return flag != 0;
  }
  std::vector<std::vector<double>> finish() override {
    if (done) throw Error(ErrorKind::kInternal, "an exchange finished twice");
    done = true;
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    received[rank] = std::move(send[rank]);
    return std::move(received);
  }
  // A pending exchange left unfinished (an error unwinding): its transfers still complete
  // before the buffers go.
  ~MpiExchange() override {
    if (!done) MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }
};

// Point-to-point messages in flight (Comm::post), bytes in pieces of at most 1 GiB.
struct MpiRequests final : Requests {
  std::vector<MPI_Request> requests;
  std::vector<std::size_t> expected;  // bytes of each receive request; SIZE_MAX: a send
  bool done = false;
  bool test() override {
    if (done || requests.empty()) return true;
    int flag = 0;
    std::vector<MPI_Status> status(requests.size());
    check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, status.data()),
          "MPI_Testall");
    if (flag) finish(status);
    return flag != 0;
  }
  void wait() override {
    if (done) return;
    std::vector<MPI_Status> status(requests.size());
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), status.data()),
          "MPI_Waitall");
    finish(status);
  }
  void finish(const std::vector<MPI_Status>& status) {
    done = true;
    for (std::size_t i = 0; i < status.size(); ++i) {
      if (expected[i] == SIZE_MAX) continue;
      int count = 0;
      MPI_Get_count(&status[i], MPI_BYTE, &count);
      if (std::size_t(count) != expected[i])
        throw Error(ErrorKind::kInternal,
                    strprintf("rank %d sent a message of %d bytes where %zu were expected",
                              status[i].MPI_SOURCE, count, expected[i]));
    }
  }
  ~MpiRequests() override {
    if (!done) MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }
};

class MpiComm final : public Comm {
 public:
  MpiComm() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  double max(double x) override { return reduce(x, MPI_MAX); }
  double min(double x) override { return reduce(x, MPI_MIN); }
  long long sum(long long x) override {
    long long r = 0;
    check(MPI_Allreduce(&x, &r, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return r;
  }

  // Every rank's items gathered, then summed in key order by the code VirtualRanks and the
  // serial Comm use (sum_in_key_order): the same additions in the same order on every rank.
  std::vector<double> ordered_sum(std::span<const std::int64_t> keys,
                                  std::span<const double> values, int width) override {
    const int mine = static_cast<int>(keys.size());
    std::vector<int> counts(size_), offsets(size_ + 1, 0);
    check(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
          "MPI_Allgather");
    for (int r = 0; r < size_; ++r) offsets[r + 1] = offsets[r] + counts[r];
    std::vector<std::int64_t> all_keys(offsets[size_]);
    check(MPI_Allgatherv(keys.data(), mine, MPI_INT64_T, all_keys.data(), counts.data(),
                         offsets.data(), MPI_INT64_T, MPI_COMM_WORLD),
          "MPI_Allgatherv");
    std::vector<int> value_counts(size_), value_offsets(size_);
    for (int r = 0; r < size_; ++r) {
      value_counts[r] = counts[r] * width;
      value_offsets[r] = offsets[r] * width;
    }
    std::vector<double> all_values(std::size_t(offsets[size_]) * width);
    check(MPI_Allgatherv(values.data(), mine * width, MPI_DOUBLE, all_values.data(),
                         value_counts.data(), value_offsets.data(), MPI_DOUBLE, MPI_COMM_WORLD),
          "MPI_Allgatherv");
    std::vector<std::pair<std::int64_t, const double*>> items(all_keys.size());
    for (std::size_t i = 0; i < items.size(); ++i)
      items[i] = {all_keys[i], all_values.data() + i * std::size_t(width)};
    return sum_in_key_order(std::move(items), width);
  }

  // The sizes first (all-to-all), then one non-blocking message per peer with data (in
  // pieces beyond kPiece doubles); finish() waits for them.
  std::vector<std::vector<double>> exchange(std::vector<std::vector<double>> send) override {
    return start_exchange(std::move(send))->finish();
  }

  std::vector<std::vector<double>> allgather(std::vector<double> mine) override {
    std::vector<std::int64_t> counts(size_);
    const std::int64_t n = static_cast<std::int64_t>(mine.size());
    check(MPI_Allgather(&n, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, MPI_COMM_WORLD),
          "MPI_Allgather");
    std::int64_t total = 0;
    for (const std::int64_t c : counts) total += c;
    std::vector<std::vector<double>> got(size_);
    if (total < g_allgather_limit) {  // int counts and displacements: one collective
      std::vector<int> count(size_), first(size_);
      for (int r = 0; r < size_; ++r)
        count[r] = int(counts[r]), first[r] = r ? first[r - 1] + count[r - 1] : 0;
      std::vector<double> all(static_cast<std::size_t>(total));
      check(MPI_Allgatherv(mine.data(), int(n), MPI_DOUBLE, all.data(), count.data(), first.data(),
                           MPI_DOUBLE, MPI_COMM_WORLD),
            "MPI_Allgatherv");
      for (int r = 0; r < size_; ++r)
        got[r].assign(all.begin() + first[r], all.begin() + first[r] + count[r]);
      return got;
    }
    // Beyond int counts: the one buffer sent to every peer in pieces (no copy per peer).
    std::vector<MPI_Request> requests;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      got[r].resize(static_cast<std::size_t>(counts[r]));
      for (std::int64_t at = 0, tag = 0; at < counts[r]; at += kPiece, ++tag) {
        requests.emplace_back();
        check(MPI_Irecv(got[r].data() + at, int(std::min(kPiece, counts[r] - at)), MPI_DOUBLE, r,
                        int(tag), MPI_COMM_WORLD, &requests.back()),
              "MPI_Irecv");
      }
    }
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      for (std::int64_t at = 0, tag = 0; at < n; at += kPiece, ++tag) {
        requests.emplace_back();
        check(MPI_Isend(mine.data() + at, int(std::min(kPiece, n - at)), MPI_DOUBLE, r, int(tag),
                        MPI_COMM_WORLD, &requests.back()),
              "MPI_Isend");
      }
    }
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    got[rank_] = std::move(mine);
    return got;
  }

  std::unique_ptr<PendingExchange> start_exchange(std::vector<std::vector<double>> send) override {
    if (static_cast<int>(send.size()) != size_)
      throw Error(ErrorKind::kInternal,
                  strprintf("exchange with %zu destinations on %d ranks", send.size(), size_));
    std::vector<std::int64_t> out(size_), in(size_);
    for (int r = 0; r < size_; ++r) out[r] = static_cast<std::int64_t>(send[r].size());
    check(MPI_Alltoall(out.data(), 1, MPI_INT64_T, in.data(), 1, MPI_INT64_T, MPI_COMM_WORLD),
          "MPI_Alltoall");
    auto x = std::make_unique<MpiExchange>();
    x->rank = rank_;
    x->send = std::move(send);
    x->received.resize(size_);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      x->received[r].resize(in[r]);
      for (std::int64_t first = 0, tag = 0; first < in[r]; first += kPiece, ++tag) {
        x->requests.emplace_back();
        check(MPI_Irecv(x->received[r].data() + first, int(std::min(kPiece, in[r] - first)),
                        MPI_DOUBLE, r, int(tag), MPI_COMM_WORLD, &x->requests.back()),
              "MPI_Irecv");
      }
    }
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      for (std::int64_t first = 0, tag = 0; first < out[r]; first += kPiece, ++tag) {
        x->requests.emplace_back();
        check(MPI_Isend(x->send[r].data() + first, int(std::min(kPiece, out[r] - first)),
                        MPI_DOUBLE, r, int(tag), MPI_COMM_WORLD, &x->requests.back()),
              "MPI_Isend");
      }
    }
    return x;
  }

  // Pieces of at most 1 GiB, in order under one tag (MPI keeps the order of messages
  // between two ranks with one tag); receives are posted before sends.
  std::unique_ptr<Requests> post(const std::vector<Message>& sends,
                                 const std::vector<Message>& receives, int tag) override {
    constexpr std::size_t kBytes = std::size_t(1) << 30;
    auto r = std::make_unique<MpiRequests>();
    auto each = [&](const Message& m, bool send) {
      if (m.rank < 0 || m.rank >= size_ || m.rank == rank_)
        throw Error(ErrorKind::kInternal,
                    strprintf("a message between rank %d and rank %d", rank_, m.rank));
      char* at = static_cast<char*>(m.data);
      for (std::size_t first = 0; first < m.bytes || (first == 0 && m.bytes == 0);
           first += kBytes) {
        const int n = static_cast<int>(std::min(kBytes, m.bytes - first));
        r->requests.emplace_back();
        r->expected.push_back(send ? SIZE_MAX : std::size_t(n));
        if (send)
          check(
              MPI_Isend(at + first, n, MPI_BYTE, m.rank, tag, MPI_COMM_WORLD, &r->requests.back()),
              "MPI_Isend");
        else
          check(
              MPI_Irecv(at + first, n, MPI_BYTE, m.rank, tag, MPI_COMM_WORLD, &r->requests.back()),
              "MPI_Irecv");
        if (m.bytes == 0) break;
      }
    };
    for (const Message& m : receives) each(m, false);
    for (const Message& m : sends) each(m, true);
    return r;
  }

  // The lowest failing rank is found by a minimum, and its error (kind and message)
  // broadcast: every rank throws the same error, which main() then reports once (rank 0)
  // and exits with its code on every rank.
  void agree(std::exception_ptr error) override {
    const int mine = error ? rank_ : size_;
    int first = size_;
    check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    if (first == size_) return;
    // What the failing rank caught: a tessera::Error (its kind), a failed allocation, or
    // another exception (an internal error).
    int kind = 0;
    std::string what;
    if (rank_ == first) {
      try {
        std::rethrow_exception(error);
      } catch (const Error& e) {
        kind = e.exit_code();
        what = e.what();
      } catch (const std::bad_alloc& e) {
        kind = -1;
        what = e.what();
      } catch (const std::exception& e) {
        kind = -2;
        what = e.what();
      } catch (...) {
        kind = -2;
        what = "an exception of unknown type";
      }
    }
    check(MPI_Bcast(&kind, 1, MPI_INT, first, MPI_COMM_WORLD), "MPI_Bcast");
    int length = static_cast<int>(what.size());
    check(MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD), "MPI_Bcast");
    what.resize(length);
    check(MPI_Bcast(what.data(), length, MPI_CHAR, first, MPI_COMM_WORLD), "MPI_Bcast");
    g_agreed_rank = first;
    g_agreed_what = what;
    if (rank_ == first) std::rethrow_exception(error);
    if (kind == -1) throw std::bad_alloc();
    if (kind == -2) throw std::runtime_error(what);
    throw Error(static_cast<ErrorKind>(kind), what);
  }

 private:
  double reduce(double x, MPI_Op op) {
    double r = 0;
    check(MPI_Allreduce(&x, &r, 1, MPI_DOUBLE, op, MPI_COMM_WORLD), "MPI_Allreduce");
    return r;
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

bool mpi_built() {
  return true;
}

// Whether a launcher started this process as a rank of a job: the variables Open MPI's
// mpirun (OMPI_*), PMIx (Open MPI 5, srun --mpi=pmix), PMI (MPICH, Intel MPI, srun
// --mpi=pmi2) and MVAPICH set. Without one the process is a job of one rank and does not
// initialise MPI (a singleton start fails on some clusters' nodes); copies of the binary
// started by a launcher unknown here would each run the whole problem, and the second to
// reach the output directory stops with exit 2 (docs/checkpoints.md, one run per
// directory).
bool launched_as_rank() {
  for (const char* v :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

void start_mpi() {
  if (g_started || !launched_as_rank()) return;
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  g_started = true;
  // Errors come back as codes (check() turns them into exceptions) instead of aborting
  // inside MPI without a message of ours.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_rank(node, &g_node_rank);
  MPI_Comm_size(node, &g_node_size);
  MPI_Comm_free(&node);
}

Comm& world_comm() {
  int size = 1;
  if (g_started) MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return serial_comm();
  static MpiComm comm;
  return comm;
}

bool is_mpi_world(const Comm& comm) {
  return comm.size() > 1 && &comm == &world_comm();
}

int node_rank() {
  return g_node_rank;
}

void set_allgather_collective_limit(std::int64_t values) {
  g_allgather_limit = std::min(values, kPiece * 8);
}

bool mpi_device_messages() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return g_started && MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

int node_size() {
  return g_node_size;
}

void end_mpi(int exit_code, bool together) {
  if (!g_started) return;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!together && size > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
  MPI_Finalize();
  g_started = false;
}

#else  // without MPI: one rank

bool mpi_built() {
  return false;
}

void start_mpi() {}

Comm& world_comm() {
  return serial_comm();
}

bool is_mpi_world(const Comm&) {
  return false;
}

int node_rank() {
  return 0;
}

void set_allgather_collective_limit(std::int64_t) {}

bool mpi_device_messages() {
  return false;
}

int node_size() {
  return 1;
}

void end_mpi(int, bool) {}

#endif

}  // namespace tessera::parallel
