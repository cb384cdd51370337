// The run record on disk (output.history): the history file's rows and the end-of-run
// summary as JSON, beside the log that holds the same figures.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera::evolve {

void Simulation::write_history_row(double dt) {
  // Collectives on every rank; rank 0 writes.
  const std::vector<double> tot = conserved_totals();
  std::vector<double> row = {double(step_), time_, dt};
  for (int v = 0; v < fields_.size(); ++v)
    if (fields_[v].flux_corrected) row.push_back(tot[v]);
  if (gravity_) row.push_back(gravity_->potential_energy(*mesh_));
  row.push_back(double(floored_));
  for (int level = 0; level <= refinement_.max_level; ++level)
    row.push_back(level < mesh_->num_levels()
                      ? double(mesh_->groups(level).size()) * mesh::kFamilySize * mesh::kPatchCells
                      : 0.0);
  row.push_back(timers_.total());
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s)
    row.push_back(timers_.seconds(Stage(s)));
  parallel::agreed(*comm_, [&] {
    if (history_) history_->row(row);
  });
  last_history_step_ = step_;
}

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += strprintf("\\u%04x", c);
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A value of the machine summary: a JSON number where the text is one, else a string.
std::string json_value(const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (!v.empty() && end == v.c_str() + v.size() && errno == 0 && std::isfinite(x)) return v;
  return json_string(v);
}

}  // namespace

void Simulation::write_summary_json(const RunSummary& run) const {
  const std::string path = params_.string("output.dir") + "/" + problem_name_ + ".summary.json";
  const char* stop = run.stop == StopReason::kFinished   ? "finished"
                     : run.stop == StopReason::kWallTime ? "wall_time"
                                                         : "signal";
  std::string json = "{\n";
  json += "  \"problem\": " + json_string(problem_name_) + ",\n";
  json += "  \"run_id\": " + json_string(run_id_) + ",\n";
  json +=
      strprintf("  \"stop\": \"%s\",\n  \"exit_code\": %d,\n", stop, static_cast<int>(run.stop));
  json += "  \"checkpoint\": " + json_string(run.checkpoint) + ",\n";
  json += strprintf("  \"time\": %.17g,\n  \"ranks\": %d,\n  \"plot_files\": %d,\n", run.time,
                    comm_->size(), run.plot_files);
  // Every key of the log's "summary:" line (seconds, rates and counts).
  std::istringstream words(machine_summary(run).substr(std::strlen("summary: ")));
  std::string word;
  std::vector<std::string> pairs;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    pairs.push_back("  " + json_string(word.substr(0, eq)) + ": " +
                    json_value(word.substr(eq + 1)));
  }
  for (std::size_t i = 0; i < pairs.size(); ++i)
    json += pairs[i] + (i + 1 < pairs.size() ? ",\n" : "\n");
  json += "}\n";
  const std::string temporary = path + ".tmp";
  std::ofstream out(temporary, std::ios::trunc);
  out << json;
  out.close();
  if (!out || std::rename(temporary.c_str(), path.c_str()) != 0)
    throw Error(ErrorKind::kIo,
                "cannot write the run summary '" + path + "': " + std::strerror(errno));
}

}  // namespace tessera::evolve
