// A checkpoint that is not what it should be gives a clear error of the documented kind,
// never a crash or a silently wrong restart: truncated, flipped bytes in a dataset, a
// missing dataset, another format version, another precision, not a checkpoint at all.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>

#include "src/io/digest.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/io/plot_output.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/physics/fields.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

mesh::Geometry small_geometry() {
  mesh::Geometry g;
  g.root_cells = {16, 16, 16};
  g.xmin = {0, 0, 0};
  g.xmax = {1, 1, 1};
  return g;
}

// A refined 16^3 mesh with recognisable data in both levels.
std::unique_ptr<mesh::Mesh> sample_mesh() {
  auto m = std::make_unique<mesh::Mesh>(small_geometry(), physics::hydro_fields(true, 0),
                                        mesh::Hierarchy{{{0, 0, 0}, {1, 1, 1}}});
  for (int p = 0; p < m->num_patches(); ++p)
    for (std::size_t i = 0; i < m->patch_reals(); ++i)
      m->current(p)[i] = Real(1 + 0.001 * p + 1e-7 * double(i));
  return m;
}

io::CheckpointState sample_state(const mesh::Mesh& m) {
  io::CheckpointState s;
  s.time = 0.125;
  s.step = 42;
  s.level_steps.assign(mesh::kMaxLevels, 0);
  s.level_steps[0] = 42, s.level_steps[1] = 84;
  s.level_max_speed.assign(m.num_levels(), 1.5);
  s.next_plot_time = 0.2;
  s.initial_totals = {1, 2, 3, 4, 5};
  return s;
}

class CheckpointFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_ckpt_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "run.chk.00000042.h5").string();
    mesh_ = sample_mesh();
    io::CheckpointHeader h;
    h.code_version = "test";
    h.problem = "uniform";
    h.parameters = "[run]\nt_end = 1\n";
    h.run_id = "0123456789abcdef0123456789abcdef";
    // A density of exactly 1.0: its low 16-bit words are 0x0000 (see FletcherBlindChange...).
    mesh_->current(0)[0] = Real(1);
    io::write_checkpoint(path_, *mesh_, h, sample_state(*mesh_));
  }

  // Opens, reads the state, rebuilds the mesh and reads the data: what a restart does.
  // sparse: as a rank of several does, into a store holding the refined families only.
  void read_all(bool sparse = false) const {
    const io::CheckpointReader r(path_);
    (void)r.state();
    mesh::Mesh m(small_geometry(), physics::hydro_fields(true, 0), r.hierarchy(), !sparse);
    if (sparse)
      for (const int g : m.groups(1)) m.hold(g);
    r.read_data(m);
  }

  // Expects read_all() to throw Error of `kind` whose message contains `text`.
  void expect_error(ErrorKind kind, const std::string& text, bool sparse = false) const {
    try {
      read_all(sparse);
      FAIL() << "no error reading " << path_;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
    }
  }

  void edit(const std::function<void(hid_t)>& f) const {
    const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    f(file);
    H5Fclose(file);
  }

  // File offset and size of the first chunk of dataset `name`.
  std::pair<haddr_t, hsize_t> first_chunk(const char* name) const {
    haddr_t offset = 0;
    hsize_t size = 0;
    edit([&](hid_t file) {
      const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
      ASSERT_GE(set, 0);
      hsize_t chunk_offset[5];
      unsigned mask = 0;
      const hid_t space = H5Dget_space(set);
      ASSERT_GE(H5Dget_chunk_info(set, space, 0, chunk_offset, &mask, &offset, &size), 0);
      H5Sclose(space);
      H5Dclose(set);
      // Chunk addresses are relative to the HDF5 data, which starts after the user block.
      const hid_t fcpl = H5Fget_create_plist(file);
      hsize_t user_block = 0;
      H5Pget_userblock(fcpl, &user_block);
      H5Pclose(fcpl);
      offset += user_block;
    });
    return {offset, size};
  }

  static void replace_string_attribute(hid_t file, const char* name, const std::string& value) {
    H5Adelete(file, name);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, value.size() + 1);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, type, value.c_str());
    H5Aclose(attr), H5Sclose(space), H5Tclose(type);
  }

  fs::path dir_;
  std::string path_;
  std::unique_ptr<mesh::Mesh> mesh_;
};

