// Unit tests of the device kernels of resident adaptive levels (docs/architecture.md, "Data
// residency": src/exec/cuda_amr.cu, src/exec/cuda_regrid.cu), each against the host code it
// must equal bit for bit, through DeviceMesh's public interface: restriction, refinement
// flags, flux registers and refluxing, and a regrid's prolongation. The meshes are 3-level
// nested meshes (tests/nested_mesh.hpp) whose refined regions wrap across periodic sides and
// reach a reflecting one, with the fields of a run's Model (hydro with a scalar, and MHD), and
// a level whose current state is in the other time level, so that a kernel reading or writing
// the wrong slot differs. Each test prints how much it compared.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "../nested_mesh.hpp"
#include "kernels/flagging.hpp"
#include "kernels/group_layout.hpp"
#include "tessera/core/error.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/exec/flux_register.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/physics/model.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera {
namespace {

using mesh::Boundary;
constexpr Boundary P = Boundary::kPeriodic, O = Boundary::kOutflow, R = Boundary::kReflecting;
constexpr int kP = mesh::kPatchSize;
constexpr int kCells = mesh::kPatchCells;

// The equations of a run: adiabatic hydro (gamma 5/3) with a passive scalar, or GLM-MHD.
physics::Model model_of(bool mhd) {
  const std::string file =
      std::string(TESSERA_SOURCE_DIR) +
      (mhd ? "/problems/mhd_blast/mhd_blast.toml" : "/problems/blob/blob.toml");
  return physics::Model(load_run_params(file, {"output.enabled=false", "hydro.passive_scalars=1"}));
}

// Cells 48 x 48 x 32 on [0, 1] x [0, 1] x [0, 2/3], periodic in x, outflow in y, reflecting
// in z; the default spheres wrap across x = 0 and reach z = 0.
mesh::testing::NestedSpec spec_at(std::array<double, 3> centre, std::vector<double> radii) {
  mesh::testing::NestedSpec s;
  s.cells = {48, 48, 32};
  s.sides = {{P, P}, {O, O}, {R, R}};
  s.centre = centre;
  s.radii = std::move(radii);
  return s;
}
mesh::Mesh make_mesh(const physics::Model& model, std::array<double, 3> centre = {0.08, 0.5, 0.1},
                     std::vector<double> radii = {0.3, 0.17}) {
  return mesh::testing::nested_mesh(spec_at(centre, std::move(radii)), model.fields());
}

// Both time levels of every patch: positive states with a large energy (field 4), or random
// signs (prolongation then mostly injects: the admissibility fallback).
void fill_random(mesh::Mesh& m, unsigned seed, bool positive) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(positive ? 0.5 : -1, positive ? 1.5 : 1);
  for (int slot = 0; slot < 2; ++slot)
    for (int p = 0; p < m.num_patches(); ++p)
      for (int v = 0; v < m.nvar(); ++v)
        for (int i = 0; i < kCells; ++i)
          m.data(slot, p)[v * kCells + i] = Real(u(rng) + (positive && v == 4 ? 40 : 0));
}

// Every time level of every patch of `got` (copied back from the device) against `want`,
// bit for bit, except where skip(slot, p); the reals compared, or -1 after a failure naming
// the first differing one.
template <class Skip>
long long compare_pools(const mesh::Mesh& got, const mesh::Mesh& want, const std::string& what,
                        Skip skip) {
  if (got.num_patches() != want.num_patches() || got.patch_reals() != want.patch_reals()) {
    ADD_FAILURE() << what << ": the meshes differ in shape";
    return -1;
  }
  const std::size_t n = got.patch_reals();
  long long compared = 0;
  for (int slot = 0; slot < 2; ++slot)
    for (int p = 0; p < got.num_patches(); ++p) {
      if (skip(slot, p)) continue;
      const Real *a = got.data(slot, p), *b = want.data(slot, p);
      if (std::memcmp(a, b, n * sizeof(Real)) != 0) {
        std::size_t i = 0;
        while (std::memcmp(a + i, b + i, sizeof(Real)) == 0) ++i;
        ADD_FAILURE() << what << ": slot " << slot << ", patch " << p << " (level "
                      << got.patch(p).level << "), field " << i / kCells << ", cell " << i % kCells
                      << ": device " << a[i] << ", host " << b[i];
        return -1;
      }
      compared += static_cast<long long>(n);
    }
  return compared;
}
long long compare_pools(const mesh::Mesh& got, const mesh::Mesh& want, const std::string& what) {
  return compare_pools(got, want, what, [](int, int) { return false; });
}

