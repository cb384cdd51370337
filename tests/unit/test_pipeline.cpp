// The pipeline's batching and double buffering, driven by a fake asynchronous device
// that runs the CPU kernels on another thread: batches split with a remainder, staging
// never reused before it was waited for, results closed in order, and the state equal
// bit for bit to the synchronous CPU executor.
#include <gtest/gtest.h>

#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/evolve/hydro_pass.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/physics/fields.hpp"
#include "tests/test_fields.hpp"

namespace tessera::evolve {
namespace {

// Runs each submitted batch on its own thread; records the order of events.
class FakeDevice final : public exec::Executor {
 public:
  const char* name() const override { return "fake"; }
  int preferred_batch() const override { return 5; }
  std::unique_ptr<exec::Staging> allocate(int groups, const exec::GroupSolver& solver) override {
    return std::make_unique<exec::HostStaging>(groups, solver.shape());
  }
  void submit(const exec::GroupSolver& solver, exec::Staging& s, int count) override {
    if (pending_.count(&s)) reused_before_wait = true;
    submitted.push_back(count);
    pending_[&s] = std::async(std::launch::async, [&s, &solver, count] {
      std::vector<Real> scratch(solver.host_scratch_reals());
      for (int g = 0; g < count; ++g)
        solver.solve_host(s.in + g * s.in_reals, s.out + g * s.out_reals, s.flux + g * s.flux_reals,
                          s.results + g, scratch.data());
    });
    order.push_back(&s);
  }
  void wait(exec::Staging& s) override {
    auto it = pending_.find(&s);
    ASSERT_NE(it, pending_.end()) << "wait without submit";
    it->second.get();
    pending_.erase(it);
    waited.push_back(&s);
  }
  bool idle() const { return pending_.empty(); }

  std::vector<int> submitted;
  std::vector<exec::Staging*> order, waited;
  bool reused_before_wait = false;

