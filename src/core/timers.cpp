#include "tessera/core/timers.hpp"

#include "tessera/core/log.hpp"

namespace tessera {

const char* stage_name(Stage s) {
  static const char* kNames[] = {"init",  "flag",   "regrid",  "prepare", "solve",   "idle",
                                 "close", "reflux", "gravity", "output",  "exchange"};
  return kNames[static_cast<int>(s)];
}

double Timers::other() const {
  double accounted = 0;
  for (double s : seconds_) accounted += s;
  const double total = this->total();
  return total > accounted ? total - accounted : 0;
}

std::string Timers::breakdown() const {
  const double total = this->total();
  auto share = [total](double s) { return total > 0 ? 100 * s / total : 0.0; };
  std::string out = strprintf("%-10s %10s %7s\n", "stage", "seconds", "share");
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s)
    out +=
        strprintf("%-10s %10.3f %6.1f%%\n", stage_name(Stage(s)), seconds_[s], share(seconds_[s]));
  const double rest = other();
  out += strprintf("%-10s %10.3f %6.1f%%\n", "other", rest, share(rest));
  out += strprintf("%-10s %10.3f %6.1f%%", "total", total, 100.0);
  return out;
}

}  // namespace tessera
