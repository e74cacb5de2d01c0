// Output that cannot be written (standard output or -f on a full disk: /dev/full) is said on
// standard error and never exits 0; a loop ends instead of sampling into the void; a command's own
// non-zero exit is kept, since it still says what was found.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gw_run.h"

namespace gw::test {
namespace {

using namespace std::chrono_literals;

// gpuwarden ARGS > /dev/full, through the shell that an operator's redirection goes through.
GwResult runToFullDisk(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$0\" \"$@\" > /dev/full", GW_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  platform::RunOptions o;
  o.timeout = 60000ms;
  o.env = env;
  o.max_output = 1 << 20;
  platform::SystemProcessRunner runner;
  auto r = runner.run(argv, o);
  return {r.exit_code, r.out, r.err};
}

class OutputLost : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(std::filesystem::exists("/dev/full")) << "the tests need /dev/full"; }
  TempDir dir;
  std::map<std::string, std::string> env{{"GPUWARDEN_DATA_DIR", dir.path() + "/data"},
                                         {"GPUWARDEN_RUNTIME_DIR", dir.path() + "/run"},
                                         {"GPUWARDEN_SIM_STATE", dir.path() + "/sim-state"}};
  static constexpr const char* kSentence = "gpuwarden: cannot write standard output";
};

TEST_F(OutputLost, AQueryToAFullDiskExitsOneAndSaysSo) {
  auto r = runToFullDisk({"--simulate", "dgx-h100", "query", "--query-gpu=index,uuid", "--format=csv"}, env);
  EXPECT_EQ(r.code, 1) << describe(r);
  EXPECT_TRUE(r.err.starts_with(kSentence)) << describe(r);
}

TEST_F(OutputLost, SmiExitsWithNvidiaSmisOperatingSystemError) {
  auto r = runToFullDisk({"--simulate", "dgx-h100", "smi", "-L"}, env);
  EXPECT_EQ(r.code, 17) << describe(r);
  EXPECT_TRUE(r.err.starts_with(kSentence)) << describe(r);
  // -f: nvidia-smi's sentence for its file, on standard output (which works here).
  auto f = runGw({"--simulate", "dgx-h100", "smi", "-L", "-f", "/dev/full"}, env);
  EXPECT_EQ(f.code, 17) << describe(f);
  EXPECT_EQ(f.out, "Failed to write file /dev/full.\n") << describe(f);
}

// Each loop would otherwise sample until interrupted (no count, no end): it ends at the first lost write.
TEST_F(OutputLost, LoopsEndAtTheFirstLostWrite) {
  const std::vector<std::pair<std::vector<std::string>, int>> loops = {
      {{"smi", "--query-gpu=index", "--format=csv", "-lms", "100"}, 17},
      {{"smi", "-q", "-l", "1"}, 17},
      {{"smi", "dmon"}, 17},
      {{"smi", "pmon"}, 17},
      {{"query", "--query-gpu=index", "--format=csv", "-l", "0.1"}, 1},
      {{"dmon", "-d", "0.1"}, 1},
      {{"pmon", "-d", "0.1"}, 1},
  };
  for (const auto& [words, code] : loops) {
    std::vector<std::string> args{"--simulate", "dgx-h100"};
    args.insert(args.end(), words.begin(), words.end());
    auto r = runToFullDisk(args, env);
    EXPECT_EQ(r.code, code) << words[0] << " " << words[1] << ": " << describe(r);
    EXPECT_TRUE(r.err.starts_with(kSentence)) << words[0] << " " << words[1] << ": " << describe(r);
  }
}

// The verdict's own exit (2, critical) still reaches the caller.
TEST_F(OutputLost, AVerdictsOwnExitIsKept) {
  auto r = runToFullDisk({"--simulate", "driver-mismatch", "health", "--seconds", "1"}, env);
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_TRUE(r.err.starts_with(kSentence)) << describe(r);
}

}  // namespace
}  // namespace gw::test
