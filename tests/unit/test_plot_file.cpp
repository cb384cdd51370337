// Unit tests of the .athdf/.xdmf plot-file writer: the file is read back with the HDF5 C API
// and checked against the layout yt's athena_pp frontend expects (names, types, shapes).
#include "tessera/io/plot_file.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::io {
namespace {

namespace fs = std::filesystem;

// Closes an HDF5 identifier at scope exit, so a failed ASSERT leaks nothing.
class H5Id {
 public:
  H5Id(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*closer_)(hid_t);
};

// Type class, size and shape of an attribute or a dataset, read from the file.
struct Shape {
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t type_size = 0;
  bool variable_string = false;
  std::vector<hsize_t> dims;  // empty: scalar
};

Shape shape_of(hid_t type_id, hid_t space_id) {
  Shape s;
  s.type_class = H5Tget_class(type_id);
  s.type_size = H5Tget_size(type_id);
  s.variable_string = s.type_class == H5T_STRING && H5Tis_variable_str(type_id) > 0;
  const int rank = H5Sget_simple_extent_ndims(space_id);
  s.dims.resize(rank > 0 ? rank : 0);
  if (rank > 0) H5Sget_simple_extent_dims(space_id, s.dims.data(), nullptr);
  return s;
}

class PlotFileReader {
 public:
  explicit PlotFileReader(const std::string& path)
      : file_(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose) {}
  bool ok() const { return file_.ok(); }

  Shape attribute_shape(const char* name) const {
    H5Id attr(H5Aopen(file_.get(), name, H5P_DEFAULT), H5Aclose);
    if (!attr.ok()) return {};
    H5Id type(H5Aget_type(attr.get()), H5Tclose);
    H5Id space(H5Aget_space(attr.get()), H5Sclose);
    return shape_of(type.get(), space.get());
  }
  Shape dataset_shape(const char* name) const {
    H5Id set(H5Dopen2(file_.get(), name, H5P_DEFAULT), H5Dclose);
    if (!set.ok()) return {};
    H5Id type(H5Dget_type(set.get()), H5Tclose);
    H5Id space(H5Dget_space(set.get()), H5Sclose);
    return shape_of(type.get(), space.get());
  }

