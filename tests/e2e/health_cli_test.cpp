// `gpuwarden health` standalone on the simulator: exit codes as Nagios and Slurm health checks
// expect (0 healthy, 1 warning, 2 critical/fatal, 3 unknown).
#include <gtest/gtest.h>

#include "gw_run.h"

namespace gw::test {
namespace {

using namespace std::chrono_literals;

TEST(HealthCli, HealthyFleetExitsZero) {
  auto r = runGw({"health", "--standalone", "--simulate", "dgx-h100", "--seconds", "2"}, {}, 20000ms);
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("status: healthy"), std::string::npos) << describe(r);
}

TEST(HealthCli, EccDoubleBitExitsTwoAndNamesIt) {
  auto r = runGw({"--json", "health", "--standalone", "--simulate", "fault-ecc-dbe", "--seconds", "2"},
                 {{"GPUWARDEN_SIM_START", "35"}}, 20000ms);
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.out.find("ecc_dbe"), std::string::npos) << describe(r);
  auto j = r.json();
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["gpus"][4]["state"], "critical") << j.dump(2);
}

TEST(HealthCli, NoNvmlExitsThree) {
  auto r = runGw({"health", "--nvml-lib", "/nonexistent", "--seconds", "1"}, {}, 20000ms);
  EXPECT_EQ(r.code, 3) << describe(r);
  EXPECT_NE(r.out.find("unknown"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace gw::test
