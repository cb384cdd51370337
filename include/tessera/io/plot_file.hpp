// Plot files in the Athena++ .athdf layout (+ .xdmf), readable by yt, ParaView and VisIt.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/io/collective.hpp"

namespace tessera::io {

// One mesh block of the file: a leaf patch of kBlockSize^3 cells.
struct PlotBlock {
  int level = 0;
  std::array<std::int64_t, 3> location{};  // logical location, in blocks, at `level`
  std::array<double, 3> xmin{};            // lower corner of the block
  double dx = 0;                           // cell width (cubic cells)
};

// Everything a plot file holds; the writer knows nothing of the mesh classes.
struct PlotFile {
  std::string problem;
  int cycle = 0;
  double time = 0;
  std::array<double, 3> domain_min{};
  std::array<double, 3> domain_max{};
  std::array<int, 3> root_cells{};  // cells of the root level per dimension
  int block_size = 8;               // cells per block edge
  int max_level = 0;
  std::vector<PlotBlock> blocks;
  // Athena++ names (rho, press, vel1, vel2, vel3, ...) so yt's athena_pp frontend maps them.
  std::vector<std::string> variables;
  // The dataset of each variable ("prim", "B", ...; empty: all "prim"). Variables of one
  // dataset are consecutive; each dataset is written as Athena++ does, with its share of
  // NumVariables, so that yt maps Bcc1..3 to magnetic_field_x/y/z.
  std::vector<std::string> datasets;
  // values[var][block][z][y][x]: variables.size() * blocks.size() * block_size^3 entries;
  // with own_blocks, of those blocks only (values[var][own block][z][y][x]).
  std::vector<Real> values;
  // A collective write (tessera/io/collective.hpp): the blocks whose values this rank
  // holds and writes, in increasing order; every block belongs to exactly one rank.
  // nullopt: all of them.
  std::optional<std::vector<std::size_t>> own_blocks;
  std::string parameters;  // the effective parameters as TOML text
  double gamma = 0;
  // The code units in cgs and the mean molecular weight ([units]): attributes UnitLength
  // (cm), UnitMass (g), UnitTime (s) and MeanMolecularWeight, for scripts/tessera_yt.py.
  std::array<double, 3> units_cgs{1, 1, 1};
  double mu = 0.6;
  std::string code_version;
  std::string run_id;  // the run (and its restarts) that wrote it: io::new_run_id
};

// "<dir>/<problem>.<NNNNN>.athdf"
std::string plot_file_name(const std::string& dir, const std::string& problem, int index);

// Writes `path` and `path + ".xdmf"`. Each is written under a temporary name, flushed
// and renamed, so a crash never leaves a partial file under the final name.
// Throws tessera::Error(kIo) naming the file on any HDF5 or filesystem failure. With a
// Collective, every rank calls it with its own blocks' values (own_blocks) and the ranks
// write one file together; rank 0 writes the .xdmf and renames both.
void write_plot_file(const std::string& path, const PlotFile& plot,
                     const Collective* collective = nullptr);

}  // namespace tessera::io
