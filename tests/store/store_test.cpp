// Store: series identity, queries, aggregation, downsampling, retention, on-disk size, errors.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "store/store.h"
#include "store_test_util.h"
#include "telemetry_generator.h"

namespace gw::store {
namespace {

using testing::openOrDie;
using testing::TempDir;
using testing::testOptions;

constexpr int64_t kT0 = 1700000000000;  // Nov 2023; 20 s past a minute, on purpose
constexpr int64_t kHour = 3600000;

// Brute-force step aggregation over the samples, aligned like Store::query.
std::vector<Point> expectedSteps(const std::vector<Point>& samples, int64_t since, int64_t until, int64_t step,
                                 Agg agg) {
  auto floorStep = [&](int64_t t) { return (t >= 0 ? t / step : (t - step + 1) / step) * step; };
  std::map<int64_t, std::vector<double>> buckets;
  for (const Point& p : samples)
    if (p.ts_ms >= floorStep(since) && p.ts_ms < floorStep(until) + step && !std::isnan(p.value))
      buckets[floorStep(p.ts_ms)].push_back(p.value);
  std::vector<Point> out;
  for (auto& [b, vs] : buckets) {
    double r = agg == Agg::Min ? INFINITY : agg == Agg::Max ? -INFINITY : 0;
    for (double v : vs) {
      if (agg == Agg::Min)
        r = std::min(r, v);
      else if (agg == Agg::Max)
        r = std::max(r, v);
      else
        r += v;
    }
    if (agg == Agg::Avg) r /= static_cast<double>(vs.size());
    if (agg == Agg::Count) r = static_cast<double>(vs.size());
    out.push_back({b, r});
  }
  return out;
}

void expectPointsNear(const std::vector<Point>& got, const std::vector<Point>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].ts_ms, want[i].ts_ms) << i;
    ASSERT_NEAR(got[i].value, want[i].value, 1e-9 * std::max(1.0, std::abs(want[i].value))) << i;
  }
}

TEST(Store, ReopenKeepsSeriesIdsAndData) {
  TempDir dir;
  SeriesId a = 0, b = 0;
  {
    auto store = openOrDie(testOptions(dir.file("h.db")));
    a = store->series("GPU-aaaa", "gpu_temp").value();
    b = store->series("GPU-aaaa", "power_usage").value();
    EXPECT_NE(a, b);
    EXPECT_EQ(store->series("GPU-aaaa", "gpu_temp").value(), a);
    for (int i = 0; i < 300; ++i) store->append(a, kT0 + i * 1000, i);
  }  // the destructor flushes
  auto store = openOrDie(testOptions(dir.file("h.db")));
  EXPECT_EQ(store->series("GPU-aaaa", "power_usage").value(), b);
  EXPECT_EQ(store->series("GPU-aaaa", "gpu_temp").value(), a);
  EXPECT_EQ(store->listSeries().size(), 2u);
  auto points = store->query(a, kT0, kT0 + kHour);
  ASSERT_TRUE(points.ok()) << points.error();
  ASSERT_EQ(points->size(), 300u);
  EXPECT_EQ(points->back(), (Point{kT0 + 299000, 299}));
  // Appends stay monotonic across the restart.
  EXPECT_FALSE(store->append(a, kT0 + 299000, 1));
  EXPECT_TRUE(store->append(a, kT0 + 300000, 1));
}

TEST(Store, RawQuerySeesUnflushedFlushedAndSealedData) {
  TempDir dir;
  auto opt = testOptions(dir.file("h.db"));
  opt.chunk_samples = 16;
  auto store = openOrDie(opt);
  const SeriesId id = store->series("GPU-1", "sm_clock").value();
  std::vector<Point> all;
  for (int i = 0; i < 100; ++i) {
    all.push_back({kT0 + i * 1000, 1000.0 + i});
    ASSERT_TRUE(store->append(id, all.back().ts_ms, all.back().value));
    if (i % 37 == 0) {
      ASSERT_TRUE(store->flush().ok());
    }
    auto got = store->query(id, kT0, kT0 + kHour);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(*got, all) << "after " << i;
  }
  auto mid = store->query(id, kT0 + 10500, kT0 + 20000);  // bounds are inclusive
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(std::vector<Point>(all.begin() + 11, all.begin() + 21), *mid);
  EXPECT_TRUE(store->query(id, kT0 + 5000, kT0).value().empty());
  EXPECT_FALSE(store->query(999, kT0, kT0 + 1).ok());
}

