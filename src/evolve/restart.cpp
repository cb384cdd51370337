#include "tessera/evolve/restart.hpp"

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/schema.hpp"

namespace tessera::evolve {

Params restart_params(const Params& requested, const std::vector<std::string>& overrides,
                      const io::CheckpointHeader& header, const std::string& checkpoint_path) {
  const Params stored = load_params_from_string(
      header.parameters, "parameters stored in checkpoint '" + checkpoint_path + "'", {},
      parameter_schema());
  for (const ParamSpec& spec : requested.specs()) {
    const std::string name = spec.name();
    if (may_change_on_restart(name)) continue;
    bool known = false;
    for (const ParamSpec& s : stored.specs()) known = known || s.name() == name;
    if (!known)
      throw Error(ErrorKind::kInput, "the parameter file sets " + name +
                                         ", which the run in checkpoint '" + checkpoint_path +
                                         "' did not have (another problem?)");
    if (requested.value(name) == stored.value(name)) continue;
    // Repeating the original command line with --restart added is fine; changing the
    // solution is not.
    std::string source = "the parameter file sets " + name + " = ";
    for (const std::string& o : overrides)
      if (o.substr(0, o.find('=')) == name) source = "override " + name + "=";
    throw Error(ErrorKind::kInput,
                source + format_param_value(requested.value(name)) + " but checkpoint '" +
                    checkpoint_path + "' was written with " +
                    format_param_value(stored.value(name)) +
                    "; this key cannot change on restart (only " + restart_changeable_keys(false) +
                    " can; start a new run to change it)");
  }
  // Same keys on both sides now, so the requested set is the checkpoint's with the
  // changeable keys replaced.
  return requested;
}

std::string resolve_checkpoint(const std::string& spec, const Params& requested) {
  if (spec != "latest") return spec;
  const std::string dir = requested.string("output.dir");
  const std::string problem = requested.string("problem.name");
  const auto found = io::list_checkpoints(dir, problem);
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    try {
      io::CheckpointReader reader(*it);
      (void)reader.state();
      return *it;
    } catch (const Error& e) {
      log_line("warning: skipping checkpoint: %s", e.what());
    }
  }
  throw Error(ErrorKind::kIo, "--restart latest: no usable checkpoint (" + problem +
                                  ".chk.*.h5) in output.dir '" + dir + "'");
}

}  // namespace tessera::evolve