std::unique_ptr<exec::DeviceMesh> on_device(exec::Executor& ex, const mesh::Mesh& m) {
  auto dm = ex.make_resident(m);
  dm->upload(m);
  return dm;
}

const char* physics_name(bool mhd) {
  return mhd ? "MHD" : "hydro";
}

// restrict_level (one thread per parent cell, the 8 children summed in order) against
// mesh::restrict_family on every family, finest level first, as a step's end does it. Level 1
// is current in slot 1, levels 0 and 2 in slot 0: the kernel reads the children's slot and
// writes the parents'. Every real of both time levels is compared.
TEST(GpuResidentLevels, RestrictLevelEqualsRestrictFamilyBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const bool mhd : {false, true}) {
    const physics::Model model = model_of(mhd);
    mesh::Mesh m = make_mesh(model), h = make_mesh(model);
    ASSERT_EQ(m.num_levels(), 3);
    for (mesh::Mesh* x : {&m, &h}) {
      fill_random(*x, 3, true);
      x->flip_slots(1);
    }
    const auto dm = on_device(*ex, m);
    long long restricted = 0;  // parent reals that restriction changed on the host
    for (int level = m.num_levels() - 1; level >= 1; --level) {
      dm->restrict_level(m, level);
      for (const int g : h.groups(level)) {
        const Real* up = h.current(h.patch(g).parent);
        const std::vector<Real> before(up, up + h.patch_reals());
        mesh::restrict_family(h, g);
        for (std::size_t i = 0; i < before.size(); ++i) restricted += before[i] != up[i];
      }
    }
    dm->download(m, 0);
    dm->download(m, 1);
    const long long compared =
        compare_pools(m, h, std::string("restriction, ") + physics_name(mhd));
    std::printf("restriction (%s): %lld reals compared, %lld parent reals restricted\n",
                physics_name(mhd), compared, restricted);
    EXPECT_GT(compared, 0);
    EXPECT_GT(restricted, 0);
  }
}

// A smooth flow (a density band above the density thresholds, small gradients and Löhner
// estimates) with spikes of density or pressure in 40% of the patches, at random cells: a
// spike flags the cells around it, so a patch's marks depend on where in it (and in its
// neighbours' halos) the spikes are. The other time level holds another such flow.
void fill_flow(mesh::Mesh& m, const physics::Model& model, unsigned seed) {
  constexpr double k = 2 * std::numbers::pi;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Real> state(model.num_vars());
  for (int slot = 0; slot < 2; ++slot)
    for (int p = 0; p < m.num_patches(); ++p) {
      const int spike = u(rng) < 0.4 ? static_cast<int>(u(rng) * kCells) : -1;
      const bool pressure = u(rng) < 0.5;
      for (int c = 0; c < kCells; ++c) {
        const auto x = m.cell_center(p, c % kP, (c / kP) % kP, c / (kP * kP));
        const double phase = 0.7 * slot;
        physics::FlowState f;
        f.rho = 1 + 0.2 * std::sin(k * x[0] + phase) * std::cos(k * x[1]);
        f.p = 1 + 0.1 * std::cos(k * x[1] + 3 * x[2] + phase);
        f.v = {0.1 * std::sin(k * x[2]), 0.05, -0.1 * std::cos(k * x[0])};
        f.B = {0.6, 0.4 * std::sin(k * x[1]), 0.3};
        f.s[0] = 0.5;
        if (c == spike) (pressure ? f.p : f.rho) *= 1.7;
        model.to_conserved(f, state.data());
        for (int v = 0; v < model.num_vars(); ++v) m.data(slot, p)[v * kCells + c] = state[v];
      }
    }
}

