// A refined level's potential on the GPU (src/gravity/device_potential.hpp) against the
// host, bit for bit: the SOR's input boxes gathered from the device pool against
// gravity::gather_potential_tables (itself equal to gather_potential on the CPU:
// tests/unit/test_potential_gather.cpp), and the kicks of a refined level against
// SelfGravity::kick_refined, with their time-step speed. On the CPU test's meshes: two
// refined levels next to outflow, reflecting and periodic sides, an isolated root (whose
// exterior potential bounds level 1's boxes) and a periodic one; weights 1, 0 and 0.375.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../nested_mesh.hpp"
#include "kernels/poisson_sor.hpp"
#include "src/gravity/device_correction.hpp"
#include "src/gravity/device_potential.hpp"
#include "src/gravity/potential_tables.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/physics/model.hpp"

namespace tessera {
namespace {

using mesh::Boundary;
constexpr Boundary P = Boundary::kPeriodic, O = Boundary::kOutflow, R = Boundary::kReflecting;

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

struct Case {
  const char* name;
  std::vector<std::array<Boundary, 2>> sides;
  std::array<double, 3> centre;
  bool periodic_gravity;
  std::vector<double> radii = {0.3, 0.17};
};

const Case kCases[] = {
    {"isolated, outflow and reflecting sides", {{O, O}, {R, R}, {O, R}}, {0.05, 0.06, 0.04}, false},
    {"isolated, periodic along x", {{P, P}, {O, O}, {R, R}}, {0.06, 0.93, 0.94}, false},
    {"periodic", {{P, P}, {P, P}, {P, P}}, {0.5, 0.5, 0.5}, true, {0.5, 0.2}}};

// A self-gravitating run's fields on the case's 3-level mesh with random data (positive
// densities), after two root solves of different densities.
struct GravityMesh {
  Params params;
  physics::Model model;
  mesh::Mesh m;
  int phi = -1, source = -1;
  gravity::SelfGravity root;
  static Params params_of(const Case& c) {
    std::vector<std::string> ov = {
        "mesh.nx=[48,48,48]", "amr.max_level=2",
        std::string("gravity.boundary=") + (c.periodic_gravity ? "periodic" : "isolated")};
    for (const char* side : {"xlo", "xhi", "ylo", "yhi", "zlo", "zhi"})
      ov.push_back(std::string("mesh.bc_") + side + "=" +
                   (c.periodic_gravity ? "periodic" : "outflow"));
    return load_run_params(
        std::string(TESSERA_SOURCE_DIR) + "/problems/uniform_sphere/uniform_sphere.toml", ov);
  }
  static mesh::Mesh mesh_of(const Case& c, const Params& p) {
    mesh::testing::NestedSpec spec;
    spec.cells = {48, 48, 48};
    spec.sides = c.sides;
    spec.centre = c.centre;
    spec.radii = c.radii;
    return mesh::testing::nested_mesh(spec, evolve::run_fields(p));
  }
  explicit GravityMesh(const Case& c)
      : params(params_of(c)),
        model(params),
        m(mesh_of(c, params)),
        phi(m.fields().find(gravity::kPotentialField)),
        source(m.fields().find(gravity::kCorrectionField)),
        root(params, model, m.geometry(), phi, source, false) {
    for (const unsigned seed : {3u, 7u}) {
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> u(0.5, 1.5);
      for (int slot = 0; slot < 2; ++slot)
        for (int p = 0; p < m.num_patches(); ++p)
          for (int i = 0; i < m.nvar() * mesh::kPatchCells; ++i)
            m.data(slot, p)[i] = Real(u(rng) + (i / mesh::kPatchCells == 4 ? 40 : 0));
      root.solve(m);
    }
  }
};

// The root's ghosted potential of the last two solves in device memory (from
// SelfGravity::exterior at weights 1 and 0).
struct DeviceRoot {
  double* phi = nullptr;
  double* prev = nullptr;
  gravity::DeviceRootPotential view;
  DeviceRoot(const mesh::Mesh& m, const gravity::SelfGravity& root) {
    const auto n = m.geometry().root_cells;
    std::vector<double> now, before;
    for (int k = -1; k <= n[2]; ++k)
      for (int j = -1; j <= n[1]; ++j)
        for (int i = -1; i <= n[0]; ++i) {
          now.push_back(root.exterior(i, j, k, 1.0));
          before.push_back(root.exterior(i, j, k, 0.0));
        }
    const std::size_t bytes = now.size() * sizeof(double);
    if (cudaMalloc(reinterpret_cast<void**>(&phi), bytes) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&prev), bytes) != cudaSuccess ||
        cudaMemcpy(phi, now.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(prev, before.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess)
      throw Error(ErrorKind::kInternal, "the root's potential on the device");
    view = {phi, prev, gravity::RootBoxes{n[0], n[1], n[2]}};  // the whole ghosted grid
  }
  ~DeviceRoot() {
    cudaFree(phi);
    cudaFree(prev);
  }
};

// The parent's boxes alone (the passes every other kernel here interpolates from) against
// parent_potential_box: which pass differs shows in where the first differing cells lie.
TEST(GpuResidentPotential, ParentBoxesEqualTheHostBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const Case& c : kCases) {
    GravityMesh s(c);
    auto dm = ex->make_resident(s.m);
    dm->upload(s.m);
    const DeviceRoot droot(s.m, s.root);
    const auto dp = gravity::make_device_potential();
    constexpr int n = kernels::kPotentialBox;
    constexpr std::size_t cells = kernels::kPotentialBoxCells;
    long long compared = 0, differ = 0;
    for (int level = 1; level < s.m.num_levels(); ++level) {
      const gravity::PotentialTables t =
          gravity::build_potential_tables(s.m, level, nullptr, &s.root);
      dp->set_tables(s.m, t);
      Real* boxes = nullptr;
      CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&boxes), t.groups() * cells * sizeof(Real)));
      std::vector<Real> got(t.groups() * cells), want(cells);
      for (const double w : {1.0, 0.0, 0.375}) {
        dp->parent_boxes(s.m, *dm, s.phi, w, droot.view, boxes);
        CUDA_OK(cudaMemcpy(got.data(), boxes, got.size() * sizeof(Real), cudaMemcpyDeviceToHost));
        for (int g = 0; g < t.groups(); ++g) {
          gravity::parent_potential_box(s.m, t, g, s.phi, w, want.data(), &s.root);
          int shown = 0;
          for (std::size_t i = 0; i < cells; ++i) {
            const Real d = got[std::size_t(g) * cells + i];
            if (std::memcmp(&want[i], &d, sizeof(Real)) == 0) continue;
            ++differ;
            if (differ > 40 || shown++ >= 8) continue;
            const auto& pl = t.place[g];
            ADD_FAILURE() << c.name << ": level " << level << ", group " << g << " (parent corner "
                          << pl.corner[0] << " " << pl.corner[1] << " " << pl.corner[2]
                          << "), weight " << w << ", box cell (" << i % n << ", " << i / n % n
                          << ", " << i / (n * n) << "): host " << want[i] << ", device " << d;
          }
          compared += static_cast<long long>(cells);
        }
      }
      cudaFree(boxes);
    }
    std::printf("%s: %lld parent box cells compared, %lld differ\n", c.name, compared, differ);
    EXPECT_EQ(differ, 0) << c.name;
    EXPECT_GT(compared, 0);
  }
}

