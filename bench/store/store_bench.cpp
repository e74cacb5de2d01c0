// History store benchmarks: on-disk size of realistic telemetry, ingest rate, query latency.
//
//   store_bench --benchmark_counters_tabular=true
//
// Env GW_BENCH_HOURS (default 3) sets how many hours of 8 GPUs x 20 fields x 1 s are simulated.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "store/chunk_codec.h"
#include "store/store.h"
#include "telemetry_generator.h"

namespace gw::store {
namespace {

constexpr int kGpus = 8;
constexpr int64_t kT0 = 1700000000000 - 1700000000000 % 60000;

int hours() {
  const char* h = std::getenv("GW_BENCH_HOURS");
  return h ? std::max(1, std::atoi(h)) : 3;
}

std::string freshPath(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "gw_store_bench";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  return path.string();
}

struct Fleet {
  std::unique_ptr<Store> store;
  std::vector<SeriesId> ids;
};

// Fills a store the way the agent would: one tick per second, a flush every 5 s, a compaction
// every minute. jitter_ms > 0 stamps samples with the read time instead of the tick time.
Fleet fill(const std::string& path, int seconds, int jitter_ms, bool compact) {
  StoreOptions opt;
  opt.path = path;
  opt.background = false;
  Fleet fleet{std::move(Store::open(opt).value()), {}};
  std::vector<testing::GpuSimulator> gpus;
  for (int g = 0; g < kGpus; ++g) {
    gpus.emplace_back(static_cast<uint32_t>(g + 1));
    for (const auto& f : testing::telemetryFields())
      fleet.ids.push_back(fleet.store->series("GPU-" + std::to_string(g), f).value());
  }
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> jitter(0, jitter_ms);
  std::vector<double> values;
  const size_t fields = testing::telemetryFields().size();
  for (int t = 0; t < seconds; ++t) {
    for (int g = 0; g < kGpus; ++g) {
      gpus[g].tick(values);
      for (size_t f = 0; f < fields; ++f)
        fleet.store->append(fleet.ids[g * fields + f], kT0 + t * 1000LL + (jitter_ms ? jitter(rng) : 0), values[f]);
    }
    if (t % 5 == 4) (void)fleet.store->flush();
    if (compact && t % 60 == 59) (void)fleet.store->compact(kT0 + (t + 1) * 1000LL);
  }
  (void)fleet.store->flush();
  return fleet;
}

void reportSize(benchmark::State& state, const Store& store) {
  const Stats st = store.stats();
  state.counters["samples"] = static_cast<double>(st.raw_samples);
  state.counters["disk_B_per_sample"] = st.bytes_per_sample;
  state.counters["chunk_B_per_sample"] = static_cast<double>(st.raw_chunk_bytes) / static_cast<double>(st.raw_samples);
  state.counters["file_MiB"] = static_cast<double>(st.file_bytes) / (1 << 20);
  state.counters["rollup_buckets"] = static_cast<double>(st.rollup_buckets);
}

// Size on disk: arg 0 = tick-aligned timestamps, arg 1 = up to 5 ms of jitter.
void BM_DiskBytesPerSample(benchmark::State& state) {
  const int jitter = state.range(0) ? 5 : 0;
  for (auto _ : state) {
    Fleet fleet = fill(freshPath("size.db"), hours() * 3600, jitter, /*compact=*/true);
    reportSize(state, *fleet.store);
  }
}
BENCHMARK(BM_DiskBytesPerSample)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);

// Ingest: append() throughput into open chunks, with the periodic flushes counted.
void BM_Ingest(benchmark::State& state) {
  StoreOptions opt;
  opt.path = freshPath("ingest.db");
  opt.background = false;
  auto store = std::move(Store::open(opt).value());
  std::vector<SeriesId> ids;
  for (int g = 0; g < kGpus; ++g)
    for (const auto& f : testing::telemetryFields())
      ids.push_back(store->series("GPU-" + std::to_string(g), f).value());
  testing::GpuSimulator gpu(1);
  std::vector<double> values;
  gpu.tick(values);
  int64_t t = kT0;
  int64_t samples = 0;
  for (auto _ : state) {
    t += 1000;
    for (size_t i = 0; i < ids.size(); ++i) store->append(ids[i], t, values[i % values.size()] + (t / 1000 % 3));
    samples += static_cast<int64_t>(ids.size());
    if ((t / 1000) % 5 == 0) (void)store->flush();
  }
  state.SetItemsProcessed(samples);
}
BENCHMARK(BM_Ingest)->Unit(benchmark::kMicrosecond);

// Pure append() cost, no flush.
void BM_AppendOnly(benchmark::State& state) {
  StoreOptions opt;
  opt.path = freshPath("append.db");
  opt.background = false;
  auto store = std::move(Store::open(opt).value());
  const SeriesId id = store->series("GPU-0", "power_usage").value();
  int64_t t = kT0;
  for (auto _ : state) {
    t += 1000;
    store->append(id, t, static_cast<double>(300 + (t / 1000) % 7));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AppendOnly);

// Query of one series over 24 h: arg = step in ms (0 = full resolution).
void BM_Query24h(benchmark::State& state) {
  static Fleet fleet = [] {
    // 24 h of one GPU (20 series) is enough for a one-series query and fills quickly.
    StoreOptions opt;
    opt.path = freshPath("query.db");
    opt.background = false;
    Fleet f{std::move(Store::open(opt).value()), {}};
    testing::GpuSimulator gpu(7);
    for (const auto& name : testing::telemetryFields()) f.ids.push_back(f.store->series("GPU-0", name).value());
    std::vector<double> values;
    for (int t = 0; t < 24 * 3600; ++t) {
      gpu.tick(values);
      for (size_t i = 0; i < f.ids.size(); ++i) f.store->append(f.ids[i], kT0 + t * 1000LL, values[i]);
      if (t % 60 == 59) (void)f.store->compact(kT0 + (t + 1) * 1000LL);
    }
    (void)f.store->flush();
    return f;
  }();
  const int64_t step = state.range(0);
  const SeriesId power = fleet.ids[2];
  size_t points = 0;
  for (auto _ : state) {
    auto r = fleet.store->query(power, kT0, kT0 + 24 * 3600 * 1000LL - 1, step);
    points = r.value().size();
    benchmark::DoNotOptimize(points);
  }
  state.counters["points"] = static_cast<double>(points);
}
BENCHMARK(BM_Query24h)->Arg(0)->Arg(60000)->Arg(300000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gw::store

BENCHMARK_MAIN();
