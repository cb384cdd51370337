// The solve stage of the pipeline: advances a batch of prepared patch groups. The CPU
// executor runs the kernels on OpenMP threads; a device executor runs the same kernel
// source on a GPU. Everything else in the pipeline is shared.
#pragma once

#include <memory>

#include "kernels/group_layout.hpp"
#include "kernels/mol_hydro_cpu.hpp"

namespace tessera::evolve {

struct SolveArgs {
  kernels::Scheme scheme;
  kernels::MolParams params;
};

// Per-group buffer sizes, in Reals.
inline constexpr std::size_t kGroupInReals =
    std::size_t(kernels::kNumHydroVars) * kernels::box_cells(kernels::kGhostRk2);
inline constexpr std::size_t kGroupOutReals =
    std::size_t(kernels::kNumHydroVars) * kernels::kGroupCells;
inline constexpr std::size_t kGroupFluxReals =
    std::size_t(kernels::kNumFluxPlanes) * kernels::kNumHydroVars * kernels::kFaceCells;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char* name() const = 0;
  // in: count * kGroupInReals; out: count * kGroupOutReals; face_flux: count *
  // kGroupFluxReals; results: count. Returns when all outputs are complete.
  virtual void solve(const SolveArgs& args, const Real* in, Real* out, Real* face_flux,
                     kernels::GroupResult* results, int count) = 0;
};

std::unique_ptr<Executor> make_cpu_executor();

}  // namespace tessera::evolve
