// Compiled by nvcc, never launched: instantiates the shared TESSERA_HD physics for the
// device so that a host-only construct in kernels/ fails the build on every CI run, not
// first on a GPU machine.
#include "kernels/mol_hydro.hpp"
#include "kernels/reconstruction.hpp"
#include "kernels/riemann_hll.hpp"
#include "kernels/riemann_hllc.hpp"
#include "kernels/riemann_llf.hpp"

namespace tessera::kernels {

template <class Recon, class Riemann>
__global__ void face_flux_check(const Real* w, Real* out, int n3, int stride, EosParams eos) {
  const int idx = 2 * stride + static_cast<int>(threadIdx.x);
  for (int dir = 0; dir < 3; ++dir) {
    Cons f = face_flux<Recon, Riemann>(w, n3, idx, stride, dir, eos.gamma);
    apply_floors(f, eos);
    store_cons(out, n3, idx, f);
    out[idx] += max_signal_speed(cons_to_prim(f, eos), eos.gamma);
  }
}

template __global__ void face_flux_check<ReconPcm, RiemannHll>(const Real*, Real*, int, int,
                                                               EosParams);
template __global__ void face_flux_check<ReconPlm<LimiterMinmod>, RiemannHllc>(const Real*, Real*,
                                                                               int, int, EosParams);
template __global__ void face_flux_check<ReconPlm<LimiterMc>, RiemannLlf>(const Real*, Real*, int,
                                                                          int, EosParams);
template __global__ void face_flux_check<ReconPlm<LimiterVanLeer>, RiemannHllc>(const Real*, Real*,
                                                                                int, int,
                                                                                EosParams);

}  // namespace tessera::kernels
