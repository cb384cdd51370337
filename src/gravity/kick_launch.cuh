// What the device kicks of self-gravity share (resident_gravity_cuda.cu: the root's;
// resident_potential_cuda.cu: the refined levels'): the physics dispatch of a kick kernel
// and the signal speed its blocks leave in one word.
#pragma once

#include <cstring>

#include "kernels/gravity.hpp"
#include "src/exec/cuda/cuda_util.cuh"

namespace tessera::gravity::gpu {

// Calls launch(physics tag, its parameters, whether the energy is kicked), as kick() on the
// host: isothermal gas has no energy to kick.
template <class Launch>
void launch_kick(kernels::Physics physics, const kernels::PhysicsParams& params, Launch&& launch) {
  switch (physics) {
    case kernels::Physics::kAdiabatic:
      launch(kernels::HydroAdiabatic{}, params.adiabatic, true);
      break;
    case kernels::Physics::kIsothermal:
      launch(kernels::HydroIsothermal{}, params.isothermal, false);
      break;
    case kernels::Physics::kMhd:
      launch(kernels::MhdGlm{}, params.mhd, true);
      break;
  }
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

// The largest speed the kick's blocks wrote into `speed` (a non-negative double's bits, kept
// by atomicMax on them), copied back after the kernel.
inline double kick_speed(const unsigned long long* speed) {
  unsigned long long bits = 0;
  TESSERA_CUDA_CHECK(cudaMemcpy(&bits, speed, sizeof bits, cudaMemcpyDeviceToHost));
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace tessera::gravity::gpu