// evolve/refinement.cpp's flag_patch for the criteria `c` (its gather_family and patch_halo:
// density and pressure from Model::to_primitive and Model::pressure, one layer around the
// patch, the nearest cell of the patch where the level has no block), with the functions of
// kernels/flagging.hpp it calls: the marks of child `child` of the family at `first`.
std::uint32_t host_marks(const mesh::Mesh& m, const physics::Model& model, int first, int child,
                         const kernels::FlagCriteria& c) {
  constexpr int H = kP + 2;
  std::vector<double> rho(H * H * H), pres(H * H * H);
  const mesh::NeighbourTable::Row row = m.neighbours().row(first);
  const int o[3] = {(child & 1) * kP, ((child >> 1) & 1) * kP, ((child >> 2) & 1) * kP};
  for (int t = 0; t < H * H * H; ++t) {
    const int h[3] = {t % H - 1, (t / H) % H - 1, t / (H * H) - 1};
    int x[3], b[3];
    for (int d = 0; d < 3; ++d) x[d] = o[d] + h[d], b[d] = (x[d] + kP) / kP - 1;
    int src = row[mesh::group_block(b[0], b[1], b[2])];
    if (src < 0) {
      for (int d = 0; d < 3; ++d) x[d] = o[d] + std::clamp(h[d], 0, kP - 1), b[d] = x[d] / kP;
      src = row[mesh::group_block(b[0], b[1], b[2])];
    }
    const int cell = ((x[2] - b[2] * kP) * kP + (x[1] - b[1] * kP)) * kP + (x[0] - b[0] * kP);
    Real w[kernels::kMaxVars];
    model.to_primitive(m.current(src) + cell, kCells, w);
    rho[t] = w[0];
    pres[t] = model.pressure(w);
  }
  const int r = m.patch(first + child).is_leaf() ? 0 : 1;
  const int s[3] = {1, H, H * H};
  std::uint32_t marks = 0;
  for (int k = 0; k < kP; ++k)
    for (int j = 0; j < kP; ++j)
      for (int i = 0; i < kP; ++i) {
        const int at = ((k + 1) * H + (j + 1)) * H + (i + 1);
        double num = 0, den = 0;
        bool flag = false;
        if (c.lohner_density) {
          kernels::lohner_sums<1, H, H * H>(rho.data() + at, c.filter, num, den);
          flag = kernels::lohner_exceeds(num, den, c.lohner[r]);
        }
        if (!flag && c.lohner_pressure) {
          kernels::lohner_sums<1, H, H * H>(pres.data() + at, c.filter, num, den);
          flag = kernels::lohner_exceeds(num, den, c.lohner[r]);
        }
        if (!flag && c.gradient)
          flag = kernels::relative_gradient(rho.data() + at, s) > c.gradient_threshold[r] ||
                 kernels::relative_gradient(pres.data() + at, s) > c.gradient_threshold[r];
        if (!flag && c.density) flag = rho[at] > c.density_threshold[r];
        if (!flag) continue;
        const int reach[3] = {kernels::flag_reach_axis(i, c.flag_buffer),
                              kernels::flag_reach_axis(j, c.flag_buffer),
                              kernels::flag_reach_axis(k, c.flag_buffer)};
        marks |= kernels::flag_marks(reach);
      }
  return marks;
}

struct Quiet final : Problem {
  void initial_state(const CellBox&, Real*) const override {}
};

struct FlagCase {
  const char* name;
  evolve::RefinementParams rp;
};

// Each criterion the device evaluates on its own, then all together, with refine and
// (lower) derefine thresholds, flag buffers 0 to 3 and per-level thresholds.
std::vector<FlagCase> flag_cases() {
  evolve::RefinementParams base;
  base.max_level = 3;
  std::vector<FlagCase> cases;
  auto add = [&](const char* name, auto&& set) {
    FlagCase fc{name, base};
    set(fc.rp);
    cases.push_back(fc);
  };
  using RP = evolve::RefinementParams;
  add("Lohner density and pressure",
      [](RP& rp) { rp.lohner_refine = {0.3}, rp.lohner_derefine = {0.2}, rp.flag_buffer = 2; });
  add("Lohner pressure", [](RP& rp) {
    rp.lohner_refine = {0.3}, rp.lohner_derefine = {0.2}, rp.lohner_density = false;
    rp.flag_buffer = 1;
  });
  add("Lohner density per level", [](RP& rp) {
    rp.lohner_refine = {0.3, 0.45}, rp.lohner_derefine = {0.2, 0.25}, rp.lohner_pressure = false;
    rp.lohner_filter = 0.05, rp.flag_buffer = 3;
  });
  add("gradient", [](RP& rp) {
    rp.gradient_refine = {0.15}, rp.gradient_derefine = {0.1}, rp.flag_buffer = 3;
  });
  add("density",
      [](RP& rp) { rp.density_refine = {1.15}, rp.density_derefine = {1.1}, rp.flag_buffer = 0; });
  add("all", [](RP& rp) {
    rp.lohner_refine = {0.3}, rp.lohner_derefine = {0.2}, rp.gradient_refine = {0.15};
    rp.gradient_derefine = {0.1}, rp.density_refine = {1.15}, rp.density_derefine = {1.1};
  });
  return cases;
}

