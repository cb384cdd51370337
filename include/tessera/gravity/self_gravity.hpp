// Self-gravity of a run ([gravity]; docs/architecture.md, "Self-gravity"): the potential
// of the root level from an FFT Poisson solve (fft_poisson.hpp), of the refined levels from
// red-black SOR per patch group (sor_solver.hpp, run as evolve::PoissonPass) with the
// Dirichlet boundary interpolated from the coarser level in space and time, stored in the
// field "phi"; and the kicks that apply its acceleration (kernels/gravity.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/poisson_sor.hpp"
#include "tessera/core/params.hpp"
#include "tessera/gravity/root_boxes.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/partition.hpp"
#include "tessera/physics/model.hpp"

namespace tessera::exec {
class DeviceMesh;
class DeviceGather;
}  // namespace tessera::exec

namespace tessera::gravity {

class RootPoissonSolver;
class DeviceRootGravity;
class DevicePotential;
class DeviceCorrection;
class DeviceRows;
struct DeviceRootPotential;
struct RowPlan;
class SlabPoisson;
class SelfGravity;

// The name of the potential's field (mesh::FieldRegistry) and plot-file variable.
inline constexpr const char* kPotentialField = "phi";

// The potential's field: two time levels (the previous solve stays in the other slot, for
// the finer levels' ghost values between the coarse level's solves), neither refluxed nor
// restricted (each level keeps its own solution), prolonged with unlimited slopes into
// a regrid's new patches (their first guess), checkpointed and plotted (dataset "grav").
mesh::FieldInfo potential_field();

// The field of the potential correction's source (gravity.potential_correction): on each
// cell of a level that a finer level covers, the density to add to the cell's own so that
// the level's Poisson equation reproduces the finer level's potential there (see
// correction_source); zero elsewhere. One time level, neither refluxed nor restricted nor
// plotted; checkpointed, so that a restart solves exactly what the run solved.
inline constexpr const char* kCorrectionField = "phi_source";
mesh::FieldInfo correction_field();

// The finer level's part of the potential correction's source on `level` (what
// correction_source and coarse_change read of level + 1), per covered patch P of
// `level`: R(phi_fine), the mean of the eight finer cells of each of P's cells; R(residual),
// the mean of the finer level's residual 4 pi G (rho + source - mean) - laplacian(phi_fine)
// there, with the ghost values the finer level's solves use; and through each face of P
// beyond which lies a leaf or the domain's boundary, the finer level's gradient (the mean
// over its four fine faces of (inside - ghost) / h_fine, the ghost values interpolated from
// the potential around P as the finer level's solves have them). A patch group of level + 1
// gives its parent's terms: on several ranks the group's rank computes them and sends them
// to the ranks that read them (exchange_terms).
class CorrectionTerms {
 public:
  static constexpr std::size_t kPatchCells = mesh::kPatchCells;
  static constexpr std::size_t kFaceCells = mesh::kPatchSize * mesh::kPatchSize;
  static constexpr std::size_t kReals = 2 * kPatchCells + 6 * kFaceCells;
  // Offsets within a patch's terms: R(phi_fine), R(residual), then the six faces'
  // gradients, face 2 * axis for the low face and 2 * axis + 1 for the high one.
  static constexpr std::size_t kRestricted = 0, kResidual = kPatchCells,
                               kGradient = 2 * kPatchCells;
  static int face(int axis, bool low) { return 2 * axis + (low ? 0 : 1); }

  explicit CorrectionTerms(int num_patches = 0) : slot_(num_patches, -1) {}
  // The terms of covered patch p: null when this rank holds none.
  const double* find(int p) const {
    return slot_[p] < 0 ? nullptr : data_.data() + std::size_t(slot_[p]) * kReals;
  }
  double* find(int p) {
    return slot_[p] < 0 ? nullptr : data_.data() + std::size_t(slot_[p]) * kReals;
  }
  // Room for p's terms (not thread-safe; NaN until written); moves every other patch's.
  double* add(int p);
  // What correction_source reads of covered patch p: its terms, or an internal error that
  // names the patch when no exchange delivered them.
  const double* at(int p) const;

