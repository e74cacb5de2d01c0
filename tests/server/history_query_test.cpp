// The one history query (server/history_query.h) behind GET /api/v1/history and the control op
// `history`: at most kMaxHistoryPoints points per answer, with or without a step.
#include <gtest/gtest.h>

#include "fields/catalog.h"
#include "server/history_query.h"
#include "test_util.h"

namespace gw::test {
namespace {

using server::HistoryQuery;

struct Filled {
  TempDir dir;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<server::HistorySink> sink;
  std::vector<collect::GpuView> views;
  static constexpr std::int64_t kT0 = 1'700'000'000'000;
  // `samples` samples of gpu_temp one second apart from kT0, for GPU 0 (GPU-aaa).
  explicit Filled(int samples) {
    store::StoreOptions so;
    so.path = dir.file("history.db");
    so.background = false;
    store = std::move(store::Store::open(so)).value();
    sink = std::make_unique<server::HistorySink>(*store);
    collect::GpuView v;
    v.id.index = 0;
    v.id.uuid = "GPU-aaa";
    views.push_back(v);
    const fields::Field* f = fields::findByKey("gpu_temp");
    for (int i = 0; i < samples; ++i) sink->onSample(v.id, *f, kT0 + i * 1000, 40 + i % 7);
  }
  server::HistoryAnswer run(HistoryQuery q) const {
    return server::runHistoryQuery(q, store.get(), sink.get(), views, kT0 + 24 * 3600 * 1000);
  }
};

TEST(HistoryQuery, ARawRangeOverTheCapIsRefusedAndAStepAnswersIt) {
  Filled h(static_cast<int>(server::kMaxHistoryPoints) + 500);
  HistoryQuery q;
  q.gpu = "0";
  q.field = "temperature.gpu";
  q.since = "1700000000";
  q.until = "1700020000";
  auto raw = h.run(q);
  EXPECT_EQ(raw.status, 400);
  EXPECT_EQ(raw.param, "step");
  EXPECT_EQ(raw.error,
            "11500 samples between since and until, more than 11000; give a step (one point per step) or a "
            "shorter range");
  EXPECT_TRUE(raw.body.is_null()) << "a refused query carries no points";
  q.step = "10s";
  auto stepped = h.run(q);
  ASSERT_EQ(stepped.status, 200) << stepped.error;
  EXPECT_EQ(stepped.body["points"].size(), 1150u);
  EXPECT_EQ(stepped.body["agg"], "avg");
  EXPECT_EQ(stepped.body["gpu"]["uuid"], "GPU-aaa");
  // Exactly at the cap: answered raw.
  q.step.reset();
  q.until = "1700010999";
  auto at_cap = h.run(q);
  ASSERT_EQ(at_cap.status, 200) << at_cap.error;
  EXPECT_EQ(at_cap.body["points"].size(), server::kMaxHistoryPoints);
  EXPECT_EQ(at_cap.body["points"][0][0], Filled::kT0);
  // One over: refused.
  q.until = "1700011000";
  auto over_cap = h.run(q);
  EXPECT_EQ(over_cap.status, 400);
  EXPECT_EQ(over_cap.param, "step");
  // A step too small for the range is refused before the store is asked.
  q.step = "1s";
  q.until = "1700020000";
  auto small = h.run(q);
  EXPECT_EQ(small.status, 400);
  EXPECT_EQ(small.error, "more than 11000 points; use a larger step");
}

// docs/api.md: `since` defaults to 1h before now and `until` to now.
// A GPU is named by its index (up to six digits, the longest an NVML index is read as) or its
// UUID; a MIG device only by its UUID, and a number is never taken for a UUID.
TEST(HistoryQuery, AGpuIsFoundByItsIndexOfUpToSixDigitsOrItsUuid) {
  std::vector<collect::GpuView> views(3);
  views[0].id.index = 123456;
  views[0].id.uuid = "GPU-six";
  views[1].id.index = 7;
  views[1].id.uuid = "1234567";  // a UUID that looks like a seven-digit number
  views[2].id.index = 7;
  views[2].id.uuid = "MIG-seven";
  views[2].id.is_mig = true;
  EXPECT_EQ(server::findGpu(views, "123456"), &views[0]);
  EXPECT_EQ(server::findGpu(views, "GPU-six"), &views[0]);
  EXPECT_EQ(server::findGpu(views, "1234567"), &views[1]);  // seven digits: not an index, a UUID
  EXPECT_EQ(server::findGpu(views, "7"), &views[1]);        // the GPU, not its MIG device
  EXPECT_EQ(server::findGpu(views, "MIG-seven"), &views[2]);
  EXPECT_EQ(server::findGpu(views, "12345"), nullptr);
  EXPECT_EQ(server::findGpu(views, ""), nullptr);
}

TEST(HistoryQuery, TheDefaultRangeIsTheLastHour) {
  Filled h(10);
  HistoryQuery q;
  q.gpu = "0";
  q.field = "gpu_temp";
  auto a = h.run(q);
  ASSERT_EQ(a.status, 200) << a.error;
  const std::int64_t now = Filled::kT0 + 24 * 3600 * 1000;
  EXPECT_EQ(a.body["since_ms"], now - 3600 * 1000);
  EXPECT_EQ(a.body["until_ms"], now);
}

TEST(HistoryQuery, RefusalsNameTheParameter) {
  Filled h(10);
  struct Case {
    HistoryQuery q;
    int status;
    std::string param;
  };
  const std::vector<Case> cases = {
      {{std::nullopt, "gpu_temp", {}, {}, {}, {}}, 400, "gpu"}, {{"", "gpu_temp", {}, {}, {}, {}}, 400, "gpu"},
      {{"0", std::nullopt, {}, {}, {}, {}}, 400, "field"},      {{"0", "name", {}, {}, {}, {}}, 400, "field"},
      {{"0", "gpu_temp", "soon", {}, {}, {}}, 400, "since"},    {{"0", "gpu_temp", "1m", "2h", {}, {}}, 400, "since"},
      {{"0", "gpu_temp", {}, {}, "often", {}}, 400, "step"},    {{"0", "gpu_temp", {}, {}, {}, "median"}, 400, "agg"},
      {{"7", "gpu_temp", {}, {}, {}, {}}, 404, "gpu"},
  };
  for (const auto& c : cases) {
    auto a = h.run(c.q);
    EXPECT_EQ(a.status, c.status) << a.error;
    EXPECT_EQ(a.param, c.param) << a.error;
    EXPECT_FALSE(a.error.empty());
  }
  // History disabled: 404 whatever was asked.
  EXPECT_EQ(server::runHistoryQuery({}, nullptr, nullptr, {}, 0).status, 404);
  // A UUID no GPU has now still answers (history outlives a GPU), with no index.
  auto gone = h.run({"GPU-gone", "gpu_temp", {}, {}, {}, {}});
  ASSERT_EQ(gone.status, 200) << gone.error;
  EXPECT_TRUE(gone.body["gpu"]["index"].is_null());
  EXPECT_TRUE(gone.body["points"].empty());
}

}  // namespace
}  // namespace gw::test