// DeviceMesh::flag (one block per patch, its halo in shared memory) against flag_patch's
// criteria on the host, patch by patch (the 27 bits of the patches each marks), on every
// level, for each criterion; then plan_hierarchy with the device's marks against
// plan_hierarchy flagging on the host itself (the host's own flag_patch).
TEST(GpuResidentLevels, FlagsEqualHostFlagsBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  const Quiet quiet{};
  for (const bool mhd : {false, true}) {
    const physics::Model model = model_of(mhd);
    mesh::Mesh m = make_mesh(model);
    ASSERT_EQ(m.num_levels(), 3);
    fill_flow(m, model, 17);
    m.flip_slots(0);
    const auto dm = on_device(*ex, m);
    for (const FlagCase& fc : flag_cases()) {
      long long patches = 0, marked = 0;
      std::vector<std::vector<std::uint32_t>> given;
      for (int level = 0; level < m.num_levels(); ++level) {
        const auto c = evolve::device_flag_criteria(fc.rp, quiet, level);
        ASSERT_TRUE(c) << fc.name;
        std::vector<std::uint32_t> marks;
        dm->flag(m, level, *c, model.physics(), model.params(), marks);
        const exec::GatherTables& t = dm->tables(level);
        ASSERT_EQ(marks.size(), std::size_t(t.groups()) * mesh::kFamilySize);
        for (int g = 0; g < t.groups(); ++g)
          for (int ch = 0; ch < mesh::kFamilySize; ++ch) {
            const std::uint32_t got = marks[std::size_t(g) * mesh::kFamilySize + ch];
            ASSERT_EQ(got, host_marks(m, model, t.first_patch[g], ch, *c))
                << physics_name(mhd) << ", " << fc.name << ": level " << level << ", patch "
                << t.first_patch[g] + ch
                << (m.patch(t.first_patch[g] + ch).is_leaf() ? "" : " (refined)");
            ++patches;
            marked += got != 0;
          }
        given.push_back(std::move(marks));
      }
      const mesh::Hierarchy device =
          evolve::plan_hierarchy(m, fc.rp, model, quiet, 0.0, nullptr, nullptr, &given);
      const mesh::Hierarchy host = evolve::plan_hierarchy(m, fc.rp, model, quiet, 0.0);
      EXPECT_TRUE(device == host) << physics_name(mhd) << ", " << fc.name
                                  << ": plan_hierarchy differs with the device's marks";
      std::printf("flags (%s, %s): %lld patches' marks (%lld cells) compared, %lld nonzero\n",
                  physics_name(mhd), fc.name, patches, patches * kCells, marked);
      EXPECT_GT(marked, 0) << fc.name;
      EXPECT_LT(marked, patches) << fc.name << ": every patch marks: the data do not discriminate";
    }
  }
}

// A solver that returns given flux planes for every group: through Executor::submit_resident
// with reflux_dt they go into the device's registers (close_registers, as a refluxing pass's
// batches put them), and the test gives the same planes to FluxRegisters::close_group.
class PlaneSolver final : public exec::GroupSolver {
 public:
  PlaneSolver(int nvar, int nflux) : shape_{kernels::kGhostVl2, nvar, 1, nflux} {
    planes.resize(shape_.flux_reals());
  }
  exec::GroupShape shape() const override { return shape_; }
  std::size_t host_scratch_reals() const override { return 1; }
  std::size_t device_scratch_reals() const override { return 1; }
  void solve_host(const Real*, Real*, Real* flux, kernels::GroupResult* result,
                  Real*) const override {
    std::copy(planes.begin(), planes.end(), flux);
    *result = {};
  }
  void solve_device(const exec::DeviceBatch& b, void* stream) const override {
    const auto s = static_cast<cudaStream_t>(stream);
    for (int g = 0; g < b.count; ++g)
      check(cudaMemcpyAsync(b.flux + std::size_t(g) * planes.size(), planes.data(),
                            planes.size() * sizeof(Real), cudaMemcpyHostToDevice, s));
    check(cudaMemsetAsync(b.results, 0, std::size_t(b.count) * sizeof(kernels::GroupResult), s));
  }
  std::vector<Real> planes;  // one group's, [9][nflux][16^2]

