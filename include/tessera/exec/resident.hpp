// Device residency (docs/architecture.md, "Data residency"): a run whose level gets all of
// its ghost zones from same-level neighbours and physical boundaries (a run without
// refinement) can keep its patch data in GPU memory between steps. Ghost zones are then
// gathered on the GPU from the tables below and the solved interiors scattered back there;
// nothing is staged through the host, and the host copy is brought up to date only when
// something on the host reads it (outputs, checkpoints, the totals on the log line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/coarse_fine_gather.hpp"
#include "kernels/flagging.hpp"
#include "kernels/resident_gather.hpp"
#include "tessera/exec/flux_register.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/parallel/comm.hpp"

namespace tessera::exec {

// Gather tables of one level's groups, in the order their batches run: the level's groups
// (Mesh::groups), or on several ranks this rank's own, those that read no other rank's
// patch first (the order of a step that overlaps the exchange).
// A block of a group's neighbourhood without a same-level patch (kernels::kGatherCoarse) is
// prolonged from the parent level (kernels/coarse_fine_gather.hpp): `coarse` lists the
// parent level's patches around the group's parent, `clamp` where the domain ends.
struct GatherTables {
  int level = 0;
  std::vector<int> blocks;         // kernels::kGatherBlocks source patches per group
  std::vector<int> codes;          // physical-boundary code per group (kernels::side_kind)
  std::vector<int> first_patch;    // the group's first patch
  std::vector<int> coarse;         // kernels::kCoarseBlocks parent-level patches per group
                                   // (all -1 for a group without coarse blocks)
  std::vector<int> clamp;          // kernels::kCoarseClamp per group
  kernels::ProlongFields prolong;  // the mesh's fields, as prolongation treats them
  bool coarse_fine = false;        // whether any group has a block on the coarser level
  bool problem = false;            // whether any group touches a problem-defined side
  int groups() const { return static_cast<int>(first_patch.size()); }
};

// Whether every ghost zone of `level` comes from its own level or an outflow, reflecting or
// periodic boundary (false where a finer level has coarse-fine faces, or a group touches a
// problem-defined side).
bool level_is_self_contained(const mesh::Mesh& m, int level);

// A problem-defined side is kernels::kSideProblem in `codes` (its cells from a
// ProblemGhosts table). `groups` (first patches): the groups and their order; null: every
// group of the level, in the mesh's order.
GatherTables build_gather_tables(const mesh::Mesh& m, int level,
                                 const std::vector<int>* groups = nullptr);

// The parent level's time levels that a level's coarse-fine ghost cells read, and the
// weight between them (0: `before`, the parent's previous state; 1: `now`, its current).
struct CoarseSlots {
  int now = 0, before = 1;
  double weight = 1.0;
};
// Those of a step of `level` at time weight `weight` within its parent's step.
CoarseSlots coarse_slots(const mesh::Mesh& m, int level, double weight);

// How a mesh's fields are prolonged (the gather tables' `prolong`).
kernels::ProlongFields prolong_fields(const mesh::FieldRegistry& fields);

// A regrid's new families, whose data the device prolongs from their parents
// (kernels::prolong_new_cell): the first patch of each, and the parent level's patches
// around its parent and where the domain ends, as GatherTables' `coarse` and `clamp`.
struct ProlongTable {
  std::vector<int> first_patch;
  std::vector<int> coarse;  // kernels::kCoarseBlocks per family
  std::vector<int> clamp;   // kernels::kCoarseClamp per family
  int families() const { return static_cast<int>(first_patch.size()); }
};
ProlongTable build_prolong_table(const mesh::Mesh& m, const std::vector<int>& families);
// The host version of the device's prolongation: family i of `t`'s current state from its
// parent's. Equals mesh::prolong_family bit for bit (the CPU tests check it).
void prolong_family_host(mesh::Mesh& m, const ProlongTable& t, int i);

// The ghost cells of the problem-defined sides of a level's groups at one time
// (mesh::ProblemBoundary::state, as mesh/boundary.cpp asks it): for each group of the
// tables, the offset in `entries` of each side's slab (kernels::problem_entry; -1 where
// the side is not problem-defined), the entries (a state's index, kernels::kGhostOutflow or
// kGhostReflecting), and the states, `nvar` reals each.
struct ProblemGhosts {
  int ghost = 0, nvar = 0;
  double time = 0;
  std::vector<int> side;     // 6 per group
  std::vector<int> entries;  // per side: ghost layers x n x n
  std::vector<Real> states;
};
ProblemGhosts build_problem_ghosts(const mesh::Mesh& m, const GatherTables& t, int ghost,
                                   double time);

// The host version of the gather kernel: group g's box of the fields
// [first, first + count) from time level `slot`, [count][n][n][n], n = 16 + 2 ghost, with
// coarse-fine ghost cells from the parent level's `coarse` time levels, and the
// problem-defined sides' cells from `problem` (built for this ghost width). Equals
// prepare_group bit for bit (the CPU tests check it); the GPU evaluates the same
// kernels::gather_source and kernels/coarse_fine_gather.hpp per cell.
void gather_group_host(const mesh::Mesh& m, const GatherTables& t, int slot, int g, int ghost,
                       int first, int count, Real* box, CoarseSlots coarse = {},
                       const ProblemGhosts* problem = nullptr);

// A mesh's patch data in device memory: both time levels of the store's pool, laid out as
// on the host ([position][var][z][y][x]; on several ranks the store holds this rank's
// families and the buffer copies of the others' it reads), with the gather tables of each
// of its levels. Made by Executor::make_resident; the pipeline runs passes on it
// (Executor::submit_resident), and a DeviceHalo refreshes its buffer patches.
class DeviceMesh {
 public:
  virtual ~DeviceMesh() = default;
  // Copies both time levels of the whole pool to the device (after the host data changed).
  virtual void upload(const mesh::Mesh& m) = 0;
  // Copies time level `slot` of the whole pool back into the mesh.
  virtual void download(mesh::Mesh& m, int slot) = 0;
  // Copies the fields `fields` from time level `from` to `to`, on the device: of every patch
  // of the pool (level < 0), or of level `level`'s families in its tables.
  virtual void copy_fields(const std::vector<int>& fields, int from, int to, int level = -1) = 0;
  // Exchanges the two time levels of the fields `fields` on level `level`'s families (a
  // pass that exchanges its outputs, pass.hpp).
  virtual void exchange_fields(const std::vector<int>& fields, int level) = 0;
  // Sets the field `field` to zero in both time levels of every patch (the potential
  // correction's source, cleared before each cycle).
  virtual void zero_field(int field) = 0;
  // Incremented whenever the tables are made again (a regrid): what a pass's own tables
  // of the levels (DeviceGather) are checked against.
  virtual long long tables_version() const = 0;

