#include "tessera/evolve/restart.hpp"

#include <filesystem>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/io/history.hpp"
#include "tessera/io/output_dir.hpp"

namespace tessera::evolve {

Params restart_params(const Params& requested, const std::vector<std::string>& overrides,
                      const io::CheckpointHeader& header, const std::string& checkpoint_path) {
  const Params stored = load_params_from_string(
      header.parameters, "parameters stored in checkpoint '" + checkpoint_path + "'", {},
      parameter_schema());
  // Another problem's checkpoint (a wrong path) is refused, not merged into this one.
  if (requested.string("problem.name") != stored.string("problem.name"))
    throw Error(ErrorKind::kInput, "the parameter file sets problem.name = \"" +
                                       requested.string("problem.name") + "\" but checkpoint '" +
                                       checkpoint_path + "' is of problem \"" +
                                       stored.string("problem.name") + "\"");
  Params result = requested;
  for (const ParamSpec& spec : requested.specs()) {
    const std::string name = spec.name();
    bool known = false;
    for (const ParamSpec& s : stored.specs()) known = known || s.name() == name;
    if (!known) {
      if (may_change_on_restart(name)) continue;
      throw Error(ErrorKind::kInput, "the parameter file sets " + name +
                                         ", which the run in checkpoint '" + checkpoint_path +
                                         "' did not have (another problem?)");
    }
    if (requested.value(name) == stored.value(name)) continue;
    const std::string now = format_param_value(requested.value(name));
    const std::string then = format_param_value(stored.value(name));
    if (may_change_on_restart(name)) {
      log_line("restart: %s = %s (the checkpoint's run had %s)", name.c_str(), now.c_str(),
               then.c_str());
      continue;
    }
    bool overridden = false;
    for (const std::string& o : overrides)
      overridden = overridden || o.substr(0, o.find('=')) == name;
    // The parameter file (without the original run's command-line overrides) does not
    // decide what the checkpoint's run was: its value is the checkpoint's.
    if (!overridden) {
      result.set(spec, stored.value(name));
      log_line("restart: %s = %s from the checkpoint (the parameter file has %s)", name.c_str(),
               then.c_str(), now.c_str());
      continue;
    }
    // An override on the restart's command line that changes the solution is refused.
    throw Error(ErrorKind::kInput,
                "override " + name + "=" + now + " but checkpoint '" + checkpoint_path +
                    "' was written with " + then + "; this key cannot change on restart (only " +
                    restart_changeable_keys(false) + " can; start a new run to change it)");
  }
  return result;
}

std::string resolve_checkpoint(const std::string& spec, const Params& requested) {
  if (spec != "latest") return spec;
  const std::string dir = requested.string("output.dir");
  const std::string problem = requested.string("problem.name");
  const auto found = io::list_checkpoints(dir, problem);
  // Newest first; a candidate is taken only once every byte of it checks out (the file
  // digest, as `tessera verify` checks it), so that a damaged newest checkpoint does not
  // stop a resubmitted job: it is skipped, with the reason, for the newest intact one.
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    try {
      const bool sealed = io::check_file_digest(*it);
      io::CheckpointReader reader(*it);
      if (!sealed) reader.verify_file_digest();
      (void)reader.state();
      return *it;
    } catch (const Error& e) {
      log_line("warning: skipping checkpoint: %s", e.what());
    }
  }
  throw Error(ErrorKind::kIo, "--restart latest: no usable checkpoint (" + problem +
                                  ".chk.*.h5) in output.dir '" + dir + "'");
}