TEST_F(CheckpointFile, RoundTripRestoresEverything) {
  const io::CheckpointReader r(path_);
  EXPECT_EQ(r.header().format_version, io::kCheckpointFormatVersion);
  EXPECT_EQ(r.header().problem, "uniform");
  EXPECT_EQ(r.header().run_id, "0123456789abcdef0123456789abcdef");
  EXPECT_TRUE(r.has_digests());
  EXPECT_NO_THROW(r.verify_file_digest());
  EXPECT_EQ(r.header().parameters, "[run]\nt_end = 1\n");
  EXPECT_EQ(r.header().step, 42);
  const auto s = r.state();
  EXPECT_EQ(s.time, 0.125);
  EXPECT_EQ(s.level_steps[1], 84);
  EXPECT_EQ(s.level_max_speed, std::vector<double>(2, 1.5));
  EXPECT_EQ(s.initial_totals, std::vector<double>({1, 2, 3, 4, 5}));
  EXPECT_EQ(r.hierarchy(), mesh_->hierarchy());
  mesh::Mesh m(small_geometry(), physics::hydro_fields(true, 0), r.hierarchy());
  r.read_data(m);
  for (int p = 0; p < m.num_patches(); ++p)
    ASSERT_EQ(std::memcmp(m.current(p), mesh_->current(p), m.patch_reals() * sizeof(Real)), 0)
        << "patch " << p;
}

TEST_F(CheckpointFile, TruncatedFileIsAnIoError) {
  fs::resize_file(path_, fs::file_size(path_) / 2);
  expect_error(ErrorKind::kIo, "truncated");
}

TEST_F(CheckpointFile, FlippedBytesInDataFailTheChecksum) {
  // Find the first chunk of level 1's data in the file and flip bytes in its middle.
  const auto [offset, size] = first_chunk("data/level_1");
  ASSERT_GT(size, 16u);
  std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset + size / 2));
  char bytes[4];
  f.read(bytes, 4);
  for (char& b : bytes) b = static_cast<char>(~b);
  f.seekp(static_cast<std::streamoff>(offset + size / 2));
  f.write(bytes, 4);
  f.close();
  expect_error(ErrorKind::kIo, "checksum");
}

// Fletcher-32 sums 16-bit words modulo 65535, so a word 0x0000 overwritten with 0xFFFF
// leaves both of its sums unchanged: the HDF5 filter passes the chunk and only the digest
// finds the change (1.0 read back as 1.0000000000145 in double).
TEST_F(CheckpointFile, FletcherBlindChangeFailsTheDigest) {
  const auto [offset, size] = first_chunk("data/level_0");
  std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char word[2];
  f.read(word, 2);
  ASSERT_EQ(word[0], 0);  // the low bytes of the first value, 1.0
  ASSERT_EQ(word[1], 0);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write("\xff\xff", 2);
  f.close();
  expect_error(ErrorKind::kIo, "dataset 'data/level_0' does not match its digest");
  // A rank that holds none of level 0's families still reads and digests all of them.
  expect_error(ErrorKind::kIo, "dataset 'data/level_0' does not match its digest", true);
}

// A rank's store (a sparse mesh) receives exactly the families it holds, equal to the
// whole read's, over several slabs of the reader (75 root families, slabs of 64).
TEST(CheckpointSparseRead, AStoreReceivesTheFamiliesItHolds) {
  mesh::Geometry g;
  g.root_cells = {80, 80, 48};
  g.xmin = {0, 0, 0};
  g.xmax = {1, 1, 0.6};
  g.dx0 = 1.0 / 80;
  const auto fields = physics::hydro_fields(true, 0);
  mesh::Mesh whole(g, fields);
  ASSERT_EQ(whole.groups(0).size(), 75u);
  for (int p = 0; p < whole.num_patches(); ++p)
    for (std::size_t i = 0; i < whole.patch_reals(); ++i)
      whole.current(p)[i] = Real(1 + 0.001 * p + 1e-7 * double(i));
  const fs::path dir = fs::temp_directory_path() / "tessera_ckpt_sparse";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "run.chk.00000001.h5").string();
  io::CheckpointHeader h;
  h.code_version = "test";
  h.problem = "uniform";
  h.parameters = "[run]\nt_end = 1\n";
  h.run_id = "0123456789abcdef0123456789abcdef";
  io::write_checkpoint(path, whole, h, sample_state(whole));
  const io::CheckpointReader r(path);
  const auto store = r.read_mesh(g, fields, false);
  ASSERT_TRUE(store->sparse());
  const auto& groups = store->groups(0);
  for (std::size_t i = 0; i < groups.size(); ++i)
    if (i % 3 == 1 || i >= 64) store->hold(groups[i]);  // in both slabs, the last included
  r.read_data(*store);
  int held = 0;
  for (int p = 0; p < store->num_patches(); ++p) {
    if (!store->holds(p)) continue;
    ++held;
    ASSERT_EQ(std::memcmp(store->current(p), whole.current(p), whole.patch_reals() * sizeof(Real)),
              0)
        << "patch " << p;
  }
  EXPECT_EQ(held, (21 + 11) * mesh::kFamilySize);
  fs::remove_all(dir);
}

