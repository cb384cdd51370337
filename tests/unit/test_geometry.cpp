// Unit tests of geometry_from_params (tessera/mesh/geometry.hpp): the domain read from
// [mesh], its validation (cubic cells, two-sided periodicity) and the boundary names.
#include "tessera/mesh/geometry.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/evolve/schema.hpp"

namespace tessera::mesh {
namespace {

// A minimal valid parameter file; `mesh` is appended to the [mesh] section.
std::string toml(const std::string& mesh) {
  return "[run]\nt_end = 1.0\n\n[mesh]\nnx = [32, 16, 48]\n" + mesh +
         "\n[problem]\nname = \"uniform\"\n";
}

Geometry geometry(const std::string& mesh, const std::vector<std::string>& overrides = {}) {
  return geometry_from_params(
      load_params_from_string(toml(mesh), "test.toml", overrides, parameter_schema()));
}

// Runs `f`, which must throw tessera::Error(kInput); returns its message.
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(Geometry, CubicCellsGiveRootCellsAndCellWidth) {
  const Geometry g = geometry("xmin = [-1.0, 0.0, 2.0]\nxmax = [1.0, 1.0, 5.0]\n");
  EXPECT_EQ(g.root_cells, (std::array<int, 3>{32, 16, 48}));
  EXPECT_DOUBLE_EQ(g.dx0, 2.0 / 32);
  EXPECT_DOUBLE_EQ(g.dx(1), 1.0 / 32);
  EXPECT_DOUBLE_EQ(g.dx(3), 0.25 / 32);
  EXPECT_EQ(g.xmin, (std::array<double, 3>{-1.0, 0.0, 2.0}));
  EXPECT_EQ(g.xmax, (std::array<double, 3>{1.0, 1.0, 5.0}));
  EXPECT_EQ(g.root_cell_count(), 32LL * 16 * 48);
}

TEST(Geometry, BoundariesDefaultToPeriodic) {
  const Geometry g = geometry("xmax = [2.0, 1.0, 3.0]\n");
  for (int d = 0; d < 3; ++d) {
    EXPECT_TRUE(g.periodic(d)) << d;
    EXPECT_EQ(g.boundary[d][1], Boundary::kPeriodic) << d;
  }
}

TEST(Geometry, BoundaryNamesMapToEachFace) {
  const Geometry g = geometry(
      "xmax = [2.0, 1.0, 3.0]\nbc_xlo = \"outflow\"\nbc_xhi = \"reflecting\"\n"
      "bc_zlo = \"reflecting\"\nbc_zhi = \"reflecting\"\n");
  EXPECT_EQ(g.boundary[0][0], Boundary::kOutflow);
  EXPECT_EQ(g.boundary[0][1], Boundary::kReflecting);
  EXPECT_TRUE(g.periodic(1));
  EXPECT_EQ(g.boundary[2][0], Boundary::kReflecting);
  EXPECT_EQ(g.boundary[2][1], Boundary::kReflecting);
  EXPECT_FALSE(g.periodic(0));
  EXPECT_FALSE(g.periodic(2));
  // And through command-line overrides.
  const Geometry o =
      geometry("xmax = [2.0, 1.0, 3.0]\n", {"mesh.bc_ylo=outflow", "mesh.bc_yhi=outflow"});
  EXPECT_EQ(o.boundary[1][0], Boundary::kOutflow);
  EXPECT_EQ(o.boundary[1][1], Boundary::kOutflow);
}

TEST(Geometry, NonCubicCellsAreRejectedNamingCubic) {
  // The default unit box with 32 x 16 x 48 cells has cells of three different widths.
  const std::string msg = input_error([] { geometry(""); });
  EXPECT_NE(msg.find("cubic"), std::string::npos) << msg;
  // A mismatch along z alone is caught too.
  const std::string msg_z = input_error([] { geometry("xmax = [2.0, 1.0, 3.1]\n"); });
  EXPECT_NE(msg_z.find("cubic"), std::string::npos) << msg_z;
  EXPECT_NE(msg_z.find("along z"), std::string::npos) << msg_z;
}

TEST(Geometry, CellWidthsEqualToRoundOffAreAccepted) {
  // 0.2 / 32 and 0.3 / 48 differ in the last bit; the check must tolerate that.
  EXPECT_NO_THROW(geometry("xmax = [0.2, 0.1, 0.3]\n"));
}

TEST(Geometry, OneSidedPeriodicityIsRejected) {
  for (const char* bcs : {"bc_xlo = \"outflow\"\n", "bc_yhi = \"reflecting\"\n",
                          "bc_zlo = \"periodic\"\nbc_zhi = \"outflow\"\n"}) {
    const std::string msg =
        input_error([&] { geometry(std::string("xmax = [2.0, 1.0, 3.0]\n") + bcs); });
    EXPECT_NE(msg.find("periodic"), std::string::npos) << msg;
  }
  const std::string msg = input_error(
      [] { geometry("xmax = [2.0, 1.0, 3.0]\nbc_ylo = \"periodic\"\nbc_yhi = \"outflow\"\n"); });
  EXPECT_NE(msg.find("mesh.bc_ylo"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mesh.bc_yhi"), std::string::npos) << msg;
}

TEST(Geometry, EmptyOrInvertedExtentIsRejected) {
  const std::string msg = input_error([] { geometry("xmin = [0.0, 1.0, 0.0]\n"); });
  EXPECT_NE(msg.find("xmax"), std::string::npos) << msg;
}

TEST(Geometry, BoundaryNamesRoundTrip) {
  for (Boundary b : {Boundary::kPeriodic, Boundary::kOutflow, Boundary::kReflecting})
    EXPECT_EQ(parse_boundary(boundary_name(b)), b);
  const std::string msg = input_error([] { parse_boundary("open"); });
  EXPECT_NE(msg.find("open"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera::mesh
