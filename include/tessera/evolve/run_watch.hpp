// Runs that go wrong must stop, loudly (docs/user_guide.md, "When a run fails"): a run
// whose time step collapses, or whose conserved totals run away where nothing may change
// them, would otherwise end with exit 0 and a wrong answer, or creep on for hours. Both
// checks throw Error(kNumerical) (exit 4; the run writes its diagnostic plot file), and
// both see the same numbers on every rank (agreed speeds, ordered sums), so the ranks
// stop together.
#pragma once

#include <deque>
#include <string>
#include <vector>

namespace tessera::evolve {

class RunWatch {
 public:
  // A time step below this fraction of the median of the last kWindow steps' is a collapse.
  static constexpr double kCollapse = 1e-6;
  static constexpr std::size_t kWindow = 64, kMinSteps = 16;
  // A conserved total whose relative change exceeds this where nothing may change it (round
  // off adds about 1e-16 per step) is running away.
  static constexpr double kRunaway = 1e-6;

  // The time step the Courant condition gave for `step` (before an output time shortened
  // it), set by `level`.
  void time_step(long step, double dt, int level);

  // Which totals must stay constant: the indices of `names` (the conserved fields) whose
  // totals are checked, and why others are not (for the log). Mass needs closed sides
  // (periodic or reflecting) everywhere; energy also needs no gravity (self-gravity trades
  // it with the potential); momentum and the field are not checked (walls, and
  // reflecting sides, change them).
  void watch_totals(std::vector<int> fields, std::vector<std::string> names,
                    std::vector<double> initial);
  void totals(long step, const std::vector<double>& now, long long floored) const;

 private:
  std::deque<double> recent_;
  std::vector<int> fields_;
  std::vector<std::string> names_;
  std::vector<double> initial_;
};

}  // namespace tessera::evolve
