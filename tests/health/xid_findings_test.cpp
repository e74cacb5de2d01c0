// What the health engine makes of each Xid the requirements and the seed name: the finding's
// severity and whether it stays open until an operator resolves it. The table is written here by
// hand, apart from the Xid catalog it checks: a change to a code's severity must be made in both
// places on purpose (docs/xid.md is rendered from the catalog and cannot catch it).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "health/rules.h"
#include "rule_test_util.h"

namespace gw::health {
namespace {

struct Expected {
  int code;
  Severity severity;  // of a single occurrence on one GPU whose peers are clean
  bool sticky;
};

constexpr Severity I = Severity::Info, W = Severity::Warning, C = Severity::Critical, F = Severity::Fatal;

// clang-format off
const std::vector<Expected> kExpected = {
    {8, W, true}, {13, I, false}, {31, I, false}, {32, W, true}, {38, W, true},
    {43, I, false}, {44, W, true}, {45, I, false}, {48, C, true}, {56, W, true},
    {57, C, true}, {58, C, true}, {61, W, true}, {62, C, true}, {63, W, true},
    {64, C, true}, {65, W, true}, {68, I, false}, {69, W, true}, {73, W, true},
    {74, C, true}, {79, F, true}, {80, W, true}, {81, C, true}, {92, W, true},
    {94, W, true}, {95, C, true}, {109, I, false}, {110, C, true}, {119, C, true},
    {120, C, true}, {121, W, true}, {122, W, true}, {123, W, true}, {124, W, true},
    {140, C, true}, {143, C, true}, {144, C, true}, {145, C, true}, {146, C, true},
    {147, W, true}, {148, W, true}, {149, C, true}, {150, C, true}, {154, W, true},
};
// clang-format on

TEST(XidFindings, EachRequiredCodeHasItsSeverityAndStickiness) {
  for (const Expected& x : kExpected) {
    RuleEngine engine;
    std::vector<test::Gpu> gpus;
    gpus.emplace_back(0);
    gpus.emplace_back(1);
    const std::int64_t t0 = 1'700'000'000'000;
    engine.observe(test::views(gpus), t0);
    events::GpuEvent e;
    e.timestamp_ms = t0 + 500;
    e.kind = events::EventKind::Xid;
    e.code = x.code;
    e.gpu_index = 0;
    e.gpu_uuid = "GPU-00000000";
    engine.onEvent(e);
    const Finding* f = nullptr;
    const auto findings = engine.evaluate(t0 + 1000);
    for (const Finding& g : findings)
      if (g.rule == "xid" && g.xid == x.code) f = &g;
    ASSERT_NE(f, nullptr) << "Xid " << x.code;
    EXPECT_EQ(f->severity, x.severity) << "Xid " << x.code << ": " << f->summary;
    EXPECT_EQ(f->sticky, x.sticky) << "Xid " << x.code;
    EXPECT_EQ(f->gpu_index, 0);
  }
}

}  // namespace
}  // namespace gw::health
