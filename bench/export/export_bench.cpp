// /metrics rendering cost: 8 H100 GPUs × every catalog field (plus a MIG device), both namings,
// both formats; items/s is exported series per second, so 1/items_per_second is the cost of one
// series. Also gzip of one scrape. Built with -DGW_BUILD_BENCH=ON.
#include <benchmark/benchmark.h>

#include "export/export_fixture.h"
#include "export/gzip.h"
#include "export/prometheus.h"

namespace {

using namespace gw::exporter;

std::vector<gw::collect::GpuView> allUpNode() {
  auto node = testing::makeNode();
  for (auto& g : node) g.state = gw::collect::GpuState::Up;  // every field of every GPU served
  return node;
}

std::size_t countSeries(const std::string& text) {
  std::size_t n = 0, pos = 0;
  while (pos < text.size()) {
    if (text[pos] != '#') ++n;
    pos = text.find('\n', pos);
    if (pos == std::string::npos) break;
    ++pos;
  }
  return n;
}

// A node whose every GPU is held by a Kubernetes container (the pod labels of docs/kubernetes.md,
// names of a realistic length), beside the same node without: the cost of the three labels.
std::vector<gw::collect::GpuView> podNode() {
  auto node = allUpNode();
  for (std::size_t i = 0; i < node.size(); ++i)
    node[i].workload_labels = {{kContainerLabel, "pytorch-worker"},
                               {kNamespaceLabel, "ml-training"},
                               {kPodLabel, "llama-finetune-7b-worker-" + std::to_string(i)}};
  return node;
}

void BM_Render(benchmark::State& state, Naming naming, Format format, bool pods = false) {
  const auto node = pods ? podNode() : allUpNode();
  const auto agent = testing::makeAgent();
  SelfMetrics self;
  self.now_ms = testing::kNowMs;
  ExportOptions o;
  o.naming = naming;
  o.extra_labels = {{"cluster", "train-a"}};
  std::string out;
  renderMetrics(out, node, agent, self, o, format);
  const std::size_t series = countSeries(out);
  const std::size_t bytes = out.size();
  for (auto _ : state) {
    out.clear();
    renderMetrics(out, node, agent, self, o, format);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * series));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["series"] = static_cast<double>(series);
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK_CAPTURE(BM_Render, dcgm_text, Naming::Dcgm, Format::Text004);
BENCHMARK_CAPTURE(BM_Render, dcgm_openmetrics, Naming::Dcgm, Format::OpenMetrics);
BENCHMARK_CAPTURE(BM_Render, native_text, Naming::Native, Format::Text004);
BENCHMARK_CAPTURE(BM_Render, native_openmetrics, Naming::Native, Format::OpenMetrics);
BENCHMARK_CAPTURE(BM_Render, dcgm_text_pod_labels, Naming::Dcgm, Format::Text004, true);
BENCHMARK_CAPTURE(BM_Render, native_text_pod_labels, Naming::Native, Format::Text004, true);

void BM_Gzip(benchmark::State& state) {
  std::string text;
  SelfMetrics self;
  self.now_ms = testing::kNowMs;
  renderMetrics(text, allUpNode(), testing::makeAgent(), self, {}, Format::Text004);
  std::string gz;
  for (auto _ : state) {
    gzipCompress(text, gz, static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(gz.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["ratio"] = static_cast<double>(text.size()) / static_cast<double>(gz.size());
}
BENCHMARK(BM_Gzip)->Arg(1)->Arg(6);

}  // namespace

BENCHMARK_MAIN();