TEST(Store, RejectsOutOfOrderDuplicateAndUnknown) {
  TempDir dir;
  auto store = openOrDie(testOptions(dir.file("h.db")));
  const SeriesId id = store->series("GPU-1", "gpu_temp").value();
  EXPECT_TRUE(store->append(id, 2000, 1));
  EXPECT_FALSE(store->append(id, 2000, 2));
  EXPECT_FALSE(store->append(id, 1000, 3));
  EXPECT_FALSE(store->append(id + 100, 3000, 3));
  EXPECT_EQ(store->stats().samples_rejected, 3u);
  EXPECT_EQ(store->stats().samples_appended, 1u);
  EXPECT_FALSE(store->series("", "x").ok());
}

// A raw query's bounds are inclusive at a chunk's edges as well: a query that starts at a chunk's
// last sample or ends at a chunk's first sample gets that sample, whether the chunk is still in
// memory (sealed or open), on disk, or read back after a restart.
TEST(Store, RawQueryBoundsOnAChunkEdgeKeepTheEdgeSample) {
  TempDir dir;
  auto opt = testOptions(dir.file("h.db"));
  opt.chunk_samples = 16;  // chunks [0 s, 15 s], [16 s, 31 s], and an open one from 32 s to 39 s
  auto store = openOrDie(opt);
  const SeriesId id = store->series("GPU-1", "sm_clock").value();
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(store->append(id, kT0 + i * 1000LL, i));
  auto points = [&](int64_t since, int64_t until) {
    std::vector<Point> want;
    for (int64_t t = since; t <= until; t += 1000) want.push_back({t, static_cast<double>((t - kT0) / 1000)});
    return want;
  };
  const char* const stages[] = {"before a flush", "after a flush", "after a reopen"};
  for (int stage = 0; stage < 3; ++stage) {
    const char* when = stages[stage];
    if (stage == 1) {
      ASSERT_TRUE(store->flush().ok());
    }
    if (stage == 2) {
      store.reset();
      store = openOrDie(opt);
    }
    // Starts at the first chunk's last sample, ends at the second chunk's first sample.
    EXPECT_EQ(store->query(id, kT0 + 15000, kT0 + 20000).value(), points(kT0 + 15000, kT0 + 20000)) << when;
    EXPECT_EQ(store->query(id, kT0 + 10000, kT0 + 16000).value(), points(kT0 + 10000, kT0 + 16000)) << when;
    // The same at the last chunk's edges (the open one, until the reopen).
    EXPECT_EQ(store->query(id, kT0 + 28000, kT0 + 32000).value(), points(kT0 + 28000, kT0 + 32000)) << when;
    EXPECT_EQ(store->query(id, kT0 + 39000, kT0 + 45000).value(), points(kT0 + 39000, kT0 + 39000)) << when;
  }
}

// since == until is a query for one instant: the bounds are inclusive, so it answers the sample at
// that instant, and a stepped query answers the step holding it.
TEST(Store, AOneInstantQueryAnswersTheSampleAndItsStep) {
  TempDir dir;
  auto store = openOrDie(testOptions(dir.file("h.db")));
  const SeriesId id = store->series("GPU-1", "gpu_temp").value();
  const int64_t start = kT0 - kT0 % 60000;  // minute-aligned
  for (int i = 0; i < 90; ++i) ASSERT_TRUE(store->append(id, start + i * 1000LL, 40.0 + i));
  EXPECT_EQ(store->query(id, start + 7000, start + 7000).value(), (std::vector<Point>{{start + 7000, 47.0}}));
  EXPECT_EQ(store->query(id, start + 7000, start + 7000, 60000, Agg::Count).value(),
            (std::vector<Point>{{start, 60.0}}));
  EXPECT_TRUE(store->query(id, start + 7500, start + 7500).value().empty());
}

