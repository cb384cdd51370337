// Batch-job signals: SIGTERM and SIGUSR1 (what schedulers send before a job's time is up or
// when it is pre-empted), SIGHUP (the terminal of an interactive run closed) and a first
// SIGINT ask the run to finish its step, write a checkpoint and exit with code 11; a
// second SIGINT aborts at once (exit code 130). SIGPIPE is ignored: a run whose log's
// reader went away goes on without its log.
#pragma once

namespace tessera::app {

void install_stop_handlers();
// The number of the first stop signal received, or 0.
int pending_stop_signal();

}  // namespace tessera::app
