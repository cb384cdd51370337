// TEMPORARY placeholder (not to be committed): replaced by the HLLD solver.
#pragma once
#include "kernels/physics_mhd.hpp"
#include "kernels/riemann_hll.hpp"
namespace tessera::kernels {
template <class Phys>
struct RiemannHlld;
template <>
struct RiemannHlld<MhdGlm> : RiemannHll<MhdGlm> {};
}  // namespace tessera::kernels
