// Costs of the agent's pieces on the simulated DGX H100 (8 GPUs, every numeric field):
//   BM_SimulatorOnly   every fast field read once per GPU straight through the catalog's readers —
//                      what the simulator (and the thin NVML wrapper) costs per pass; on real
//                      hardware this is the driver's cost instead.
//                      Profiling (GPM) fields are left out: they are not read one by one.
//   BM_SimulatorGpmOnly  one GPM sample and the twelve profiling metrics over the last interval,
//                      per GPU, straight through the NVML wrapper: the simulator's cost of them.
//   BM_SamplingPass    the sampler's pass over the same GPUs and fields (simulator included);
//                      BM_SamplingPass - BM_SimulatorOnly = the agent's own sampling cost.
//                      /prof:0 without the profiling fields, /prof:1 with them.
//   BM_RenderMetrics   /metrics body for 8 GPUs (text, dcgm names), and gzip of it: once per
//                      sampling pass in the agent.
//   BM_ScrapeCachedPage  what each scrape adds when the pass's page is already rendered.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "collect/sampler.h"
#include "export/gzip.h"
#include "export/prometheus.h"
#include "fields/catalog.h"

namespace {

std::unique_ptr<gw::nvml::Session> openSim() {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
  auto s = gw::nvml::Session::open({GW_SIM_LIB});
  if (!s) std::abort();
  return std::move(s).value();
}

void BM_SimulatorOnly(benchmark::State& state) {
  auto session = openSim();
  std::vector<gw::nvml::Device> devices;
  for (unsigned i = 0; i < *session->deviceCount(); ++i) devices.push_back(*session->deviceByIndex(i));
  std::size_t reads = 0;
  for (auto _ : state) {
    for (const auto& d : devices) {
      for (const auto& f : gw::fields::all()) {
        if (f.type == gw::fields::Type::Label || !f.read_number || f.cadence != gw::fields::Cadence::Fast ||
            f.gpm.metric)
          continue;
        auto r = f.read_number(d);
        benchmark::DoNotOptimize(r);
        ++reads;
      }
    }
  }
  state.counters["reads_per_pass"] = static_cast<double>(reads) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SimulatorOnly)->Unit(benchmark::kMicrosecond);

void BM_SimulatorGpmOnly(benchmark::State& state) {
  auto session = openSim();
  std::vector<gw::nvml::Device> devices;
  std::vector<gw::nvml::GpmSample> prev, cur;
  for (unsigned i = 0; i < *session->deviceCount(); ++i) {
    devices.push_back(*session->deviceByIndex(i));
    auto a = devices.back().gpmAllocSample();
    auto b = devices.back().gpmAllocSample();
    if (!a || !b) std::abort();
    prev.push_back(std::move(a).value());
    cur.push_back(std::move(b).value());
    if (!devices.back().gpmSampleGet(prev.back()).ok()) std::abort();
  }
  std::vector<nvmlGpmMetric_t> request;
  for (const auto& f : gw::fields::all()) {
    if (!f.gpm.metric) continue;
    request.push_back({});
    request.back().metricId = f.gpm.metric;
  }
  double t = session->api().gwSimGetTime();
  for (auto _ : state) {
    t += 1;  // the sampler's 1 s apart; time only moves forward
    session->api().gwSimSetTime(t);
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (!devices[i].gpmSampleGet(cur[i]).ok()) std::abort();
      auto st = devices[i].gpmMetrics(prev[i], cur[i], request.data(), static_cast<unsigned>(request.size()));
      benchmark::DoNotOptimize(st);
      std::swap(prev[i], cur[i]);
    }
  }
  state.counters["metrics_per_pass"] = static_cast<double>(request.size() * devices.size());
}
BENCHMARK(BM_SimulatorGpmOnly)->Unit(benchmark::kMicrosecond);

void BM_SamplingPass(benchmark::State& state) {
  openSim();  // sets the scenario
  gw::collect::SamplerConfig config;
  for (const auto& f : gw::fields::all())
    if (f.read_number && (state.range(0) || !f.gpm.metric)) config.fields.push_back(&f);
  gw::collect::Sampler sampler([] { return gw::nvml::Session::open({GW_SIM_LIB}); }, config);
  sampler.sampleOnce();
  for (auto _ : state) sampler.sampleOnce();
}
BENCHMARK(BM_SamplingPass)->ArgName("prof")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

std::vector<gw::collect::GpuView> views() {
  openSim();
  gw::collect::Sampler sampler([] { return gw::nvml::Session::open({GW_SIM_LIB}); }, {});
  // One synchronous pass is enough for values. Not start(): its worker threads would sample the
  // same targets concurrently with this pass (the crash seen once in run.sh).
  sampler.sampleOnce();
  auto v = sampler.snapshot();
  if (v.empty()) std::abort();
  return v;
}

void BM_RenderMetrics(benchmark::State& state) {
  auto v = views();
  gw::collect::AgentStats stats;
  stats.hostname = "bench";
  stats.driver_version = "550.54.15";
  gw::exporter::ExportOptions o;
  gw::exporter::SelfMetrics self;
  self.now_ms = 1714564800000;
  std::string out, gz;
  std::size_t series = 0;
  for (auto _ : state) {
    out.clear();
    gw::exporter::renderMetrics(out, v, stats, self, o, gw::exporter::Format::Text004);
    if (state.range(0)) gw::exporter::gzipCompress(out, gz);
    benchmark::DoNotOptimize(out.data());
  }
  for (char c : out) series += c == '\n';
  state.counters["bytes"] = static_cast<double>(out.size());
  state.counters["lines"] = static_cast<double>(series);
}
BENCHMARK(BM_RenderMetrics)->Arg(0)->Arg(1)->ArgName("gzip")->Unit(benchmark::kMicrosecond);

// What a scrape costs when the page of this sampling pass is already rendered (the agent's
// MetricsPageCache): the per-scrape tail, and with gzip the tail's deflate joined to the page's
// prefix, compressed once per pass.
void BM_ScrapeCachedPage(benchmark::State& state) {
  auto v = views();
  gw::collect::AgentStats stats;
  stats.hostname = "bench";
  stats.driver_version = "550.54.15";
  gw::exporter::ExportOptions o;
  gw::exporter::SelfMetrics self;
  self.now_ms = 1714564800000;
  std::string page, tail, gz;
  gw::exporter::renderSampledMetrics(page, v, stats, o, gw::exporter::Format::Text004);
  gw::exporter::GzipPrefix prefix;
  gw::exporter::gzipPrefix(page, prefix);
  for (auto _ : state) {
    tail.clear();
    ++self.scrapes;
    gw::exporter::renderScrapeMetrics(tail, v, stats, self, o, gw::exporter::Format::Text004);
    if (state.range(0)) gw::exporter::gzipWithPrefix(prefix, tail, gz);
    benchmark::DoNotOptimize(tail.data());
  }
  state.counters["page_bytes"] = static_cast<double>(page.size());
  state.counters["tail_bytes"] = static_cast<double>(tail.size());
}
BENCHMARK(BM_ScrapeCachedPage)->Arg(0)->Arg(1)->ArgName("gzip")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