 private:
  std::vector<int> slot_;  // patch -> its terms' index, -1 if none
  std::vector<double> data_;
};

// The terms of the parents of `fine_groups` (groups of level + 1; all of them when null),
// from the finer level's potential, density and source, its same-level neighbours' and
// the potential of `level` around each parent (current slots). `root`: as in
// correction_source.
CorrectionTerms fine_terms(const mesh::Mesh& mesh, int level, int phi_field, int source_field,
                           double four_pi_g, const SelfGravity* root,
                           const std::vector<int>* fine_groups = nullptr);

// Several ranks: the rank of each group of level + 1 sends its parent's terms to the ranks
// that read them: the parent's and those of its six face neighbours (correction_source's
// stencil reaches one patch along each axis). Packed per peer in canonical order. Returns
// the number of groups' terms this rank sent.
long long exchange_terms(const mesh::Mesh& mesh, int level, CorrectionTerms& terms,
                         parallel::Comm& comm, const parallel::Partition& partition);
// The ranks that read covered patch p's terms (sorted): p's and its face neighbours'.
std::vector<int> term_readers(const mesh::Mesh& mesh, const parallel::Partition& partition, int p);

// The potential correction's source on `level` (which must have a finer level), on the
// patches of `groups` (all of `level`'s when null), from the finer level's terms and the
// level's own potential (as they stand): the coarse equation of the full approximation
// scheme (FAS) of the composite problem. On every covered cell, with psi = R(phi_fine)
// there and phi on the level's leaves, laplacian(psi) = 4 pi G (rho + source - mean) -
// R(fine residual): source = (laplacian(psi) + R(residual)) / (4 pi G) - rho + mean.
// Where a covered cell's face is an isolated domain's face, that face's term of
// laplacian(psi) is the finer level's gradient through it. On a leaf cell next to a covered
// one: (coarse difference across the face with the covered side at R(phi_fine) - the finer
// level's gradient through it) / (4 pi G h) per such face, zero elsewhere. Solving the
// level with the source added to the density makes its potential the finer one's where it
// is covered and gives its other cells the finer level's fluxes (the full-approximation
// form of Schive et al. 2010 §2.3, eqs. 21-25, whose pseudo mass sheets are the leaves'
// terms). Reads the level's potential around each patch (its 26 neighbours) and the terms
// of its covered patches and their face neighbours. `root`: the root's solver, for the
// free-space potential outside an isolated domain and the mean density of a periodic one.
void correction_source(mesh::Mesh& mesh, int level, int phi_field, int source_field,
                       double four_pi_g, const CorrectionTerms& terms,
                       const SelfGravity* root = nullptr, const std::vector<int>* groups = nullptr);
// The two halves of a coarse-level correction in the composite solve (the FAS cycle of
// Simulation::solve_gravity): keep_potential returns a copy of the level's potential (the
// values it had before its correction; the patches of `groups`, all of the level's when
// null, in that order); then coarse_change writes into the other slot of the coarser level
// `level` - 1, on the patches of `coarse_groups` (the same list as keep_potential's), its
// change: on covered cells phi - R(phi_fine) (its new value against the finer level's,
// from `terms`, so that the finer level takes up the coarse solution's smooth part and keeps
// its own detail), elsewhere phi - kept; and add_coarse_change adds to every cell of the
// `groups` of `level` that change interpolated quadratically (the coarser level's other
// slot around each parent: on several ranks exchanged in between).
std::vector<Real> keep_potential(const mesh::Mesh& mesh, int level, int phi_field,
                                 const std::vector<int>* groups = nullptr);
void coarse_change(mesh::Mesh& mesh, int level, int phi_field, const std::vector<Real>& kept_coarse,
                   const CorrectionTerms& terms, const std::vector<int>* coarse_groups = nullptr);
void add_coarse_change(mesh::Mesh& mesh, int level, int phi_field,
                       const std::vector<int>* groups = nullptr);
// Sets the correction's source to zero on every level.
void clear_correction(mesh::Mesh& mesh, int source_field);

// The potential of the group starting at `first_patch`, with one ghost layer, into `phi`
// (18^3), and its density into `rho` (18^3, interior only meaningful; may be null), the
// correction's source added when `source_field` >= 0. The ghost layer: with
// `coarse_ghosts` (the SOR's Dirichlet boundary) all of it from the coarser level,
// interpolated in space (tensor-product quadratic, third order) and in time at `weight`
// between its previous and current solve; else same-level neighbours' values where they
// exist (the kicks after the level's solve, and sibling relaxation), the coarser level's
// elsewhere. Beyond a non-periodic domain boundary: next to the root, with `root` given,
// the root's free-space potential just outside the domain (SelfGravity::exterior); else
// the coarser level's potential continued linearly.
void gather_potential(const mesh::Mesh& mesh, int phi_field, int first_patch, double weight,
                      Real* rho, Real* phi, bool coarse_ghosts, int source_field = -1,
                      const SelfGravity* root = nullptr);

// What the [gravity] keys and the mesh make meaningless, as tessera::Error(kInput) naming
// the keys: periodic gravity without periodic mesh boundaries (the mean density subtracted
// by the Jeans swindle would be wrong for a bounded domain). Nothing to check without
// gravity.
void check_params(const Params& params, const mesh::Geometry& geometry);

class SelfGravity {
 public:
  // For a run whose parameters passed check_params with gravity.enabled; `phi_field` is the
  // potential's index in the mesh's registry; `gpu`: solve with cuFFT on the current GPU
  // (runs on the CUDA backend), else with FFTW; `source_field`: the correction's source
  // (kCorrectionField), added to the density of every solve, or -1 without correction.
  SelfGravity(const Params& params, const physics::Model& model, const mesh::Geometry& geometry,
              int phi_field, int source_field, bool gpu);
  ~SelfGravity();
  SelfGravity(const SelfGravity&) = delete;
  SelfGravity& operator=(const SelfGravity&) = delete;

