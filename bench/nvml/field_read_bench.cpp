// Cost of one field read through the binding, on the simulator loaded with dlopen exactly as
// production loads libnvidia-ml.so.1: what the sampler pays per field, minus the driver.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "collect/sampler.h"
#include "fields/catalog.h"
#include "nvml/nvml.h"

namespace {

std::unique_ptr<gw::nvml::Session> openSim() {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
  auto s = gw::nvml::Session::open({GW_SIM_LIB});
  if (!s) std::abort();
  return std::move(s).value();
}

void BM_ReadField(benchmark::State& state, const char* key) {
  auto s = openSim();
  auto d = s->deviceByIndex(0);
  const gw::fields::Field* f = gw::fields::findByKey(key);
  for (auto _ : state) {
    auto r = f->read_number(*d);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK_CAPTURE(BM_ReadField, gpu_temp, "gpu_temp");
BENCHMARK_CAPTURE(BM_ReadField, power_usage, "power_usage");
BENCHMARK_CAPTURE(BM_ReadField, fb_used, "fb_used");
BENCHMARK_CAPTURE(BM_ReadField, nvlink_crc_flit_errors, "nvlink_crc_flit_errors");  // 18 calls, one per link

// Every numeric field of the catalog once, on one GPU: the per-GPU cost of one full pass.
void BM_ReadAllFields(benchmark::State& state) {
  auto s = openSim();
  auto d = s->deviceByIndex(0);
  std::size_t n = 0;
  for (auto _ : state) {
    for (const auto& f : gw::fields::all()) {
      if (!f.read_number) continue;
      auto r = f.read_number(*d);
      benchmark::DoNotOptimize(r);
      ++n;
    }
  }
  state.counters["fields_per_s"] = benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadAllFields);

// The sampler's pass over 8 GPUs x all fields (batched field ids included), synchronously.
void BM_SamplerPass8Gpus(benchmark::State& state) {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
  gw::collect::Sampler sampler(
      []() -> gw::Result<std::unique_ptr<gw::nvml::Session>> { return gw::nvml::Session::open({GW_SIM_LIB}); }, {});
  for (auto _ : state) sampler.sampleOnce();
}
BENCHMARK(BM_SamplerPass8Gpus)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
