// What per-job accounting costs the agent (docs/performance.md, "Jobs"):
//   BM_JobsObservePass  one sampling pass folded into 8 running jobs (one GPU each, 8 GPUs): the
//                       agent's extra work per pass (1 s by default) with 8 concurrent jobs.
//   BM_JobShow24h       `job show` of a job that ran 24 h at 1 s samples: the account is running
//                       sums, so this is the cost of the JSON document whatever the job's length.
#include <benchmark/benchmark.h>

#include "fields/catalog.h"
#include "node/job_account.h"
#include "node/jobs.h"

namespace {

using gw::collect::GpuView;

std::vector<GpuView> views(std::int64_t ms) {
  std::vector<GpuView> out;
  for (unsigned i = 0; i < 8; ++i) {
    GpuView v;
    v.id.index = i;
    v.id.uuid = "GPU-0000000" + std::to_string(i);
    v.id.device = "nvidia" + std::to_string(i);
    v.last_sample_ms = ms;
    v.values.resize(gw::fields::all().size());
    for (const auto* f : gw::node::JobGpuAccount::requiredFields())
      v.values[gw::fields::indexOf(*f)] = {90.0 + i, ms, true};
    out.push_back(std::move(v));
  }
  return out;
}

void BM_JobsObservePass(benchmark::State& state) {
  auto t = gw::node::JobTracker::open("");
  std::int64_t ms = 1'800'000'000'000;
  auto v = views(ms);
  for (unsigned i = 0; i < 8; ++i) {
    gw::node::JobStartRequest r;
    r.job_id = "job" + std::to_string(i);
    r.user = "u";
    r.uid = 1000;
    r.source = "slurm";
    r.gpus = {v[i].id.uuid};
    (void)(*t)->start(r, v, ms);
  }
  for (auto _ : state) {
    ms += 1000;
    for (auto& x : v) x.last_sample_ms = ms;
    (*t)->observe(v, ms);
  }
}
BENCHMARK(BM_JobsObservePass);

void BM_JobShow24h(benchmark::State& state) {
  gw::node::JobGpuAccount a("GPU-00000000", 0, 1'800'000'000'000);
  auto v = views(0);
  for (std::int64_t s = 1; s <= 86400; ++s) {
    v[0].last_sample_ms = 1'800'000'000'000 + s * 1000;
    a.observe(v[0], v[0].last_sample_ms);
  }
  gw::node::JobRun r;
  r.job_id = "24h";
  r.start_ms = 1'800'000'000'000;
  r.end_ms = r.start_ms + 86'400'000;
  for (auto _ : state) {
    r.gpus = nlohmann::json::array({a.toJson()});
    std::string doc = gw::node::jobJson(r, r.end_ms).dump(2);
    benchmark::DoNotOptimize(doc);
  }
  state.counters["samples"] = static_cast<double>(a.samples());
}
BENCHMARK(BM_JobShow24h);

}  // namespace

BENCHMARK_MAIN();