  // Numeric attribute or dataset, converted by HDF5 to the memory type of T.
  template <typename T>
  std::vector<T> attribute(const char* name) const {
    H5Id attr(H5Aopen(file_.get(), name, H5P_DEFAULT), H5Aclose);
    if (!attr.ok()) return {};
    H5Id space(H5Aget_space(attr.get()), H5Sclose);
    std::vector<T> out(H5Sget_simple_extent_npoints(space.get()));
    if (H5Aread(attr.get(), mem_type<T>(), out.data()) < 0) return {};
    return out;
  }
  template <typename T>
  std::vector<T> dataset(const char* name) const {
    H5Id set(H5Dopen2(file_.get(), name, H5P_DEFAULT), H5Dclose);
    if (!set.ok()) return {};
    H5Id space(H5Dget_space(set.get()), H5Sclose);
    std::vector<T> out(H5Sget_simple_extent_npoints(space.get()));
    if (H5Dread(set.get(), mem_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) {
      return {};
    }
    return out;
  }

  // Fixed-length string attribute (scalar or 1-D), each entry up to its first null.
  std::vector<std::string> strings(const char* name) const {
    H5Id attr(H5Aopen(file_.get(), name, H5P_DEFAULT), H5Aclose);
    if (!attr.ok()) return {};
    H5Id type(H5Aget_type(attr.get()), H5Tclose);
    H5Id space(H5Aget_space(attr.get()), H5Sclose);
    if (H5Tis_variable_str(type.get()) != 0) return {};
    const std::size_t size = H5Tget_size(type.get());
    const std::size_t count = H5Sget_simple_extent_npoints(space.get());
    std::vector<char> buffer(size * count + 1, '\0');
    if (H5Aread(attr.get(), type.get(), buffer.data()) < 0) return {};
    std::vector<std::string> out;
    for (std::size_t n = 0; n < count; ++n) {
      const char* begin = buffer.data() + n * size;
      out.emplace_back(begin, std::find(begin, begin + size, '\0'));
    }
    return out;
  }
  std::string string(const char* name) const {
    const std::vector<std::string> s = strings(name);
    return s.size() == 1 ? s[0] : "<missing or not scalar>";
  }

 private:
  template <typename T>
  static hid_t mem_type() {
    if constexpr (std::is_same_v<T, int>) return H5T_NATIVE_INT;
    if constexpr (std::is_same_v<T, std::uint8_t>) return H5T_NATIVE_UINT8;
    if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
    if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
    return H5T_NATIVE_DOUBLE;
  }
  H5Id file_;
};

// HDF5 objects open in any file (files, datasets, attributes, ...): equal before and after a
// write when the writer closed all it opened, on success and on failure alike.
ssize_t open_hdf5_objects() {
  return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
}

// Distinct, exactly representable (also in float) value of every cell of every variable.
Real cell_value(std::size_t var, std::size_t block, int k, int j, int i) {
  return static_cast<Real>(10000.0 * var + 100.0 * block + 16 * k + 4 * j + i);
}

// Two levels on [0,1] x [0,2] x [0,1] with 4^3-cell blocks and a 8 x 16 x 8 root grid:
// 2 x 4 x 2 root blocks, of which block (0,0,0) is refined into 8 level-1 children; only
// the leaves are in the file (15 level-0 + 8 level-1 blocks), as in Athena++.
PlotFile two_level_plot() {
  PlotFile plot;
  plot.problem = "blast";
  plot.cycle = 42;
  plot.time = 0.125;
  plot.domain_min = {0.0, 0.0, 0.0};
  plot.domain_max = {1.0, 2.0, 1.0};
  plot.root_cells = {8, 16, 8};
  plot.block_size = 4;
  plot.max_level = 1;
  const double dx0 = 1.0 / 8;
  for (int k = 0; k < 2; ++k) {
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 2; ++i) {
        if (i == 0 && j == 0 && k == 0) continue;
        plot.blocks.push_back({0, {i, j, k}, {i * 4 * dx0, j * 4 * dx0, k * 4 * dx0}, dx0});
      }
    }
  }
  const double dx1 = dx0 / 2;
  for (int k = 0; k < 2; ++k) {
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) {
        plot.blocks.push_back({1, {i, j, k}, {i * 4 * dx1, j * 4 * dx1, k * 4 * dx1}, dx1});
      }
    }
  }
  plot.variables = {"rho", "press", "vel1", "vel2", "vel3"};
  for (std::size_t v = 0; v < plot.variables.size(); ++v) {
    for (std::size_t b = 0; b < plot.blocks.size(); ++b) {
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 4; ++j) {
          for (int i = 0; i < 4; ++i) plot.values.push_back(cell_value(v, b, k, j, i));
        }
      }
    }
  }
  plot.parameters = "[problem]\nname = \"blast\"\n\n[hydro]\ngamma = 1.4\n";
  plot.gamma = 1.4;
  plot.code_version = "0.1.0 (test)";
  return plot;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

class PlotFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tessera_plot_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

void expect_shape(const Shape& s, H5T_class_t type_class, std::size_t type_size,
                  const std::vector<hsize_t>& dims, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(s.type_class, type_class);
  EXPECT_EQ(s.type_size, type_size);
  EXPECT_EQ(s.dims, dims);
}

TEST(PlotFileName, IsZeroPaddedToFiveDigits) {
  EXPECT_EQ(plot_file_name("out", "sod", 0), "out/sod.00000.athdf");
  EXPECT_EQ(plot_file_name("out/", "sod", 42), "out/sod.00042.athdf");
  EXPECT_EQ(plot_file_name("/a/b", "sedov", 99999), "/a/b/sedov.99999.athdf");
  EXPECT_EQ(plot_file_name("/a/b", "sedov", 123456), "/a/b/sedov.123456.athdf");
  EXPECT_EQ(plot_file_name("", "sod", 7), "sod.00007.athdf");
  EXPECT_THROW(plot_file_name("out", "sod", -1), Error);
}

