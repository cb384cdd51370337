#include "src/app/commands.hpp"

#include <omp.h>
#include <algorithm>
#include <filesystem>

#include <cstdio>
#include <memory>
#include <optional>

#include "src/app/signals.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/version.hpp"
#include "tessera/evolve/memory.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/evolve/restart.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/io/collective.hpp"
#include "tessera/io/output_dir.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/parallel/mpi.hpp"
#include "tessera/physics/model.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::app {

namespace {

void log_parameters(const std::string& file, const Params& params) {
  log_line("Tessera %s", version_string().c_str());
  log_line("parameter file: %s", file.c_str());
  log_line("effective parameters:\n%s", params.to_toml().c_str());
}

// How `ranks` MPI ranks would share the run (tessera check --ranks): the root level's
// families cut along the curve as Partition::along_curve cuts them (floor or ceil of the
// mean each), and what each rank holds.
std::string decomposition_summary(const Params& params, const evolve::MemoryEstimate& memory,
                                  int ranks, bool cuda) {
  const long long families = memory.root_patches / mesh::kFamilySize;
  const long long low = families / ranks, high = low + (families % ranks ? 1 : 0);
  const double mean = static_cast<double>(families) / ranks;
  std::string s = strprintf(
      "# on %d ranks: the root level's %lld patch groups (%lld cells) are cut along the Morton "
      "curve into pieces of %lld%s groups per rank (%lld%s cells); the most loaded rank has "
      "%.1f%% more than the mean\n",
      ranks, families, families * mesh::kFamilySize * mesh::kPatchCells, low,
      high != low ? strprintf("-%lld", high).c_str() : "",
      low * mesh::kFamilySize * mesh::kPatchCells,
      high != low ? strprintf("-%lld", high * mesh::kFamilySize * mesh::kPatchCells).c_str() : "",
      mean > 0 ? 100.0 * (high / mean - 1.0) : 0.0);
  if (families < ranks)
    s += strprintf("# warning: %d ranks for %lld root patch groups: %lld ranks own none\n", ranks,
                   families, ranks - families);
  if (params.integer("amr.max_level") > 0)
    s += "# each refined level is cut the same way once the initial conditions (and later the "
         "regrids) have made it\n";
  if (params.boolean("gravity.enabled") && ranks > 1) {
    const int planes = static_cast<int>(params.int3("mesh.nx")[2]);
    s += !cuda && params.string("mpi.root_fft") == "slabs"
             ? strprintf("# self-gravity: the root FFT is cut into slabs of %s z-planes per rank\n",
                         planes % ranks
                             ? strprintf("%d-%d", planes / ranks, planes / ranks + 1).c_str()
                             : strprintf("%d", planes / ranks).c_str())
             : "# self-gravity: every rank solves the whole root grid (root FFT gathered)\n";
  }
  s += strprintf(
      "# memory per rank: about %.3f GB for its own root groups and more for the copies of "
      "others' that it reads, %.3f GB of buffers%s\n",
      memory.root_bytes * high / std::max(1LL, families) / 1e9, memory.buffer_bytes / 1e9,
      io::collective_output_built() && params.boolean("mpi.parallel_io")
          ? "; the ranks write outputs together (parallel HDF5)"
          : strprintf(
                "; rank 0 holds the whole mesh (%.3f GB of root level) while it writes "
                "an output (gathered: %s)",
                memory.root_bytes / 1e9,
                io::collective_output_built() ? "mpi.parallel_io = false" : "HDF5 without MPI-IO")
                .c_str());
  return s;
}

// A rank's GPU, when the run may use one (run.backend cuda or auto): its node-local rank
// modulo the GPUs of its host. -1: none.
int choose_device(const Params& params) {
  if (params.string("run.backend") == "cpu" || !exec::cuda_backend_built()) return -1;
  return exec::select_cuda_device(parallel::node_rank());
}

// The table of the ranks (several): host and GPU of each, logged by rank 0 (a collective).
void log_ranks(parallel::Comm& comm, int device) {
  if (comm.size() == 1) return;
  const std::string mine =
      parallel::host_name() + (device >= 0 ? strprintf(", GPU %d", device) : std::string());
  const auto all = parallel::gather_to_root(comm, mine);
  log_line("ranks: %d (MPI)", comm.size());
  for (std::size_t r = 0; r < all.size(); ++r) log_line("  rank %zu: %s", r, all[r].c_str());
}

}  // namespace

