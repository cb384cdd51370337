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

// A restart whose run.t_end lies before the checkpoint's time, or whose run.max_steps lies
// below its step, is an Error(kInput): a run cannot go back. One already at its end logs a
// note (it will do nothing and exit 0).
void check_restart_end(const Params& params, const io::CheckpointHeader& header,
                       const std::string& checkpoint_path);

// Makes output.dir safe for a run of family `run_id` (called with the directory locked):
// a fresh run (`checkpoint_path` empty) refuses a directory holding checkpoints or plot
// files of its problem; a restart refuses one holding checkpoints or plot files of another
// run family (files that cannot be read, and plot files written before plot files named
// their run, are not attributed to anyone and left alone). Error(kInput) naming the
// files, unless `overwrite`: then those files are deleted (a plot file with its .xdmf),
// each logged.
void claim_output_dir(const Params& params, const std::string& run_id,
                      const std::string& checkpoint_path, bool overwrite);

}  // namespace tessera::evolve