 private:
  std::map<exec::Staging*, std::future<void>> pending_;
};

using mesh::testing::periodic_box;

void fill(mesh::Mesh& m) {
  for (int p = 0; p < m.num_patches(); ++p)
    for (int c = 0; c < mesh::kPatchCells; ++c) {
      const auto x = m.cell_center(p, c % 8, (c / 8) % 8, c / 64);
      using P = kernels::HydroAdiabatic;
      const P::Vars w{{Real(1 + 0.5 * std::sin(4 * x[0]) * std::cos(6 * x[1])), Real(0.3),
                       Real(-0.2 * std::sin(5 * x[2])), Real(0.1),
                       Real(1 + 0.2 * std::cos(3 * x[2]))}};
      const P::Vars u = P::prim_to_cons(w, {Real(1.4), Real(0), Real(0)});
      for (int k = 0; k < 5; ++k) m.current(p)[k * mesh::kPatchCells + c] = u[k];
    }
}

// The hydro pass of adiabatic gas with the given integrator.
HydroPass hydro_pass(kernels::Integrator integrator) {
  kernels::Scheme scheme;
  scheme.integrator = integrator;
  kernels::MolParams params{};
  params.phys.adiabatic = {Real(1.4), Real(1e-10), Real(1e-12)};
  return HydroPass(scheme, params);
}

// A level step of level 0 with dt / dx = 0.1 on the 1/32 grid of periodic_box().
exec::LevelStep step_of(mesh::Mesh& m, exec::FluxRegisters& r, Timers& t, long step) {
  return {m, 0, 0.1 / 32, 1.0, step, r, t};
}

// Both integrators: the staging and strides follow the ghost width of each.
class PipelineIntegrator : public ::testing::TestWithParam<kernels::Integrator> {};

INSTANTIATE_TEST_SUITE_P(Integrators, PipelineIntegrator,
                         ::testing::Values(kernels::Integrator::kRk2, kernels::Integrator::kVl2),
                         [](const auto& info) {
                           return info.param == kernels::Integrator::kVl2 ? "Vl2" : "Rk2";
                         });

TEST_P(PipelineIntegrator, FakeDeviceBatchesDoubleBuffersAndMatchesCpu) {
  HydroPass pa = hydro_pass(GetParam()), pb = hydro_pass(GetParam());
  mesh::Mesh a(periodic_box(), physics::hydro_fields(true, 0)),
      b(periodic_box(), physics::hydro_fields(true, 0));
  fill(a);
  fill(b);
  exec::FluxRegisters ra, rb;
  ra.build(a);
  rb.build(b);
  Timers timers;
  auto cpu = exec::make_cpu_executor();
  exec::Pipeline reference(*cpu, 4, pa.mol());
  FakeDevice fake;
  exec::Pipeline pipelined(fake, 0, pb.mol());  // the device's preferred batch: 5 groups
  pa.set_pipeline(&reference);
  pb.set_pipeline(&pipelined);
  for (int step = 0; step < 3; ++step) {
    const auto sa = pa.run(step_of(a, ra, timers, step));
    const auto sb = pb.run(step_of(b, rb, timers, step));
    EXPECT_EQ(sa.max_speed, sb.max_speed);
  }
  // 12 groups in batches of 5, 5, 2, three times; every batch waited for, in order,
  // and no staging reused before its batch was waited for.
  EXPECT_EQ(fake.submitted, (std::vector<int>{5, 5, 2, 5, 5, 2, 5, 5, 2}));
  EXPECT_EQ(fake.waited, fake.order);
  EXPECT_FALSE(fake.reused_before_wait);
  EXPECT_TRUE(fake.idle());
  EXPECT_NE(fake.order[0], fake.order[1]) << "consecutive batches must use both buffers";
  for (int p = 0; p < a.num_patches(); ++p)
    for (std::size_t i = 0; i < a.patch_reals(); ++i)
      ASSERT_EQ(a.current(p)[i], b.current(p)[i]) << "patch " << p << " value " << i;
}

TEST_P(PipelineIntegrator, UnphysicalCellAbortsWithItsLocationAndDrainsTheDevice) {
  HydroPass pass = hydro_pass(GetParam());
  mesh::Mesh m(periodic_box(), physics::hydro_fields(true, 0));
  fill(m);
  // A non-finite energy in one cell of the first batch: floors cannot repair it.
  const int bad_patch = m.groups(0)[1] + 3;
  m.current(bad_patch)[4 * mesh::kPatchCells + 77] = std::numeric_limits<Real>::quiet_NaN();
  exec::FluxRegisters r;
  r.build(m);
  Timers timers;
  FakeDevice fake;
  exec::Pipeline pipeline(fake, 0, pass.mol());
  pass.set_pipeline(&pipeline);
  try {
    pass.run(step_of(m, r, timers, 42));
    FAIL() << "no error for a non-finite state";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNumerical);
    const std::string what = e.what();
    EXPECT_NE(what.find("unphysical state at step 42"), std::string::npos) << what;
    EXPECT_NE(what.find("level 0, patch"), std::string::npos) << what;
    EXPECT_NE(what.find("engy=nan"), std::string::npos) << what;
  }
  // The batch submitted after the failing one was waited for before the error left.
  EXPECT_TRUE(fake.idle());
}

TEST(Pipeline, SchemeWithAnotherGhostWidthIsAnInternalError) {
  HydroPass rk2 = hydro_pass(kernels::Integrator::kRk2);
  HydroPass vl2 = hydro_pass(kernels::Integrator::kVl2);
  mesh::Mesh m(periodic_box(), physics::hydro_fields(true, 0));
  fill(m);
  exec::FluxRegisters r;
  r.build(m);
  Timers timers;
  FakeDevice fake;
  exec::Pipeline pipeline(fake, 0, rk2.mol());
  vl2.set_pipeline(&pipeline);
  try {
    vl2.run(step_of(m, r, timers, 1));
    FAIL() << "a vl2 scheme ran on staging built for rk2";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
  EXPECT_TRUE(fake.submitted.empty());
}

}  // namespace
}  // namespace tessera::evolve
