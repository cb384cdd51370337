// N ranks in one process, one thread each, exchanging through shared memory: the test
// harness of the decomposition (docs/architecture.md, "Ranks"). A run of N virtual ranks
// executes the same code, the same collectives in the same order, as N MPI processes, so
// what its tests prove of the decomposition (results bit for bit those of one rank) holds
// for the MPI Comm that implements the same interface.
#pragma once

#include <functional>

#include "tessera/parallel/comm.hpp"

namespace tessera::parallel {

class VirtualRanks {
 public:
  explicit VirtualRanks(int ranks);
  ~VirtualRanks();
  int size() const { return ranks_; }

  // Runs f(comm) on every rank, each on its own thread, and returns when all are done. A
  // rank whose f returns or throws while others still enter collectives makes those
  // collectives throw Error(kInternal) (no rank waits forever: a failed test stays a
  // failure, not a hang); the exception of the rank that left first is rethrown here. A
  // run whose ranks should stop together agrees on errors first (Comm::agree).
  void run(const std::function<void(Comm&)>& f);

  struct Shared;  // the ranks' common state (virtual_ranks.cpp)

 private:
  class RankComm;
  int ranks_;
};

}  // namespace tessera::parallel