TEST(GpuResidentPotential, SorBoxesEqualTheHostGatherBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const Case& c : kCases) {
    GravityMesh s(c);
    ASSERT_EQ(s.m.num_levels(), 3) << c.name;
    auto dm = ex->make_resident(s.m);
    dm->upload(s.m);
    const DeviceRoot droot(s.m, s.root);
    const auto dp = gravity::make_device_potential();
    constexpr std::size_t n3 = kernels::box_cells(1);
    long long compared = 0;
    for (int level = 1; level < s.m.num_levels(); ++level) {
      const gravity::PotentialTables t =
          gravity::build_potential_tables(s.m, level, nullptr, &s.root);
      dp->set_tables(s.m, t);
      const int groups = t.groups();
      Real* boxes = nullptr;
      CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&boxes),
                         std::size_t(groups) * 2 * n3 * sizeof(Real)));
      std::vector<Real> got(std::size_t(groups) * 2 * n3), rho(n3), phi(n3);
      for (const double w : {1.0, 0.0, 0.375})
        for (const bool coarse_ghosts : {true, false}) {
          // Two batches: the tables' offset is read too.
          const int half = groups / 2;
          dp->gather(s.m, *dm, 0, half, s.phi, s.source, w, coarse_ghosts, droot.view, boxes,
                     nullptr);
          dp->gather(s.m, *dm, half, groups - half, s.phi, s.source, w, coarse_ghosts, droot.view,
                     boxes + std::size_t(half) * 2 * n3, nullptr);
          CUDA_OK(cudaDeviceSynchronize());
          CUDA_OK(cudaMemcpy(got.data(), boxes, got.size() * sizeof(Real), cudaMemcpyDeviceToHost));
          for (int g = 0; g < groups; ++g) {
            gravity::gather_potential_tables(s.m, t, g, s.phi, w, rho.data(), phi.data(),
                                             coarse_ghosts, s.source, &s.root);
            const Real* d_rho = got.data() + std::size_t(g) * 2 * n3;
            const Real* d_phi = d_rho + n3;
            constexpr int n = kernels::kSorBox;
            for (std::size_t i = 0; i < n3; ++i) {
              ASSERT_EQ(std::memcmp(&phi[i], &d_phi[i], sizeof(Real)), 0)
                  << c.name << ": level " << level << ", group " << g << ", weight " << w
                  << (coarse_ghosts ? ", coarse ghosts" : ", neighbours") << ", box cell " << i
                  << ": host " << phi[i] << ", device " << d_phi[i];
              const int x = int(i % n), y = int(i / n % n), z = int(i / (n * n));
              if (x > 0 && y > 0 && z > 0 && x < n - 1 && y < n - 1 && z < n - 1) {
                ASSERT_EQ(std::memcmp(&rho[i], &d_rho[i], sizeof(Real)), 0)
                    << c.name << ": density, level " << level << ", group " << g;
              }
            }
            compared += static_cast<long long>(n3);
          }
        }
      cudaFree(boxes);
    }
    std::printf("%s: %lld potential box cells compared\n", c.name, compared);
    EXPECT_GT(compared, 0);
  }
}

