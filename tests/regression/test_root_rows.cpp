// The root density's and potential's moves between ranks as rows (SelfGravity::density_rows
// and potential_rows, src/gravity/device_rows.hpp), which a device-resident run on several
// ranks makes GPU to GPU. Applied here to host arrays (move_rows) on 2, 3 and 4 virtual
// ranks, for meshes without and with refinement, periodic and isolated: the density rows
// fill each rank's slab planes with the root density of one rank's mesh, bit for bit, and
// the potential rows fill exactly the boxes around the root families each rank holds (its
// own and its buffer copies; RootBoxes' layout, what the rank keeps of a solve) with the
// sending slab's values of those cells. The GPU path itself is checked by the GPU tests
// (GpuResident.*Self Gravity*, mpi_test.sh with the CUDA backend).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "run_problem.hpp"
#include "src/gravity/device_rows.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/root_boxes.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera {
namespace {

constexpr int kN = mesh::kPatchSize;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Params load(const std::string& file, std::vector<std::string> overrides) {
  set_log_quiet(true);
  overrides.push_back("output.enabled=false");
  overrides.push_back("run.backend=cpu");
  return load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/" + file, overrides);
}

// The density of root patch p as the root solve takes it: rho, plus the correction's source.
double density(const mesh::Mesh& m, int p, int a, int source_field) {
  const Real* u = m.current(p);
  return source_field >= 0
             ? double(u[a]) + double(u[std::size_t(source_field) * mesh::kPatchCells + a])
             : double(u[a]);
}

struct RankResult {
  long long density_wrong = 0, density_cells = 0;
  long long potential_wrong = 0, potential_cells = 0;
  long long buffer_families = 0;  // root families held but not owned
  long long kept = 0;             // the root potential's values the rank keeps per solve
};

void expect_rows_move_the_root(const std::string& file, const std::vector<std::string>& ov,
                               bool with_source = false) {
  const Params params = load(file, ov);
  evolve::Simulation serial(params);
  serial.initialize();
  const mesh::Mesh& one = serial.mesh();
  const auto n = one.geometry().root_cells;
  const int source = serial.gravity()->source_field();
  ASSERT_EQ(source >= 0, with_source) << file << ": the correction's source field";
  const std::size_t plane = std::size_t(n[0]) * n[1];
  std::vector<double> rho(plane * n[2], kNaN);
  for (const int g : one.groups(0))
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      const auto o = one.patch(g + c).corner;
      for (int a = 0; a < int(mesh::kPatchCells); ++a)
        rho[(std::size_t(o[2] + a / (kN * kN)) * n[1] + o[1] + (a / kN) % kN) * n[0] + o[0] +
            a % kN] = density(one, g + c, a, source);
    }
  const int g0 = n[0] + 2, g1 = n[1] + 2;
  const std::size_t gplane = std::size_t(g1) * g0;
  for (const int ranks : {2, 3, 4}) {
    parallel::VirtualRanks vr(ranks);
    std::vector<RankResult> got(ranks);
    vr.run([&](parallel::Comm& comm) {
      evolve::Simulation sim(params, comm);
      sim.initialize();
      const mesh::Mesh& m = sim.mesh();
      const gravity::SelfGravity& grav = *sim.gravity();
      gravity::SlabPoisson solver(n, 1.0, grav.periodic(), comm);
      RankResult& r = got[comm.rank()];
      // The density: this rank's own root patches, in canonical order, into its planes.
      std::vector<double> own;
      for (const int g : m.groups(0))
        if (sim.partition().owns(comm.rank(), g))
          for (int c = 0; c < mesh::kFamilySize; ++c)
            for (int a = 0; a < int(mesh::kPatchCells); ++a)
              own.push_back(density(m, g + c, a, source));
      std::vector<double> planes(std::size_t(solver.planes()) * plane, kNaN);
      gravity::move_rows(grav.density_rows(m, solver), comm, own.data(), planes.data());
      const double* want = rho.data() + std::size_t(solver.first_plane()) * plane;
      for (std::size_t i = 0; i < planes.size(); ++i)
        r.density_wrong += std::memcmp(&planes[i], &want[i], sizeof(double)) != 0;
      r.density_cells = static_cast<long long>(planes.size());
      // The potential: each slab cell carries its ghosted index; a reader must receive it
      // in the boxes around the root families it holds, and nothing else.
      std::vector<double> slab(std::size_t(solver.ghosted_planes()) * gplane);
      for (std::size_t i = 0; i < slab.size(); ++i)
        slab[i] = double(std::size_t(solver.first_ghosted()) * gplane + i);
      // The reader's boxes, laid out as the rank reads them (SelfGravity::boxes, from the
      // last solve of initialize(): the same families).
      constexpr int kBox = gravity::RootBoxes::kBox;
      const gravity::RootBoxes layout = grav.boxes();
      const auto plan = grav.potential_rows(m, solver);
      std::vector<double> phi(std::size_t(plan.destination_size), kNaN);
      gravity::move_rows(plan, comm, slab.data(), phi.data());
      std::size_t box = 0;
      for (const int g : m.groups(0)) {
        if (!m.holds(g)) continue;
        r.buffer_families += !sim.partition().owns(comm.rank(), g);
        std::array<int, 3> c = m.patch(g).corner;
        for (int p = 1; p < mesh::kFamilySize; ++p)
          for (int d = 0; d < 3; ++d) c[d] = std::min(c[d], m.patch(g + p).corner[d]);
        // Cells c - 1 .. c + 2 kN: ghosted indices c .. c + 2 kN + 1.
        for (int k = 0; k < kBox; ++k)
          for (int j = 0; j < kBox; ++j)
            for (int i = 0; i < kBox; ++i) {
              const double want = double((std::size_t(c[2] + k) * g1 + c[1] + j) * g0 + c[0] + i);
              const double got_value =
                  phi.at(layout.at(c[0] + i - 1, c[1] + j - 1, c[2] + k - 1, c[0], c[1], c[2]));
              r.potential_wrong += std::memcmp(&got_value, &want, sizeof want) != 0;
              ++r.potential_cells;
            }
        ++box;
      }
      // The plan's room is the rank's boxes (its gathered boxes against follow_held's).
      r.potential_wrong +=
          std::llabs(static_cast<long long>(phi.size()) -
                     static_cast<long long>(layout.boxes * gravity::RootBoxes::kBoxCells));
      r.potential_wrong +=
          std::llabs(static_cast<long long>(box) - static_cast<long long>(layout.boxes));
      // And the boxes are what the rank keeps of a solve.
      r.kept = static_cast<long long>(grav.potential_values());
    });
    long long buffers = 0;
    for (int q = 0; q < ranks; ++q) {
      SCOPED_TRACE(file + ", " + std::to_string(ranks) + " ranks, rank " + std::to_string(q));
      EXPECT_EQ(got[q].density_wrong, 0) << "of " << got[q].density_cells << " density cells";
      EXPECT_EQ(got[q].potential_wrong, 0) << "of " << got[q].potential_cells << " boxed cells";
      EXPECT_GT(got[q].potential_cells, 0);
      // The rank keeps its boxes (and the NaN after them), not the whole grid.
      EXPECT_EQ(got[q].kept, got[q].potential_cells + 1);
      buffers += got[q].buffer_families;
    }
    EXPECT_GT(buffers, 0) << ranks << " ranks: no rank holds another's root family";
  }
}

TEST(RootRows, UniformPeriodicJeansWave) {
  expect_rows_move_the_root("jeans_wave/jeans_wave.toml",
                            {"mesh.nx=[48,32,16]", "mesh.xmax=[1.5,1,0.5]", "run.max_steps=1"});
}

TEST(RootRows, UniformIsolatedSphere) {
  expect_rows_move_the_root("uniform_sphere/uniform_sphere.toml",
                            {"mesh.nx=[32,32,32]", "amr.max_level=0", "run.max_steps=1"});
}

// With refinement the correction's source field is part of the density.
TEST(RootRows, AdaptiveIsolatedBlob) {
  expect_rows_move_the_root(
      "blob/blob.toml",
      {"mesh.nx=[32,16,16]", "mesh.xmax=[1,0.5,0.5]", "problem.center=[0.3,0.25,0.25]",
       "problem.width=0.05", "amr.max_level=2", "gravity.enabled=true", "run.max_steps=1"},
      true);
}

}  // namespace
}  // namespace tessera
