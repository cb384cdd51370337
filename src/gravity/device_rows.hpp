// Rows of doubles moved between arrays of the ranks' GPUs (docs/architecture.md,
// "Self-gravity on several GPUs"): the root density from the ranks' own patches to the
// z-slabs of the distributed FFT, and the potential from the slabs to the ranks that read
// it. The host plans which rows go where once per mesh (RowPlan); each move is then one
// pack kernel, a copy per peer (GPU to GPU between processes of one host, CUDA IPC, or
// through page-locked host memory and Comm::exchange) and one unpack kernel. move_rows
// applies a plan to host arrays: the same moves, for the tests of the plans.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/parallel/comm.hpp"

namespace tessera::gravity {

struct RowPlan {
  int width = 0;  // doubles per row
  // Doubles in this rank's source and destination arrays: every row must lie inside them.
  std::int64_t source_size = 0, destination_size = 0;
  // [q]: where the rows this rank sends to rank q begin in the source array, in the order
  // q receives them (q == this rank: the rows that stay).
  std::vector<std::vector<std::int64_t>> send;
  // [q]: where the rows from rank q go in the destination array, in q's sending order.
  std::vector<std::vector<std::int64_t>> receive;
};

class DeviceRows {
 public:
  virtual ~DeviceRows() = default;
  // A collective: every row of the plan from `source` (this rank's GPU) into `destination`
  // on its receiver's GPU. Rows that land on the same place must carry the same values.
  virtual void move(const double* source, double* destination) = 0;
  // Closes this rank's mappings of the other ranks' buffers. Before any rank lets its
  // object go, every rank disconnects and then they agree: a buffer must not be freed while
  // another process still maps it.
  virtual void disconnect() = 0;
  // Bytes this rank sent to other ranks so far, GPU to GPU and through the host.
  virtual double peer_bytes() const = 0;
  virtual double host_bytes() const = 0;
  // How the pieces travel, for the log: "GPU to GPU (CUDA IPC) between N rank pairs, ...".
  virtual std::string routes() const = 0;
};

// A collective; route as mpi.device_exchange ("host": every piece through host memory).
// Checks that every receiver expects the rows its senders send (Error kInternal, agreed).
// Throws Error(kInput) in a build without the CUDA backend.
std::unique_ptr<DeviceRows> make_device_rows(const RowPlan& plan, parallel::Comm& comm,
                                             const std::string& route);

// Throws Error(kInternal) when a row of the plan lies outside its array.
void check_rows(const RowPlan& plan);

// The plan's moves on host arrays (a collective, through Comm::exchange).
void move_rows(const RowPlan& plan, parallel::Comm& comm, const double* source,
               double* destination);

}  // namespace tessera::gravity
