// Small value types shared by every physics policy: the state vector Real q[N] with value
// semantics (so that functions can return it), comparisons that inline on the host, and
// the outcome of the floors. Physics policies (physics_*.hpp) name the indices.
#pragma once

#include <cmath>

#include "tessera/core/real.hpp"

namespace tessera::kernels {

// std:: overloads serve float and double on the host and, under nvcc, on the device.
using std::fabs;
using std::isfinite;
using std::sqrt;

// Plain comparisons rather than fmin/fmax: those must honour NaN rules, which keeps
// compilers from inlining them on the host (a libm call per face otherwise).
TESSERA_HD inline Real min_of(Real a, Real b) {
  return a < b ? a : b;
}
TESSERA_HD inline Real max_of(Real a, Real b) {
  return a > b ? a : b;
}

// A state of N variables (conserved, primitive or a flux), indexed by the physics'
// named indices: Real q[N] with value semantics.
template <int N>
struct State {
  Real q[N];
  TESSERA_HD Real& operator[](int i) { return q[i]; }
  TESSERA_HD const Real& operator[](int i) const { return q[i]; }
};

template <int N>
TESSERA_HD inline bool is_finite(const State<N>& u) {
  bool ok = true;
  for (int v = 0; v < N; ++v) ok = ok && isfinite(u[v]);
  return ok;
}

// Outcome of the floors on one updated cell. kFlagged: the step's first pass with
// first-order flux correction found the cell unphysical and left it as it came, to be
// recomputed (mol_stages.hpp, FinalStage).
enum class FloorResult { kOk, kFloored, kUnphysical, kFlagged };

// Signal-speed bounds S_L <= S_R of a face's Riemann fan (HLL-family solvers).
struct WaveSpeeds {
  Real left;
  Real right;
};

// Cyclic permutation (x,y,z) -> (n,t1,t2) of every vector triplet of a state, so that one
// 1D Riemann solver serves all three directions. A flow along y or z alone is computed
// with exactly the operations of the same flow along x; with transverse components the
// results agree to round-off only, because sums such as v_x^2 + v_y^2 + v_z^2 keep
// lab-frame order in one direction and not in the others.
template <class Phys>
TESSERA_HD inline typename Phys::Vars rotate_to(const typename Phys::Vars& w, int dir) {
  typename Phys::Vars r = w;
  for (int t = 0; t < Phys::kNumVectors; ++t) {
    const int b = Phys::vector_start(t);
    for (int d = 0; d < 3; ++d) r[b + d] = w[b + (d + dir) % 3];
  }
  return r;
}

template <class Phys>
TESSERA_HD inline typename Phys::Vars rotate_from(const typename Phys::Vars& f, int dir) {
  typename Phys::Vars r = f;
  for (int t = 0; t < Phys::kNumVectors; ++t) {
    const int b = Phys::vector_start(t);
    for (int d = 0; d < 3; ++d) r[b + (d + dir) % 3] = f[b + d];
  }
  return r;
}

}  // namespace tessera::kernels