// A step covers [start, start + step - 1]. A sample at the step's last millisecond (:59.999) counts
// in it and one at the next step's first millisecond does not, whether the step is read from raw
// samples or from its rollup; compaction rolls up everything before its target, :59.999 included.
TEST(Store, AStepEndsAtItsLastMillisecondInRawAndRolledUpHistory) {
  TempDir dir;
  auto store = openOrDie(testOptions(dir.file("h.db")));
  const SeriesId id = store->series("GPU-1", "gpu_temp").value();
  const int64_t start = kT0 - kT0 % 60000;  // minute-aligned
  for (int i = 0; i < 120; ++i) {
    ASSERT_TRUE(store->append(id, start + i * 1000LL, 1.0));
    if (i == 59) {
      ASSERT_TRUE(store->append(id, start + 59999, 1.0));
    }
  }
  const std::vector<Point> first_minute{{start, 61.0}};
  EXPECT_EQ(store->query(id, start, start + 30000, 60000, Agg::Count).value(), first_minute);
  EXPECT_EQ(store->query(id, start, start + 59999, 60000, Agg::Count).value(), first_minute);

  // The first minute is rolled up now; queries read its rollup and raw samples from the second on.
  ASSERT_TRUE(store->compact(start + 60000 + 1234).ok());
  EXPECT_EQ(store->query(id, start, start + 30000, 60000, Agg::Count).value(), first_minute);
  EXPECT_EQ(store->query(id, start, start + 59999, 60000, Agg::Count).value(), first_minute);
  EXPECT_EQ(store->query(id, start, start + 60000, 60000, Agg::Count).value(),
            (std::vector<Point>{{start, 61.0}, {start + 60000, 60.0}}));
}

TEST(Store, StepAggregationMatchesBruteForce) {
  TempDir dir;
  auto opt = testOptions(dir.file("h.db"));
  opt.chunk_samples = 50;
  auto store = openOrDie(opt);
  const SeriesId id = store->series("GPU-1", "power_usage").value();
  std::mt19937 rng(5);
  std::vector<Point> all;
  int64_t ts = kT0;
  for (int i = 0; i < 2000; ++i) {
    ts += 700 + static_cast<int64_t>(rng() % 900);  // irregular
    if (i % 300 == 299) ts += 10 * 60000;           // a gap: absent, not zero
    const double v = i % 97 == 0 ? NAN : static_cast<double>(rng() % 400);
    all.push_back({ts, v});
    ASSERT_TRUE(store->append(id, ts, v));
    if (i == 1000) {
      ASSERT_TRUE(store->flush().ok());
    }
  }
  for (int64_t step : {1000LL, 7000LL, 60000LL, 300000LL}) {
    for (Agg agg : {Agg::Avg, Agg::Min, Agg::Max, Agg::Sum, Agg::Count}) {
      const int64_t since = kT0 + 123456, until = ts - 54321;
      auto got = store->query(id, since, until, step, agg);
      ASSERT_TRUE(got.ok()) << got.error();
      expectPointsNear(*got, expectedSteps(all, since, until, step, agg));
    }
  }
}

