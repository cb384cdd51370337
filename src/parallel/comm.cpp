#include "tessera/parallel/comm.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"

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

Comm& serial_comm() {
  static SerialComm comm;
  return comm;
}

}  // namespace tessera::parallel
