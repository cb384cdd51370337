// Restart: which checkpoint, and with which parameters.
#pragma once

#include <string>
#include <vector>

#include "tessera/core/params.hpp"
#include "tessera/io/checkpoint.hpp"

namespace tessera::evolve {

// The parameters of a run restarted from a checkpoint: the checkpoint's own, with the keys
// that may change on restart (may_change_on_restart) taken from `requested` (the parameter
// file and overrides). Any other key whose value differs from the checkpoint's, from the
// file or from an override (`overrides` names the source in the message), is an
// Error(kInput) naming the key and both values: a restart continues the same run.
Params restart_params(const Params& requested, const std::vector<std::string>& overrides,
                      const io::CheckpointHeader& header, const std::string& checkpoint_path);

// `spec` is a checkpoint path, or "latest": the newest checkpoint of the run's problem in
// output.dir that opens and passes its checks (an older one is tried when the newest is
// damaged, with a warning). Throws Error(kIo) when there is none.
std::string resolve_checkpoint(const std::string& spec, const Params& requested);

}  // namespace tessera::evolve