TEST_F(PlotFileTest, WritesTheAthenaPPLayout) {
  const PlotFile plot = two_level_plot();
  const std::string path = plot_file_name(dir_.string(), plot.problem, 3);
  const ssize_t objects_before = open_hdf5_objects();
  write_plot_file(path, plot);
  EXPECT_EQ(open_hdf5_objects(), objects_before) << "the writer left HDF5 objects open";

  EXPECT_EQ(files(), (std::vector<std::string>{"blast.00003.athdf", "blast.00003.athdf.xdmf"}));
  PlotFileReader r(path);
  ASSERT_TRUE(r.ok());
  const hsize_t nb = plot.blocks.size();  // 23
  const hsize_t n = 4;

  // Root attributes: type class, size and shape as Athena++ writes them.
  expect_shape(r.attribute_shape("NumCycles"), H5T_INTEGER, 4, {}, "NumCycles");
  EXPECT_EQ(r.attribute<int>("NumCycles"), std::vector<int>{42});
  expect_shape(r.attribute_shape("Time"), H5T_FLOAT, 8, {}, "Time");
  EXPECT_EQ(r.attribute<double>("Time"), std::vector<double>{0.125});
  const Shape coordinates = r.attribute_shape("Coordinates");
  EXPECT_EQ(coordinates.type_class, H5T_STRING);
  EXPECT_FALSE(coordinates.variable_string);  // yt calls .decode() on it: bytes, fixed length
  EXPECT_TRUE(coordinates.dims.empty());
  EXPECT_EQ(r.string("Coordinates"), "cartesian");
  expect_shape(r.attribute_shape("RootGridX1"), H5T_FLOAT, 8, {3}, "RootGridX1");
  EXPECT_EQ(r.attribute<double>("RootGridX1"), (std::vector<double>{0.0, 1.0, 1.0}));
  EXPECT_EQ(r.attribute<double>("RootGridX2"), (std::vector<double>{0.0, 2.0, 1.0}));
  EXPECT_EQ(r.attribute<double>("RootGridX3"), (std::vector<double>{0.0, 1.0, 1.0}));
  expect_shape(r.attribute_shape("RootGridX3"), H5T_FLOAT, 8, {3}, "RootGridX3");
  expect_shape(r.attribute_shape("RootGridSize"), H5T_INTEGER, 4, {3}, "RootGridSize");
  EXPECT_EQ(r.attribute<int>("RootGridSize"), (std::vector<int>{8, 16, 8}));
  expect_shape(r.attribute_shape("NumMeshBlocks"), H5T_INTEGER, 4, {}, "NumMeshBlocks");
  EXPECT_EQ(r.attribute<int>("NumMeshBlocks"), std::vector<int>{23});
  expect_shape(r.attribute_shape("MeshBlockSize"), H5T_INTEGER, 4, {3}, "MeshBlockSize");
  EXPECT_EQ(r.attribute<int>("MeshBlockSize"), (std::vector<int>{4, 4, 4}));
  expect_shape(r.attribute_shape("MaxLevel"), H5T_INTEGER, 4, {}, "MaxLevel");
  EXPECT_EQ(r.attribute<int>("MaxLevel"), std::vector<int>{1});
  expect_shape(r.attribute_shape("NumVariables"), H5T_INTEGER, 4, {1}, "NumVariables");
  EXPECT_EQ(r.attribute<int>("NumVariables"), std::vector<int>{5});
  EXPECT_EQ(r.attribute_shape("DatasetNames").dims, std::vector<hsize_t>{1});
  EXPECT_FALSE(r.attribute_shape("DatasetNames").variable_string);
  EXPECT_EQ(r.strings("DatasetNames"), std::vector<std::string>{"prim"});
  EXPECT_EQ(r.attribute_shape("VariableNames").dims, std::vector<hsize_t>{5});
  EXPECT_FALSE(r.attribute_shape("VariableNames").variable_string);
  EXPECT_EQ(r.strings("VariableNames"), plot.variables);

  // Tessera's extra attributes.
  EXPECT_EQ(r.string("Problem"), "blast");
  EXPECT_EQ(r.string("Parameters"), plot.parameters);
  expect_shape(r.attribute_shape("Gamma"), H5T_FLOAT, 8, {}, "Gamma");
  EXPECT_EQ(r.attribute<double>("Gamma"), std::vector<double>{1.4});
  EXPECT_EQ(r.string("CodeVersion"), "0.1.0 (test)");
  EXPECT_EQ(r.string("Precision"), kPrecisionName);

  // Block metadata.
  expect_shape(r.dataset_shape("Levels"), H5T_INTEGER, 4, {nb}, "Levels");
  expect_shape(r.dataset_shape("LogicalLocations"), H5T_INTEGER, 8, {nb, 3}, "LogicalLocations");
  const std::vector<int> levels = r.dataset<int>("Levels");
  const std::vector<std::int64_t> locations = r.dataset<std::int64_t>("LogicalLocations");
  ASSERT_EQ(levels.size(), nb);
  ASSERT_EQ(locations.size(), 3 * nb);
  for (std::size_t b = 0; b < nb; ++b) {
    EXPECT_EQ(levels[b], plot.blocks[b].level) << "block " << b;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(locations[3 * b + d], plot.blocks[b].location[d]) << "block " << b;
    }
  }

  // Each cell's level (for the .xdmf), one byte per cell.
  expect_shape(r.dataset_shape("CellLevels"), H5T_INTEGER, 1, {1, nb, n, n, n}, "CellLevels");
  const std::vector<std::uint8_t> cell_levels = r.dataset<std::uint8_t>("CellLevels");
  ASSERT_EQ(cell_levels.size(), nb * n * n * n);
  for (std::size_t c = 0; c < cell_levels.size(); ++c)
    ASSERT_EQ(int(cell_levels[c]), plot.blocks[c / (n * n * n)].level) << "cell " << c;

  // Coordinates: in the precision of Real, faces [nb][n+1] and centres [nb][n].
  const char* faces[3] = {"x1f", "x2f", "x3f"};
  const char* centres[3] = {"x1v", "x2v", "x3v"};
  for (int d = 0; d < 3; ++d) {
    expect_shape(r.dataset_shape(faces[d]), H5T_FLOAT, sizeof(Real), {nb, n + 1}, faces[d]);
    expect_shape(r.dataset_shape(centres[d]), H5T_FLOAT, sizeof(Real), {nb, n}, centres[d]);
    const std::vector<Real> f = r.dataset<Real>(faces[d]);
    const std::vector<Real> c = r.dataset<Real>(centres[d]);
    ASSERT_EQ(f.size(), nb * (n + 1));
    ASSERT_EQ(c.size(), nb * n);
    for (std::size_t b = 0; b < nb; ++b) {
      const PlotBlock& block = plot.blocks[b];
      // Dyadic values: exact in float and double.
      for (std::size_t i = 0; i <= n; ++i) {
        EXPECT_EQ(f[b * (n + 1) + i], static_cast<Real>(block.xmin[d] + i * block.dx))
            << faces[d] << " block " << b << " i " << i;
      }
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(c[b * n + i], static_cast<Real>(block.xmin[d] + (i + 0.5) * block.dx))
            << centres[d] << " block " << b << " i " << i;
      }
    }
  }

  // The data: [nvar][nblocks][nz][ny][nx] in the native precision, values unchanged.
  expect_shape(r.dataset_shape("prim"), H5T_FLOAT, sizeof(Real), {5, nb, n, n, n}, "prim");
  const std::vector<Real> prim = r.dataset<Real>("prim");
  ASSERT_EQ(prim.size(), plot.values.size());
  std::size_t index = 0;
  for (std::size_t v = 0; v < 5; ++v) {
    for (std::size_t b = 0; b < nb; ++b) {
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 4; ++j) {
          for (int i = 0; i < 4; ++i, ++index) {
            ASSERT_EQ(prim[index], cell_value(v, b, k, j, i))
                << "var " << v << " block " << b << " cell " << i << "," << j << "," << k;
          }
        }
      }
    }
  }
}

