#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

#include "diag/plan.h"

using namespace gw::diag;

namespace {
std::vector<std::string> ids(const DiagPlan& p) {
  std::vector<std::string> v;
  for (const auto& s : p.steps) v.push_back(s.id);
  return v;
}
}  // namespace

TEST(Plan, LevelsAreCumulative) {
  auto r1 = buildPlan(1), r2 = buildPlan(2), r3 = buildPlan(3);
  ASSERT_TRUE(r1 && r2 && r3);
  EXPECT_EQ(ids(*r1), (std::vector<std::string>{"deployment", "pcie_link", "retired_pages", "row_remap", "ecc",
                                                "processes", "persistence", "inforom", "cuda_deploy"}));
  EXPECT_TRUE(r2->has("memtest") && r2->has("pcie_bandwidth") && r2->has("p2p_bandwidth"));
  EXPECT_FALSE(r2->has("gemm_burn"));
  EXPECT_TRUE(r3->has("gemm_burn") && r3->has("stream_triad") && r3->has("targeted_power"));
  EXPECT_EQ(r3->steps.size(), r1->steps.size() + 6);
  EXPECT_FALSE(buildPlan(0));
  EXPECT_FALSE(buildPlan(4));
  EXPECT_FALSE(buildPlan(2, -5.0));
}

TEST(Plan, NominalDurationsMatchTheLevels) {
  EXPECT_LT(buildPlan(1)->estimateSeconds(8), 20);
  double r2 = buildPlan(2)->estimateSeconds(8);
  EXPECT_GT(r2, 90);
  EXPECT_LT(r2, 150);  // ~2 min
  double r3 = buildPlan(3)->estimateSeconds(8);
  EXPECT_GT(r3, 13 * 60);
  EXPECT_LT(r3, 17 * 60);  // ~15 min
}

TEST(Plan, DurationScalesTimedStepsInProportion) {
  auto p = buildPlan(3, 78.0);  // nominal timed total 780 s
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->find("memtest")->seconds, 6, 1e-9);
  EXPECT_NEAR(p->find("gemm_burn")->seconds, 60, 1e-9);
  EXPECT_NEAR(p->find("targeted_power")->seconds, 12, 1e-9);
  EXPECT_DOUBLE_EQ(p->find("stream_triad")->seconds, buildPlan(3)->find("stream_triad")->seconds);
  auto tiny = buildPlan(2, 0.1);
  EXPECT_DOUBLE_EQ(tiny->find("memtest")->seconds, 1.0);  // floor
}

TEST(Plan, EstimatesCountSerialPerGpuAndPairs) {
  PlanStep pair{"p", "p", StepKind::Pairs, true, false, 0.5};
  PlanStep ser{"s", "s", StepKind::PerGpuSerial, true, false, 2};
  PlanStep par{"q", "q", StepKind::PerGpuParallel, true, true, 60};
  EXPECT_DOUBLE_EQ(estimateStep(pair, 8), 28);
  EXPECT_DOUBLE_EQ(estimateStep(pair, 1), 0);
  EXPECT_DOUBLE_EQ(estimateStep(ser, 8), 16);
  EXPECT_DOUBLE_EQ(estimateStep(par, 8), 60);
}

namespace {
// One row per step, every field: a step added, dropped, reordered, retitled, moved to another
// kind, or given another duration shows here.
std::string table(const DiagPlan& p) {
  static const char* kKinds[] = {"node", "nvml", "serial", "parallel", "pairs"};
  std::string t;
  for (const auto& s : p.steps) {
    char b[160];
    std::snprintf(b, sizeof b, "%s|%s|%s|%s|%s|%g\n", s.id.c_str(), s.title.c_str(), kKinds[static_cast<int>(s.kind)],
                  s.needs_cuda ? "cuda" : "-", s.timed ? "timed" : "-", s.seconds);
    t += b;
  }
  return t;
}

const char* kLevel1 =
    "deployment|deployment checks (doctor)|node|-|-|1\n"
    "pcie_link|PCIe link state|nvml|-|-|0.05\n"
    "retired_pages|page retirement|nvml|-|-|0.05\n"
    "row_remap|row remapping|nvml|-|-|0.05\n"
    "ecc|ECC error counters|nvml|-|-|0.05\n"
    "processes|stray compute processes|nvml|-|-|0.05\n"
    "persistence|persistence mode|nvml|-|-|0.05\n"
    "inforom|InfoROM|nvml|-|-|0.05\n"
    "cuda_deploy|CUDA deployment test (vector add)|serial|cuda|-|1.5\n";
const char* kLevel2 =
    "memtest|device memory test|parallel|cuda|timed|60\n"
    "pcie_bandwidth|host<->device bandwidth|serial|cuda|-|2\n"
    "p2p_bandwidth|peer-to-peer bandwidth|pairs|cuda|-|0.5\n";
const char* kLevel3 =
    "gemm_burn|GEMM burn|parallel|cuda|timed|600\n"
    "stream_triad|memory bandwidth (STREAM triad)|serial|cuda|-|3\n"
    "targeted_power|targeted power|parallel|cuda|timed|120\n";
}  // namespace

// docs/diag.md's table of levels: each level is the one before plus its own steps, in this order.
TEST(Plan, EachLevelsStepsExactly) {
  EXPECT_EQ(table(*buildPlan(1)), std::string(kLevel1));
  EXPECT_EQ(table(*buildPlan(2)), std::string(kLevel1) + kLevel2);
  EXPECT_EQ(table(*buildPlan(3)), std::string(kLevel1) + kLevel2 + kLevel3);
  EXPECT_EQ(buildPlan(1)->level, 1);
  EXPECT_EQ(buildPlan(2)->level, 2);
  EXPECT_EQ(buildPlan(3)->level, 3);
}

