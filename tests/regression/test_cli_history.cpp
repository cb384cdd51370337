// The run record on disk (output.history): the history file of a run holds a row at the
// first step and at every output.history_interval, with the log's totals, readable by
// numpy.loadtxt; a restart from an earlier checkpoint drops the rows after it and appends
// rows equal to those of the uninterrupted run (wall times aside); the end-of-run summary
// is valid JSON with the log's figures.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace {

namespace fs = std::filesystem;

struct History {
  std::vector<std::string> header, columns;
  std::vector<std::vector<std::string>> rows;  // the words of each data line
  int comments = 0;                            // '#' lines after the two of the header
};

History read_history(const fs::path& path) {
  History h;
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (n == 0) h.header = w;
    if (n == 1) h.columns = w;
    if (n >= 2) {
      if (!line.empty() && line[0] == '#')
        ++h.comments;
      else
        h.rows.push_back(w);
    }
    ++n;
  }
  return h;
}

// The value of `name` in the log's last "totals: step <step> ..." line.
std::string logged_total(const std::string& log, long step, const std::string& name) {
  const std::string head = "totals: step " + std::to_string(step) + " ";
  const auto at = log.rfind(head);
  if (at == std::string::npos) return "";
  std::istringstream words(log.substr(at, log.find('\n', at) - at));
  for (std::string w; words >> w;)
    if (w == name && (words >> w)) return w;
  return "";
}

TEST(CliHistory, RowsSummaryAndRestart) {
  const fs::path dir = fs::temp_directory_path() / "tessera_cli_test" / "history";
  fs::remove_all(dir);
  const std::string sod = "run " + std::string(TESSERA_SOURCE_DIR) +
                          "/problems/sod/sod.toml run.threads=1 output.history_interval=2 "
                          "output.checkpoint_interval=3 output.dir=" +
                          dir.string();
  const auto first = tessera::testing::run_tessera(sod + " run.max_steps=7");
  ASSERT_EQ(first.status, 0) << first.output;
  const History h = read_history(dir / "sod.hst");
  ASSERT_GE(h.header.size(), 8u);
  EXPECT_EQ(h.header[1] + h.header[2] + h.header[3] + h.header[4] + h.header[5],
            "Tesserahistoryofproblemsod,");
  ASSERT_GE(h.columns.size(), 10u);
  EXPECT_EQ(h.columns[1], "[1]=step");
  EXPECT_EQ(h.columns[2], "[2]=time");
  EXPECT_EQ(h.columns[4], "[4]=mass");
  const std::size_t width = h.columns.size() - 1;
  // Rows at the first step, every second step and the last.
  std::vector<std::string> steps;
  for (const auto& r : h.rows) {
    EXPECT_EQ(r.size(), width);
    steps.push_back(r.at(0));
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"0", "2", "4", "6", "7"}));
  // The last row's totals are the log's.
  ASSERT_FALSE(h.rows.empty());
  const std::string mass = logged_total(first.output, 7, "mass");
  ASSERT_FALSE(mass.empty()) << first.output;
  EXPECT_EQ(h.rows.back().at(3), mass);
  EXPECT_EQ(h.rows.back().at(4), logged_total(first.output, 7, "momx"));

  // numpy reads it as written (where the machine has numpy).
  if (std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0) {
    const std::string cmd = "/usr/bin/python3 -c \"import numpy; a = numpy.loadtxt('" +
                            (dir / "sod.hst").string() + "'); print(a.shape)\"";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[128] = {};
    const std::string shape = fgets(buf, sizeof buf, p) ? buf : "";
    pclose(p);
    EXPECT_EQ(shape, "(5, " + std::to_string(width) + ")\n");
  }

  // The summary: the log's figures as JSON.
  std::ifstream js(dir / "sod.summary.json");
  std::stringstream text;
  text << js.rdbuf();
  EXPECT_NE(text.str().find("\"stop\": \"finished\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"steps\": 7"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"updates_per_s\": "), std::string::npos) << text.str();
  if (std::system("/usr/bin/python3 -c 'import json' 2>/dev/null") == 0) {
    const std::string cmd = "/usr/bin/python3 -c \"import json; d = json.load(open('" +
                            (dir / "sod.summary.json").string() +
                            "')); assert d['steps'] == 7 and d['problem'] == 'sod'\"";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << text.str();
  }

  // A restart from step 3 drops rows 4 .. 7 and writes them again, equal but for the wall
  // times (the columns from "wall" on).
  const auto restart = tessera::testing::run_tessera(sod + " run.max_steps=7 --restart " +
                                                     (dir / "sod.chk.00000003.h5").string());
  ASSERT_EQ(restart.status, 0) << restart.output;
  const History again = read_history(dir / "sod.hst");
  EXPECT_EQ(again.header, h.header);
  EXPECT_EQ(again.columns, h.columns);
  EXPECT_EQ(again.comments, 1);  // "# restart from step 3"
  ASSERT_EQ(again.rows.size(), h.rows.size());
  std::size_t wall = 0;
  auto wall_column = [](std::size_t c) {
    std::string name = "[";  // appended: GCC 12 -Wrestrict
    name += std::to_string(c);
    name += "]=wall";
    return name;
  };
  while (wall < width && h.columns[wall + 1] != wall_column(wall + 1)) ++wall;
  ASSERT_LT(wall, width);
  for (std::size_t r = 0; r < h.rows.size(); ++r)
    for (std::size_t c = 0; c < wall; ++c)
      EXPECT_EQ(again.rows[r].at(c), h.rows[r].at(c)) << "row " << r << ", column " << c + 1;

  // A row cut off at the end (a run killed while writing it) is dropped by the next
  // restart, which goes on from the last checkpoint.
  std::ofstream(dir / "sod.hst", std::ios::app) << "8 2.5e-02 3.0";
  const auto more = tessera::testing::run_tessera(sod + " run.max_steps=9 --restart " +
                                                  (dir / "sod.chk.00000007.h5").string());
  ASSERT_EQ(more.status, 0) << more.output;
  EXPECT_NE(more.output.find("a malformed row (cut off?)"), std::string::npos) << more.output;
  steps.clear();
  for (const auto& r : read_history(dir / "sod.hst").rows) {
    EXPECT_EQ(r.size(), width);
    steps.push_back(r.at(0));
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"0", "2", "4", "6", "7", "8", "9"}));
}