TEST(Store, DownsamplingThenRetention) {
  TempDir dir;
  auto opt = testOptions(dir.file("h.db"));
  opt.raw_retention = std::chrono::hours(1);
  opt.downsampled_retention = std::chrono::hours(3);
  auto store = openOrDie(opt);
  const SeriesId id = store->series("GPU-1", "gpu_temp").value();
  const int64_t start = kT0 - kT0 % 60000;  // minute-aligned
  std::vector<Point> all;
  std::mt19937 rng(11);
  for (int i = 0; i < 2 * 3600; ++i) {  // two hours at 1 s
    all.push_back({start + i * 1000LL, 40.0 + static_cast<double>(rng() % 20)});
    ASSERT_TRUE(store->append(id, all.back().ts_ms, all.back().value));
  }
  const int64_t end = start + 2 * kHour;

  // Nothing has expired yet: step queries come from rollups for the compacted part, raw for the rest.
  ASSERT_TRUE(store->compact(start + 90 * 60000 + 1234).ok());
  for (Agg agg : {Agg::Avg, Agg::Min, Agg::Max, Agg::Count}) {
    auto got = store->query(id, start, end, 60000, agg);
    ASSERT_TRUE(got.ok()) << got.error();
    expectPointsNear(*got, expectedSteps(all, start, end, 60000, agg));
    got = store->query(id, start + 5000, end - 1, 300000, agg);
    ASSERT_TRUE(got.ok());
    expectPointsNear(*got, expectedSteps(all, start + 5000, end - 1, 300000, agg));
  }

  // Two hours later full resolution is past its 1 h retention and gone, rollups remain.
  const int64_t later = end + 2 * kHour;
  ASSERT_TRUE(store->compact(later).ok());
  EXPECT_TRUE(store->query(id, start, end).value().empty());
  EXPECT_EQ(store->stats().raw_samples, 0u);
  EXPECT_EQ(store->stats().rollup_buckets, 120u);
  for (Agg agg : {Agg::Avg, Agg::Min, Agg::Max}) {
    auto got = store->query(id, start, end, 60000, agg);
    ASSERT_TRUE(got.ok());
    expectPointsNear(*got, expectedSteps(all, start, end, 60000, agg));
  }
  // Steps that are not a multiple of the downsample step cannot use rollups: absent.
  EXPECT_TRUE(store->query(id, start, end, 45000).value().empty());

  // And past the 3 h rollup retention everything is gone, also after a reopen.
  ASSERT_TRUE(store->compact(end + 4 * kHour).ok());
  store.reset();
  store = openOrDie(opt);
  EXPECT_TRUE(store->query(id, start, end, 60000).value().empty());
  EXPECT_EQ(store->stats().rollup_buckets, 0u);
  EXPECT_TRUE(store->append(id, end + 4 * kHour, 1.0));
}

TEST(Store, FullResolutionIsKeptUntilDownsampled) {
  TempDir dir;
  auto opt = testOptions(dir.file("h.db"));
  opt.raw_retention = std::chrono::hours(1);
  auto store = openOrDie(opt);
  const SeriesId id = store->series("GPU-1", "gpu_temp").value();
  for (int i = 0; i < 600; ++i) ASSERT_TRUE(store->append(id, kT0 + i * 1000LL, i));
  // The first compaction happens long after the data expired: it must roll up before deleting.
  ASSERT_TRUE(store->compact(kT0 + 5 * kHour).ok());
  auto got = store->query(id, kT0 - 60000, kT0 + 600000, 60000, Agg::Count);
  ASSERT_TRUE(got.ok());
  double total = 0;
  for (const Point& p : *got) total += p.value;
  EXPECT_EQ(total, 600);
  EXPECT_EQ(store->stats().raw_samples, 0u);
}

TEST(Store, RealisticTelemetryOnDiskUnderTwoBytesPerSample) {
  TempDir dir;
  auto store = openOrDie(testOptions(dir.file("h.db")));
  const auto& fields = testing::telemetryFields();
  std::vector<SeriesId> ids;
  std::vector<testing::GpuSimulator> gpus;
  for (uint32_t g = 0; g < 4; ++g) {  // four GPUs keep the test quick; size per series is what counts
    gpus.emplace_back(g + 1);
    for (const auto& f : fields) ids.push_back(store->series("GPU-" + std::to_string(g), f).value());
  }
  std::vector<double> values;
  for (int t = 0; t < 3600; ++t) {
    for (size_t g = 0; g < gpus.size(); ++g) {
      gpus[g].tick(values);
      for (size_t f = 0; f < fields.size(); ++f) store->append(ids[g * fields.size() + f], kT0 + t * 1000LL, values[f]);
    }
    if (t % 10 == 9) {  // as a periodic flusher would; rewrites open chunks in place
      ASSERT_TRUE(store->flush().ok());
    }
  }
  ASSERT_TRUE(store->flush().ok());
  const Stats st = store->stats();
  EXPECT_EQ(st.raw_samples, 3600u * ids.size());
  RecordProperty("disk_bytes_per_sample", std::to_string(st.bytes_per_sample));
  RecordProperty("encoded_bytes_per_sample", std::to_string(double(st.raw_chunk_bytes) / double(st.raw_samples)));
  EXPECT_LE(st.bytes_per_sample, 2.0);
}