  // Several ranks (docs/architecture.md, "Self-gravity on several ranks"): a rank holds the
  // current data of its own root patches only. Before a solve the ranks send their root
  // densities to the z-slabs of the distributed FFT (SlabPoisson: FFTW on the host, or
  // cuFFT on the ranks' GPUs on the CUDA backend), or, with mpi.root_fft = "gathered" (and
  // when only some ranks have a GPU), every rank receives the whole root density and solves
  // the whole grid itself; either way every rank then holds the root potential around the
  // root families it holds (NaN elsewhere), with the same bits as one rank of its backend.
  // A kick updates the groups it is given.
  // Both pointers must outlive this object (null: one rank).
  void set_ranks(parallel::Comm* comm, const parallel::Partition* partition) {
    comm_ = comm;
    partition_ = partition;
  }

  // One line for the log: the solver, the boundary, G (and the subtracted mean density of
  // the periodic solve, once solve() ran).
  std::string describe() const;
  // The potential of the root level's current density: written to the field phi of every
  // root patch (current time level) and kept, with one layer of ghost cells (periodic
  // images, or the free-space potential outside the domain), for the kicks.
  // `resident`: the mesh's device copy, when the root level's data stay on the GPU; on one
  // rank with the cuFFT solver (on_device()) the density, the solve and the potential then
  // stay there too (device_root.hpp), with the same bits; the host's copy of the potential
  // is brought up to date when something on the host reads it. On several ranks with the
  // GPU slabs the density and the potential move between the ranks' GPUs (solve_on_gpus);
  // gathered, each rank's root density is read from its GPU, the ranks' solve runs as for
  // host data, and the potential each rank reads goes back up to its GPU; either way it
  // ends in the phi field of the root patches the rank holds there.
  void solve(mesh::Mesh& mesh, exec::DeviceMesh* resident = nullptr);
  // A kick of length dt with the acceleration of the last solve on the root level's
  // current state (kernels::gravity_kick); returns the largest speed the time step must
  // respect after it: the gas's signal speed, or sqrt(h |g|) (dt <= cfl sqrt(h / |g|)).
  // `groups`: the root groups to kick (all of them when null). `resident`: as for solve(),
  // the kick then runs on the device copy's root level.
  double kick(mesh::Mesh& mesh, double dt, const std::vector<int>* groups = nullptr,
              exec::DeviceMesh* resident = nullptr) const;
  // Whether solve() and kick() keep all of a resident root level's work on this GPU: the
  // cuFFT solver on one rank (make_cufft_poisson). On several ranks the kicks run there,
  // and the solve is the ranks' (with the GPU slabs, GPU to GPU; gathered, through the
  // hosts).
  bool on_device() const;
  // The kick of a refined level (level >= 1) with its potential field, the coarser level's
  // interpolated to `weight` for the ghost layer; returns the speed as kick() does.
  // `groups`: the level's groups to kick (all of them when null). `resident`: the mesh's
  // device copy when the levels' data stay on the GPU: the kick runs there on the groups
  // of its tables (device_potential.hpp; several ranks: `groups`, this rank's), with the
  // same bits.
  double kick_refined(mesh::Mesh& mesh, int level, double dt, double weight,
                      const std::vector<int>* groups = nullptr,
                      exec::DeviceMesh* resident = nullptr) const;
  // The gather of a device-resident refined level's SOR input boxes (PoissonPass's
  // resident_gather; gather_potential's boxes at `weight`, `coarse_ghosts` as there, made
  // on the GPU from the level's potential tables); valid until the next call.
  const exec::DeviceGather* device_gather(const mesh::Mesh& mesh, exec::DeviceMesh& resident,
                                          int level, double weight, bool coarse_ghosts) const;
  // The potential correction's steps on a device-resident run (the cycle of
  // Simulation::solve_gravity, device_correction.hpp), with the host's bits: the source
  // cleared; down, `level`'s potential kept and its source made from the finer level's
  // terms; up, the coarse change of level - 1 written and added to `level` (>= 1).
  // `refresh(l)`: brings level l's buffer patches (and the coarser ones around its groups)
  // up to date from their ranks, where the host's cycle does (several ranks; one rank:
  // nothing). Several ranks work on their own groups (the device copy's tables), the terms
  // of each finer group going from its rank to those that read them (exchange_terms).
  void device_clear_correction(mesh::Mesh& mesh, exec::DeviceMesh& resident) const;
  void device_correct_down(mesh::Mesh& mesh, exec::DeviceMesh& resident, int level,
                           const std::function<void(int)>& refresh) const;
  void device_correct_up(mesh::Mesh& mesh, exec::DeviceMesh& resident, int level,
                         const std::function<void(int)>& refresh) const;
  // The finer groups' terms this rank's device correction sent to other ranks (a group
  // counted once per rank it went to).
  long long device_terms_sent() const { return device_terms_sent_; }
  // The largest sqrt(h |g|) on `level` (the time step's gravity speed, as the kicks report
  // it) of the last solves, for the first step's time step; on a refined level over
  // `groups` (all of them when null).
  double acceleration_speed(const mesh::Mesh& mesh, int level,
                            const std::vector<int>* groups = nullptr) const;
  // The SOR settings ([gravity] sor_*) and 4 pi G.
  const kernels::SorParams& sor_params() const { return sor_; }
  double four_pi_g() const { return four_pi_g_; }
  int phi_field() const { return phi_field_; }
  int source_field() const { return source_field_; }
  // (1/2) sum rho phi dV over the root level: the gravitational potential energy of the
  // last solve (with the periodic solve, of the density less its mean).
  double potential_energy(const mesh::Mesh& mesh) const;
  // The root potential of root cell (i, j, k) in the layer just outside the domain (each
  // index in -1 .. n, one at least outside), interpolated in time at `weight` between the
  // previous solve and the last: with isolated boundaries the free-space potential there,
  // which a refined level touching the domain boundary takes for its ghost values (beyond
  // the domain there is no coarse cell to interpolate from). Reads the host's copy: the
  // caller has made it current (make_host_current) when the root solved on the GPU.
  double exterior(int i, int j, int k, double weight) const {
    const std::size_t a = boxes().at(i, j, k);
    return weight == 1.0 ? phi_[a] : (1 - weight) * phi_prev_[a] + weight * phi_[a];
  }
  // Where this rank keeps the root potential (root_boxes.hpp): the whole ghosted grid on one
  // rank and with the gathered solve; with the slabs, the boxes around the root families it
  // holds (as of the last solve), the host's table.
  RootBoxes boxes() const {
    return {n_[0], n_[1], n_[2], boxed_ ? box_slot_.data() : nullptr, box_count_};
  }
  // The root potential's values this rank keeps per solve (RootBoxes::size; two solves are
  // kept), on the host and, in a resident run, on the GPU.
  std::size_t potential_values() const { return phi_.size(); }
  // The mean density the last periodic solve subtracted (0 for isolated boundaries).
  double mean_density() const { return mean_; }
  bool periodic() const { return periodic_; }
  // Poisson solves so far.
  int solves() const { return solves_; }
  // Several ranks: where this rank's root solves spent their time, seconds summed over the
  // solves (for the run's summary): the density read from the GPU (a resident root), sent
  // to the slabs (or gathered), the FFT (and of it the GPU's part), the potential sent to
  // the ranks that read it, and up to the GPU.
  // With the density and potential moved GPU to GPU (`on_gpus`: a resident root and the
  // GPU slabs), `read` is the density's gather on the GPU and `up` the potential's write
  // into the patches there.
  struct RootTimes {
    double read = 0, to_slabs = 0, fft = 0, fft_device = 0, to_readers = 0, up = 0;
    bool on_gpus = false;
  };
  const RootTimes& root_times() const { return root_times_; }
  // Whether the root solves are cut into slabs over the ranks: several ranks, mpi.root_fft =
  // "slabs", and every rank on the same backend (else each solves the gathered grid).
  bool slabs() const { return comm_ && comm_->size() > 1 && slabs_wanted_; }
  // The host's copy of the last two potentials from the GPU's, when the last solve ran
  // there (not thread-safe: from the thread that steps the run).
  void make_host_current() const;
  // Several ranks, slabs: scatter_root's and scatter_potential's moves as rows
  // (device_rows.hpp), which a resident root level's solve makes GPU to GPU. The density's:
  // rows of kN cells from this rank's own root patches' densities ([own_root_patches'
  // index][cells]) into the receivers' density planes (the solver's [planes()][n1][n0]);
  // the potential's: rows of 2 kN + 2 cells from this rank's ghosted planes
  // ([ghosted_planes()][n1 + 2][n0 + 2]) into the readers' boxes around the root families
  // they hold (boxes(): in the order of those families). Collectives (the boxes are
  // gathered).
  RowPlan density_rows(const mesh::Mesh& mesh, const SlabPoisson& solver) const;
  RowPlan potential_rows(const mesh::Mesh& mesh, const SlabPoisson& solver) const;

