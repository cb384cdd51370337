// Device residency (docs/architecture.md, "Data residency"): a run whose level gets all of
// its ghost zones from same-level neighbours and physical boundaries (a run without
// refinement) can keep its patch data in GPU memory between steps. Ghost zones are then
// gathered on the GPU from the tables below and the solved interiors scattered back there;
// nothing is staged through the host, and the host copy is brought up to date only when
// something on the host reads it (outputs, checkpoints, the totals on the log line).
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/resident_gather.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::exec {

// Gather tables of one level, groups in the mesh's order (Mesh::groups).
struct GatherTables {
  int level = 0;
  std::vector<int> blocks;       // kernels::kGatherBlocks source patches per group
  std::vector<int> codes;        // physical-boundary code per group (kernels::side_kind)
  std::vector<int> first_patch;  // the group's first patch
  int groups() const { return static_cast<int>(first_patch.size()); }
};

// Whether every ghost zone of `level` comes from its own level or an outflow, reflecting or
// periodic boundary (false where a finer level has coarse-fine faces, or a group touches a
// problem-defined side).
bool level_is_self_contained(const mesh::Mesh& m, int level);

// Throws Error(kInternal) when the level is not self-contained.
GatherTables build_gather_tables(const mesh::Mesh& m, int level);

// The host version of the gather kernel: group g's box of the fields
// [first, first + count) from time level `slot`, [count][n][n][n], n = 16 + 2 ghost.
// Equals prepare_group bit for bit (the CPU tests check it); the GPU evaluates the same
// kernels::gather_source per cell.
void gather_group_host(const mesh::Mesh& m, const GatherTables& t, int slot, int g, int ghost,
                       int first, int count, Real* box);

// A mesh's patch data in device memory: both time levels, laid out as the host pool
// ([patch][var][z][y][x]), with the gather tables of its one level. Made by
// Executor::make_resident; the pipeline runs passes on it (Executor::submit_resident).
class DeviceMesh {
 public:
  virtual ~DeviceMesh() = default;
  // Copies both time levels of every patch to the device (after the host data changed).
  virtual void upload(const mesh::Mesh& m) = 0;
  // Copies time level `slot` of every patch back into the mesh.
  virtual void download(mesh::Mesh& m, int slot) = 0;
  // Copies the fields `fields` of every patch from time level `from` to `to`, on the device.
  virtual void copy_fields(const std::vector<int>& fields, int from, int to) = 0;
  virtual const GatherTables& tables() const = 0;
  // Device memory it holds, bytes.
  virtual double bytes() const = 0;
};

}  // namespace tessera::exec
