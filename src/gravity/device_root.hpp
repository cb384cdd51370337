// The root level's self-gravity of a device-resident run (SelfGravity with a DeviceMesh;
// docs/architecture.md, "Self-gravity" and "Data residency"). On one rank the density is
// gathered from the device's pool into the root grid on the GPU, solved there with the
// cuFFT root solver (RootPoissonSolver::solve_on_device), and the potential written into
// the pool's phi field and kept, ghosted, on the GPU for the kicks: nothing crosses the bus
// but the mean density (periodic) and the kick's largest speed. On several ranks the solve
// is the ranks' (the slabs between their hosts and GPUs): the potential it leaves on the
// host comes up (set_potential) and the kicks run here. The operations are the host's
// (SelfGravity::solve and kick, kernels/gravity.hpp) with the same bits: the file is
// compiled without contractions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/physics_kinds.hpp"
#include "tessera/gravity/root_boxes.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::exec {
class DeviceMesh;
}

namespace tessera::gravity {

class RootPoissonSolver;

class DeviceRootGravity {
 public:
  virtual ~DeviceRootGravity() = default;
  // The potential of the root level's current density in `dm` (plus the field
  // `source_field` when >= 0): the last potential becomes the previous one, the new one is
  // written to the field `phi_field` of every root patch (current time level) and kept with
  // its ghost layer. Returns the mean density subtracted (periodic), formed as
  // SlabPoisson::solve forms it.
  virtual double solve(const mesh::Mesh& m, exec::DeviceMesh& dm, RootPoissonSolver& solver,
                       double four_pi_g, bool periodic, int phi_field, int source_field) = 0;
  // A potential solved elsewhere (several ranks): the last potential becomes the previous
  // one, and the new one is the host's ghosted `phi` ([n2 + 2][n1 + 2][n0 + 2]) in the
  // ghosted planes around the root families the mesh holds (their cells and one plane
  // beyond each side), NaN elsewhere (what this rank does not read), written to the field
  // `phi_field` of those families' patches (current time level). `phi` (a whole ghosted
  // grid) is page-locked at its first call until this object goes: it must outlive it.
  virtual void set_potential(const mesh::Mesh& m, exec::DeviceMesh& dm, const double* phi,
                             int phi_field) = 0;
  // Several ranks, the density and potential moved GPU to GPU (SelfGravity::solve with the
  // GPU slabs; the moves themselves are device_rows.hpp's):
  // - own_density: the density (plus the field `source_field` when >= 0) of the root
  //   patches of `groups` (this rank's own, in order) into a device array [patch][cells],
  //   as SelfGravity::scatter_root forms it;
  // - slab_density, slab_potential: device arrays of `count` doubles kept here for the slab
  //   solve's density planes and ghosted potential planes (grown when needed);
  // - plane_sums: the sums of the first `planes` planes of `plane` cells of slab_density,
  //   each in order (SlabPoisson::solve's), to the host;
  // - begin_potential: the last potential becomes the previous one, and the new one, every
  //   value NaN (what this rank is not sent stays so), is returned for the moves to fill
  //   (laid out in boxes, as layout() was last told);
  // - finish_potential: the new potential into the field `phi_field` of the root families
  //   the mesh holds (current time level).
  virtual const double* own_density(const mesh::Mesh& m, exec::DeviceMesh& dm,
                                    const std::vector<int>& groups, int source_field) = 0;
  virtual double* slab_density(std::size_t count) = 0;
  virtual double* slab_potential(std::size_t count) = 0;
  virtual std::vector<double> plane_sums(int planes, std::size_t plane) = 0;
  virtual double* begin_potential() = 0;
  virtual void finish_potential(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) = 0;
  // SelfGravity::kick on the root patches of `groups` (every root group when null) of `dm`'s
  // current state with the last potential; returns the largest speed the time step must
  // respect.
  virtual double kick(const mesh::Mesh& m, exec::DeviceMesh& dm, double dt, double h,
                      kernels::Physics physics, const kernels::PhysicsParams& params,
                      const std::vector<int>* groups = nullptr) = 0;
  // The potentials' layout (SelfGravity::boxes, its table on the host): room for both, and
  // with `from` (the earlier box of each new box, -1 for none) each box's values kept from
  // the layout before; without, or where -1, NaN. set_potential and solve need the whole
  // grid (no table).
  virtual void layout(const RootBoxes& boxes, const std::vector<std::int64_t>* from) = 0;
  // The layout on the GPU (its table there).
  virtual RootBoxes boxes() const = 0;
  // The ghosted potentials (last and previous solve, laid out as boxes() says) between the
  // host and the GPU.
  virtual void download(double* phi, double* phi_prev) = 0;
  virtual void upload(const double* phi, const double* phi_prev) = 0;
  // The ghosted potential of the last solve (0) and of the one before (1), on the GPU.
  virtual const double* potential(int which) const = 0;
  // GPU memory it holds, bytes.
  virtual double bytes() const = 0;
};

// For a root grid of n cells; throws Error(kInput) in a build without the CUDA backend.
std::unique_ptr<DeviceRootGravity> make_device_root_gravity(std::array<int, 3> n);

}  // namespace tessera::gravity
