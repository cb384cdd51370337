#include "tessera/core/timers.hpp"

#include "tessera/core/log.hpp"

namespace tessera {

std::string Timers::breakdown() const {
  static const char* kNames[] = {"init", "flag",  "regrid", "prepare", "solve",
                                 "idle", "close", "reflux", "output"};
  const double total = this->total();
  std::string out = strprintf("%-10s %10s %7s\n", "stage", "seconds", "share");
  double accounted = 0;
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s) {
    accounted += seconds_[s];
    out += strprintf("%-10s %10.3f %6.1f%%\n", kNames[s], seconds_[s],
                     total > 0 ? 100 * seconds_[s] / total : 0.0);
  }
  const double other = total > accounted ? total - accounted : 0;
  out += strprintf("%-10s %10.3f %6.1f%%\n", "other", other, total > 0 ? 100 * other / total : 0.0);
  out += strprintf("%-10s %10.3f %6.1f%%", "total", total, 100.0);
  return out;
}

}  // namespace tessera