// -r takes 1, 2 or 3 only; --duration must be above zero and at most a week.
TEST(Plan, LevelAndDurationAtTheirEdges) {
  EXPECT_FALSE(buildPlan(0));
  EXPECT_FALSE(buildPlan(-1));
  EXPECT_TRUE(buildPlan(1));
  EXPECT_TRUE(buildPlan(3));
  EXPECT_FALSE(buildPlan(4));
  EXPECT_FALSE(buildPlan(1, 0.0));
  EXPECT_FALSE(buildPlan(3, 0.0));
  EXPECT_FALSE(buildPlan(2, -0.5));
  EXPECT_TRUE(buildPlan(2, 0.5));
  EXPECT_TRUE(buildPlan(2, 1.0));
  EXPECT_TRUE(buildPlan(1, 1e-6));
  EXPECT_EQ(kMaxTimedSeconds, 604800.0);
  EXPECT_TRUE(buildPlan(3, kMaxTimedSeconds));
  EXPECT_FALSE(buildPlan(3, kMaxTimedSeconds + 0.001));
  EXPECT_FALSE(buildPlan(3, std::numeric_limits<double>::infinity()));
  EXPECT_FALSE(buildPlan(3, std::numeric_limits<double>::quiet_NaN()));
}

// --duration only rescales timed steps: at -r 1 (none) it changes nothing; at -r 2 memtest alone
// takes the whole duration; a duration below a step's floor leaves that step at one second.
TEST(Plan, DurationPerLevel) {
  EXPECT_EQ(table(*buildPlan(1, 5.0)), std::string(kLevel1));
  auto r2 = buildPlan(2, 30.0);
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->find("memtest")->seconds, 30.0);
  EXPECT_EQ(r2->find("pcie_bandwidth")->seconds, 2.0);
  EXPECT_EQ(r2->find("cuda_deploy")->seconds, 1.5);
  auto r3 = buildPlan(3, 7.8);  // 0.6 s, 6 s and 1.2 s: memtest and power at their floor
  ASSERT_TRUE(r3);
  EXPECT_EQ(r3->find("memtest")->seconds, 1.0);
  EXPECT_NEAR(r3->find("gemm_burn")->seconds, 6.0, 1e-9);
  EXPECT_NEAR(r3->find("targeted_power")->seconds, 1.2, 1e-9);
  auto half = buildPlan(2, 0.5);
  EXPECT_EQ(half->find("memtest")->seconds, 1.0);
}

TEST(Plan, FindAndHas) {
  auto p = buildPlan(2);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->has("deployment"));
  EXPECT_TRUE(p->has("p2p_bandwidth"));
  EXPECT_FALSE(p->has("gemm_burn"));
  EXPECT_FALSE(p->has(""));
  EXPECT_EQ(p->find("nope"), nullptr);
  ASSERT_NE(p->find("pcie_bandwidth"), nullptr);
  EXPECT_EQ(p->find("pcie_bandwidth")->title, "host<->device bandwidth");
  EXPECT_EQ(p->find("pcie_bandwidth"), &p->steps[10]);
}

// Each kind at 0, 1, 2 and 3 GPUs: node and parallel steps once, serial and NVML steps once per
// GPU (at least once), pairs n(n-1) (none below two GPUs).
TEST(Plan, EstimatesOfEveryKindAtSmallCounts) {
  PlanStep node{"n", "n", StepKind::Node, false, false, 1};
  PlanStep nvml{"v", "v", StepKind::PerGpuNvml, false, false, 0.25};
  PlanStep ser{"s", "s", StepKind::PerGpuSerial, true, false, 2};
  PlanStep par{"q", "q", StepKind::PerGpuParallel, true, true, 60};
  PlanStep pair{"p", "p", StepKind::Pairs, true, false, 0.5};
  for (int n : {0, 1, 2, 3}) {
    EXPECT_EQ(estimateStep(node, n), 1) << n;
    EXPECT_EQ(estimateStep(par, n), 60) << n;
  }
  EXPECT_EQ(estimateStep(nvml, 0), 0.25);
  EXPECT_EQ(estimateStep(nvml, 1), 0.25);
  EXPECT_EQ(estimateStep(nvml, 3), 0.75);
  EXPECT_EQ(estimateStep(ser, 0), 2);
  EXPECT_EQ(estimateStep(ser, 2), 4);
  EXPECT_EQ(estimateStep(pair, 0), 0);
  EXPECT_EQ(estimateStep(pair, 1), 0);
  EXPECT_EQ(estimateStep(pair, 2), 1);
  EXPECT_EQ(estimateStep(pair, 3), 3);
}

// The ETA's total: the sum of the steps' estimates, nothing else.
TEST(Plan, EstimateIsTheSumOfTheSteps) {
  EXPECT_NEAR(buildPlan(1)->estimateSeconds(1), 1 + 7 * 0.05 + 1.5, 1e-9);
  EXPECT_NEAR(buildPlan(1)->estimateSeconds(2), 1 + 14 * 0.05 + 3, 1e-9);
  EXPECT_NEAR(buildPlan(2)->estimateSeconds(2), 1 + 14 * 0.05 + 3 + 60 + 4 + 1, 1e-9);
  EXPECT_NEAR(buildPlan(3)->estimateSeconds(2), 1 + 14 * 0.05 + 3 + 60 + 4 + 1 + 600 + 6 + 120, 1e-9);
  EXPECT_EQ(DiagPlan{}.estimateSeconds(4), 0);
}