// verify's file digest: one changed byte anywhere (metadata, data, the digest block itself,
// free space that HDF5 never reads) is an Error(kIo).
TEST_F(CheckpointFile, ChangedByteAnywhereFailsTheFileDigest) {
  std::ifstream in(path_, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), {});
  in.close();
  std::uint64_t state = 12345;
  for (int n = 0; n < 64; ++n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::size_t at = n == 0 ? 300 : (state >> 11) % original.size();  // 300: padding
    std::string bytes = original;
    bytes[at] = static_cast<char>(bytes[at] ^ (1 + (state >> 3) % 255));
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
    try {
      // What `tessera verify` does: the file digest first, then the reader's own checks.
      const bool sealed = io::check_file_digest(path_);
      const io::CheckpointReader r(path_);
      if (!sealed) r.verify_file_digest();
      ADD_FAILURE() << "a change of byte " << at << " was not found";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kIo) << "byte " << at << ": " << e.what();
    }
  }
}

TEST_F(CheckpointFile, Version1FilesAreStillRead) {
  // Version 1 had no RunId and no digests; what it has is checked as before.
  edit([](hid_t file) {
    const hid_t attr = H5Aopen(file, "FormatVersion", H5P_DEFAULT);
    const int version = 1;
    H5Awrite(attr, H5T_NATIVE_INT, &version);
    H5Aclose(attr);
    H5Adelete(file, "RunId");
  });
  const io::CheckpointReader r(path_);
  EXPECT_FALSE(r.has_digests());
  EXPECT_EQ(r.header().run_id, "");
  EXPECT_NO_THROW(r.verify_file_digest());
  EXPECT_NO_THROW(read_all());
}

// Every dataset of groups state, mesh and data: (name, its bytes in the native type).
std::vector<std::pair<std::string, std::vector<unsigned char>>> all_datasets(hid_t file) {
  std::vector<std::pair<std::string, std::vector<unsigned char>>> out;
  for (const char* group : {"state", "mesh", "data"}) {
    std::vector<std::string> names;
    H5Literate_by_name(
        file, group, H5_INDEX_NAME, H5_ITER_INC, nullptr,
        [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
          static_cast<std::vector<std::string>*>(data)->push_back(name);
          return 0;
        },
        &names, H5P_DEFAULT);
    for (const auto& n : names) {
      const std::string path = std::string(group) + "/" + n;
      const hid_t set = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
      const hid_t type = H5Dget_type(set);
      const hid_t native = H5Tget_native_type(type, H5T_DIR_DEFAULT);
      const hid_t space = H5Dget_space(set);
      std::vector<unsigned char> bytes(H5Sget_simple_extent_npoints(space) * H5Tget_size(native));
      if (!bytes.empty()) H5Dread(set, native, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data());
      H5Sclose(space), H5Tclose(native), H5Tclose(type), H5Dclose(set);
      out.push_back({path, std::move(bytes)});
    }
  }
  return out;
}

// Format 3's Digest is that of the rows' digests (RowDigest): for a level's field data, of
// each patch's digest in patch order.
TEST_F(CheckpointFile, Version3DigestsAreThoseOfTheRows) {
  const std::size_t patch_bytes = mesh_->patch_reals() * sizeof(Real);
  io::detail::RowDigest expected;
  for (const int g : mesh_->groups(1))
    for (int c = 0; c < mesh::kFamilySize; ++c)
      expected.add_row(io::detail::digest64(mesh_->current(g + c), patch_bytes));
  edit([&](hid_t file) {
    const hid_t set = H5Dopen2(file, "data/level_1", H5P_DEFAULT);
    const hid_t attr = H5Aopen(set, "Digest", H5P_DEFAULT);
    const hid_t type = H5Aget_type(attr);
    std::vector<char> text(H5Tget_size(type) + 1, '\0');
    H5Aread(attr, type, text.data());
    H5Tclose(type), H5Aclose(attr), H5Dclose(set);
    EXPECT_EQ(std::string(text.data()), io::detail::digest_text(expected.value()));
  });
}