// The end of the log and the summary count the cells that first-order flux correction
// recomputed and the floored ones from t = 0: a restart goes on from the checkpoint's
// counts. (The 32^3 Sedov blast with vl2 corrects 24 cells in step 4, none after.)
TEST(CliHistory, RepairCountsGoOnAcrossARestart) {
  const fs::path dir = fs::temp_directory_path() / "tessera_cli_test" / "repairs";
  fs::remove_all(dir);
  const std::string sedov = "run " + std::string(TESSERA_SOURCE_DIR) +
                            "/problems/sedov/sedov.toml mesh.nx=[32,32,32] "
                            "hydro.integrator=vl2 run.max_steps=6 output.checkpoint_interval=4 "
                            "output.dir=" +
                            dir.string();
  auto summary = [&] {
    std::ifstream js(dir / "sedov.summary.json");
    std::stringstream text;
    text << js.rdbuf();
    return text.str();
  };
  const auto whole = tessera::testing::run_tessera(sedov);
  ASSERT_EQ(whole.status, 0) << whole.output;
  const std::string line =
      "repaired cells: 24 recomputed by first-order flux correction (fofc), 0 floored";
  EXPECT_NE(whole.output.find(line), std::string::npos) << whole.output;
  EXPECT_NE(summary().find("\"fofc\": 24,"), std::string::npos) << summary();
  EXPECT_NE(summary().find("\"floors\": 0"), std::string::npos) << summary();
  // What the correction cost: one round, which solved the 8 groups of the 32^3 grid again
  // (no refluxing, so no solve to undo) in one batch.
  EXPECT_NE(whole.output.find("fofc in this run: rounds 1, group solves 8, batches 1, "),
            std::string::npos)
      << whole.output;
  EXPECT_NE(summary().find("\"fofc_solves\": 8,"), std::string::npos) << summary();
  // Each step line counts the repairs since the line before it, so the lines printed
  // (here the first and the last step's: the others fall between lines by wall time)
  // add up to the run's count.
  long long on_step_lines = 0;
  std::istringstream log(whole.output);
  for (std::string l; std::getline(log, l);) {
    const auto at = l.find("  fofc ");
    if (l.starts_with("step ") && at != std::string::npos)
      on_step_lines += std::stoll(l.substr(at + 7));
  }
  EXPECT_EQ(on_step_lines, 24) << whole.output;
  const auto restart = tessera::testing::run_tessera(sedov + " --restart " +
                                                     (dir / "sedov.chk.00000004.h5").string());
  ASSERT_EQ(restart.status, 0) << restart.output;
  EXPECT_NE(restart.output.find(line), std::string::npos) << restart.output;
  EXPECT_NE(summary().find("\"fofc\": 24,"), std::string::npos) << summary();
}

}  // namespace