TEST_F(PlotFileTest, XdmfDescribesEveryBlock) {
  const PlotFile plot = two_level_plot();
  const std::string path = (dir_ / "blast.00000.athdf").string();
  write_plot_file(path, plot);

  const std::string xdmf = read_text(path + ".xdmf");
  ASSERT_FALSE(xdmf.empty());
  EXPECT_EQ(xdmf.rfind("<?xml", 0), 0u);
  EXPECT_NE(xdmf.find("<Xdmf Version=\"2.0\">"), std::string::npos);
  EXPECT_NE(xdmf.find("GridType=\"Collection\""), std::string::npos);
  EXPECT_NE(xdmf.find("</Xdmf>"), std::string::npos);
  // Balanced elements: one collection plus one uniform grid per block.
  const std::size_t nb = plot.blocks.size();
  EXPECT_EQ(count(xdmf, "<Grid "), nb + 1);
  EXPECT_EQ(count(xdmf, "</Grid>"), nb + 1);
  EXPECT_EQ(count(xdmf, "<DataItem "), count(xdmf, "</DataItem>"));
  EXPECT_EQ(count(xdmf, "<Attribute "), count(xdmf, "</Attribute>"));
  EXPECT_EQ(count(xdmf, "<Geometry "), nb);
  for (std::size_t b = 0; b < nb; ++b) {
    EXPECT_EQ(count(xdmf, "Name=\"MeshBlock" + std::to_string(b) + "\""), 1u) << "block " << b;
  }
  for (const std::string& var : plot.variables) {
    EXPECT_EQ(count(xdmf, "<Attribute Name=\"" + var + "\""), nb) << var;
  }
  // Hyperslabs into the .athdf, named relative to the .xdmf so the pair can be moved.
  // (each variable, and the velocity vector's three components again)
  EXPECT_EQ(count(xdmf, "> blast.00000.athdf:/prim <"), nb * (plot.variables.size() + 3));
  EXPECT_EQ(count(xdmf, "> blast.00000.athdf:/x1f <"), nb);
  // The level of every cell, and the velocity as a vector of its three components.
  EXPECT_EQ(count(xdmf, "<Attribute Name=\"level\" Center=\"Cell\">"), nb);
  EXPECT_EQ(count(xdmf, "> blast.00000.athdf:/CellLevels <"), nb);
  EXPECT_EQ(count(xdmf, "<Attribute Name=\"velocity\" AttributeType=\"Vector\""), nb);
  EXPECT_EQ(count(xdmf, "Function=\"JOIN($0, $1, $2)\""), nb);
  EXPECT_EQ(count(xdmf, "magnetic_field"), 0u);  // no Bcc1..3 in this file
  // The first block's velocity: vel1, vel2, vel3 (variables 2, 3, 4 of prim) in order.
  const std::size_t v = xdmf.find("Name=\"velocity\"");
  ASSERT_NE(v, std::string::npos);
  const std::size_t a = xdmf.find("> 2 0 0 0 0 ", v), b2 = xdmf.find("> 3 0 0 0 0 ", v),
                    c = xdmf.find("> 4 0 0 0 0 ", v);
  EXPECT_TRUE(a < b2 && b2 < c && c < xdmf.find("</Attribute>", v)) << xdmf.substr(v, 2000);
  EXPECT_EQ(count(xdmf, dir_.string()), 0u);
  EXPECT_NE(xdmf.find("Precision=\"" + std::to_string(sizeof(Real)) + "\""), std::string::npos);
}