// Version 2's Digest was that of the dataset's bytes: such files are still read and checked
// with it (a version-2 file carrying row digests fails).
TEST_F(CheckpointFile, Version2FilesAreStillReadAndChecked) {
  auto set_version = [](hid_t file) {
    const hid_t attr = H5Aopen(file, "FormatVersion", H5P_DEFAULT);
    const int version = 2;
    H5Awrite(attr, H5T_NATIVE_INT, &version);
    H5Aclose(attr);
  };
  edit(set_version);
  expect_error(ErrorKind::kIo, "does not match its digest");
  edit([](hid_t file) {
    for (const auto& [name, bytes] : all_datasets(file)) {
      const hid_t set = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
      replace_string_attribute(
          set, "Digest", io::detail::digest_text(io::detail::digest64(bytes.data(), bytes.size())));
      H5Dclose(set);
    }
  });
  const io::CheckpointReader r(path_);
  EXPECT_EQ(r.header().format_version, 2);
  EXPECT_NO_THROW(read_all());
}

TEST_F(CheckpointFile, MissingDatasetIsAnIoError) {
  edit([](hid_t file) { ASSERT_GE(H5Ldelete(file, "data/level_1", H5P_DEFAULT), 0); });
  expect_error(ErrorKind::kIo, "dataset 'data/level_1' is missing");
}

TEST_F(CheckpointFile, MissingStateIsAnIoError) {
  edit([](hid_t file) { ASSERT_GE(H5Ldelete(file, "state/level_max_speed", H5P_DEFAULT), 0); });
  expect_error(ErrorKind::kIo, "dataset 'state/level_max_speed' is missing");
}

TEST_F(CheckpointFile, OtherFormatVersionIsRefused) {
  edit([](hid_t file) {
    const hid_t attr = H5Aopen(file, "FormatVersion", H5P_DEFAULT);
    const int version = io::kCheckpointFormatVersion + 1;
    H5Awrite(attr, H5T_NATIVE_INT, &version);
    H5Aclose(attr);
  });
  expect_error(ErrorKind::kInput,
               "format version " + std::to_string(io::kCheckpointFormatVersion + 1));
}

TEST_F(CheckpointFile, OtherPrecisionIsRefused) {
  const std::string other = sizeof(Real) == 8 ? "single" : "double";
  edit([&](hid_t file) { replace_string_attribute(file, "Precision", other); });
  expect_error(ErrorKind::kInput, "written by a " + other + "-precision build");
}

TEST_F(CheckpointFile, DataOfOtherPrecisionIsRefused) {
  // The attribute says this precision but the data set holds the other one.
  edit([](hid_t file) {
    ASSERT_GE(H5Ldelete(file, "data/level_1", H5P_DEFAULT), 0);
    const hsize_t dims[5] = {8, 5, 8, 8, 8};
    const hid_t space = H5Screate_simple(5, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 5, dims);
    H5Pset_fletcher32(dcpl);
    const hid_t other = sizeof(Real) == 8 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    const hid_t set =
        H5Dcreate2(file, "data/level_1", other, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    std::vector<char> zeros(8 * 5 * 512 * 8, 0);
    H5Dwrite(set, other, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
    H5Dclose(set), H5Pclose(dcpl), H5Sclose(space);
  });
  expect_error(ErrorKind::kInput, "precision numbers");
}

TEST_F(CheckpointFile, PlotFileIsNotACheckpoint) {
  const std::string plot = (dir_ / "plot.athdf").string();
  const auto copy = [](const Real* u, int stride, Real* w) {
    for (int v = 0; v < 5; ++v) w[v] = u[v * stride];
  };
  io::write_plot_file(plot, io::make_plot_file(*mesh_, copy, 5.0 / 3, "uniform", 0, 0, ""));
  try {
    io::CheckpointReader r(plot);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("not a Tessera checkpoint"), std::string::npos)
        << e.what();
  }
}

TEST_F(CheckpointFile, MissingFileIsAnIoError) {
  fs::remove(path_);
  expect_error(ErrorKind::kIo, "no such file");
}

TEST_F(CheckpointFile, FailedWriteLeavesPreviousFileIntact) {
  // A write that cannot complete (the directory of the target is gone) leaves no file or
  // temporary behind and does not touch other checkpoints.
  const auto before = fs::file_size(path_);
  const std::string bad = (dir_ / "missing_dir" / "run.chk.00000043.h5").string();
  io::CheckpointHeader h;
  h.problem = "uniform";
  EXPECT_THROW(io::write_checkpoint(bad, *mesh_, h, sample_state(*mesh_)), Error);
  EXPECT_EQ(fs::file_size(path_), before);
  EXPECT_NO_THROW(read_all());
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

}  // namespace
}  // namespace tessera
