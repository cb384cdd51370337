#include "tessera/evolve/run_watch.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::evolve {

void RunWatch::time_step(long step, double dt, int level) {
  if (recent_.size() >= kMinSteps) {
    std::vector<double> sorted(recent_.begin(), recent_.end());
    const auto mid = sorted.begin() + sorted.size() / 2;
    std::nth_element(sorted.begin(), mid, sorted.end());
    const double median = *mid;
    if (dt < kCollapse * median)
      throw Error(ErrorKind::kNumerical,
                  strprintf("step %ld: the time step collapsed: dt = %.3e (set by level %d) is "
                            "below %.0e of the median of the last %zu steps, %.3e; the solution "
                            "is no longer stable (hydro.cfl too large for the flow, or an "
                            "unresolved feature: see the diagnostic plot file)",
                            step, dt, level, kCollapse, recent_.size(), median));
  }
  recent_.push_back(dt);
  if (recent_.size() > kWindow) recent_.pop_front();
}

void RunWatch::watch_totals(std::vector<int> fields, std::vector<std::string> names,
                            std::vector<double> initial) {
  fields_ = std::move(fields);
  names_ = std::move(names);
  initial_ = std::move(initial);
}

void RunWatch::totals(long step, const std::vector<double>& now, long long floored) const {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const int v = fields_[i];
    if (v >= static_cast<int>(now.size()) || v >= static_cast<int>(initial_.size())) continue;
    const double a = initial_[v], b = now[v];
    const double change = std::abs(b - a) / std::max(std::abs(a), 1e-300);
    if (!(change <= kRunaway))
      throw Error(
          ErrorKind::kNumerical,
          strprintf(
              "step %ld: the total %s changed by %.3g of its initial value (from %.9e to "
              "%.9e; more than %.0e) in a box whose sides let none in or out and without "
              "sources: the solution blew up%s",
              step, names_[i].c_str(), change, a, b, kRunaway,
              floored > 0 ? strprintf(" (%lld cells were floored so far)", floored).c_str() : ""));
  }
}

}  // namespace tessera::evolve
