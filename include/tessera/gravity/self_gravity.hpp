// Self-gravity of a run ([gravity]; docs/architecture.md, "Self-gravity"): the potential
// of the root level from an FFT Poisson solve (fft_poisson.hpp), of the refined levels from
// red-black SOR per patch group (sor_solver.hpp, run as evolve::PoissonPass) with the
// Dirichlet boundary interpolated from the coarser level in space and time, stored in the
// field "phi"; and the kicks that apply its acceleration (kernels/gravity.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/poisson_sor.hpp"
#include "tessera/core/params.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/physics/model.hpp"

namespace tessera::gravity {

class RootPoissonSolver;

// The name of the potential's field (mesh::FieldRegistry) and plot-file variable.
inline constexpr const char* kPotentialField = "phi";

// The potential's field: two time levels (the previous solve stays in the other slot, for
// the finer levels' ghost values between the coarse level's solves), neither refluxed nor
// restricted (each level keeps its own solution), prolonged with unlimited slopes,
// checkpointed and plotted (dataset "grav").
mesh::FieldInfo potential_field();

// The potential of the group starting at `first_patch`, with one ghost layer, into `phi`
// (18^3), and its density into `rho` (18^3, interior only meaningful; may be null). The
// ghost layer: with `coarse_ghosts` (the SOR's Dirichlet boundary) all of it from the
// coarser level, interpolated in space (unlimited slopes) and in time at `weight` between
// its previous and current solve; else same-level neighbours' values where they exist
// (the kicks, after the level's solve), the coarser level's elsewhere. Beyond a
// non-periodic domain boundary the coarser level's potential continued linearly.
void gather_potential(const mesh::Mesh& mesh, int phi_field, int first_patch, double weight,
                      Real* rho, Real* phi, bool coarse_ghosts);

// What the [gravity] keys and the mesh make meaningless, as tessera::Error(kInput) naming
// the keys: periodic gravity without periodic mesh boundaries (the mean density subtracted
// by the Jeans swindle would be wrong for a bounded domain), gpu.resident = "on" (the
// potential is solved on the host between the GPU's hydro steps). Nothing to check without
// gravity.
void check_params(const Params& params, const mesh::Geometry& geometry);

class SelfGravity {
 public:
  // For a run whose parameters passed check_params with gravity.enabled; `phi_field` is the
  // potential's index in the mesh's registry; `gpu`: solve with cuFFT on the current GPU
  // (runs on the CUDA backend), else with FFTW.
  SelfGravity(const Params& params, const physics::Model& model, const mesh::Geometry& geometry,
              int phi_field, bool gpu);
  ~SelfGravity();
  SelfGravity(const SelfGravity&) = delete;
  SelfGravity& operator=(const SelfGravity&) = delete;

  // One line for the log: the solver, the boundary, G (and the subtracted mean density of
  // the periodic solve, once solve() ran).
  std::string describe() const;
  // The potential of the root level's current density: written to the field phi of every
  // root patch (current time level) and kept, with one layer of ghost cells (periodic
  // images, or the free-space potential outside the domain), for the kicks.
  void solve(mesh::Mesh& mesh);
  // A kick of length dt with the acceleration of the last solve on the root level's
  // current state (kernels::gravity_kick); returns the largest speed the time step must
  // respect after it: the gas's signal speed, or sqrt(h |g|) (dt <= cfl sqrt(h / |g|)).
  double kick(mesh::Mesh& mesh, double dt) const;
  // The kick of a refined level (level >= 1) with its potential field, the coarser level's
  // interpolated to `weight` for the ghost layer; returns the speed as kick() does.
  double kick_refined(mesh::Mesh& mesh, int level, double dt, double weight) const;
  // The largest sqrt(h |g|) on `level` (the time step's gravity speed, as the kicks report
  // it) of the last solves, for the first step's time step.
  double acceleration_speed(const mesh::Mesh& mesh, int level) const;
  // The SOR settings ([gravity] sor_*) and 4 pi G.
  const kernels::SorParams& sor_params() const { return sor_; }
  double four_pi_g() const { return four_pi_g_; }
  int phi_field() const { return phi_field_; }
  // (1/2) sum rho phi dV over the root level: the gravitational potential energy of the
  // last solve (with the periodic solve, of the density less its mean).
  double potential_energy(const mesh::Mesh& mesh) const;
  // The mean density the last periodic solve subtracted (0 for isolated boundaries).
  double mean_density() const { return mean_; }
  bool periodic() const { return periodic_; }
  // Poisson solves so far.
  int solves() const { return solves_; }

 private:
  double root_acceleration_speed() const;
  // (i, j, k) of the root grid, ghost layer included (-1 .. n): index into phi_.
  std::size_t ghosted(int i, int j, int k) const {
    return (std::size_t(k + 1) * (n_[1] + 2) + (j + 1)) * (n_[0] + 2) + (i + 1);
  }

  const physics::Model& model_;
  int phi_field_;
  std::array<int, 3> n_;
  double h_;
  double four_pi_g_;
  bool periodic_;
  double mean_ = 0;
  int solves_ = 0;
  kernels::SorParams sor_;
  std::unique_ptr<RootPoissonSolver> solver_;
  std::vector<double> rho_;  // root density, [n2][n1][n0]
  std::vector<double> phi_;  // root potential with one ghost layer, [n2+2][n1+2][n0+2]
};

}  // namespace tessera::gravity
