// Which space-filling curve cuts the levels into ranks' pieces with the least exchange
// (docs/architecture.md, "Ranks", where the figures are): the Morton curve of the
// canonical order (Partition::along_curve) against the Hilbert curve (Skilling 2004,
// "Programming the Hilbert curve", AIP Conf. Proc. 707, 381), whose consecutive cells are
// always face neighbours. Both cut each level into pieces of equal counts, so their balance
// is the same; what differs is the surface of the pieces: the patches each rank receives
// from the others before a level step (same-level neighbours of its groups, and for groups
// at a coarse-fine boundary the parent's neighbourhood on the coarser level, as
// parallel::plan_receives lists them).
//
// Usage: tessera_partition_curves FILE.toml [section.key=value ...]
// builds the run's initial mesh (its initial conditions and their refinement) and prints,
// for 2 to 64 ranks, the patches received per level step summed over the ranks and the
// most any one rank receives, for both curves.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/params.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/parallel/partition.hpp"

namespace {

using namespace tessera;

// Skilling's transform of (x, y, z), `bits` bits each, to the Hilbert curve's index.
std::uint64_t hilbert_key(std::uint32_t x, std::uint32_t y, std::uint32_t z, int bits) {
  std::uint32_t X[3] = {x, y, z};
  const std::uint32_t m = 1u << (bits - 1);
  for (std::uint32_t q = m; q > 1; q >>= 1) {  // inverse undo
    const std::uint32_t p = q - 1;
    for (int i = 0; i < 3; ++i) {
      if (X[i] & q) {
        X[0] ^= p;
      } else {
        const std::uint32_t t = (X[0] ^ X[i]) & p;
        X[0] ^= t;
        X[i] ^= t;
      }
    }
  }
  for (int i = 1; i < 3; ++i) X[i] ^= X[i - 1];  // Gray encode
  std::uint32_t t = 0;
  for (std::uint32_t q = m; q > 1; q >>= 1)
    if (X[2] & q) t ^= q - 1;
  for (auto& v : X) v ^= t;
  std::uint64_t key = 0;
  for (int b = bits - 1; b >= 0; --b)
    for (int i = 0; i < 3; ++i) key = key << 1 | ((X[i] >> b) & 1u);
  return key;
}

// The curve's defining property on an 8^3 cube: consecutive cells are face neighbours.
void check_hilbert() {
  std::vector<std::pair<std::uint64_t, std::array<int, 3>>> cells;
  for (int z = 0; z < 8; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) cells.push_back({hilbert_key(x, y, z, 3), {x, y, z}});
  std::sort(cells.begin(), cells.end());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].first != i) throw Error(ErrorKind::kInternal, "hilbert_key is not a bijection");
    if (i == 0) continue;
    int d = 0;
    for (int a = 0; a < 3; ++a) d += std::abs(cells[i].second[a] - cells[i - 1].second[a]);
    if (d != 1) throw Error(ErrorKind::kInternal, "hilbert_key: consecutive cells not adjacent");
  }
}

struct Exchange {
  long long total = 0;  // patches received per step of every level, summed over ranks
  long long most = 0;   // by the rank that receives the most
};

// owner[family]: the rank of every family (pool slot / 8).
Exchange exchange(const mesh::Mesh& m, const std::vector<int>& owner, int ranks) {
  const mesh::NeighbourTable& table = m.neighbours();
  std::vector<long long> per_rank(ranks, 0);
  for (int level = 0; level < m.num_levels(); ++level) {
    std::vector<std::set<int>> want(ranks);
    for (const int g : m.groups(level)) {
      const int r = owner[g / mesh::kFamilySize];
      const mesh::NeighbourTable::Row row = table.row(g);
      bool coarse = false;
      for (int b = 0; b < mesh::kGroupBlocks; ++b) {
        if (row[b] >= 0 && owner[row[b] / mesh::kFamilySize] != r) want[r].insert(row[b]);
        coarse |= row[b] == mesh::kBlockCoarse;
      }
      if (!coarse || level == 0) continue;
      const int parent = m.patch(g).parent;
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int q = table.neighbour(parent, dx, dy, dz);
            if (q >= 0 && owner[q / mesh::kFamilySize] != r) want[r].insert(q);
          }
    }
    for (int r = 0; r < ranks; ++r) per_rank[r] += static_cast<long long>(want[r].size());
  }
  Exchange e;
  for (const long long n : per_rank) {
    e.total += n;
    e.most = std::max(e.most, n);
  }
  return e;
}

