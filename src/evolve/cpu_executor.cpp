// CPU executor: one OpenMP thread per patch group, each with its own scratch. Results do
// not depend on the thread count (each group is computed independently).
#include <omp.h>

#include <vector>

#include "tessera/evolve/executor.hpp"

namespace tessera::evolve {

namespace {

class CpuExecutor final : public Executor {
 public:
  const char* name() const override { return "cpu"; }

  void solve(const SolveArgs& args, const Real* in, Real* out, Real* face_flux,
             kernels::GroupResult* results, int count) override {
    const int threads = omp_get_max_threads();
    if (static_cast<int>(scratch_.size()) < threads) scratch_.resize(threads);
#pragma omp parallel
    {
      auto& mine = scratch_[omp_get_thread_num()];
      if (mine.empty()) mine.assign(kernels::mol_scratch_reals(), Real(0));
      const kernels::MolScratch s = kernels::mol_scratch_view(mine.data());
#pragma omp for schedule(dynamic)
      for (int g = 0; g < count; ++g)
        kernels::mol_hydro_group_cpu(args.scheme, args.params, in + g * kGroupInReals,
                                     out + g * kGroupOutReals, face_flux + g * kGroupFluxReals,
                                     results + g, s);
    }
  }

 private:
  std::vector<std::vector<Real>> scratch_;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor() {
  return std::make_unique<CpuExecutor>();
}

}  // namespace tessera::evolve
