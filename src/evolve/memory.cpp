#include "tessera/evolve/memory.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "kernels/group_layout.hpp"
#include "kernels/mol_cpu.hpp"
#include "kernels/relaxing_tvd.hpp"
#include "kernels/scheme.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/gravity/root_boxes.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/physics/model.hpp"

namespace tessera::evolve {

namespace {

constexpr double kGB = 1e9;

std::optional<double> read_number(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stod(text);
  } catch (...) {
    return std::nullopt;
  }
}

// This process's resident set (VmRSS), in bytes.
std::optional<double> resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key, unit;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024;
  return std::nullopt;
}

std::optional<double> meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double value = 0;
  while (in >> key >> value >> unit)
    if (key == "MemAvailable:") return value * 1024;
  return std::nullopt;
}

// Room under the cgroup (v2, then v1) limit of the job: schedulers confine jobs this way.
std::optional<double> cgroup_room() {
  auto room = [](const char* limit, const char* usage) -> std::optional<double> {
    const auto l = read_number(limit), u = read_number(usage);
    if (!l || !u || *l >= 1e18) return std::nullopt;  // v1 reports "no limit" as ~2^63
    return std::max(0.0, *l - *u);
  };
  if (auto r = room("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current")) return r;
  return room("/sys/fs/cgroup/memory/memory.limit_in_bytes",
              "/sys/fs/cgroup/memory/memory.usage_in_bytes");
}

std::string gb(double bytes) {
  return strprintf(bytes < 0.1 * kGB ? "%.3f GB" : "%.1f GB", bytes / kGB);
}

}  // namespace

int effective_threads(const Params& params, std::string* note) {
  const int procs = omp_get_num_procs();
  const long long requested = params.integer("run.threads");
  const int threads = requested > 0 ? static_cast<int>(requested) : omp_get_max_threads();
  if (threads <= procs) return threads;
  if (note)
    *note = strprintf(
        "%s = %d exceeds the %d processors this process may run on: using %d threads (more "
        "threads than cores only add memory and contention)",
        requested > 0 ? "run.threads" : "OMP_NUM_THREADS", threads, procs, procs);
  return procs;
}

MemoryEstimate estimate_memory(const Params& params, bool cuda, int fields, int ranks) {
  MemoryEstimate e;
  const auto geo = mesh::geometry_from_params(params);
  const double real = sizeof(Real);
  e.threads = effective_threads(params, nullptr);
  const int nvar = fields;
  e.patch_bytes = 2.0 * nvar * mesh::kPatchCells * real;
  e.root_patches = geo.root_cell_count() / mesh::kPatchCells;
  e.root_bytes = static_cast<double>(e.root_patches) * e.patch_bytes;
  // One group's staging: its box with ghost cells, its new interior and its flux planes.
  // The ghost width depends on the stencils alone: PPM, the three-cell mc_ep slopes, or
  // the two cells of every other reconstruction (kernels::ghost_width).
  const std::string& recon = params.string("hydro.reconstruction");
  kernels::Scheme scheme;
  scheme.recon = recon == "ppm"        ? kernels::Reconstruction::kPpm
                 : recon == "ppm_char" ? kernels::Reconstruction::kPpmChar
                 : recon == "plm" && params.string("hydro.limiter") == "mc_ep"
                     ? kernels::Reconstruction::kPlmMcEp
                     : kernels::Reconstruction::kPlmMc;
  scheme.integrator = params.string("hydro.integrator") == "vl2" ? kernels::Integrator::kVl2
                                                                 : kernels::Integrator::kRk2;
  const int ghost = params.string("hydro.scheme") == "relaxing_tvd" ? kernels::kGhostRtvd
                                                                    : kernels::ghost_width(scheme);
  const exec::GroupShape shape{ghost, nvar, nvar, nvar};
  const double in = static_cast<double>(shape.in_reals()) * real;
  const double rest = double(shape.out_reals() + shape.flux_reals()) * real;  // interior, planes
  const double group = in + rest;
  // First-order flux correction's batch (exec/fofc.cpp), of the pipeline's size and made
  // on the first flagged cell: its input boxes hold one variable more, the flags.
  const bool fofc = params.string("hydro.scheme") != "relaxing_tvd" && params.boolean("hydro.fofc");
  const double flagged_in = in + static_cast<double>(kernels::box_cells(ghost)) * real;
  // The solver's own scratch per thread.
  const double scratch = static_cast<double>(kernels::mol_scratch_reals(nvar)) * real;
  if (cuda) {
    // Two batches in flight (pipeline.hpp), one group per multiprocessor unless set
    // (about 132 on the largest GPUs); device buffers per group: the box, the solver's
    // scratch (MOL: primitives, stage state and three flux arrays of box size; relaxing
    // TVD: the state between sweeps and a floor mark per cell, its fluxes stay in shared
    // memory), the interior and the flux planes.
    const long long per_batch = params.integer("gpu.groups_per_batch");
    const double batch = per_batch > 0 ? static_cast<double>(per_batch) : 132.0;
    const double scratch_boxes =
        params.string("hydro.scheme") == "relaxing_tvd" ? 1 + 1.0 / nvar : 5;
    e.buffer_bytes = 2 * batch * group + e.threads * in;
    e.device_bytes = 2 * batch * ((1 + scratch_boxes) * in + rest);
    if (fofc) {
      e.buffer_bytes += batch * (flagged_in + rest);
      e.device_bytes += batch * (flagged_in + scratch_boxes * in + rest);
    }
  } else {
    // Two batches of 4 groups per thread, each thread's prepare box and solver scratch.
    e.buffer_bytes = e.threads * (2 * 4 * group + in + scratch);
    if (fofc) e.buffer_bytes += e.threads * 4 * (flagged_in + rest);
  }
  e.process_bytes = resident_bytes().value_or(0);
  // Plot files are written from primitive fields staged per patch, one time level.
  if (params.boolean("output.enabled")) e.output_bytes = 0.5 * e.root_bytes;
  if (params.boolean("gravity.enabled")) {
    // The root solve (gravity/fft_poisson.hpp): the ghosted potential of the last two solves
    // (whole on one rank and with mpi.root_fft = "gathered"; with the slabs, the boxes
    // around the rank's root families, (18/16)^3 of its share: gravity/root_boxes.hpp), and
    // the FFT's planes, spectrum and multipliers (periodic), or those of the doubled grid
    // (isolated): about 5.5 and 25 doubles per root cell, with the density, cut into slabs
    // over the ranks (on the GPU, in its memory; gathered, whole on each rank).
    const double n = static_cast<double>(geo.root_cell_count());
    const bool periodic = params.string("gravity.boundary") == "periodic";
    const bool cut = ranks > 1 && params.string("mpi.root_fft") == "slabs";
    const bool slabs = !cuda && cut;
    constexpr double family_cells = double(gravity::RootBoxes::kFamilyCells) *
                                    gravity::RootBoxes::kFamilyCells *
                                    gravity::RootBoxes::kFamilyCells;
    const double kept =
        cut ? 2 * double(gravity::RootBoxes::kBoxCells) / family_cells / ranks : 2.0;
    e.buffer_bytes += sizeof(double) * n * (kept + (periodic ? 5.5 : 25.0) / (slabs ? ranks : 1));
  }
  const int max_level = static_cast<int>(params.integer("amr.max_level"));
  double cells = static_cast<double>(geo.root_cell_count());
  for (int level = 1; level <= max_level; ++level) {
    cells *= 8;
    e.level_bound_bytes.push_back(cells / mesh::kPatchCells * e.patch_bytes);
  }
  return e;
}

