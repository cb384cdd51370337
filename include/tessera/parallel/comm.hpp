// The ranks of a run as the solver sees them: every reduction, exchange and error agreement
// between ranks goes through a Comm. The serial Comm is the run on one rank; VirtualRanks
// (virtual_ranks.hpp) runs N ranks in one process, which is how the decomposition is
// tested without MPI; an MPI Comm is the same interface over MPI_COMM_WORLD.
//
// Results must not depend on the number of ranks, bit for bit (docs/architecture.md,
// "Ranks"): floating-point sums are formed by ordered_sum, in the global order of their
// items' keys (positions along the space-filling curve), never in the order contributions
// arrive; max, min and integer sums are exact in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tessera::parallel {

// An exchange in flight (Comm::start_exchange).
class PendingExchange {
 public:
  virtual ~PendingExchange() = default;
  // Lets the transfers advance (MPI progresses its messages only inside its calls); true
  // when they are done. Never blocks.
  virtual bool test() { return true; }
  // Waits for the transfers and returns what each rank sent to this one, as
  // Comm::exchange does. Called once.
  virtual std::vector<std::vector<double>> finish() = 0;
};

// A point-to-point message of a size both sides know (Comm::post): `bytes` at `data`, to or
// from `rank`.
struct Message {
  int rank = 0;
  void* data = nullptr;
  std::size_t bytes = 0;
};

// Messages in flight (Comm::post).
class Requests {
 public:
  virtual ~Requests() = default;
  // True when every message is done; never blocks (MPI progresses its messages only
  // inside its calls).
  virtual bool test() = 0;
  // Waits until every message is done.
  virtual void wait() = 0;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Over all ranks; every rank receives the result.
  virtual double max(double x) = 0;
  virtual double min(double x) = 0;
  virtual long long sum(long long x) = 0;

  // `width` sums over the items of all ranks: each rank passes its own items, item i with
  // key keys[i] and values values[i * width .. (i + 1) * width), keys unique across ranks.
  // The sums are formed item by item in ascending key order, so they are bit for bit those
  // of one rank holding every item, whatever the ranks and the order of their items.
  virtual std::vector<double> ordered_sum(std::span<const std::int64_t> keys,
                                          std::span<const double> values, int width) = 0;

  // All-to-all exchange: send[r] goes to rank r; returns what each rank sent to this one,
  // indexed by the sender (send must have size() entries; the entry for this rank is
  // returned to it as it is).
  virtual std::vector<std::vector<double>> exchange(std::vector<std::vector<double>> send) = 0;
  // All-gather: every rank's `mine`, indexed by rank, on every rank (lengths may differ).
  // By default an exchange of `mine` to every rank; MPI sends the one buffer without a copy
  // per peer (MPI_Allgatherv, or messages from it beyond 2^31 values in all).
  virtual std::vector<std::vector<double>> allgather(std::vector<double> mine);
  // The same exchange, begun: the messages travel while the caller works, finish() ends it.
  // A collective at its start (every rank starts it at the same point); a rank finishes it
  // before its next collective. By default the exchange is done here and finish() returns
  // its result (one rank; virtual ranks, which exchange through shared memory).
  virtual std::unique_ptr<PendingExchange> start_exchange(std::vector<std::vector<double>> send);

  // Point-to-point messages whose sizes both sides know from a plan (the device-resident
  // halo: docs/architecture.md, "Ranks"), in the caller's memory, which must stay as it is
  // until wait() returns. Not a collective: a rank posts its sends when their data are
  // ready. Messages of one tag between two ranks arrive in the order they were posted; a
  // received size other than the posted one is Error(kInternal). Device memory is
  // accepted where the library reads it (parallel::mpi_device_messages()).
  virtual std::unique_ptr<Requests> post(const std::vector<Message>& sends,
                                         const std::vector<Message>& receives, int tag);
  // Collective error agreement: every rank passes what it caught (or nullptr). When any
  // rank caught an error, every rank throws the error of the lowest rank that caught one,
  // so that all stop together with the same message; else it returns.
  virtual void agree(std::exception_ptr error) = 0;
};

// One rank: the run without decomposition.
class SerialComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  double max(double x) override { return x; }
  double min(double x) override { return x; }
  long long sum(long long x) override { return x; }
  std::vector<double> ordered_sum(std::span<const std::int64_t> keys,
                                  std::span<const double> values, int width) override;
  std::vector<std::vector<double>> exchange(std::vector<std::vector<double>> send) override;
  void agree(std::exception_ptr error) override;
};

// The process's serial Comm (the default of a Simulation).
Comm& serial_comm();

// Runs f on this rank and agrees on its error with the other ranks (Comm::agree): every rank
// throws the lowest failing rank's error, or all go on. f must not enter a collective (a
// rank that throws before it would leave the others waiting there).
template <class F>
void agreed(Comm& comm, F&& f) {
  std::exception_ptr error;
  try {
    f();
  } catch (...) {
    error = std::current_exception();
  }
  comm.agree(error);
}

// Rank 0's `text` on every rank (a collective, through exchange).
std::string broadcast(Comm& comm, const std::string& text);

// Every rank's `text`, by rank, on rank 0 (empty on the other ranks; a collective).
std::vector<std::string> gather_to_root(Comm& comm, const std::string& text);

// How many ranks, this one included, passed the same `text` (a collective, through
// exchange, counted on rank 0): with a host's name and a GPU's bus id, how many ranks
// share that GPU.
int count_alike(Comm& comm, const std::string& text);

// Prints on rank 0, once, the warnings and notes that the other ranks logged since the last
// call (take_rank_messages) and rank 0 did not log itself, each with the ranks it came
// from: "warning (ranks 1, 3): ...". A collective; cheap when no rank has any.
void forward_rank_messages(Comm& comm);

// The sums of ordered_sum over items gathered from every rank, in ascending key order
// (shared by the Comm implementations so that they add in exactly the same way).
std::vector<double> sum_in_key_order(std::vector<std::pair<std::int64_t, const double*>> items,
                                     int width);

// `bytes` of raw data carried in doubles, for Comm::exchange (which moves doubles): IPC
// handles, host names.
std::vector<double> bytes_as_doubles(const void* data, std::size_t bytes);

}  // namespace tessera::parallel