TEST(GpuResidentPotential, RefinedKicksEqualKickRefinedBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const Case& c : kCases) {
    GravityMesh host(c), device(c);
    ASSERT_EQ(host.m.num_levels(), 3) << c.name;
    auto dm = ex->make_resident(device.m);
    dm->upload(device.m);
    const DeviceRoot droot(device.m, device.root);
    const auto dp = gravity::make_device_potential();
    long long compared = 0;
    for (int level = 1; level < host.m.num_levels(); ++level) {
      const double w = level == 1 ? 0.375 : 1.0, dt = 1e-3;
      const double want = host.root.kick_refined(host.m, level, dt, w);  // every group of the level
      dp->set_tables(device.m,
                     gravity::build_potential_tables(device.m, level, nullptr, &device.root));
      const double got = dp->kick(device.m, *dm, device.phi, w, dt, device.model.physics(),
                                  device.model.params(), droot.view);
      EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0)
          << c.name << ", level " << level << ": speed " << want << " vs " << got;
      dm->download(device.m, device.m.current_slot(level));
      const int slot = host.m.current_slot(level);
      long long differ = 0;
      for (const int g : host.m.groups(level))
        for (int ch = 0; ch < mesh::kFamilySize; ++ch) {
          const Real* x = host.m.data(slot, g + ch);
          const Real* y = device.m.data(slot, g + ch);
          compared += static_cast<long long>(host.m.patch_reals());
          if (std::memcmp(x, y, host.m.patch_reals() * sizeof(Real)) == 0) continue;
          if (differ++ < 3)
            for (std::size_t i = 0, shown = 0; i < host.m.patch_reals() && shown < 4; ++i)
              if (std::memcmp(x + i, y + i, sizeof(Real)) != 0 && shown++ < 4) {
                const auto& pc = host.m.patch(g + ch);
                const int cell = int(i % mesh::kPatchCells);
                ADD_FAILURE() << c.name << ", level " << level << ", patch at " << pc.corner[0]
                              << " " << pc.corner[1] << " " << pc.corner[2] << ", field "
                              << i / mesh::kPatchCells << ", cell " << cell % mesh::kPatchSize
                              << " " << cell / mesh::kPatchSize % mesh::kPatchSize << " "
                              << cell / (mesh::kPatchSize * mesh::kPatchSize) << ": host " << x[i]
                              << ", device " << y[i];
              }
        }
      EXPECT_EQ(differ, 0) << c.name << ", level " << level << ": patches that differ";
    }
    std::printf("%s: %lld reals compared after the kicks\n", c.name, compared);
    EXPECT_GT(compared, 0);
  }
}