double host_memory_available(const Params& params, double in_use, std::string* source) {
  const double limit_gb = params.real("run.memory_limit");
  if (limit_gb > 0) {
    if (source) *source = strprintf("run.memory_limit = %g GB", limit_gb);
    return limit_gb * kGB - in_use;
  }
  const auto avail = meminfo_available();
  const auto room = cgroup_room();
  if (room && (!avail || *room < *avail)) {
    if (source) *source = "room under the job's cgroup memory limit";
    return *room;
  }
  if (avail) {
    if (source) *source = "MemAvailable of this machine";
    return *avail;
  }
  if (source) *source = "unknown";
  return INFINITY;
}

std::string memory_summary(const MemoryEstimate& e, double host_available,
                           const std::string& host_source) {
  std::string s = strprintf(
      "memory: root level %s (%lld patches), buffers %s for %d threads, program %s%s",
      gb(e.root_bytes).c_str(), e.root_patches, gb(e.buffer_bytes).c_str(), e.threads,
      gb(e.process_bytes).c_str(),
      e.output_bytes > 0 ? strprintf(", plot file staging %s", gb(e.output_bytes).c_str()).c_str()
                         : "");
  if (!e.level_bound_bytes.empty()) {
    s += "; refined levels at most";
    for (std::size_t l = 0; l < e.level_bound_bytes.size(); ++l)
      s += strprintf(" %s%s", gb(e.level_bound_bytes[l]).c_str(),
                     l + 1 < e.level_bound_bytes.size() ? "," : "");
    s += " (each level fully refined)";
  }
  if (e.device_bytes > 0) s += strprintf("; GPU buffers %s", gb(e.device_bytes).c_str());
  if (std::isfinite(host_available))
    s += strprintf("; host memory available %s (%s)", gb(host_available).c_str(),
                   host_source.c_str());
  return s;
}

