// Parameter input far outside what a run needs: arrays of a million elements, long
// strings, integers beyond 64 bits, a directory or an unreadable file in place of the
// parameter file, an empty --restart. The program must finish quickly, either accept the
// input (where the key's rules allow it) or exit with the input-error code (2) and a
// short message that still names the file, the line and the key.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Result {
  int status = -1;
  std::string output;      // stdout and stderr
  double cpu_seconds = 0;  // user and system time of the command
};

// Runs the tessera binary with at most `cpu_limit_s` seconds of processor time (then
// SIGXCPU ends it, with a status that no test accepts) and two minutes of wall-clock
// time, so that a test of a slow path fails instead of hanging.
Result run(const std::string& args, int cpu_limit_s = 60, const std::string& prefix = "") {
  const std::string cmd = "ulimit -t " + std::to_string(cpu_limit_s) + "; timeout -k 5 120 " +
                          prefix + std::string(TESSERA_BINARY) + " " + args + " 2>&1";
  Result r;
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[65536];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  const int st = pclose(pipe);
  getrusage(RUSAGE_CHILDREN, &after);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * t.tv_usec; };
  r.cpu_seconds = seconds(after.ru_utime) - seconds(before.ru_utime) + seconds(after.ru_stime) -
                  seconds(before.ru_stime);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// This process's own folder for the files it writes, removed at the end.
std::filesystem::path temp_dir() {
  static const auto dir = [] {
    const auto d = std::filesystem::temp_directory_path() /
                   ("tessera_params_limits_test." + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

struct RemoveTempDir : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir(), ec);
  }
};
[[maybe_unused]] const auto* const kRemoveTempDir =
    ::testing::AddGlobalTestEnvironment(new RemoveTempDir);

