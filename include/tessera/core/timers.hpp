// Wall-clock accounting of a run by stage, for the timing breakdown at the end.
#pragma once

#include <array>
#include <chrono>
#include <string>

namespace tessera {

// kSolve is the host's time launching (GPU) or running (CPU) the solver; kIdle the time
// it waits for a device to finish.
enum class Stage {
  kInit,
  kFlag,
  kRegrid,
  kPrepare,
  kSolve,
  kIdle,
  kClose,
  kReflux,
  kGravity,  // Poisson solves and the kicks of self-gravity
  kOutput,
  kExchange,  // several ranks: the level step's buffer patches, flux registers and agreements
  kCount
};

class Timers {
 public:
  using Clock = std::chrono::steady_clock;

  Timers() : start_(Clock::now()) {}
  void add(Stage s, double seconds) { seconds_[static_cast<int>(s)] += seconds; }
  double seconds(Stage s) const { return seconds_[static_cast<int>(s)]; }
  double total() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Wall time not attributed to any stage.
  double other() const;
  // Table of stages with seconds and share of the total; "other" is the remainder.
  std::string breakdown() const;

 private:
  Clock::time_point start_;
  std::array<double, static_cast<int>(Stage::kCount)> seconds_{};
};

const char* stage_name(Stage s);

// Adds the lifetime of the scope to one stage.
class ScopedTimer {
 public:
  ScopedTimer(Timers& t, Stage s) : timers_(t), stage_(s), start_(Timers::Clock::now()) {}
  ~ScopedTimer() {
    timers_.add(stage_, std::chrono::duration<double>(Timers::Clock::now() - start_).count());
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Timers& timers_;
  Stage stage_;
  Timers::Clock::time_point start_;
};

}  // namespace tessera
