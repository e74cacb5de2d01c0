#include <gtest/gtest.h>

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
