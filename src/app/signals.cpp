#include "src/app/signals.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace tessera::app {

namespace {

// Lock-free atomics are safe to touch in a signal handler.
std::atomic<int> g_stop_signal{0};
std::atomic<int> g_interrupts{0};
static_assert(std::atomic<int>::is_always_lock_free);

void say(const char* text, std::size_t length) {
  // write(2) is async-signal-safe; nothing can be done about a failure here.
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, text, length);
}

extern "C" void on_stop_signal(int sig) {
  if (sig == SIGINT) {
    if (g_interrupts.fetch_add(1) >= 1) {
      static const char kAbort[] = "\ntessera: second interrupt: aborting without a checkpoint\n";
      say(kAbort, sizeof kAbort - 1);
      ::_exit(130);
    }
    static const char kFirst[] =
        "\ntessera: interrupt: finishing the step and writing a checkpoint (interrupt again to "
        "abort)\n";
    say(kFirst, sizeof kFirst - 1);
  }
  int expected = 0;
  g_stop_signal.compare_exchange_strong(expected, sig);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // file writes in progress continue rather than fail
  for (const int sig : {SIGTERM, SIGUSR1, SIGHUP, SIGINT}) ::sigaction(sig, &action, nullptr);
  // A closed stdout (`tessera run ... | head`) must not kill the run: writes to it fail
  // with EPIPE instead, and the log stops (core/log.cpp).
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

int pending_stop_signal() {
  return g_stop_signal.load();
}

}  // namespace tessera::app