// Each level's families in Hilbert order, cut into pieces of equal counts.
std::vector<int> hilbert_owners(const mesh::Mesh& m, int ranks) {
  std::vector<int> owner(m.num_patches() / mesh::kFamilySize, -1);
  for (int level = 0; level < m.num_levels(); ++level) {
    // Family coordinates (a family is 2 patches wide) and the bits they need.
    std::uint32_t extent = 1;
    for (int d = 0; d < 3; ++d)
      extent = std::max<std::uint32_t>(extent, (m.geometry().root_cells[d] << level) / 16);
    int bits = 1;
    while ((1u << bits) < extent) ++bits;
    std::vector<std::pair<std::uint64_t, int>> keyed;
    for (const int g : m.groups(level)) {
      const mesh::PatchCoord pc = m.patch(g).coord();
      keyed.push_back({hilbert_key(pc[0] / 2, pc[1] / 2, pc[2] / 2, bits), g});
    }
    std::sort(keyed.begin(), keyed.end());
    const long long n = static_cast<long long>(keyed.size());
    for (int r = 0; r < ranks; ++r)
      for (long long i = n * r / ranks; i < n * (r + 1) / ranks; ++i)
        owner[keyed[i].second / mesh::kFamilySize] = r;
  }
  return owner;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.toml [section.key=value ...]\n", argv[0]);
    return 2;
  }
  try {
    check_hilbert();
    std::vector<std::string> overrides(argv + 2, argv + argc);
    overrides.push_back("output.enabled=false");
    overrides.push_back("run.backend=cpu");
    set_log_quiet(true);
    evolve::Simulation sim(load_run_params(argv[1], overrides));
    sim.initialize();
    const mesh::Mesh& m = sim.mesh();
    std::printf("# %s: patch groups per level", argv[1]);
    for (int level = 0; level < m.num_levels(); ++level)
      std::printf(" %zu", m.groups(level).size());
    std::printf(
        "\n# patches received per step of every level (sum over the ranks; most by "
        "one rank)\n");
    std::printf("%6s  %12s %10s  %12s %10s  %8s\n", "ranks", "Morton sum", "most", "Hilbert sum",
                "most", "H/M sum");
    for (const int ranks : {2, 4, 8, 16, 32, 64}) {
      const parallel::Partition part = parallel::Partition::along_curve(m, ranks);
      std::vector<int> morton(m.num_patches() / mesh::kFamilySize, -1);
      for (int level = 0; level < m.num_levels(); ++level)
        for (const int g : m.groups(level)) morton[g / mesh::kFamilySize] = part.owner(g);
      const Exchange em = exchange(m, morton, ranks);
      // The same count from the exchange plans the runs use: the loop above is theirs.
      long long planned = 0;
      for (int level = 0; level < m.num_levels(); ++level)
        for (const auto& plan : parallel::plan_level(m, part, level))
          for (int q = 0; q < ranks; ++q)
            planned += static_cast<long long>(plan.same_level[q].size() + plan.coarse[q].size());
      if (planned != em.total)
        throw Error(ErrorKind::kInternal, strprintf("the Morton count %lld differs from the "
                                                    "exchange plans' %lld",
                                                    em.total, planned));
      const Exchange eh = exchange(m, hilbert_owners(m, ranks), ranks);
      std::printf("%6d  %12lld %10lld  %12lld %10lld  %8.3f\n", ranks, em.total, em.most, eh.total,
                  eh.most, static_cast<double>(eh.total) / std::max(1LL, em.total));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
