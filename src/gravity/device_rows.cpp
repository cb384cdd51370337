// move_rows (device_rows.hpp): a RowPlan's moves on host arrays, through Comm::exchange.
#include "device_rows.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::gravity {

void check_rows(const RowPlan& plan) {
  auto check = [&](const std::vector<std::vector<std::int64_t>>& rows, std::int64_t size,
                   const char* what) {
    for (std::size_t q = 0; q < rows.size(); ++q)
      for (const std::int64_t at : rows[q])
        if (at < 0 || at + plan.width > size)
          throw Error(ErrorKind::kInternal,
                      strprintf("rows between ranks: a row of rank %zu at %lld lies outside the "
                                "%s (%lld values)",
                                q, static_cast<long long>(at), what, static_cast<long long>(size)));
  };
  if (plan.width <= 0) throw Error(ErrorKind::kInternal, "rows between ranks: rows of no width");
  check(plan.send, plan.source_size, "source");
  check(plan.receive, plan.destination_size, "destination");
}

void move_rows(const RowPlan& plan, parallel::Comm& comm, const double* source,
               double* destination) {
  parallel::agreed(comm, [&] { check_rows(plan); });
  const int ranks = comm.size();
  const std::size_t w = static_cast<std::size_t>(plan.width);
  std::vector<std::vector<double>> send(ranks);
  for (int q = 0; q < ranks; ++q)
    for (const std::int64_t at : plan.send[q])
      send[q].insert(send[q].end(), source + at, source + at + w);
  const auto got = comm.exchange(std::move(send));
  parallel::agreed(comm, [&] {
    for (int q = 0; q < ranks; ++q) {
      if (got[q].size() != plan.receive[q].size() * w)
        throw Error(ErrorKind::kInternal,
                    strprintf("rows between ranks: rank %d sent %zu values, %zu expected", q,
                              got[q].size(), plan.receive[q].size() * w));
      for (std::size_t r = 0; r < plan.receive[q].size(); ++r)
        std::copy_n(got[q].data() + r * w, w, destination + plan.receive[q][r]);
    }
  });
}

}  // namespace tessera::gravity