int command_run(const std::string& file, const std::vector<std::string>& overrides,
                const std::string& restart, bool overwrite,
                std::chrono::steady_clock::time_point start) {
  // The run's ranks (one without a launcher). Every step of the set-up below is agreed
  // between them: an error on any rank (a parameter, the lock, the checkpoint) stops all of
  // them with one message, before any of them waits in a collective of the run.
  parallel::Comm& comm = parallel::world_comm();
  const bool root = comm.rank() == 0;
  set_log_rank(comm.rank());  // only rank 0 logs
  // Rank 0 reads the parameter file and hands its text to the others: a pipe can be read
  // only once, and a file system need not serve one file to thousands of ranks.
  std::string text;
  parallel::agreed(comm, [&] {
    if (root) text = read_param_file(file);
  });
  text = parallel::broadcast(comm, text);
  std::optional<Params> requested;
  parallel::agreed(comm, [&] { requested = load_run_params_text(text, file, overrides); });
  evolve::RunControl control;
  control.start = start;
  control.stop_signal = pending_stop_signal;
  install_stop_handlers();
  // Held by rank 0 until the run ends (or dies: the kernel then releases it). Taken before
  // anything in the directory is read, so that --restart latest cannot pick a file another
  // run is about to replace.
  std::optional<io::OutputDirLock> lock;
  parallel::agreed(comm, [&] {
    if (root) lock.emplace(requested->string("output.dir"));
  });
  control.check_output_dir = [&lock] {
    if (lock) lock->check();
  };
  int device = -1;
  parallel::agreed(comm, [&] { device = choose_device(*requested); });
  std::unique_ptr<evolve::Simulation> sim;
  // The output directory is claimed once the run is set up (parameters, problem, memory
  // checked): --overwrite deletes nothing for a run that cannot start.
  if (restart.empty()) {
    log_parameters(file, *requested);
    log_ranks(comm, device);
    parallel::agreed(comm, [&] { sim = std::make_unique<evolve::Simulation>(*requested, comm); });
    parallel::agreed(comm, [&] {
      if (root) evolve::claim_output_dir(*requested, "", "", overwrite);
    });
    return static_cast<int>(sim->run(control).stop);
  }
  // Rank 0 chooses the checkpoint (for 'latest', the newest intact one); every rank reads it.
  std::string path;
  parallel::agreed(comm, [&] {
    if (root) path = evolve::resolve_checkpoint(restart, *requested);
  });
  path = parallel::broadcast(comm, path);
  {
    // Closed before the run starts: the run may delete this file as an old checkpoint.
    std::optional<io::CheckpointReader> checkpoint;
    std::optional<Params> params;
    parallel::agreed(comm, [&] {
      checkpoint.emplace(path);
      params = evolve::restart_params(*requested, overrides, checkpoint->header(), path);
      evolve::check_restart_end(*params, checkpoint->header(), path);
    });
    log_parameters(file, *params);
    log_ranks(comm, device);
    parallel::agreed(comm, [&] { sim = std::make_unique<evolve::Simulation>(*params, comm); });
    sim->restart(*checkpoint);
    parallel::agreed(comm, [&] {
      if (root)
        evolve::claim_output_dir(sim->params(), checkpoint->header().run_id, path, overwrite);
    });
  }
  return static_cast<int>(sim->run(control).stop);
}

int command_check(const std::string& file, const std::vector<std::string>& overrides, int ranks) {
  const Params params = load_run_params(file, overrides);
  // What the schema cannot check alone: the geometry and the problem's own consistency
  // (e.g. a vacuum-generating Riemann problem). No field data is allocated.
  const auto geometry = mesh::geometry_from_params(params);
  evolve::RefinementParams::from_params(params);
  gravity::check_params(params, geometry);
  create_problem(params);
  // The memory the run needs, against what this machine has (checked the same way by run).
  const std::string& backend = params.string("run.backend");
  const bool cuda = backend == "cuda" || (backend == "auto" && exec::cuda_device_available());
  const evolve::MemoryEstimate memory =
      evolve::estimate_memory(params, cuda, evolve::run_fields(params).size());
  evolve::check_output_cadence(params, memory);
  evolve::check_initial_memory(params, memory);
  // What run refuses on this machine: a CUDA run from a build without the CUDA backend is
  // refused on every machine (an error); a machine without a GPU only here (a warning: a
  // job checked on a login node runs on a GPU node).
  std::string machine_warning;
  if (backend == "cuda" && !exec::cuda_backend_built())
    exec::make_cuda_executor(0, 0);  // throws the error run gives
  if (backend == "cuda" && !exec::cuda_device_available())
    machine_warning =
        "# warning: run.backend = \"cuda\", but this machine has no CUDA device: run refuses "
        "it here; it runs on a machine with a GPU\n";
  std::string source;
  const double available = evolve::host_memory_available(params, 0, &source);
  std::printf("# %s: parameters are valid (%lld root cells)\n# %s\n%s", file.c_str(),
              geometry.root_cell_count(), evolve::memory_summary(memory, available, source).c_str(),
              machine_warning.c_str());
  if (ranks > 0)
    std::printf(
        "%s",
        decomposition_summary(
            params, evolve::estimate_memory(params, cuda, evolve::run_fields(params).size(), ranks),
            ranks, cuda)
            .c_str());
  std::printf("%s", params.to_toml().c_str());
  return 0;
}

