// SelfGravity's gather on a device-resident refined level (internal to src/gravity: the
// type of SelfGravity::gather_, complete where SelfGravity is made and destroyed).
#pragma once

#include <cstddef>

#include "device_potential.hpp"
#include "kernels/poisson_sor.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::gravity {

// PoissonPass's gather on a device-resident refined level: the level's DevicePotential
// with the settings of the pass's step.
class SelfGravity::ResidentGather final : public exec::DeviceGather {
 public:
  void gather(exec::DeviceMesh& dm, int first_group, int count, Real* boxes, std::size_t in_reals,
              void* stream) const override {
    if (in_reals != 2 * kernels::box_cells(1))
      throw Error(ErrorKind::kInternal, "the SOR's input boxes are not of the potential's shape");
    potential->gather(*mesh, dm, first_group, count, phi_field, source_field, weight, coarse_ghosts,
                      root, boxes, stream);
  }
  DevicePotential* potential = nullptr;
  const mesh::Mesh* mesh = nullptr;
  int phi_field = -1, source_field = -1;
  double weight = 1;
  bool coarse_ghosts = true;
  DeviceRootPotential root;
};

}  // namespace tessera::gravity