// The potential correction's coarse change prolonged and added on the device against the
// host's add_coarse_change.
TEST(GpuResidentPotential, CoarseChangeEqualsAddCoarseChangeBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const Case& c : kCases) {
    GravityMesh host(c), device(c);
    auto dm = ex->make_resident(device.m);
    dm->upload(device.m);
    const auto dp = gravity::make_device_potential();
    long long compared = 0, changed = 0;
    for (int level = 1; level < host.m.num_levels(); ++level) {
      const int slot = host.m.current_slot(level);
      std::vector<Real> before;
      for (const int g : host.m.groups(level))
        for (int ch = 0; ch < mesh::kFamilySize; ++ch)
          before.insert(before.end(), host.m.data(slot, g + ch),
                        host.m.data(slot, g + ch) + host.m.patch_reals());
      gravity::add_coarse_change(host.m, level, host.phi);
      dp->set_tables(device.m,
                     gravity::build_potential_tables(device.m, level, nullptr, &device.root));
      dp->add_coarse_change(device.m, *dm, device.phi);
      dm->download(device.m, slot);
      std::size_t at = 0;
      for (const int g : host.m.groups(level))
        for (int ch = 0; ch < mesh::kFamilySize; ++ch) {
          const Real* x = host.m.data(slot, g + ch);
          const Real* y = device.m.data(slot, g + ch);
          for (std::size_t i = 0; i < host.m.patch_reals(); ++i, ++at) {
            ASSERT_EQ(std::memcmp(x + i, y + i, sizeof(Real)), 0)
                << c.name << ": level " << level << ", patch " << g + ch << ", value " << i;
            changed += x[i] != before[at];
          }
          compared += static_cast<long long>(host.m.patch_reals());
        }
    }
    std::printf("%s: %lld reals compared, %lld changed by the coarse change\n", c.name, compared,
                changed);
    EXPECT_GT(changed, 0);
  }
}

// The potential correction's terms (fine_terms) and source (correction_source) on the
// device against the host's, level by level from the finest as the correction's cycle goes
// (a level's source enters the terms of the level below).
TEST(GpuResidentPotential, CorrectionTermsAndSourceEqualTheHostBitForBit) {
  const auto ex = exec::make_cuda_executor(0, 0);
  for (const Case& c : kCases) {
    GravityMesh host(c), device(c);
    auto dm = ex->make_resident(device.m);
    dm->upload(device.m);
    const DeviceRoot droot(device.m, device.root);
    const auto dc = gravity::make_device_correction();
    const double four_pi_g = host.root.four_pi_g(), mean = host.root.mean_density();
    long long terms_compared = 0, source_compared = 0, nonzero = 0;
    for (int level = host.m.num_levels() - 2; level >= 0; --level) {
      const auto want =
          gravity::fine_terms(host.m, level, host.phi, host.source, four_pi_g, &host.root);
      gravity::correction_source(host.m, level, host.phi, host.source, four_pi_g, want, &host.root);
      const gravity::PotentialTables t =
          gravity::build_potential_tables(device.m, level + 1, nullptr, &device.root);
      dc->set_tables(device.m, t);
      dc->fine_terms(device.m, *dm, device.phi, device.source, four_pi_g, mean, droot.view);
      const std::vector<double> got = dc->terms();
      for (int g = 0; g < t.groups(); ++g) {
        const double* w = want.at(host.m.patch(t.first_patch[g]).parent);
        const double* d = got.data() + std::size_t(g) * gravity::CorrectionTerms::kReals;
        for (std::size_t i = 0; i < gravity::CorrectionTerms::kReals; ++i)
          ASSERT_EQ(std::memcmp(&w[i], &d[i], sizeof(double)), 0)
              << c.name << ": terms of level " << level << ", group " << g << ", term " << i
              << ": host " << w[i] << ", device " << d[i];
        terms_compared += gravity::CorrectionTerms::kReals;
      }
      dc->correction_source(device.m, *dm, device.phi, device.source, four_pi_g, mean, droot.view);
      const int slot = host.m.current_slot(level);
      dm->download(device.m, slot);
      for (const int first : host.m.groups(level))
        for (int ch = 0; ch < mesh::kFamilySize; ++ch) {
          const Real* x =
              host.m.data(slot, first + ch) + std::size_t(host.source) * mesh::kPatchCells;
          const Real* y =
              device.m.data(slot, first + ch) + std::size_t(host.source) * mesh::kPatchCells;
          for (int i = 0; i < mesh::kPatchCells; ++i) {
            ASSERT_EQ(std::memcmp(x + i, y + i, sizeof(Real)), 0)
                << c.name << ": source of level " << level << ", patch " << first + ch << ", cell "
                << i << ": host " << x[i] << ", device " << y[i];
            nonzero += x[i] != 0;
          }
          source_compared += mesh::kPatchCells;
        }
    }
    std::printf("%s: %lld terms and %lld source cells compared (%lld not zero)\n", c.name,
                terms_compared, source_compared, nonzero);
    EXPECT_GT(nonzero, 0);
  }
}

}  // namespace
}  // namespace tessera
