// Self-gravity of a run ([gravity]; docs/architecture.md, "Self-gravity"): the potential
// of the root level from an FFT Poisson solve (fft_poisson.hpp), stored in the field "phi",
// and the kicks that apply its acceleration (kernels/gravity.hpp).
//
// Runs without refinement only, for now: the refined levels need their own solve (SOR per
// patch group with the potential correction of Schive et al. 2010 §2.3), which check_params
// says is not there yet.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/core/params.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/physics/model.hpp"

namespace tessera::gravity {

class RootPoissonSolver;

// The name of the potential's field (mesh::FieldRegistry) and plot-file variable.
inline constexpr const char* kPotentialField = "phi";

// The potential's field: one time level (it is recomputed from the density every step),
// neither refluxed nor prolonged with limited slopes (it is not a conserved density),
// checkpointed and plotted (dataset "grav").
mesh::FieldInfo potential_field();

// What the [gravity] keys and the mesh make meaningless, as tessera::Error(kInput) naming
// the keys: periodic gravity without periodic mesh boundaries (the mean density subtracted
// by the Jeans swindle would be wrong for a bounded domain), refinement (amr.max_level > 0;
// the refined levels' solver is not there yet), gpu.resident = "on" (the potential is
// solved on the host between the GPU's hydro steps). Nothing to check without gravity.
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
  // The largest sqrt(h |g|) of the last solve (the time step's gravity speed, as kick()
  // reports it), for the first step's time step.
  double acceleration_speed() const;
  // (1/2) sum rho phi dV over the root level: the gravitational potential energy of the
  // last solve (with the periodic solve, of the density less its mean).
  double potential_energy(const mesh::Mesh& mesh) const;
  // The mean density the last periodic solve subtracted (0 for isolated boundaries).
  double mean_density() const { return mean_; }
  bool periodic() const { return periodic_; }
  // Poisson solves so far.
  int solves() const { return solves_; }

 private:
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
  std::unique_ptr<RootPoissonSolver> solver_;
  std::vector<double> rho_;  // root density, [n2][n1][n0]
  std::vector<double> phi_;  // root potential with one ghost layer, [n2+2][n1+2][n0+2]
};

}  // namespace tessera::gravity
