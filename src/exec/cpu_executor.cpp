// CPU executor: one OpenMP thread per patch group, each with its own scratch. Results do
// not depend on the thread count (each group is computed independently).
#include <omp.h>

#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/exec/executor.hpp"

namespace tessera::exec {

HostStaging::HostStaging(int groups, const GroupShape& shape) {
  set_shape(groups, shape);
  in_.assign(groups * in_reals, Real(0));
  out_.resize(groups * out_reals);
  flux_.resize(groups * flux_reals);
  results_.resize(groups);
  in = in_.data(), out = out_.data(), flux = flux_.data(), results = results_.data();
}

std::unique_ptr<DeviceMesh> Executor::make_resident(const mesh::Mesh&,
                                                    const std::vector<std::vector<int>>&) {
  return nullptr;
}

std::unique_ptr<DeviceHalo> Executor::make_halo(DeviceMesh&, const mesh::Mesh&, parallel::Comm&,
                                                const HaloPlan&, const std::string&) {
  throw Error(ErrorKind::kInternal,
              std::string("the ") + name() + " executor has no device-resident levels");
}

void Executor::submit_resident(const GroupSolver&, Staging&, int, DeviceMesh&,
                               const ResidentBatch&) {
  throw Error(ErrorKind::kInternal,
              std::string("the ") + name() + " executor cannot run device-resident batches");
}

void Executor::fetch_resident(Staging&, int) {}

void Executor::fetch_resident_output(Staging&, int) {}

namespace {

class CpuExecutor final : public Executor {
 public:
  const char* name() const override { return "cpu"; }
  int preferred_batch() const override { return 4 * omp_get_max_threads(); }
  std::unique_ptr<Staging> allocate(int groups, const GroupSolver& solver) override {
    return std::make_unique<HostStaging>(groups, solver.shape());
  }

  void submit(const GroupSolver& solver, Staging& s, int count) override {
    const int threads = omp_get_max_threads();
    if (static_cast<int>(scratch_.size()) < threads) scratch_.resize(threads);
    const std::size_t reals = solver.host_scratch_reals();
    ParallelErrors errors;  // the scratch space allocates
#pragma omp parallel
    {
      auto& mine = scratch_[omp_get_thread_num()];
      errors.run(-1, [&] {
        if (mine.size() < reals) mine.assign(reals, Real(0));
      });
      // Every thread reaches the worksharing loop; one without scratch space skips its
      // groups, and the allocation error is rethrown below.
      const bool ready = mine.size() >= reals;
#pragma omp for schedule(dynamic)
      for (int g = 0; g < count; ++g)
        if (ready)
          solver.solve_host(s.in + g * s.in_reals, s.out + g * s.out_reals,
                            s.flux + g * s.flux_reals, s.results + g, mine.data());
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

}  // namespace tessera::exec
