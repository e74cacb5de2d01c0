// Every numeric option of the command line with a range, at both ends of it and one step past each:
// the ends are taken, one step past is refused with exit 2 and the option named. Each command line
// is one that ends at once after parsing (no driver, no agent, nothing listening), so a value taken
// at its limit costs no wait.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gw_run.h"

namespace gw::test {
namespace {

struct Ranged {
  std::vector<std::string> command;  // what goes before the option
  std::string option;
  std::string low, high;       // the range's ends, both taken
  std::string below, above;    // one step past each, both refused
  std::string shown = option;  // the name CLI11 gives in its refusal (the long one)
};

void PrintTo(const Ranged& r, std::ostream* os) { *os << r.shown << " " << r.low << ".." << r.high; }

std::vector<Ranged> table() {
  return {
      {{"--nvml-lib", "/nonexistent", "health", "--standalone"}, "--seconds", "0.5", "600", "0.49", "600.01"},
      {{"--nvml-lib", "/nonexistent", "slurm", "healthcheck", "--standalone", "--scontrol", "/nonexistent", "--node",
        "n1"},
       "--seconds",
       "0.5",
       "60",
       "0.49",
       "60.01"},
      {{"hash-password"}, "--cost", "4", "31", "3", "32"},
      {{"fleet", "--prometheus", "http://127.0.0.1:1"}, "--top", "1", "1000", "0", "1001"},
      {{"fleet", "--prometheus", "http://127.0.0.1:1"}, "--timeout", "0.1", "300", "0.09", "300.01"},
      {{"job", "list"}, "--limit", "1", "10000", "0", "10001"},
      {{"records"}, "--limit", "1", "10000", "0", "10001"},
      {{"cluster", "diag", "--sinfo", "/nonexistent", "--srun", "/nonexistent", "--nodes", "n1"},
       "-r",
       "1",
       "3",
       "0",
       "4",
       "--level"},
      {{"cluster", "diag", "--sinfo", "/nonexistent", "--srun", "/nonexistent", "--nodes", "n1"},
       "--timeout",
       "1",
       "1440",
       "0",
       "1441"},
      {{"--nvml-lib", "/nonexistent", "diag"}, "-r", "1", "3", "0", "4", "--run"},
      {{"--nvml-lib", "/nonexistent", "diag", "-r", "3"}, "--duration", "0.001", "604800", "0", "604800.001"},
  };
}

// CLI11's refusal: the option named first, and a pointer to --help.
bool refusedAsOutOfRange(const GwResult& r, const std::string& shown) {
  return r.code == 2 && r.err.starts_with(shown + ": ") && r.err.find("Run with --help") != std::string::npos;
}

class CliRanges : public ::testing::TestWithParam<Ranged> {};

TEST_P(CliRanges, EachEndIsTakenAndOneStepPastIsRefused) {
  const Ranged& o = GetParam();
  TempDir dir;  // no agent, no data: each command that is let through ends at once
  const std::map<std::string, std::string> env{{"GPUWARDEN_DATA_DIR", dir.path() + "/data"},
                                               {"GPUWARDEN_RUNTIME_DIR", dir.path() + "/run"}};
  auto run = [&](const std::string& value) {
    std::vector<std::string> argv = o.command;
    argv.insert(argv.end(), {o.option, value});
    return runGw(argv, env);
  };
  for (const std::string& v : {o.low, o.high}) {
    auto r = run(v);
    EXPECT_FALSE(refusedAsOutOfRange(r, o.shown)) << v << ": " << describe(r);
    EXPECT_NE(r.code, -1) << v << " did not end: " << describe(r);
  }
  for (const std::string& v : {o.below, o.above}) {
    auto r = run(v);
    EXPECT_TRUE(refusedAsOutOfRange(r, o.shown)) << v << ": " << describe(r);
    EXPECT_NE(r.err.find(v), std::string::npos) << v << ": " << describe(r);
  }
}

// The test's name: the command's words and the option, letters and digits only.
std::string nameOf(const ::testing::TestParamInfo<Ranged>& info) {
  std::string name;
  auto letters = [&](const std::string& w) {
    for (char c : w)
      if (std::isalnum(static_cast<unsigned char>(c))) name += c;
  };
  for (const auto& w : info.param.command)
    if (!w.starts_with("-") && !w.starts_with("/") && w.find(':') == std::string::npos && w != "n1") {
      letters(w);
      name += "_";
    }
  letters(info.param.shown);
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryRangedOption, CliRanges, ::testing::ValuesIn(table()), nameOf);

}  // namespace
}  // namespace gw::test
