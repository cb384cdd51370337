// The process's MPI ranks (docs/architecture.md, "Ranks"): one binary runs on one rank
// without a launcher and on N under `mpirun -np N`. A build without MPI (TESSERA_MPI=OFF)
// has the same functions and is always one rank.
//
// Life of a run: start_mpi() first (before any thread is started), world_comm() for the
// Simulation, end_mpi() last, with the exit code. An error that every rank agreed on
// (Comm::agree) ends all ranks together through MPI_Finalize, each with the same exit code;
// any other error on a rank of several ends the job with MPI_Abort (the launcher stops the
// other ranks), so that no rank waits forever in a collective the failed one will not reach.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "tessera/parallel/comm.hpp"

namespace tessera::parallel {

// Whether this binary was built with MPI.
bool mpi_built();

// Initialises MPI (MPI_Init_thread, MPI_THREAD_FUNNELED: only the main thread calls MPI) when
// the binary has it and a launcher (mpirun, mpiexec, srun) started the process; a process
// started without one is a job of one rank. A second call does nothing.
void start_mpi();

// The run's ranks: the serial Comm on one process (without MPI, or an MPI world of one
// rank), else a Comm over MPI_COMM_WORLD.
Comm& world_comm();

// Whether `comm` is the MPI world of several processes (what MPI-IO can open a file over),
// not one rank or ranks that are threads of one process (VirtualRanks).
bool is_mpi_world(const Comm& comm);

// The rank among the ranks of this host, and their number (MPI_COMM_TYPE_SHARED): which
// GPU a rank takes. 0 and 1 on one rank.
int node_rank();
int node_size();

// Whether the MPI library reads and writes GPU memory itself (CUDA-aware: Comm::post may
// then be given device pointers). Open MPI says so through MPIX_Query_cuda_support; a
// library that cannot say is taken not to.
bool mpi_device_messages();
// Values in all (every rank's together) below which MPI's Comm::allgather is one
// MPI_Allgatherv (int counts and displacements); at or beyond it, messages from the one
// buffer. Settable so that a test takes the second path with small data.
void set_allgather_collective_limit(std::int64_t values);
// The name of this host (for the log's table of ranks).
std::string host_name();

// When `error` is the error that a Comm::agree of this process threw (so every rank holds
// it), the rank it came from; else -1.
int agreed_error_rank(const std::exception& error);

// Ends MPI: MPI_Finalize when the run ends on every rank alike (`together`: the command
// returned its exit code, or failed with an agreed error), MPI_Abort(exit_code) otherwise.
// Nothing without MPI or before start_mpi().
void end_mpi(int exit_code, bool together);

}  // namespace tessera::parallel