  // A larger pool: lets go of the host pools' page lock, calls `reallocate` (which gives
  // the host pool a larger capacity, Mesh::reserve_families; its data need not be current:
  // this copy holds them), then makes device pools of the new capacity with this copy's
  // data (the new host pools are page-locked at the next copy back). Throws when the GPU
  // cannot hold them.
  virtual void grow(const mesh::Mesh& m, const std::function<void()>& reallocate) = 0;
  // A regrid of a device-resident mesh on one rank, whose data stay on the device: the
  // host changed the hierarchy (Mesh::apply_hierarchy, without copying the levels back;
  // its pool kept its place and capacity), and the device follows `change`: the moves into
  // holes, in order, both time levels; the tables made again (`groups` as for
  // Executor::make_resident); each new family's current state prolonged from its parent's
  // (mesh::prolong_family's values), coarse to fine. speeds[level] becomes at least the
  // largest signal speed of the level's new families (Model::max_signal_speed). False when
  // the host pool moved or outgrew this copy: nothing was changed.
  virtual bool regrid(const mesh::Mesh& m, const mesh::MeshChange& change,
                      const std::vector<std::vector<int>>& groups, kernels::Physics physics,
                      const kernels::PhysicsParams& params, std::vector<double>& speeds) = 0;
  // A regrid on several ranks, whose sparse stores keep each family's data in place
  // (new ones take free positions, PatchStore::hold; nothing is compacted): the tables made
  // again for `groups` (each level's, as for Executor::make_resident). The data of families
  // that changed rank are written by the caller (read_fields, write_fields). False when the
  // host pool moved or outgrew this copy: nothing was changed.
  virtual bool retable(const mesh::Mesh& m, const std::vector<std::vector<int>>& groups) = 0;
  // Each of `families` (first patches of new families of `level` > 0) prolonged from its
  // parent's current state (mesh::prolong_family's values; the parent and its 26
  // neighbours current on this copy); returns the largest signal speed of the new patches
  // (Model::max_signal_speed), 0 for none.
  virtual double prolong(const mesh::Mesh& m, int level, const std::vector<int>& families,
                         kernels::Physics physics, const kernels::PhysicsParams& params) = 0;

