// CPU executor: one OpenMP thread per patch group, each with its own scratch. Results do
// not depend on the thread count (each group is computed independently).
#include <omp.h>

#include <vector>

#include "tessera/core/parallel.hpp"
#include "tessera/evolve/executor.hpp"

namespace tessera::evolve {

HostStaging::HostStaging(int groups, int ghost_layers)
    : in_(groups * group_in_reals(ghost_layers), Real(0)),
      out_(groups * kGroupOutReals),
      flux_(groups * kGroupFluxReals),
      results_(groups) {
  ghost = ghost_layers, in_reals = group_in_reals(ghost_layers);
  in = in_.data(), out = out_.data(), flux = flux_.data(), results = results_.data();
  capacity = groups;
}

namespace {

class CpuExecutor final : public Executor {
 public:
  const char* name() const override { return "cpu"; }
  int preferred_batch() const override { return 4 * omp_get_max_threads(); }
  std::unique_ptr<Staging> allocate(int groups, int ghost) override {
    return std::make_unique<HostStaging>(groups, ghost);
  }

  void submit(const SolveArgs& args, Staging& s, int count) override {
    const int threads = omp_get_max_threads();
    if (static_cast<int>(scratch_.size()) < threads) scratch_.resize(threads);
    ParallelErrors errors;  // the scratch space allocates
#pragma omp parallel
    {
      auto& mine = scratch_[omp_get_thread_num()];
      errors.run(-1, [&] {
        if (mine.empty()) mine.assign(kernels::mol_scratch_reals(), Real(0));
      });
      // Every thread reaches the worksharing loop; one without scratch space skips its
      // groups, and the allocation error is rethrown below.
      const bool ready = !mine.empty();
      kernels::MolScratch scratch{};
      if (ready) scratch = kernels::mol_scratch_view(mine.data());
#pragma omp for schedule(dynamic)
      for (int g = 0; g < count; ++g)
        if (ready)
          kernels::mol_hydro_group_cpu(args.scheme, args.params, s.in + g * s.in_reals,
                                       s.out + g * kGroupOutReals, s.flux + g * kGroupFluxReals,
                                       s.results + g, scratch);
    }
    errors.rethrow();
  }
  void wait(Staging&) override {}

 private:
  std::vector<std::vector<Real>> scratch_;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor() {
  return std::make_unique<CpuExecutor>();
}

}  // namespace tessera::evolve