void check_output_cadence(const Params& params, const MemoryEstimate& e) {
  const double t_end = params.real("run.t_end");
  const long long max_steps = params.integer("run.max_steps");
  const long long limit = params.integer("output.max_files");
  auto check = [&](const char* key, bool enabled, double bytes_each, const char* what) {
    const double dt = params.real(key);
    if (!enabled || !(dt > 0)) return;
    // Output times cut the steps that reach them: a cadence near the resolution of the
    // run's times would step by round-off.
    if (dt < 1e-12 * t_end)
      throw Error(ErrorKind::kInput,
                  strprintf("%s = %g is below the resolution of the run's times (run.t_end = "
                            "%g: the steps that reach each output time would be cut to "
                            "round-off); give a %s of at least %g",
                            key, dt, t_end, key, 1e-12 * t_end));
    const double files = std::min(std::floor(t_end / dt), double(max_steps)) + 1;
    if (files > double(limit))
      throw Error(
          ErrorKind::kInput,
          strprintf("%s = %g would write about %.3g %s over the run (run.t_end / %s, "
                    "at most one per root step up to run.max_steps = %lld), each of at "
                    "least %s: more than output.max_files = %lld; raise %s, or raise "
                    "output.max_files if that many are wanted",
                    key, dt, files, what, key, max_steps, gb(bytes_each).c_str(), limit, key));
  };
  check("output.dt", params.boolean("output.enabled"), 0.5 * e.root_bytes, "plot files");
  check("output.checkpoint_dt", true, e.root_bytes, "checkpoints");
}

void check_initial_memory(const Params& params, const MemoryEstimate& e) {
  std::string source;
  const double available = host_memory_available(params, 0, &source);
  const double need = e.host_bytes();
  if (need > available)
    throw Error(ErrorKind::kResources,
                strprintf("the run needs about %s of host memory (root level %s for %lld "
                          "patches of %lld root cells, buffers %s for %d threads%s, program "
                          "%s, plot file staging %s), but only "
                          "%s is available (%s): use a coarser mesh.nx, fewer run.threads%s, or "
                          "a machine (or job request) with more memory",
                          gb(need).c_str(), gb(e.root_bytes).c_str(), e.root_patches,
                          e.root_patches * mesh::kPatchCells, gb(e.buffer_bytes).c_str(), e.threads,
                          e.device_bytes > 0 ? " and the GPU's pinned staging" : "",
                          gb(e.process_bytes).c_str(), gb(e.output_bytes).c_str(),
                          gb(std::max(available, 0.0)).c_str(), source.c_str(),
                          e.device_bytes > 0 ? ", a smaller gpu.groups_per_batch" : ""));
  if (e.device_bytes > 0)
    if (const auto dev = exec::device_memory(); dev && e.device_bytes > dev->first)
      throw Error(
          ErrorKind::kResources,
          strprintf("the CUDA backend needs about %s of GPU memory for its buffers "
                    "and the GPU has %s free (of %s): lower gpu.groups_per_batch",
                    gb(e.device_bytes).c_str(), gb(dev->first).c_str(), gb(dev->second).c_str()));
}

void check_mesh_growth(const Params& params, const MemoryEstimate& e, std::size_t old_patches,
                       std::size_t old_capacity_patches, const std::vector<std::size_t>& next,
                       bool keep_old) {
  std::size_t patches = static_cast<std::size_t>(e.root_patches);
  std::string per_level;
  for (std::size_t l = 0; l < next.size(); ++l) {
    patches += next[l] * mesh::kFamilySize;
    per_level += strprintf("%s%zu", l ? ", " : "", next[l] * mesh::kFamilySize);
  }
  // The pool (two slots) grows geometrically: a growth beyond its capacity holds the old
  // and the new storage at once while copying. Memory counts where it is touched: the
  // patches in use (a capacity reserved beyond them, as a device-resident mesh keeps for
  // its regrids, is address space until patches fill it).
  double extra = 0;
  if (keep_old || patches > old_capacity_patches)
    extra = static_cast<double>(patches) * e.patch_bytes;  // new storage beside the old
  else if (patches > old_patches)                          // filling the reserved capacity
    extra = static_cast<double>(patches - old_patches) * e.patch_bytes;
  if (extra == 0) return;
  const double in_use = static_cast<double>(old_patches) * e.patch_bytes + e.buffer_bytes +
                        e.process_bytes + e.output_bytes;
  std::string source;
  const double available = host_memory_available(params, in_use, &source);
  // The refined levels' share of a plot file while it is written.
  if (params.boolean("output.enabled"))
    extra += 0.5 * static_cast<double>(patches - e.root_patches) * e.patch_bytes;
  if (extra <= available) return;
  throw Error(
      ErrorKind::kResources,
      strprintf("refinement asks for %zu patches (now %zu; refined levels 1..%zu: %s patches), "
                "which needs about %s more host memory, but only %s is available (%s): lower "
                "amr.max_level (now %lld), raise the refinement thresholds, or give the run "
                "more memory",
                patches, old_patches, next.size(), per_level.c_str(), gb(extra).c_str(),
                gb(std::max(available, 0.0)).c_str(), source.c_str(),
                static_cast<long long>(params.integer("amr.max_level"))));
}

}  // namespace tessera::evolve
