#include "tessera/parallel/virtual_ranks.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::parallel {

// What the ranks publish for a collective: each writes its own slot, all wait, all read
// every slot, all wait again (so no slot is overwritten while another rank reads it).
struct VirtualRanks::Shared {
  explicit Shared(int n) : barrier(n), scalars(n), keys(n), values(n), sends(n), errors(n) {}
  std::barrier<> barrier;
  std::vector<double> scalars;
  std::vector<std::span<const std::int64_t>> keys;
  std::vector<std::span<const double>> values;
  std::vector<std::vector<std::vector<double>>> sends;  // [from][to]
  std::vector<std::exception_ptr> errors;
  // The first rank whose function returned or threw (-1: none yet). A rank that leaves
  // drops out of the barrier, so the others are released from the collective they wait
  // in and find out there (a rank that leaves after the last collective releases nobody).
  std::atomic<int> left{-1};
  // Point-to-point messages (Comm::post), copied at the send: [(from, to, tag)] in order.
  std::mutex mail_mutex;
  std::condition_variable mail_cv;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<char>>> mail;
};

namespace {

// Receives from the mailbox: each taken once its message is there (sends complete at once).
class MailRequests final : public Requests {
 public:
  MailRequests(VirtualRanks::Shared& s, int rank, std::vector<Message> receives, int tag)
      : s_(s), rank_(rank), receives_(std::move(receives)), tag_(tag), got_(receives_.size(), 0) {}
  bool test() override {
    std::lock_guard lock(s_.mail_mutex);
    return take();
  }
  void wait() override {
    std::unique_lock lock(s_.mail_mutex);
    while (!take()) {
      if (const int r = s_.left.load(); r >= 0)
        throw Error(
            ErrorKind::kInternal,
            strprintf("virtual rank %d left the run while rank %d waited for a message", r, rank_));
      s_.mail_cv.wait_for(lock, std::chrono::milliseconds(50));
    }
  }

 private:
  // Under the mutex: takes what has arrived; true when everything has.
  bool take() {
    bool all = true;
    for (std::size_t i = 0; i < receives_.size(); ++i) {
      if (got_[i]) continue;
      auto it = s_.mail.find({receives_[i].rank, rank_, tag_});
      if (it == s_.mail.end() || it->second.empty()) {
        all = false;
        continue;
      }
      const std::vector<char>& m = it->second.front();
      if (m.size() != receives_[i].bytes)
        throw Error(ErrorKind::kInternal,
                    strprintf("rank %d sent %zu bytes to rank %d, which expected %zu",
                              receives_[i].rank, m.size(), rank_, receives_[i].bytes));
      if (!m.empty()) std::memcpy(receives_[i].data, m.data(), m.size());
      it->second.pop_front();
      got_[i] = 1;
    }
    return all;
  }
  VirtualRanks::Shared& s_;
  int rank_;
  std::vector<Message> receives_;
  int tag_;
  std::vector<char> got_;
};

}  // namespace

class VirtualRanks::RankComm final : public Comm {
 public:
  RankComm(Shared& s, int rank, int size) : s_(s), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  double max(double x) override {
    return reduce(x, [](double a, double b) { return std::max(a, b); });
  }
  double min(double x) override {
    return reduce(x, [](double a, double b) { return std::min(a, b); });
  }
  long long sum(long long x) override {
    // Exact: the counts are far below 2^53.
    return static_cast<long long>(reduce(double(x), [](double a, double b) { return a + b; }));
  }

  std::vector<double> ordered_sum(std::span<const std::int64_t> keys,
                                  std::span<const double> values, int width) override {
    s_.keys[rank_] = keys;
    s_.values[rank_] = values;
    arrive();
    std::vector<std::pair<std::int64_t, const double*>> items;
    for (int r = 0; r < size_; ++r)
      for (std::size_t i = 0; i < s_.keys[r].size(); ++i)
        items.push_back({s_.keys[r][i], s_.values[r].data() + i * std::size_t(width)});
    std::vector<double> sums = sum_in_key_order(std::move(items), width);
    s_.barrier.arrive_and_wait();
    return sums;
  }

