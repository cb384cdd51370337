#include "tessera/parallel/comm.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::parallel {

std::vector<double> sum_in_key_order(std::vector<std::pair<std::int64_t, const double*>> items,
                                     int width) {
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 1; i < items.size(); ++i)
    if (items[i].first == items[i - 1].first)
      throw Error(ErrorKind::kInternal,
                  "ordered sum: two items have the key " + std::to_string(items[i].first));
  std::vector<double> sums(width, 0.0);
  for (const auto& [key, v] : items)
    for (int w = 0; w < width; ++w) sums[w] += v[w];
  return sums;
}

std::vector<double> SerialComm::ordered_sum(std::span<const std::int64_t> keys,
                                            std::span<const double> values, int width) {
  std::vector<std::pair<std::int64_t, const double*>> items(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    items[i] = {keys[i], values.data() + i * std::size_t(width)};
  return sum_in_key_order(std::move(items), width);
}

std::vector<std::vector<double>> SerialComm::exchange(std::vector<std::vector<double>> send) {
  if (send.size() != 1)
    throw Error(ErrorKind::kInternal,
                "exchange on one rank with " + std::to_string(send.size()) + " destinations");
  return send;
}

namespace {

// An exchange already done.
class DoneExchange final : public PendingExchange {
 public:
  explicit DoneExchange(std::vector<std::vector<double>> result) : result_(std::move(result)) {}
  std::vector<std::vector<double>> finish() override { return std::move(result_); }

 private:
  std::vector<std::vector<double>> result_;
};

}  // namespace

std::vector<std::vector<double>> Comm::allgather(std::vector<double> mine) {
  std::vector<std::vector<double>> send(size());
  for (int q = 0; q < size(); ++q)
    if (q != rank()) send[q] = mine;
  send[rank()] = std::move(mine);
  return exchange(std::move(send));
}

std::unique_ptr<PendingExchange> Comm::start_exchange(std::vector<std::vector<double>> send) {
  return std::make_unique<DoneExchange>(exchange(std::move(send)));
}

namespace {

class NoRequests final : public Requests {
 public:
  bool test() override { return true; }
  void wait() override {}
};

}  // namespace

std::unique_ptr<Requests> Comm::post(const std::vector<Message>& sends,
                                     const std::vector<Message>& receives, int) {
  if (!sends.empty() || !receives.empty())
    throw Error(ErrorKind::kInternal,
                strprintf("point-to-point messages on a Comm of %d rank(s) without them", size()));
  return std::make_unique<NoRequests>();
}

void SerialComm::agree(std::exception_ptr error) {
  if (error) std::rethrow_exception(error);
}

namespace {

// Text carried as doubles, one byte each (exchange moves doubles; the texts are short).
std::vector<double> encode(const std::string& text) {
  return std::vector<double>(text.begin(), text.end());
}

std::string decode(const std::vector<double>& v) {
  std::string text(v.size(), '\0');
  for (std::size_t i = 0; i < v.size(); ++i) text[i] = static_cast<char>(v[i]);
  return text;
}

}  // namespace

std::string broadcast(Comm& comm, const std::string& text) {
  std::vector<std::vector<double>> send(comm.size());
  if (comm.rank() == 0)
    for (auto& s : send) s = encode(text);
  return decode(comm.exchange(std::move(send))[0]);
}

std::vector<std::string> gather_to_root(Comm& comm, const std::string& text) {
  std::vector<std::vector<double>> send(comm.size());
  send[0] = encode(text);
  const auto received = comm.exchange(std::move(send));
  std::vector<std::string> texts;
  if (comm.rank() == 0)
    for (const auto& r : received) texts.push_back(decode(r));
  return texts;
}

int count_alike(Comm& comm, const std::string& text) {
  if (comm.size() == 1) return 1;
  // Through rank 0, which counts: a message per rank each way, not one per pair of ranks.
  const std::vector<std::string> all = gather_to_root(comm, text);
  std::vector<std::vector<double>> send(comm.size());
  if (comm.rank() == 0) {
    std::map<std::string, int> counts;
    for (const std::string& t : all) ++counts[t];
    for (int q = 0; q < comm.size(); ++q) send[q] = {double(counts[all[q]])};
  }
  return static_cast<int>(comm.exchange(std::move(send))[0].at(0));
}

void forward_rank_messages(Comm& comm) {
  if (comm.size() == 1) return;
  std::vector<std::string> mine = take_rank_messages();
  if (comm.max(static_cast<double>(mine.size())) == 0) return;
  // One record per message (a message may span several lines).
  constexpr char kSeparator = '\x1e';
  std::string text;
  for (const auto& line : mine) text += line + kSeparator;
  const std::vector<std::string> all = gather_to_root(comm, text);
  if (comm.rank() != 0) return;
  // Each distinct line of the other ranks that rank 0 did not print, in the order first
  // met, with the ranks that logged it.
  std::vector<std::pair<std::string, std::vector<int>>> lines;
  for (std::size_t r = 1; r < all.size(); ++r) {
    std::size_t at = 0;
    while (at < all[r].size()) {
      const std::size_t end = all[r].find(kSeparator, at);
      const std::string line = all[r].substr(at, end - at);
      at = end == std::string::npos ? all[r].size() : end + 1;
      if (std::find(mine.begin(), mine.end(), line) != mine.end()) continue;
      auto it =
          std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == line; });
      if (it == lines.end()) {
        lines.push_back({line, {}});
        it = std::prev(lines.end());
      }
      if (it->second.empty() || it->second.back() != static_cast<int>(r))
        it->second.push_back(static_cast<int>(r));
    }
  }
  for (const auto& [line, ranks] : lines) {
    const std::size_t colon = line.find(':');  // "warning" or "note"
    std::string who = ranks.size() == 1 ? " (rank " : " (ranks ";
    for (std::size_t i = 0; i < ranks.size(); ++i)
      who += (i ? ", " : "") + std::to_string(ranks[i]);
    log_line(line.substr(0, colon) + who + ")" + line.substr(colon));
  }
}

Comm& serial_comm() {
  static SerialComm comm;
  return comm;
}

std::vector<double> bytes_as_doubles(const void* data, std::size_t bytes) {
  std::vector<double> v((bytes + sizeof(double) - 1) / sizeof(double), 0.0);
  if (bytes) std::memcpy(v.data(), data, bytes);
  return v;
}

}  // namespace tessera::parallel