TEST_F(PlotFileTest, LeavesNoTemporaryAndOverwritesAtomically) {
  PlotFile plot = two_level_plot();
  const std::string path = (dir_ / "blast.00001.athdf").string();
  write_plot_file(path, plot);
  plot.cycle = 43;
  write_plot_file(path, plot);  // replaces the previous pair
  EXPECT_EQ(files(), (std::vector<std::string>{"blast.00001.athdf", "blast.00001.athdf.xdmf"}));
  PlotFileReader r(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.attribute<int>("NumCycles"), std::vector<int>{43});
}

TEST_F(PlotFileTest, SingleLevelWithLongParameters) {
  PlotFile plot;
  plot.problem = "sod";
  plot.domain_max = {1.0, 1.0, 1.0};
  plot.root_cells = {8, 8, 8};
  plot.block_size = 8;
  plot.blocks = {{0, {0, 0, 0}, {0.0, 0.0, 0.0}, 0.125}};
  plot.variables = {"rho"};
  plot.values.assign(512, Real(1));
  // Over the 64 KiB limit of a compact attribute: must still be stored.
  for (int line = 0; line < 6000; ++line)
    plot.parameters += "key_" + std::to_string(line) + " = 1\n";
  ASSERT_GT(plot.parameters.size(), 65536u);
  const std::string path = (dir_ / "sod.00000.athdf").string();
  write_plot_file(path, plot);
  PlotFileReader r(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.string("Parameters"), plot.parameters);
  EXPECT_EQ(r.string("Problem"), "sod");
  EXPECT_EQ(r.string("CodeVersion"), "");  // empty strings are still valid attributes
  EXPECT_EQ(r.attribute<int>("MaxLevel"), std::vector<int>{0});
}