 private:
  static void check(cudaError_t e) {
    if (e != cudaSuccess) throw Error(ErrorKind::kInternal, cudaGetErrorString(e));
  }
  exec::GroupShape shape_;
};

// The device's flux registers (close_registers, finish_fine_step, reflux) against the host's
// FluxRegisters with the same layout and the same flux planes: every group of every level
// closes random planes (levels 1 and 2 twice, a fine step finished between), then levels 1
// and 0 are refluxed. Corrections large enough that some would leave a density negative are
// withheld on both sides (counted). Every real of both time levels is compared.
TEST(GpuResidentLevels, RefluxEqualsFluxRegistersBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const bool mhd : {false, true}) {
    const physics::Model model = model_of(mhd);
    mesh::Mesh m = make_mesh(model), h = make_mesh(model);
    ASSERT_EQ(m.num_levels(), 3);
    for (mesh::Mesh* x : {&m, &h}) {
      fill_random(*x, 5, true);
      x->flip_slots(1);
    }
    exec::FluxRegisters host;
    host.build(h);
    ASSERT_GT(host.count(0), 0);
    ASSERT_GT(host.count(1), 0);
    const auto dm = on_device(*ex, m);
    dm->set_registers(m, host);
    PlaneSolver solver(m.nvar(), static_cast<int>(host.flux_vars().size()));
    const auto staging = ex->allocate(1, solver);
    std::mt19937 rng(23);
    std::uniform_real_distribution<double> u(-1, 1);
    // One group per batch: the solver's planes are the group's.
    const auto close = [&](int level) {
      const double dt = 0.04 / (1 << level);
      const exec::GatherTables& t = dm->tables(level);
      for (int g = 0; g < t.groups(); ++g) {
        for (Real& x : solver.planes) x = Real(u(rng));
        exec::Executor::ResidentBatch rb{};
        rb.first_group = g, rb.read = m.current_slot(level), rb.write = m.next_slot(level);
        rb.level = level, rb.coarse = exec::coarse_slots(m, level, 1.0);
        rb.reflux_dt = dt, rb.scatter = false;
        ex->submit_resident(solver, *staging, 1, *dm, rb);
        ex->wait(*staging);
        host.close_group(h, t.first_patch[g], solver.planes.data(), dt);
      }
    };
    for (int level = 0; level < 3; ++level) close(level);
    for (int level = 0; level < 2; ++level) {
      dm->finish_fine_step(level);
      host.finish_fine_step(level, nullptr);
    }
    close(1), close(2);  // their fine sums are added by reflux itself
    std::vector<Real> before[2];
    for (int s = 0; s < 2; ++s)
      before[s].assign(h.store().pool_data(s),
                       h.store().pool_data(s) + h.patch_reals() * h.store().pool_patches());
    long long withheld = 0;
    for (const int level : {1, 0}) {
      const long long d = dm->reflux(m, level), w = host.reflux(h, level);
      EXPECT_EQ(d, w) << physics_name(mhd) << ": corrections withheld on level " << level;
      withheld += w;
    }
    long long corrected = 0;
    for (int s = 0; s < 2; ++s)
      for (std::size_t i = 0; i < before[s].size(); ++i)
        corrected += before[s][i] != h.store().pool_data(s)[i];
    dm->download(m, 0);
    dm->download(m, 1);
    const long long compared = compare_pools(m, h, std::string("refluxing, ") + physics_name(mhd));
    std::printf(
        "refluxing (%s): %d + %d registers, %lld reals compared, %lld corrected, %lld "
        "corrections withheld\n",
        physics_name(mhd), host.count(0), host.count(1), compared, corrected, withheld);
    EXPECT_GT(compared, 0);
    EXPECT_GT(corrected, 0);
    EXPECT_GT(withheld, 0);
  }
}