  std::vector<std::vector<double>> exchange(std::vector<std::vector<double>> send) override {
    if (static_cast<int>(send.size()) != size_)
      throw Error(ErrorKind::kInternal, "exchange with " + std::to_string(send.size()) +
                                            " destinations on " + std::to_string(size_) + " ranks");
    s_.sends[rank_] = std::move(send);
    arrive();
    std::vector<std::vector<double>> received(size_);
    for (int r = 0; r < size_; ++r) received[r] = s_.sends[r][rank_];
    s_.barrier.arrive_and_wait();
    return received;
  }

  std::unique_ptr<Requests> post(const std::vector<Message>& sends,
                                 const std::vector<Message>& receives, int tag) override {
    {
      std::lock_guard lock(s_.mail_mutex);
      for (const Message& m : sends) {
        const char* at = static_cast<const char*>(m.data);
        s_.mail[{rank_, m.rank, tag}].emplace_back(at, at + m.bytes);
      }
    }
    s_.mail_cv.notify_all();
    return std::make_unique<MailRequests>(s_, rank_, receives, tag);
  }

  void agree(std::exception_ptr error) override {
    s_.errors[rank_] = error;
    arrive();
    std::exception_ptr first;
    for (int r = 0; r < size_ && !first; ++r) first = s_.errors[r];
    s_.barrier.arrive_and_wait();
    if (first) std::rethrow_exception(first);
  }

 private:
  // The first barrier of every collective: after it either every rank has published its
  // part, or one has left the run while the others were waiting.
  void arrive() {
    s_.barrier.arrive_and_wait();
    if (const int r = s_.left.load(); r >= 0)
      throw Error(ErrorKind::kInternal,
                  strprintf("virtual rank %d left the run before a collective that rank %d is "
                            "in (an exception, or an early return)",
                            r, rank_));
  }

  template <class Op>
  double reduce(double x, Op op) {
    s_.scalars[rank_] = x;
    arrive();
    double r = s_.scalars[0];
    for (int i = 1; i < size_; ++i) r = op(r, s_.scalars[i]);
    s_.barrier.arrive_and_wait();
    return r;
  }

  Shared& s_;
  int rank_, size_;
};

VirtualRanks::VirtualRanks(int ranks) : ranks_(ranks) {
  if (ranks < 1) throw Error(ErrorKind::kInternal, "virtual ranks: at least one rank");
}

VirtualRanks::~VirtualRanks() = default;

void VirtualRanks::run(const std::function<void(Comm&)>& f) {
  // Fresh shared state per run: the ranks drop out of its barrier as they finish.
  Shared shared(ranks_);
  std::vector<std::unique_ptr<RankComm>> comms;
  for (int r = 0; r < ranks_; ++r) comms.push_back(std::make_unique<RankComm>(shared, r, ranks_));
  std::vector<std::exception_ptr> errors(ranks_);
  std::vector<std::thread> threads;
  // The process's OpenMP threads shared among the ranks, as MPI ranks on one node share
  // its cores: N ranks each with every core's thread would oversubscribe the cores N-fold
  // (results do not depend on the thread count).
  const int threads_per_rank = std::max(1, omp_get_max_threads() / ranks_);
  for (int r = 0; r < ranks_; ++r)
    threads.emplace_back([&, r] {
      omp_set_num_threads(threads_per_rank);
      try {
        f(*comms[r]);
      } catch (...) {
        errors[r] = std::current_exception();
      }
      int none = -1;
      shared.left.compare_exchange_strong(none, r);
      shared.barrier.arrive_and_drop();
    });
  for (auto& t : threads) t.join();
  // The error of the rank that left first explains the others' (they found it gone).
  const int first = shared.left.load();
  if (errors[first]) std::rethrow_exception(errors[first]);
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tessera::parallel