TEST_F(PlotFileTest, MissingDirectoryThrowsIoErrorNamingThePath) {
  const std::string path = (dir_ / "no_such_dir" / "blast.00000.athdf").string();
  const ssize_t objects_before = open_hdf5_objects();
  try {
    write_plot_file(path, two_level_plot());
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_EQ(open_hdf5_objects(), objects_before) << "the failed write left HDF5 objects open";
  EXPECT_TRUE(files().empty());
}

// A failure after the .athdf is complete (the .xdmf cannot be created; here its temporary
// name is taken by a directory) removes the temporaries and publishes neither file.
TEST_F(PlotFileTest, FailedXdmfLeavesNeitherFileNorTemporary) {
  const std::string path = (dir_ / "blast.00000.athdf").string();
  const std::string tmp = ".xdmf.tmp." + std::to_string(::getpid());  // the writer's own
  fs::create_directory(path + tmp);
  try {
    write_plot_file(path, two_level_plot());
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_EQ(files(), std::vector<std::string>{"blast.00000.athdf" + tmp});  // only ours
}

// The rename is the last step: when it fails (the final name is a non-empty directory) the
// error names the file and the temporary is gone.
TEST_F(PlotFileTest, FailedRenameRemovesTheTemporary) {
  const fs::path path = dir_ / "blast.00000.athdf";
  fs::create_directories(path / "occupied");
  try {
    write_plot_file(path.string(), two_level_plot());
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(files(), std::vector<std::string>{"blast.00000.athdf"});
  EXPECT_TRUE(fs::is_directory(path));
}

TEST_F(PlotFileTest, InconsistentPlotIsRejectedBeforeAnyFileIsCreated) {
  PlotFile plot = two_level_plot();
  plot.values.pop_back();
  const std::string path = (dir_ / "bad.00000.athdf").string();
  try {
    write_plot_file(path, plot);
    FAIL() << "expected tessera::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(files().empty());
}

}  // namespace
}  // namespace tessera::io
