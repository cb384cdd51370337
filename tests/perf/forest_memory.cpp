// The memory of the replicated forest (mesh/forest.hpp): what every rank of a run holds
// whatever its share of the mesh. Builds the forest of a ROOT^3 root grid alone, and of the
// same root with its half x < 1/2 refined once, and prints per patch the growth of the
// process's resident memory (Linux /proc/self/statm: vectors' spare capacity included, and
// the pages of the build's freed temporaries) and of the allocator's live bytes (what the
// forest holds), and the time the build took, each forest in a process of its own.
//
//   tessera_forest_memory [ROOT ...]      (default: 256 512; ROOT a multiple of 16)
#include <malloc.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cube.hpp"
#include "tessera/mesh/forest.hpp"

using namespace tessera::mesh;

namespace {

double resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * 4096.0;
}

// Bytes the allocator has handed out and not taken back (glibc): what live objects hold,
// without the pages of freed temporaries that the resident size keeps.
double live_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return double(m.uordblks) + double(m.hblkhd);
}

}  // namespace

// One forest (root n, refined or not) in this process, its row printed.
int measure(int n, bool refined) {
  const Geometry geo = tessera::perf::unit_cube(n);
  const Hierarchy h = refined ? tessera::perf::half_refined(n / kPatchSize) : Hierarchy{};
  const double before = resident_bytes(), live_before = live_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  const Forest forest(geo, h);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double bytes = resident_bytes() - before, live = live_bytes() - live_before;
  std::printf("%6d %8s %12d %14.1f %14.1f %10.3f\n", n, refined ? "half" : "no",
              forest.num_patches(), bytes / forest.num_patches(), live / forest.num_patches(),
              seconds);
  return 0;
}

int main(int argc, char** argv) {
  // Each forest is measured in a process of its own (a freed forest's pages would be
  // reused by the next).
  if (argc == 4 && std::string(argv[1]) == "--one")
    return measure(std::atoi(argv[2]), std::string(argv[3]) == "half");
  std::vector<int> roots;
  for (int i = 1; i < argc; ++i) roots.push_back(std::atoi(argv[i]));
  if (roots.empty()) roots = {256, 512};
  std::printf("%6s %8s %12s %14s %14s %10s\n", "root", "refined", "patches", "resident B/p",
              "live B/p", "build s");
  std::fflush(stdout);
  for (const int n : roots) {
    if (n < 32 || n % 16 != 0) return std::fprintf(stderr, "ROOT must be a multiple of 16\n"), 2;
    for (const char* refined : {"no", "half"}) {
      const std::string command =
          std::string(argv[0]) + " --one " + std::to_string(n) + " " + refined;
      if (std::system(command.c_str()) != 0) return 1;
    }
  }
  return 0;
}