// DeviceMesh::regrid against the host's regrid (Mesh::apply_hierarchy, then
// mesh::prolong_family for each new family, coarse to fine), twice: the refined spheres move
// and grow (families added on levels 1 and 2, some new level-2 ones under new level-1 ones),
// then shrink (families removed, others moved into their holes, a few added). Level 0 is
// current in slot 1. Compared after each: the new families' current state, both time levels
// of every other family, and the largest signal speed of each level's new families; positive
// data (limited slopes) and random signs (injection where a child would not be admissible).
TEST(GpuResidentLevels, RegridProlongationEqualsProlongFamilyBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const bool mhd : {false, true})
    for (const bool positive : {true, false}) {
      const physics::Model model = model_of(mhd);
      mesh::Mesh m = make_mesh(model), h = make_mesh(model);
      ASSERT_EQ(m.num_levels(), 3);
      const mesh::Mesh grown = make_mesh(model, {0.35, 0.4, 0.25}, {0.33, 0.2});
      const mesh::Mesh shrunk = make_mesh(model, {0.45, 0.55, 0.3}, {0.25, 0.12});
      for (mesh::Mesh* x : {&m, &h}) {
        fill_random(*x, positive ? 7 : 11, positive);
        x->flip_slots(0);
      }
      // The device pools mirror the host pool's capacity: room for every new family.
      m.reserve_families(
          (m.num_patches() + grown.num_patches() + shrunk.num_patches()) / mesh::kFamilySize + 64);
      const auto dm = on_device(*ex, m);
      long long added[3] = {0, 0, 0}, moved = 0, new_reals = 0;
      for (const mesh::Mesh* target : {&grown, &shrunk}) {
        const mesh::Hierarchy to = target->hierarchy();
        bool reallocated = false;
        const mesh::MeshChange change =
            m.apply_hierarchy(to, [&](std::size_t) { reallocated = true; });
        ASSERT_FALSE(reallocated);
        std::vector<double> speeds;
        ASSERT_TRUE(dm->regrid(m, change, {}, model.physics(), model.params(), speeds));
        const mesh::MeshChange host_change = h.apply_hierarchy(to);
        ASSERT_EQ(change.added, host_change.added);
        ASSERT_EQ(change.moves, host_change.moves);
        std::vector<double> host_speeds(h.num_levels(), 0.0);
        std::vector<char> is_new(h.num_patches(), 0);
        mesh::CoarseBox scratch;
        for (int level = 1; level < h.num_levels(); ++level)
          for (const int first : host_change.added[level]) {
            mesh::prolong_family(h, first, scratch);
            added[level] += 1;
            for (int c = 0; c < mesh::kFamilySize; ++c) {
              is_new[first + c] = 1;
              for (int i = 0; i < kCells; ++i)
                host_speeds[level] = std::max(
                    host_speeds[level], model.max_signal_speed(h.current(first + c) + i, kCells));
            }
          }
        moved += change.moved_families;
        dm->download(m, 0);
        dm->download(m, 1);
        // A new family's other time level holds nothing yet: not compared, and the host copy
        // takes the device's values there (a later move carries them).
        const auto unset = [&](int slot, int p) {
          return is_new[p] && slot != h.current_slot(h.patch(p).level);
        };
        const long long compared = compare_pools(
            m, h, std::string("regrid, ") + physics_name(mhd) + (positive ? ", positive" : ""),
            [&](int slot, int p) {
              if (unset(slot, p)) return true;
              if (is_new[p]) new_reals += static_cast<long long>(h.patch_reals());
              return false;
            });
        ASSERT_GT(compared, 0);
        for (int slot = 0; slot < 2; ++slot)
          for (int p = 0; p < h.num_patches(); ++p)
            if (unset(slot, p)) std::copy_n(m.data(slot, p), h.patch_reals(), h.data(slot, p));
        if (positive) {
          for (int level = 1; level < h.num_levels(); ++level)
            EXPECT_EQ(speeds.at(level), host_speeds[level])
                << physics_name(mhd) << ": largest signal speed of level " << level
                << "'s new families";
        }
        std::printf(
            "regrid (%s, %s): %d families added, %d removed, %d moved; %lld reals compared, "
            "%lld so far in new families\n",
            physics_name(mhd), positive ? "positive" : "random signs", change.added_families,
            change.removed_families, change.moved_families, compared, new_reals);
      }
      EXPECT_GT(added[1], 0);
      EXPECT_GT(added[2], 0);
      EXPECT_GT(moved, 0);
      EXPECT_GT(new_reals, 0);
    }
}

}  // namespace
}  // namespace tessera
