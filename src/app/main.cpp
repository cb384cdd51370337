// tessera: command-line entry point. Maps every failure to a documented exit code
// (docs/user_guide.md, "Exit codes"); never exits 0 on an error.
#include <hdf5.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>

#include "src/app/commands.hpp"
#include "tessera/core/error.hpp"
#include "tessera/parallel/mpi.hpp"

int main(int argc, char** argv) {
  // run.wall_time counts from here: the job's own start, as the scheduler sees it.
  const auto start = std::chrono::steady_clock::now();
  // HDF5 closes the files still open at exit. A file whose write failed (a full disk)
  // cannot be closed, and that exit-time close then crashes (SIGSEGV instead of exit 3).
  // Every other file is closed by its owner on every path (io::detail::Handle), and the
  // failed one has been reported and its temporary removed: nothing is left to clean up.
  H5dont_atexit();
  using tessera::ErrorKind;
  CLI::App app{"Tessera: GPU-accelerated adaptive-mesh hydrodynamics"};
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", tessera::app::version_text());

  std::string file;
  std::vector<std::string> overrides;
  auto* run = app.add_subcommand("run", "run a problem from a parameter file");
  auto* check = app.add_subcommand("check",
                                   "validate a parameter file and print the "
                                   "effective parameters; run nothing");
  for (auto* sub : {run, check}) {
    sub->add_option("file", file, "parameter file (TOML)")->required();
    sub->add_option("overrides", overrides, "section.key=value overrides");
  }
  int ranks = 0;
  check
      ->add_option("--ranks", ranks,
                   "also say how a run on this many MPI ranks would be decomposed (pieces of "
                   "the root level per rank, imbalance, memory per rank)")
      ->check(CLI::Range(1, 1 << 24));
  std::string restart;
  auto* restart_option = run->add_option(
      "--restart", restart,
      "continue from a checkpoint: its path, or 'latest' (the newest usable one "
      "in output.dir); only run end, threads, backend, [gpu], [mpi] and [output] keys, "
      "mhd.plot_divb and hydro.cfl_unsafe may change");
  bool overwrite = false;
  run->add_flag("--overwrite", overwrite,
                "start even though output.dir holds checkpoints or plot files of another run of "
                "the problem: they are deleted (without it such a directory is refused)");
  std::string checkpoint;
  auto* verify = app.add_subcommand(
      "verify", "read a checkpoint completely, verify its checksums and print what it holds");
  verify->add_option("checkpoint", checkpoint, "checkpoint file (.h5)")->required();
  double time = 0;
  auto* analytic = app.add_subcommand(
      "analytic",
      "print the analytic density at time t for each cell \"x y z h\" read from standard input");
  analytic->add_option("file", file, "parameter file (TOML)")->required();
  analytic->add_option("overrides", overrides, "section.key=value overrides");
  analytic->add_option("--time", time, "simulation time")->required();
  auto* problems = app.add_subcommand(
      "problems", "list the problems with a description; with a name, its parameters and files");
  std::string problem_name;
  problems->add_option("name", problem_name, "a problem (e.g. sedov)");
  auto* params = app.add_subcommand("params", "print the parameter reference (Markdown)");
  std::string params_only;
  params->add_option("section", params_only,
                     "only this section (e.g. gravity) or problem (e.g. sedov; problem: all)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ErrorKind::kInput);
  }
  // The error report of every failure: once per job (rank 0, for an error all ranks agreed
  // on), naming the rank it came from when the run has several.
  int code = static_cast<int>(ErrorKind::kInternal);
  int agreed_rank = -1;
  bool returned = false;  // a command's own exit code (a run stopped by a signal: 11)
  const auto report = [&](const std::exception& e, const char* kind, const char* what,
                          int exit_code) {
    code = exit_code;
    std::fflush(stdout);
    agreed_rank = tessera::parallel::agreed_error_rank(e);
    const auto& comm = tessera::parallel::world_comm();
    if (agreed_rank >= 0 && comm.rank() != 0) return;
    const int from = agreed_rank >= 0 ? agreed_rank : comm.rank();
    if (comm.size() > 1)
      std::fprintf(stderr, "tessera: %s (rank %d of %d): %s\n", kind, from, comm.size(), what);
    else
      std::fprintf(stderr, "tessera: %s: %s\n", kind, what);
  };
  try {
    if (*run) {
      // MPI before any thread: a job of several ranks is `mpirun -np N tessera run ...`.
      tessera::parallel::start_mpi();
      // `--restart ""` must not read as no --restart at all: a fresh run.
      if (restart_option->count() > 0 && restart.empty())
        throw tessera::Error(ErrorKind::kInput, "--restart needs a checkpoint path or 'latest'");
      code = tessera::app::command_run(file, overrides, restart, overwrite, start);
      returned = true;
    } else if (*check) {
      code = tessera::app::command_check(file, overrides, ranks);
    } else if (*verify) {
      code = tessera::app::command_verify(checkpoint);
    } else if (*analytic) {
      code = tessera::app::command_analytic(file, overrides, time);
    } else if (*problems) {
      code = tessera::app::command_problems(problem_name);
    } else if (*params) {
      code = tessera::app::command_params(params_only);
    }
  } catch (const tessera::Error& e) {
    report(e, "error", e.what(), e.exit_code());
  } catch (const std::bad_alloc& e) {
    report(e, "error",
           "out of memory: an allocation failed (the estimate in the log was short, or other "
           "processes took the memory); give the run more memory or set run.memory_limit "
           "below what the job may use",
           static_cast<int>(ErrorKind::kResources));
  } catch (const std::exception& e) {
    report(e, "internal error", e.what(), static_cast<int>(ErrorKind::kInternal));
  }
  tessera::parallel::end_mpi(code, returned || agreed_rank >= 0);
  return code;
}