void check_restart_end(const Params& params, const io::CheckpointHeader& header,
                       const std::string& checkpoint_path) {
  const double t_end = params.real("run.t_end");
  const long long max_steps = params.integer("run.max_steps");
  if (t_end < header.time)
    throw Error(ErrorKind::kInput,
                strprintf("run.t_end = %.17g is earlier than the time of checkpoint '%s' (t = "
                          "%.17g): the run cannot go back; give a later run.t_end",
                          t_end, checkpoint_path.c_str(), header.time));
  if (max_steps < header.step)
    throw Error(ErrorKind::kInput,
                strprintf("run.max_steps = %lld is below the step of checkpoint '%s' (step "
                          "%lld): the run cannot go back; give a larger run.max_steps",
                          max_steps, checkpoint_path.c_str(), static_cast<long long>(header.step)));
  if (t_end == header.time || max_steps == header.step)
    log_line(
        "note: checkpoint '%s' is already at the end of the run (t = %.9g, step %lld): "
        "nothing to do; raise run.t_end or run.max_steps to continue it",
        checkpoint_path.c_str(), header.time, static_cast<long long>(header.step));
}

void claim_output_dir(const Params& params, const std::string& run_id,
                      const std::string& checkpoint_path, bool overwrite) {
  namespace fs = std::filesystem;
  const std::string dir = params.string("output.dir");
  const std::string problem = params.string("problem.name");
  const bool fresh = checkpoint_path.empty();
  std::vector<std::string> others, plots;
  // Plot files: a new run's would sit beside (or replace some of) an earlier run's, and
  // whatever reads "the last plot file" would read the wrong run. A restart keeps its own
  // run's (and files written before plot files named their run).
  for (const std::string& f : io::list_plot_files(dir, problem)) {
    if (fresh) {
      plots.push_back(f);
      continue;
    }
    const auto id = io::plot_run_id(f);
    if (id && !id->empty() && *id != run_id) plots.push_back(f);
  }
  // The history file: a new run's rows would continue another run's.
  const std::string history = io::history_file_name(dir, problem);
  std::error_code exists_ec;
  if (fs::exists(history, exists_ec)) {
    const auto id = io::history_run_id(history);
    if (fresh || (id && *id != run_id)) plots.push_back(history);
  }
  for (const std::string& f : io::list_checkpoints(dir, problem)) {
    std::error_code ec;
    if (!fresh && fs::equivalent(f, checkpoint_path, ec)) continue;
    if (fresh) {
      others.push_back(f);
      continue;
    }
    // Unreadable files cannot be attributed: they are neither refused nor removed.
    const auto id = io::checkpoint_run_id(f);
    if (id && *id != run_id) others.push_back(f);
  }
  if (others.empty() && plots.empty()) return;
  if (!overwrite) {
    std::vector<std::string> files = others;
    files.insert(files.end(), plots.begin(), plots.end());
    std::string list;
    for (std::size_t i = 0; i < files.size() && i < 3; ++i) list += (i ? ", " : "") + files[i];
    if (files.size() > 3) list += strprintf(" and %zu more", files.size() - 3);
    const std::string what = others.empty()  ? "plot files"
                             : plots.empty() ? "checkpoints"
                                             : "checkpoints and plot files";
    throw Error(
        ErrorKind::kInput,
        "output.dir '" + dir + "' holds " + what + " of " +
            (fresh ? std::string("an earlier run") : "another run than '" + checkpoint_path + "'") +
            " (" + list + ")" +
            (fresh && !others.empty() ? ": continue that run with --restart latest, or" : ";") +
            " pass --overwrite to delete them and write this run's there, or give this "
            "run another output.dir");
  }
  auto remove = [&](const std::string& f, const char* what) {
    std::error_code ec;
    if (!fs::remove(f, ec) && ec)
      throw Error(ErrorKind::kIo, "--overwrite: cannot remove '" + f + "': " + ec.message());
    log_line("removed %s (%s of another run; --overwrite)", f.c_str(), what);
  };
  for (const std::string& f : others) remove(f, "checkpoint");
  for (const std::string& f : plots) {
    if (f == history) {
      remove(f, "history file");
      continue;
    }
    remove(f, "plot file");
    std::error_code ec;
    fs::remove(f + ".xdmf", ec);  // its companion, if there is one
    if (ec)
      throw Error(ErrorKind::kIo, "--overwrite: cannot remove '" + f + ".xdmf': " + ec.message());
  }
}

}  // namespace tessera::evolve