int command_verify(const std::string& path) {
  // The file digest first: a changed byte is reported as such (exit 3) before HDF5 parses
  // whatever structure it damaged.
  const bool sealed = io::check_file_digest(path);
  const io::CheckpointReader checkpoint(path);
  if (!sealed) checkpoint.verify_file_digest();  // a version-2 file must have its block
  const Params params = load_params_from_string(
      checkpoint.header().parameters, "checkpoint '" + path + "'", {}, parameter_schema());
  const io::CheckpointState state = checkpoint.state();
  const auto m =
      checkpoint.read_mesh(mesh::geometry_from_params(params), evolve::run_fields(params));
  std::printf(
      "%s: Tessera checkpoint format %d, written by Tessera %s\n"
      "problem %s, step %lld, t = %.17g\n"
      "%d levels, %d patches, %lld leaf cells\n%s\n",
      path.c_str(), checkpoint.header().format_version, checkpoint.header().code_version.c_str(),
      checkpoint.header().problem.c_str(), static_cast<long long>(state.step), state.time,
      m->num_levels(), m->num_patches(), m->num_leaf_cells(),
      checkpoint.has_digests()
          ? ("run " + checkpoint.header().run_id +
             "; every dataset read and its Fletcher-32 checksum and XXH3-64 digest verified; "
             "the file digest (every byte) verified")
                .c_str()
          : "format 1: every dataset read and its Fletcher-32 checksum verified (no digests "
            "in this format)");
  return 0;
}

int command_analytic(const std::string& file, const std::vector<std::string>& overrides,
                     double time) {
  const Params params = load_run_params(file, overrides);
  const auto problem = create_problem(params);
  const std::string& name = params.string("problem.name");
  char line[512];
  long n = 0;
  while (std::fgets(line, sizeof line, stdin)) {
    ++n;
    double x[3], h;
    if (std::sscanf(line, "%lf %lf %lf %lf", &x[0], &x[1], &x[2], &h) != 4 || !(h > 0))
      throw Error(ErrorKind::kInput,
                  strprintf("standard input, line %ld: expected \"x y z h\" (cell centre and "
                            "width > 0)",
                            n));
    const auto rho = problem->analytic_density(CellBox::around({x[0], x[1], x[2]}, h), time);
    if (!rho) throw Error(ErrorKind::kInput, "problem '" + name + "' has no analytic solution");
    std::printf("%.17g\n", *rho);
  }
  return 0;
}

int command_problems(const std::string& name) {
  if (name.empty()) {
    for (const ProblemInfo* p : all_problems())
      std::printf("%-16s %s\n", p->name.c_str(), p->description.c_str());
    return 0;
  }
  find_problem(name);  // an unknown name: the error lists the known ones
  std::fputs(parameter_reference_markdown(name).c_str(), stdout);
  const std::filesystem::path dir = std::filesystem::path(TESSERA_PROBLEMS_DIR) / name;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".toml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::printf("\nShipped parameter files: none found in %s\n", dir.string().c_str());
  } else {
    std::printf("\nShipped parameter files (tessera run FILE [section.key=value ...]):\n\n");
    for (const std::string& f : files) std::printf("- %s\n", f.c_str());
  }
  return 0;
}

int command_params(const std::string& only) {
  std::fputs(parameter_reference_markdown(only).c_str(), stdout);
  return 0;
}

std::string version_text() {
  std::string s = "tessera " + version_string() + "\n";
  s += strprintf("backends: cpu (OpenMP, %d threads)%s\n", omp_get_max_threads(),
                 exec::cuda_backend_built() ? ", cuda" : "");
  s += parallel::mpi_built() ? "ranks: MPI (mpirun -np N tessera run ...)\n"
                             : "ranks: one (built without MPI)\n";
  if (parallel::mpi_built())
    s += io::collective_output_built()
             ? "output of several ranks: parallel HDF5 (every rank writes its own patches)\n"
             : "output of several ranks: gathered on rank 0 (HDF5 without MPI-IO)\n";
  s += "gpu: " + exec::cuda_device_description();
  return s;
}

}  // namespace tessera::app
