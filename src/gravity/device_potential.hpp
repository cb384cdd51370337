// A refined level's potential on the GPU for a device-resident adaptive run (the next
// step of device_root.hpp; docs/architecture.md, "Self-gravity"): the SOR's input boxes
// gathered from the device pool through the level's PotentialTables
// (kernels/potential_gather.hpp: the parent's box made in shared memory, the ghost layer
// from same-level neighbours or interpolated from it), and the level's kicks with their
// time-step speed. The same bits as gather_potential_tables (so gather_potential) and
// SelfGravity::kick_refined: the file is compiled without contractions.
// tests/gpu/test_gpu_resident_potential.cpp compares them.
#pragma once

#include <memory>

#include "kernels/physics_kinds.hpp"
#include "src/gravity/potential_tables.hpp"
#include "tessera/gravity/root_boxes.hpp"

namespace tessera::exec {
class DeviceMesh;
}

namespace tessera::gravity {

// The root's ghosted potential of the last two solves on the GPU (DeviceRootGravity's, laid
// out as `boxes` says, its table on the GPU), for the boxes of level 1 next to an isolated
// domain's side.
struct DeviceRootPotential {
  const double* phi = nullptr;
  const double* phi_prev = nullptr;
  RootBoxes boxes;
};

class DevicePotential {
 public:
  virtual ~DevicePotential() = default;
  // The tables of a level (patches as the device pool's positions); again after a regrid.
  virtual void set_tables(const mesh::Mesh& m, const PotentialTables& t) = 0;
  // The SOR's input boxes of the groups [first, first + count) of the tables into `boxes`
  // (device memory, count x [2][18^3]: the density with the correction's source where
  // source_field >= 0, interior only, ghost cells zero; the potential with its ghost
  // layer), at time `weight` of the coarser level; `coarse_ghosts` as gather_potential.
  // On `stream` (a cudaStream_t; null: the default stream).
  virtual void gather(const mesh::Mesh& m, exec::DeviceMesh& dm, int first, int count,
                      int phi_field, int source_field, double weight, bool coarse_ghosts,
                      const DeviceRootPotential& root, Real* boxes, void* stream) = 0;
  // SelfGravity::kick_refined on every group of the tables (ghost layer from same-level
  // neighbours, else the coarser level at `weight`); returns the largest speed.
  virtual double kick(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field, double weight,
                      double dt, kernels::Physics physics, const kernels::PhysicsParams& params,
                      const DeviceRootPotential& root) = 0;
  // add_coarse_change on every group of the tables: the coarser level's change (its other
  // time level, continued beyond the domain without the root's exterior) interpolated to
  // the group's cells and added to their potential (add_coarse_change_tables' bits).
  virtual void add_coarse_change(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) = 0;
  // The parent's potential box of every group of the tables (parent_potential_box's
  // passes) into `boxes` (device memory, groups x 12^3): what the gathers, kicks and
  // coarse changes interpolate from, exposed so that it can be checked on its own.
  virtual void parent_boxes(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field, double weight,
                            const DeviceRootPotential& root, Real* boxes) = 0;
};

// Throws Error(kInput) in a build without the CUDA backend.
std::unique_ptr<DevicePotential> make_device_potential();

}  // namespace tessera::gravity