  // Problem-defined sides (GatherTables::problem): the ghost cells of `level`'s groups for
  // gathers at box width `ghost` and time `time` (build_problem_ghosts), made on the host
  // and sent to the device unless it has them already. A batch's time must be theirs.
  virtual void problem_ghosts(const mesh::Mesh& m, int level, int ghost, double time) = 0;

  // Adaptive levels (docs/architecture.md, "Data residency"). The flux registers on the
  // device, with the layout of `r` (built for the mesh the tables were made from): the
  // batches of a refluxing pass add their flux planes to them (ResidentBatch::reflux_dt).
  virtual void set_registers(const mesh::Mesh& m, const FluxRegisters& r) = 0;
  // FluxRegisters::finish_fine_step's local part: the fine sums of a step of level + 1
  // added to level's registers once. On several ranks the sums of other ranks' registers
  // are taken out first (take_fine) and those other ranks sent put in (put_fine):
  // Simulation::finish_fine_on_device does both.
  virtual void finish_fine_step(int level) = 0;
  // The fine sums of `level`'s registers `registers` (indices in FluxRegisters' order),
  // nflux x 8 x 8 each, in list order; they are -0 afterwards.
  virtual std::vector<Real> take_fine(int level, const std::vector<int>& registers) = 0;
  // Sets the fine sums of the listed registers (which hold -0) to `values` (take_fine's
  // layout).
  virtual void put_fine(int level, const std::vector<int>& registers,
                        const std::vector<Real>& values) = 0;
  // FluxRegisters::reflux on the current state of `level` (withholding a correction that
  // would leave a cell unphysical, `admissible`), this rank's registers only; returns the
  // corrections withheld.
  virtual long long reflux(const mesh::Mesh& m, int level) = 0;
  // mesh::restrict_family for every family of `level`'s tables (> 0): the restricted
  // fields of each parent's current state replaced by the average of its children's. On
  // several ranks the parents of other ranks go to them (read_fields, write_fields).
  virtual void restrict_level(const mesh::Mesh& m, int level) = 0;
  // The fields `fields` of the listed patches' time level `slot`, patch by patch, field by
  // field (kPatchCells each), into `values` (resized; a vector kept between calls keeps its
  // pages, which a new one faults in again); write_fields sets them.
  virtual void read_fields(const mesh::Mesh& m, const std::vector<int>& patches, int slot,
                           const std::vector<int>& fields, std::vector<Real>& values) = 0;
  std::vector<Real> read_fields(const mesh::Mesh& m, const std::vector<int>& patches, int slot,
                                const std::vector<int>& fields) {
    std::vector<Real> values;
    read_fields(m, patches, slot, fields, values);
    return values;
  }
  virtual void write_fields(const mesh::Mesh& m, const std::vector<int>& patches, int slot,
                            const std::vector<int>& fields, const std::vector<Real>& values) = 0;
  // The refinement flags of `level`'s current state on the device (evolve/refinement.cpp's
  // flag_patch for the criteria `c`, the same bits): marks[8 g + c], for child c of group g
  // of the level's tables, the patches it marks (kernels::flag_marks).
  virtual void flag(const mesh::Mesh& m, int level, const kernels::FlagCriteria& c,
                    kernels::Physics physics, const kernels::PhysicsParams& params,
                    std::vector<std::uint32_t>& marks) = 0;
  // Level `level`'s gather tables; levels(): how many levels it has tables for.
  virtual const GatherTables& tables(int level = 0) const = 0;
  virtual int levels() const = 0;
  // Device memory it holds, bytes.
  virtual double bytes() const = 0;
};

// A pass's own gather of its input boxes on the device (GroupPass::resident_gather; the
// refined levels' Poisson solve): the boxes of groups [first_group, first_group + count)
// of the level's tables, `in_reals` apart, into device memory `boxes`, on `stream` (a
// cudaStream_t).
class DeviceGather {
 public:
  virtual ~DeviceGather() = default;
  virtual void gather(DeviceMesh& dm, int first_group, int count, Real* boxes, std::size_t in_reals,
                      void* stream) const = 0;
};

// The buffer patches of a device-resident level on several ranks (docs/architecture.md,
// "Ranks"): what this rank sends to and receives from each peer, patches listed in the
// order both sides derive from the mesh (the exchange plan's same-level lists).
// A refined level's lists end with the coarser level's patches its coarse-fine ghost
// cells read (interpolated in time): those go in both time levels, the first `send_same`
// / `receive_same` (all where empty) in the exchange's.
struct HaloPlan {
  std::vector<std::vector<int>> send, receive;       // [peer rank]
  std::vector<std::size_t> send_same, receive_same;  // [peer rank]
};

// How a halo's messages go between two ranks (mpi.device_exchange):
//  - peer: on one host, GPU to GPU without the host (CUDA IPC: each rank maps the
//    receiving buffers of its peers and copies into them; an IPC event orders the
//    receiver's unpack after the copy, a one-word message tells it the event is set);
//  - mpi: an MPI library that reads GPU memory itself (CUDA-aware) sends the device
//    buffers;
//  - host: through page-locked host buffers, copied asynchronously, sent by MPI.
enum class HaloRoute { kNone, kHost, kPeer, kMpi };
const char* halo_route_name(HaloRoute r);

// The exchange of a device-resident level's buffer patches, made once per mesh by
// Executor::make_halo (a collective: the ranks agree on each pair's route). One exchange at
// a time: start, any number of test, finish; a collective of every rank (the pass's error
// agreement) separates two exchanges, so no rank writes a peer's receiving buffer before the
// peer has unpacked the last exchange from it.
class DeviceHalo {
 public:
  virtual ~DeviceHalo() = default;
  // Begins sending time level `slot` of the plan's patches (the coarser level's in both):
  // packed on the GPU into one
  // buffer, one piece per peer, each sent by its route. Returns without waiting.
  virtual void start(int slot) = 0;
  // Lets the transfers advance; true when they are done. Never blocks.
  virtual bool test() = 0;
  // Waits for the peers' patches and writes them into the buffer patches of the device
  // copy's time level `slot` (start's; the coarser level's into both); work submitted
  // after it returns reads them.
  virtual void finish() = 0;
  virtual HaloRoute route_to(int peer) const = 0;
  // Bytes this rank sent by each route over the exchanges so far ([HaloRoute]).
  virtual std::vector<double> bytes_sent() const = 0;
};

}  // namespace tessera::exec
