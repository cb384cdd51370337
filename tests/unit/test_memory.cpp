// The GPU buffer estimate of estimate_memory follows the solver's device scratch: five box
// arrays for MOL (primitives, stage state, three flux arrays), one for relaxing TVD (the
// state between sweeps), beside the input box, the interior and the flux planes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/evolve/memory.hpp"
#include "tessera/evolve/schema.hpp"

namespace tessera::evolve {
namespace {

double gpu_buffers(const std::vector<std::string>& overrides) {
  std::vector<std::string> ov = {"gpu.groups_per_batch=10"};
  ov.insert(ov.end(), overrides.begin(), overrides.end());
  const Params p =
      load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/sedov/sedov.toml", ov);
  return estimate_memory(p, true, 5).device_bytes;
}

TEST(MemoryEstimate, GpuBuffersFollowTheSolversScratch) {
  // Both schemes have 3 ghost layers here: a 22^3 box of 5 variables.
  const double real = sizeof(Real);
  const double in = 22.0 * 22 * 22 * 5 * real;
  const double out = 16.0 * 16 * 16 * 5 * real, planes = 9.0 * 5 * 16 * 16 * real;
  EXPECT_DOUBLE_EQ(gpu_buffers({"hydro.integrator=vl2", "hydro.fofc=false"}),
                   2 * 10 * (6 * in + out + planes));
  // First-order flux correction adds a batch whose input boxes carry the flags.
  const double flags = 22.0 * 22 * 22 * real;
  EXPECT_DOUBLE_EQ(gpu_buffers({"hydro.integrator=vl2"}),
                   2 * 10 * (6 * in + out + planes) + 10 * (6 * in + flags + out + planes));
  // Relaxing TVD: the box, the state between sweeps and a floor mark per box cell.
  const double marks = 22.0 * 22 * 22 * real;
  EXPECT_DOUBLE_EQ(gpu_buffers({"hydro.scheme=relaxing_tvd"}),
                   2 * 10 * (2 * in + marks + out + planes));
}

}  // namespace
}  // namespace tessera::evolve