 private:
  double root_acceleration_speed(const mesh::Mesh& mesh) const;
  // The root solver, made at the first solve (a collective on several ranks: slabs only when
  // every rank solves on a GPU or none does).
  void make_solver();
  // Several ranks, slabs: this rank's planes of the root density (the solver's
  // [planes()][n1][n0] from first_plane()), from every rank's own root patches.
  // `own`: the density (and source) of this rank's root patches (own_root_patches' order,
  // as DeviceMesh::read_fields gives them) when the host's copy of them is not current.
  void scatter_root(const mesh::Mesh& mesh, const SlabPoisson& solver, std::vector<double>& out,
                    const std::vector<Real>* own = nullptr) const;
  // The root patches of this rank's own groups, in canonical order.
  std::vector<int> own_root_patches(const mesh::Mesh& mesh) const;
  // Several ranks, slabs: each rank's ghosted potential planes to the ranks that read them
  // (around their root families, and the layer outside an isolated domain), into phi_.
  void scatter_potential(const mesh::Mesh& mesh, const SlabPoisson& solver);
  // Every rank's boxes of the potential it reads (a collective): the lowest ghosted index
  // of the (2 kN + 2)^3 box around each root family it holds, in canonical order.
  std::vector<std::vector<double>> potential_boxes(const mesh::Mesh& mesh) const;
  // Several ranks, slabs, a resident root level: the solve with the density and potential
  // moved GPU to GPU (density_rows, potential_rows; made again when the device copy's
  // tables are), the cuFFT slabs in between.
  void solve_on_gpus(mesh::Mesh& mesh, exec::DeviceMesh& resident);
  std::unique_ptr<DeviceRows> density_moves_, potential_moves_;
  long long moves_version_ = -1;
  // The boxes' table the potential's moves were planned for (empty: not yet seen).
  std::vector<int> moves_slots_;
  // Several ranks: fills the cells of `field` ([n2][n1][n0]) that lie in other ranks' root
  // patches with their values, each rank having filled those of its own.
  void gather_root(const mesh::Mesh& mesh, std::vector<double>& field) const;
  // With the slabs: the boxes follow the root families this rank holds (after a regrid),
  // each family's values of the last two solves kept where it held them before, NaN where
  // it did not (a solve follows every regrid before they are read).
  void follow_held(const mesh::Mesh& mesh);
  bool boxed_ = false;
  std::vector<int> box_slot_;  // RootBoxes::slot
  std::size_t box_count_ = 0;