std::string write_params(const std::string& name, const std::string& text) {
  const auto path = (temp_dir() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const std::string kSod = std::string(TESSERA_SOURCE_DIR) + "/problems/sod/sod.toml";

const char* kMinimal =
    "[run]\n"                // line 1
    "t_end = 0.1\n"          // line 2
    "[mesh]\n"               // line 3
    "nx = [16, 16, 16]\n"    // line 4
    "[problem]\n"            // line 5
    "name = \"uniform\"\n";  // line 6

// "[e, e, ..., e]" with n elements.
std::string array_of(std::size_t n, const std::string& element, const std::string& sep = ",") {
  std::string out = "[";
  out.reserve(n * (element.size() + sep.size()) + 2);
  for (std::size_t i = 0; i < n; ++i) out += (i ? sep : "") + element;
  return out + "]";
}

void expect_input_error(const Result& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.status, 2) << r.output.substr(0, 4000);
  for (const auto& n : needles)
    EXPECT_NE(r.output.find(n), std::string::npos) << "missing '" << n << "' in:\n"
                                                   << r.output.substr(0, 4000);
}

// An error message short enough to read, whatever the size of the value at fault.
constexpr std::size_t kMaxMessage = 2048;

void expect_short_input_error(const Result& r, const std::vector<std::string>& needles) {
  expect_input_error(r, needles);
  EXPECT_LT(r.output.size(), kMaxMessage) << r.output.substr(0, 4000);
}

// Parsing is linear in the size of the file. An earlier parser scanned the whole line of
// every array element and copied it into an error message for every string and every key
// of an inline table: the million elements below would have taken about half an hour.
// toml++ reads them in 0.5 s, and the bound is 10 s of processor time per command: room
// for a slower machine, and processor time rather than wall-clock time, which a busy CI
// machine stretches.
constexpr int kLinearBound = 10;

TEST(CliLimits, MillionElementArraysParseInLinearTime) {
  const std::size_t n = 1000000;
  struct Case {
    const char* name;
    std::string line;  // line 8, in [amr]
    int status;
    std::vector<std::string> needles;
  };
  std::string table = "{";
  for (int i = 0; i < 100000; ++i) table += (i ? ", k" : "k") + std::to_string(i) + " = 1";
  table += "}";
  const std::vector<Case> cases = {
      // Parsed in linear time, then refused: no hierarchy has a million levels.
      {"million_values.toml",
       "gradient_refine = " + array_of(n, "0.5"),
       2,
       {"amr.gradient_refine has 1000000 values", "at most 10 levels"}},
      {"million_integers.toml",
       "density_refine = " + array_of(n, "1"),
       2,
       {"amr.density_refine has 1000000 values"}},
      {"million_out_of_range.toml",
       "lohner_refine = " + array_of(n, "1.5"),
       2,
       {":8: amr.lohner_refine = [1.5, 1.5", "(1000000 elements)", "out of range"}},
      {"million_strings.toml",
       "names = " + array_of(n, "\"a\""),
       2,
       {":8: unknown key 'amr.names'"}},
      {"million_syntax_error.toml",
       "lohner_refine = " + array_of(n, "0.5").substr(0, 4 * n) + " x]",
       2,
       {":8: TOML syntax error", "expected comma or closing ']', saw 'x'"}},
      {"nested_arrays.toml",
       "nested = " + array_of(100000, "[1]"),
       2,
       {":8: unknown key 'amr.nested'"}},
      {"inline_table.toml",
       "lohner_refine = " + table,
       2,
       {":8: amr.lohner_refine = {k0 = 1", "(100000 keys)}", "wrong type"}},
  };
  for (const auto& c : cases) {
    const auto f = write_params(c.name, std::string(kMinimal) + "[amr]\n" + c.line + "\n");
    const Result r = run("check " + f, kLinearBound);
    SCOPED_TRACE(c.name);
    EXPECT_LT(r.cpu_seconds, kLinearBound);
    EXPECT_EQ(r.status, c.status) << r.output.substr(0, 2000);
    for (const auto& needle : c.needles)
      EXPECT_NE(r.output.find(needle), std::string::npos) << "missing '" << needle << "' in:\n"
                                                          << r.output.substr(0, 2000);
    if (c.status != 0) {
      EXPECT_LT(r.output.size(), kMaxMessage) << r.output.substr(0, 4000);
    }
    std::filesystem::remove(f);
  }
}

TEST(CliLimits, ErrorMessagesShowLargeArraysInlineAndTruncated) {
  const std::string big = array_of(40000, "1.5", ", ");
  {
    const auto f = write_params("wrong_type.toml", std::string(kMinimal) + "[hydro]\ncfl = " + big);
    const Result r = run("check " + f);
    expect_short_input_error(r, {f + ":8: hydro.cfl = [1.5, 1.5, 1.5", "(40000 elements)]",
                                 "has the wrong type", "expected a number"});
  }
  {
    const auto f =
        write_params("out_of_range.toml", std::string(kMinimal) + "[amr]\nlohner_refine = " + big);
    expect_short_input_error(run("check " + f), {f + ":8: amr.lohner_refine = [1.5, 1.5",
                                                 "(40000 elements)]", "is out of range", "[0, 1]"});
  }
  {
    // An inline table of 40,000 keys where a number is expected.
    std::string table = "{";
    for (int i = 0; i < 40000; ++i) table += (i ? ", k" : "k") + std::to_string(i) + " = 1";
    const auto f =
        write_params("table.toml", std::string(kMinimal) + "[hydro]\ncfl = " + table + "}\n");
    expect_short_input_error(run("check " + f),
                             {f + ":8: hydro.cfl = {k0 = 1", "(40000 keys)}", "wrong type"});
  }
  {
    // On the command line (a single argument may hold at most 128 KiB on Linux).
    const Result r = run("check " + kSod + " amr.lohner_refine=" + array_of(20000, "1.5"));
    expect_short_input_error(
        r, {"command-line override 'amr.lohner_refine=[1.5,1.5", "amr.lohner_refine = [1.5, 1.5",
            "(20000 elements)]", "out of range"});
  }
  {
    // A TOML syntax error at the end of a long line: the line is shown around the error.
    const auto f = write_params("syntax.toml", std::string(kMinimal) + "[amr]\nlohner_refine = " +
                                                   big.substr(0, big.size() - 1) + " x]\n");
    expect_short_input_error(
        run("check " + f),
        {f + ":8: TOML syntax error", "expected comma or closing ']'", " 8 | ...", "1.5 x]"});
  }
}

TEST(CliLimits, ErrorMessagesTruncateLongStringsAndNames) {
  const std::string x(100000, 'x');
  {
    const auto f =
        write_params("choice.toml", std::string(kMinimal) + "[hydro]\nriemann = \"" + x + "\"\n");
    expect_short_input_error(run("check " + f),
                             {f + ":8: hydro.riemann = \"xxxx", "(100000 characters)",
                              "one of: auto, hllc, hlld, hll, llf"});
  }
  {
    const auto f = write_params("key.toml", std::string(kMinimal) + "[hydro]\n" + x + " = 1\n");
    expect_short_input_error(run("check " + f),
                             {f + ":8: unknown key 'hydro.xxxx", "[hydro] accepts"});
  }
  {
    const auto f = write_params("section.toml", std::string(kMinimal) + "[" + x + "]\na = 1\n");
    expect_short_input_error(run("check " + f), {f + ":7: unknown section [xxxx", "sections are"});
  }
  {
    const auto f = write_params("problem.toml",
                                "[run]\nt_end = 0.1\n[mesh]\nnx = [16, 16, 16]\n"
                                "[problem]\nname = \"" +
                                    x + "\"\n");
    expect_short_input_error(run("check " + f), {f + ":6: unknown problem 'xxxx", "sod"});
  }
  {
    const Result r = run("check " + kSod + " run.wall_time=" + std::string(100000, '1'));
    expect_short_input_error(r, {"run.wall_time = \"1111", "expected hh:mm:ss"});
  }
  {
    // A syntax error in a long string: the line is cut around the error.
    const auto f =
        write_params("string_syntax.toml", std::string(kMinimal) + "[hydro]\nriemann = \"" + x);
    expect_short_input_error(run("check " + f),
                             {f + ":8: TOML syntax error", "end-of-file", " 8 | ...xxxx"});
  }
}

// Integers are 64-bit: a literal beyond that range must not be clamped to the largest
// integer (nor wrap around) but rejected (TOML 1.0: "an error must be thrown").
TEST(CliLimits, IntegersBeyond64BitsAreInputErrors) {
  const char* const too_big[] = {
      "100000000000000000000",                                                // 1e20
      "9223372036854775808",                                                  // 2^63
      "-9223372036854775809",                                                 // -2^63 - 1
      "0x1_0000_0000_0000_0000",                                              // 2^64
      "0o2000000000000000000001",                                             // 2^64 + 1
      "0b10000000000000000000000000000000000000000000000000000000000000001",  // 2^64 + 1
  };
  for (const char* v : too_big)
    expect_short_input_error(
        run("check " + kSod + " run.max_steps=" + v),
        {std::string("command-line override 'run.max_steps=") + v + "'",
         "run.max_steps = ", "is not a TOML value", "not representable in 64 bits"});
  // In the file, and in an array of integers.
  const auto f = write_params("max_steps.toml",
                              "[run]\nt_end = 0.1\nmax_steps = 1e20\n"
                              "[mesh]\nnx = [16, 16, 100000000000000000000]\n"
                              "[problem]\nname = \"uniform\"\n");
  expect_short_input_error(
      run("check " + f),
      {f + ":5: TOML syntax error", "'100000000000000000000' is not representable in 64 bits",
       " 5 | nx = [16, 16, 100000000000000000000]"});
  const auto g = write_params("max_steps_float.toml",
                              "[run]\nt_end = 0.1\nmax_steps = 1e20\n"
                              "[mesh]\nnx = [16, 16, 16]\n"
                              "[problem]\nname = \"uniform\"\n");
  expect_short_input_error(run("check " + g),
                           {g + ":3: run.max_steps = 1e+20", "expected an integer >= 1", "64-bit"});
  // Numbers that are not integers, or out of the key's own range.
  for (const char* v : {"1e20", "1.5", "1e6", "inf", "nan", "0", "-1"})
    expect_short_input_error(
        run("check " + kSod + " run.max_steps=" + v),
        {std::string("run.max_steps=") + v, "run.max_steps = ", "expected an integer >= 1"});
  // The extremes of the 64-bit range are integers like any other.
  const Result max = run("check " + kSod + " run.max_steps=9223372036854775807");
  EXPECT_EQ(max.status, 0) << max.output;
  EXPECT_NE(max.output.find("max_steps = 9223372036854775807"), std::string::npos) << max.output;
  expect_short_input_error(run("check " + kSod + " run.threads=-9223372036854775808"),
                           {"run.threads = -9223372036854775808 is out of range"});
  // A real-valued key keeps the value written, not a clamped one.
  // (Without plot files: output.dt would write 2e21 of them over such a run.)
  const Result t = run("check " + kSod + " run.t_end=100000000000000000000 output.enabled=false");
  EXPECT_EQ(t.status, 0) << t.output;
  EXPECT_NE(t.output.find("t_end = 1e+20"), std::string::npos) << t.output;
}

// A float beyond the range of a double is refused, in the file and on the command line
// (it was once read as the largest double, 1.8e308, without a word).
TEST(CliLimits, FloatsBeyondTheDoubleRangeAreInputErrors) {
  const auto f = write_params("huge_float.toml", std::string(kMinimal) + "[hydro]\ncfl = 1e400\n");
  expect_short_input_error(run("check " + f),
                           {f + ":8: TOML syntax error", "'1e400'", " 8 | cfl = 1e400"});
  expect_short_input_error(run("check " + kSod + " run.t_end=-1e400"),
                           {"command-line override 'run.t_end=-1e400'", "is not a TOML value"});
}

TEST(CliLimits, DirectoryInPlaceOfParameterFile) {
  const std::string dir = std::string(TESSERA_SOURCE_DIR) + "/problems/sod";
  for (const char* cmd : {"check ", "run "}) {
    expect_short_input_error(run(cmd + dir), {dir, "is a directory, not a parameter file"});
    expect_short_input_error(run(cmd + temp_dir().string()), {"is a directory"});
  }
}

// A named pipe that no program writes to is refused at once (opening it would wait for a
// writer forever); one that a program writes is read like a file.
TEST(CliLimits, NamedPipeInPlaceOfParameterFile) {
  const std::string fifo = (temp_dir() / "params.fifo").string();
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const Result idle = run("check " + fifo);
  EXPECT_EQ(idle.status, 2) << idle.output;
  EXPECT_NE(idle.output.find("is a pipe that nothing was written to"), std::string::npos)
      << idle.output;
  // A writer that opens the pipe a second after the check started.
  const Result fed =
      run("check " + fifo + " & p=$!; (sleep 1; cat " + kSod + " > " + fifo + "); wait $p");
  EXPECT_EQ(fed.status, 0) << fed.output;
  EXPECT_NE(fed.output.find("name = \"sod\""), std::string::npos) << fed.output;
  std::filesystem::remove(fifo);
}

TEST(CliLimits, UnreadableParameterFile) {
  // A path through a regular file fails for every user, root included.
  const std::string through_file = kSod + "/params.toml";
  expect_short_input_error(run("check " + through_file),
                           {through_file, "cannot open the parameter file", "Not a directory"});

  // A file without read permission. Root reads it anyway, so as root the check runs as
  // the user nobody (setpriv), when that is possible.
  const std::string f = write_params("unreadable.toml", kMinimal);
  ASSERT_EQ(chmod(f.c_str(), 0), 0);
  std::string prefix;
  if (geteuid() == 0) {
    if (std::system("setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null") != 0)
      GTEST_SKIP() << "running as root without setpriv: cannot make a file unreadable";
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  const Result r = run("check " + f, 60, prefix);
  if (r.status == 126 || r.status == 127)
    GTEST_SKIP() << "the binary cannot be run as user nobody: " << r.output;
  expect_short_input_error(r, {f, "cannot open the parameter file", "Permission denied"});
}

TEST(CliLimits, EmptyRestartIsAnInputError) {
  // Before, an empty --restart read as no --restart at all: a fresh run (of one step here).
  const auto f = write_params("restart.toml", kMinimal);
  for (const char* restart : {"--restart \"\"", "--restart ''"})
    expect_short_input_error(run("run " + f + " output.enabled=false run.max_steps=1 " + restart),
                             {"--restart needs a checkpoint path or 'latest'"});
  // `--restart=` alone: the command line's own error.
  EXPECT_EQ(run("run " + f + " output.enabled=false run.max_steps=1 --restart=").status, 2);
}

}  // namespace