TEST(StoreErrors, ClearMessages) {
  TempDir dir;
  auto missing = Store::open(testOptions(dir.file("no/such/dir/h.db")));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("no/such/dir/h.db"), std::string::npos) << missing.error();

  {
    std::ofstream garbage(dir.file("garbage.db"), std::ios::binary);
    garbage << std::string(8192, 'x');
  }
  // Not a database: moved aside and a fresh one started (tests/store/store_faults_test.cpp).
  auto corrupt = Store::open(testOptions(dir.file("garbage.db")));
  ASSERT_TRUE(corrupt.ok()) << corrupt.error();
  EXPECT_EQ((*corrupt)->counters().databases_reset, 1u);

  std::filesystem::create_directory(dir.file("adir"));
  auto directory = Store::open(testOptions(dir.file("adir")));
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().find("adir"), std::string::npos) << directory.error();

  auto opt = testOptions(dir.file("ok.db"));
  opt.chunk_samples = 1;
  EXPECT_FALSE(Store::open(opt).ok());
  EXPECT_FALSE(Store::open(testOptions("")).ok());
}

// chunk_samples is checked against the documented range, 2 to 100000, at each end and one past it.
TEST(StoreErrors, ChunkSamplesFromTwoToAHundredThousandOpen) {
  TempDir dir;
  for (size_t n : {size_t{1}, size_t{2}, size_t{100000}, size_t{100001}}) {
    auto opt = testOptions(dir.file("h.db"));
    opt.chunk_samples = n;
    auto store = Store::open(opt);
    if (n == 2 || n == 100000) {
      EXPECT_TRUE(store.ok()) << n << ": " << store.error();
    } else {
      ASSERT_FALSE(store.ok()) << n;
      EXPECT_EQ(store.error(), "history store: chunk_samples must be between 2 and 100000") << n;
    }
  }
}

// A zero flush interval would spin the store's thread, a zero downsample step divides by zero in
// compact() and in stepped queries, and a zero retention drops everything at each compaction: each
// is refused at open. The smallest positive value of each opens.
TEST(StoreErrors, ZeroIntervalsAndRetentionsAreRefusedAtOpen) {
  TempDir dir;
  struct Case {
    const char* name;
    void (*set)(StoreOptions&, int);
    const char* message;
  };
  const Case cases[] = {
      {"flush_interval", [](StoreOptions& o, int n) { o.flush_interval = std::chrono::milliseconds(n); },
       "history store: flush_interval must be positive"},
      {"downsample_step", [](StoreOptions& o, int n) { o.downsample_step = std::chrono::seconds(n); },
       "history store: downsample_step must be positive"},
      {"raw_retention", [](StoreOptions& o, int n) { o.raw_retention = std::chrono::hours(n); },
       "history store: retention must be positive"},
      {"downsampled_retention", [](StoreOptions& o, int n) { o.downsampled_retention = std::chrono::hours(n); },
       "history store: retention must be positive"},
  };
  for (const Case& c : cases) {
    for (int n : {-1, 0, 1}) {
      auto opt = testOptions(dir.file("h.db"));
      c.set(opt, n);
      auto store = Store::open(opt);
      if (n > 0) {
        EXPECT_TRUE(store.ok()) << c.name << " " << n << ": " << store.error();
      } else {
        ASSERT_FALSE(store.ok()) << c.name << " " << n;
        EXPECT_EQ(store.error(), c.message) << c.name << " " << n;
      }
    }
  }
}

TEST(StoreErrors, NewerSchemaIsRefused) {
  TempDir dir;
  { openOrDie(testOptions(dir.file("h.db"))); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir.file("h.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto again = Store::open(testOptions(dir.file("h.db")));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("schema version 99"), std::string::npos) << again.error();
}

TEST(Store, BackgroundFlusherPersistsWithoutExplicitCalls) {
  TempDir dir;
  auto opt = testOptions(dir.file("h.db"));
  opt.background = true;
  opt.flush_interval = std::chrono::milliseconds(20);
  auto store = openOrDie(opt);
  const SeriesId id = store->series("GPU-1", "gpu_temp").value();
  for (int i = 0; i < 10; ++i) store->append(id, kT0 + i, i);
  for (int i = 0; i < 200 && store->stats().raw_samples < 10; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(store->stats().raw_samples, 10u);
}

}  // namespace
}  // namespace gw::store
