// Memory a run needs and memory the machine has, so that a run that cannot fit is refused
// before it allocates, with the figures, instead of dying of std::bad_alloc (or the
// kernel's OOM killer) minutes or hours in. Refusals are Error(kResources), exit 6.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/params.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::evolve {

struct MemoryEstimate {
  double patch_bytes = 0;  // field data of one patch, both time levels (host)
  long long root_patches = 0;
  double root_bytes = 0;    // the root level's field data
  double buffer_bytes = 0;  // staging, prepare and solver scratch on the host (pinned too)
  double device_bytes = 0;  // the CUDA backend's device buffers (0 on the CPU)
  // This process's resident memory when the estimate was made: the program, its libraries
  // (MPI, HDF5, CUDA's runtime) and what it holds so far.
  double process_bytes = 0;
  // A plot file's root-level fields staged for writing (0 without plot files); a refined
  // level adds half its field data while it is written.
  double output_bytes = 0;
  int threads = 0;  // OpenMP threads the run will use
  // Upper bound of each refined level 1..amr.max_level: every cell of the level below
  // refined (what a threshold of zero would give).
  std::vector<double> level_bound_bytes;
  // Everything listed except the refined levels (their bound is checked at each regrid).
  double host_bytes() const { return root_bytes + buffer_bytes + process_bytes + output_bytes; }
};

// What a run of `params` needs; `cuda`: whether it runs on the CUDA backend; `fields`: the
// number of fields each patch holds (mesh::FieldRegistry::size of the run's fields);
// `ranks`: the run's ranks (buffer_bytes is then per rank: the root FFT's slabs).
MemoryEstimate estimate_memory(const Params& params, bool cuda, int fields, int ranks = 1);

// Host memory this process may still allocate, in bytes: run.memory_limit when set (minus
// `in_use`, what the run already holds), otherwise the smaller of the kernel's MemAvailable
// and the room left under the job's cgroup limit. `source` says which.
double host_memory_available(const Params& params, double in_use, std::string* source);

// The threads a run uses: run.threads (0: OpenMP's default), capped at the processors this
// process may run on; `note` receives a message when the request was capped.
int effective_threads(const Params& params, std::string* note);

// One line for `tessera check` and the log: what the run needs and what there is.
std::string memory_summary(const MemoryEstimate& e, double host_available,
                           const std::string& host_source);

// Error(kInput) when output.dt or output.checkpoint_dt would write more than
// output.max_files files over the run (a cadence of 1e-12 fills a disk in minutes), or is
// below the resolution of the run's times.
void check_output_cadence(const Params& params, const MemoryEstimate& e);

// Error(kResources) when the root level and the buffers do not fit in host memory, or
// the device buffers in the GPU's free memory.
void check_initial_memory(const Params& params, const MemoryEstimate& e);

// Error(kResources) when growing the mesh from `old_patches` (a pool of
// `old_capacity_patches`) to the root and `families` (per refined level 1, 2, ...) does
// not fit; `keep_old`: the old mesh stays allocated beside the new one (the initial levels
// are built that way).
void check_mesh_growth(const Params& params, const MemoryEstimate& e, std::size_t old_patches,
                       std::size_t old_capacity_patches, const std::vector<std::size_t>& families,
                       bool keep_old);

}  // namespace tessera::evolve
