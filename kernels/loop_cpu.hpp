// CPU loop backend of the integrators (mol_stages.hpp): nested loops over the cells of one
// patch group, on the calling thread (the CPU executor runs groups on OpenMP threads).
// The loops are [[gnu::flatten]]: every TESSERA_HD function they call is inlined into
// them. With every scheme instantiated, GCC's unit-wide inlining budget otherwise leaves
// the Riemann solvers and limiters as calls, which made rk2 30% slower.
#pragma once

#include "kernels/mol_stages.hpp"
#include "kernels/relaxing_tvd.hpp"

namespace tessera::kernels {

struct CpuGroupLoop {
  template <class Op>
  [[gnu::flatten]] void box(int lo, int hi, const Op& op) const {
    for (int k = lo; k < hi; ++k)
      for (int j = lo; j < hi; ++j)
        for (int i = lo; i < hi; ++i) op(0, i, j, k);
  }

  // The cells [lo, hi) of each dimension (relaxing_tvd.hpp's Range3), in memory order.
  template <class Op>
  [[gnu::flatten]] void range(const Range3& r, const Op& op) const {
    for (int k = r.lo[2]; k < r.hi[2]; ++k)
      for (int j = r.lo[1]; j < r.hi[1]; ++j)
        for (int i = r.lo[0]; i < r.hi[0]; ++i) op(0, i, j, k);
  }

  // Direction by direction, so that each direction's faces are visited in memory order.
  template <class Op>
  [[gnu::flatten]] void faces(int lo, int hi, const Op& op) const {
    for (int dir = 0; dir < 3; ++dir) {
      const int ex = dir == 0, ey = dir == 1, ez = dir == 2;
      for (int k = lo; k < hi + ez; ++k)
        for (int j = lo; j < hi + ey; ++j)
          for (int i = lo; i < hi + ex; ++i) op(0, i, j, k, dir);
    }
  }

  // The first unphysical cell is the lowest index, as the device reduction finds it.
  template <class Op>
  [[gnu::flatten]] void interior(const Op& op, GroupResult* result) const {
    GroupResult res{0, 0, -1, 0, 0, 0};
    for (int k = 0; k < kGroupSize; ++k)
      for (int j = 0; j < kGroupSize; ++j)
        for (int i = 0; i < kGroupSize; ++i) {
          const CellOutcome o = op(0, i, j, k);
          if (o.floor == FloorResult::kFloored) ++res.floored;
          if (o.floor == FloorResult::kFlagged) ++res.flagged;
          if (o.floor == FloorResult::kUnphysical) {
            if (res.bad_cell < 0) res.bad_cell = (k * kGroupSize + j) * kGroupSize + i;
          } else {
            res.max_speed = max_of(res.max_speed, o.speed);
          }
        }
    *result = res;
  }
};

}  // namespace tessera::kernels