  const physics::Model& model_;
  int phi_field_;
  int source_field_;
  std::array<int, 3> n_;
  double h_;
  double four_pi_g_;
  bool periodic_;
  double mean_ = 0;
  int solves_ = 0;
  RootTimes root_times_;
  kernels::SorParams sor_;
  bool gpu_;
  bool slabs_wanted_;
  std::string route_;  // mpi.device_exchange: how the GPU slabs' transposes travel
  std::unique_ptr<RootPoissonSolver> solver_;  // the whole grid on this rank
  std::unique_ptr<SlabPoisson> slab_solver_;   // the grid over the ranks
  parallel::Comm* comm_ = nullptr;
  const parallel::Partition* partition_ = nullptr;
  std::vector<double> rho_;  // root density, [n2][n1][n0] (slabs: this rank's planes)
  // Several ranks, a resident root: this rank's root density (and source) read from the GPU
  // for a solve (own_root_patches' order), kept for the next.
  std::vector<Real> own_density_;
  // The root potential with one ghost layer as boxes() lays it out, and that of the solve
  // before: on the host, and for a resident root level on the GPU (device_). Where they are
  // current: the host's copy is brought up from the GPU's when read, and the GPU's from the
  // host's before a device kick.
  mutable std::vector<double> phi_;
  mutable std::vector<double> phi_prev_;
  mutable std::unique_ptr<DeviceRootGravity> device_;
  mutable bool host_current_ = true;
  mutable long long device_terms_sent_ = 0;
  mutable bool device_current_ = false;
  // The GPU's copy, made current from the host's.
  void make_device_current() const;
  // A device-resident refined level's potential tables on the GPU (made again when the
  // device copy's tables changed), and the root's potential there.
  DevicePotential& device_level(const mesh::Mesh& m, exec::DeviceMesh& dm, int level) const;
  DeviceRootPotential device_root() const;
  class ResidentGather;
  mutable std::vector<std::unique_ptr<DevicePotential>> device_levels_;
  mutable std::vector<long long> device_levels_version_;
  // The correction's terms and source of each level with a finer one, on the GPU.
  DeviceCorrection& device_correction(const mesh::Mesh& m, exec::DeviceMesh& dm, int level) const;
  mutable std::vector<std::unique_ptr<DeviceCorrection>> device_corrections_;
  mutable std::vector<long long> device_corrections_version_;
  // Several ranks: which finer groups' terms (indices into a correction's tables) go to each
  // peer, and which come from it; the tables' first `computed` groups are this rank's.
  struct TermsPlan {
    std::vector<std::vector<int>> send, receive;  // [peer rank]
    int computed = 0, groups = 0;
  };
  mutable std::vector<TermsPlan> terms_plans_;
  void exchange_device_terms(DeviceCorrection& c, const TermsPlan& plan) const;
  mutable std::unique_ptr<ResidentGather> gather_;
};

}  // namespace tessera::gravity
