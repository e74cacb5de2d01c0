// /metrics as a scraper gets it: the real agent, in-process, on the NVML simulator (loaded with
// dlopen like libnvidia-ml.so.1), scraped over loopback and read with the independent exposition
// parser. Held against facts from outside the product: dcgm-exporter's own field declarations
// (fixtures/dcgm-exporter-counters.csv) and the scenario files' minor numbers and power limits.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "export/exposition_parser.h"
#include "server/agent.h"
#include "server/test_util.h"

namespace gw::exporter {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

// One dcgm-exporter declaration.
struct Declared {
  std::string type, list, help;
};

// fixtures/dcgm-exporter-counters.csv: field,type,list,help (help may hold commas).
std::map<std::string, Declared> dcgmExporterTable() {
  std::ifstream in(GW_SOURCE_DIR "/tests/export/fixtures/dcgm-exporter-counters.csv");
  EXPECT_TRUE(in) << "fixture missing";
  std::map<std::string, Declared> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    if (a == std::string::npos || b == std::string::npos || c == std::string::npos) {
      ADD_FAILURE() << "bad fixture line: " << line;
      continue;
    }
    out[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1, c - b - 1), line.substr(c + 1)};
  }
  return out;
}

// The agent on one scenario, with fast sampling, until the test ends.
class LiveAgent {
 public:
  LiveAgent(const std::string& scenario, const std::string& naming) {
    // A shipped scenario by name, or a scenario file by path.
    const std::string file =
        scenario.find('/') != std::string::npos ? scenario : GW_SOURCE_DIR "/scenarios/" + scenario + ".yaml";
    ::setenv("GPUWARDEN_SIM_SCENARIO", file.c_str(), 1);
    ::unsetenv("GPUWARDEN_SIM_START");
    ::unsetenv("GPUWARDEN_SIM_SPEED");
    ::unsetenv("GPUWARDEN_SIM_CLOCK");
    const std::string cfg = dir_.write("agent.yaml",
                                       "listen: 127.0.0.1:0\n"
                                       "sampling:\n  fast_interval: 100ms\n  slow_interval: 200ms\n"
                                       "metrics:\n  naming: " +
                                           naming + "\n");
    server::AgentOptions o;
    o.config_path = cfg;
    o.data_dir = dir_.path() + "/data";
    o.opener = [] { return nvml::Session::open({GW_SIM_LIB}); };
    auto a = server::Agent::create(std::move(o));
    if (!a) {
      ADD_FAILURE() << a.error();
      return;
    }
    agent_ = std::move(a).value();
    if (Status s = agent_->start(); !s) {
      ADD_FAILURE() << s.message();
      return;
    }
    auto addrs = agent_->boundAddresses();
    if (addrs.size() != 1) return;
    port_ = std::stoi(addrs[0].substr(addrs[0].rfind(':') + 1));
  }
  int port() const { return port_; }

  // /metrics once each of `gpus` GPUs has a sample of every family in `families` (the GPUs are
  // sampled by workers of their own, the slow fields less often).
  // The page once every family has a series for `gpus` GPUs. Only a failure waits the whole bound,
  // so it is wide: a loaded machine's slow cadence must not hand the checks a partial page.
  std::string metricsWhen(std::vector<std::string> families, std::size_t gpus) const {
    std::string body;
    const bool complete = test::eventually(
        [&] {
          auto r = test::httpGet(port_, "/metrics");
          body = r.body;
          if (r.status != 200) return false;
          const auto parsed = testing::parseExposition(body, false);
          for (const auto& f : families) {
            std::set<std::string> seen;
            for (const auto& s : parsed.samples)
              if (s.name == f) seen.insert(s.label("gpu"));
            if (seen.size() < gpus) return false;
          }
          return true;
        },
        60s);
    if (!complete) ADD_FAILURE() << "no page within 60 s had every family for " << gpus << " GPUs:\n" << body;
    return body;
  }

 private:
  test::TempDir dir_;
  std::unique_ptr<server::Agent> agent_;
  int port_ = 0;
};

std::string label(const testing::Sample& s, std::string_view k) { return s.label(k); }

// The shipped DGX H100's minor numbers (scenarios/dgx-h100.yaml): the driver's probe order.
constexpr unsigned kDgxMinor[8] = {2, 3, 0, 1, 6, 7, 4, 5};

// dcgm-exporter's `device` label is "nvidia" + the GPU's minor number (its /dev node), not its
// NVML index; on this machine no GPU has minor == index.
TEST(LiveMetrics, DeviceLabelIsNvidiaAndTheMinorNumber) {
  LiveAgent agent("dgx-h100", "dcgm");
  ASSERT_GT(agent.port(), 0);
  const std::string body = agent.metricsWhen({"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK"}, 8);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  std::map<std::string, std::set<std::string>> device_of_gpu;  // every DCGM series of each GPU
  for (const auto& s : parsed.samples) {
    if (s.name.rfind("DCGM_FI_", 0) != 0) continue;
    device_of_gpu[label(s, "gpu")].insert(label(s, "device"));
  }
  ASSERT_EQ(device_of_gpu.size(), 8u) << body;
  for (unsigned i = 0; i < 8; ++i) {
    SCOPED_TRACE("GPU " + std::to_string(i));
    ASSERT_NE(kDgxMinor[i], i) << "the scenario must keep minor != index";
    EXPECT_EQ(device_of_gpu[std::to_string(i)], std::set<std::string>{"nvidia" + std::to_string(kDgxMinor[i])});
  }
  // The JSON API names the same node: the sampler's identity and the inventory.
  auto r = test::httpGet(agent.port(), "/api/v1/gpus");
  ASSERT_EQ(r.status, 200);
  const auto gpus = json::parse(r.body)["gpus"];
  ASSERT_EQ(gpus.size(), 8u);
  for (const auto& g : gpus) {
    const unsigned i = g["index"].get<unsigned>();
    EXPECT_EQ(g["device"], "nvidia" + std::to_string(kDgxMinor[i])) << g.dump();
  }
}

// Every DCGM_FI_* family we export that dcgm-exporter also declares has dcgm-exporter's name, TYPE,
// HELP and label set. A field declared with another type (a gauge turned counter) fails here,
// whatever our own docs say.
TEST(LiveMetrics, DcgmFamiliesMatchDcgmExportersDeclarations) {
  const auto table = dcgmExporterTable();
  ASSERT_GT(table.size(), 30u);
  LiveAgent agent("dgx-h100", "dcgm");
  ASSERT_GT(agent.port(), 0);
  // Wait for the slow cadence too (remapped rows, ECC) on the last GPU, and for the profiling
  // families, which a GPU has only from its second GPM sample on (a page under load once had them
  // for six GPUs of eight).
  const std::string body = agent.metricsWhen(
      {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
       "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
       "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_PIPE_FP16_ACTIVE"},
      8);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();

  const std::set<std::string> dcgm_labels = {
      "gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"};
  std::set<std::string> checked;
  for (const auto& [family, type] : parsed.type) {
    if (family.rfind("DCGM_FI_", 0) != 0) continue;
    auto it = table.find(family);
    if (it == table.end()) continue;  // a field dcgm-exporter does not ship: nothing to hold it to
    SCOPED_TRACE(family);
    checked.insert(family);
    EXPECT_EQ(type, it->second.type) << "dcgm-exporter declares " << family << " a " << it->second.type;
    EXPECT_EQ(parsed.help.at(family), it->second.help);
    std::size_t samples = 0;
    for (const auto& s : parsed.samples) {
      if (s.name != family) continue;
      ++samples;
      std::set<std::string> names;
      for (const auto& [k, v] : s.labels) {
        names.insert(k);
        EXPECT_FALSE(v.empty()) << k << " is empty";
      }
      EXPECT_EQ(names, dcgm_labels);
      EXPECT_EQ(label(s, "device"), "nvidia" + std::to_string(kDgxMinor[std::stoul(label(s, "gpu"))]));
    }
    EXPECT_EQ(samples, 8u) << "one series per GPU";
  }
  // The families dcgm-exporter enables by default that an H100 answers through NVML are there.
  for (const char* must : {"DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP",
                           "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                           "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL",
                           "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                           "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE"})
    EXPECT_TRUE(checked.count(must)) << must << " missing from /metrics:\n" << body;
}

// NVML reports power limits in milliwatts; pcie-mixed caps GPU 3 at 312.5 W (312500 mW). The
// exporter keeps the fraction in both namings: dcgm-exporter prints DCGM_FT_DOUBLE fields with %f.
TEST(LiveMetrics, PowerLimitKeepsItsFractionInDcgmNaming) {
  LiveAgent agent("pcie-mixed", "dcgm");
  ASSERT_GT(agent.port(), 0);
  const std::string body = agent.metricsWhen({"DCGM_FI_DEV_POWER_MGMT_LIMIT", "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"}, 4);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  std::map<std::string, std::string> limit, enforced;
  for (const auto& s : parsed.samples) {
    if (s.name == "DCGM_FI_DEV_POWER_MGMT_LIMIT") limit[label(s, "gpu")] = s.value;
    if (s.name == "DCGM_FI_DEV_ENFORCED_POWER_LIMIT") enforced[label(s, "gpu")] = s.value;
  }
  EXPECT_EQ(limit["3"], "312.500000") << body;
  EXPECT_EQ(enforced["3"], "312.500000") << body;
  EXPECT_EQ(limit["2"], "450.000000");
  EXPECT_EQ(limit["0"], "350.000000");
}

TEST(LiveMetrics, PowerLimitKeepsItsFractionInNativeNaming) {
  LiveAgent agent("pcie-mixed", "native");
  ASSERT_GT(agent.port(), 0);
  const std::string body =
      agent.metricsWhen({"gpuwarden_gpu_power_limit_watts", "gpuwarden_gpu_power_default_limit_watts"}, 4);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  std::map<std::string, double> limit, dflt;
  for (const auto& s : parsed.samples) {
    if (s.name == "gpuwarden_gpu_power_limit_watts") limit[label(s, "gpu")] = std::stod(s.value);
    if (s.name == "gpuwarden_gpu_power_default_limit_watts") dflt[label(s, "gpu")] = std::stod(s.value);
  }
  EXPECT_DOUBLE_EQ(limit["3"], 312.5) << body;
  EXPECT_DOUBLE_EQ(dflt["3"], 450);
  EXPECT_DOUBLE_EQ(limit["2"], 450);
}

// Profiling metrics (GPM) as a scraper sees them. The ranges come from the simulator's model
// (src/sim/workload.cpp): training runs at 95 % +- 2.5 before its first checkpoint dip at 600 s,
// and keeps 0.93 of the busy share's SMs active and 0.62 of it on the tensor pipes; DRAM follows the
// memory-controller utilisation, 0.45 of the GPU's +- 2 points.
struct Range {
  double lo, hi;
};
constexpr Range kTrainingGr{0.925, 0.975};
constexpr Range kTrainingSm{0.93 * 0.925, 0.93 * 0.975};
constexpr Range kTrainingTensor{0.62 * 0.925, 0.62 * 0.975};
constexpr Range kTrainingDram{(0.45 * 92.5 - 2) / 100, (0.45 * 97.5 + 2) / 100};

std::map<std::string, double> valuesByGpu(const testing::Parsed& parsed, const std::string& family,
                                          const std::string& key = "gpu") {
  std::map<std::string, double> out;
  for (const auto& s : parsed.samples)
    if (s.name == family) out[label(s, key)] = std::stod(s.value);
  return out;
}

void expectAllIn(const std::map<std::string, double>& values, Range r, std::size_t count, const std::string& what) {
  EXPECT_EQ(values.size(), count) << what;
  for (const auto& [gpu, v] : values) {
    EXPECT_GE(v, r.lo) << what << " gpu " << gpu;
    EXPECT_LE(v, r.hi) << what << " gpu " << gpu;
  }
}

TEST(LiveMetrics, ProfilingMetricsOfATrainingNodeInDcgmNaming) {
  LiveAgent agent("dgx-h100", "dcgm");
  ASSERT_GT(agent.port(), 0);
  const std::string body = agent.metricsWhen(
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_NVLINK_TX_BYTES"}, 8);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_GR_ENGINE_ACTIVE"), kTrainingGr, 8, "gr engine");
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_SM_ACTIVE"), kTrainingSm, 8, "sm active");
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), kTrainingTensor, 8, "tensor");
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_DRAM_ACTIVE"), kTrainingDram, 8, "dram");
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_PIPE_FP64_ACTIVE"), {0, 0}, 8, "fp64");
  // NVLink: 18 links at 0.35 of 25 GB/s each times the utilisation (physics.cpp), in bytes/s.
  const double nvl = 18 * 0.35 * 25e9;
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_NVLINK_TX_BYTES"), {nvl * 0.925, nvl * 0.975}, 8, "nvlink tx");
  // PCIe: Gen5 x16 (3938400 KB/s a lane) at 0.02 (tx) times utilisation +- 10 %, plus 200 KB/s.
  const double pcie = 16 * 3938400.0 * 1024 * 0.02;
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_PCIE_TX_BYTES"),
              {pcie * 0.925 * 0.9 + 200 * 1024, pcie * 0.975 * 1.1 + 200 * 1024}, 8, "pcie tx");
  EXPECT_EQ(parsed.type.at("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), "gauge");
}

TEST(LiveMetrics, ProfilingMetricsOfATrainingNodeInNativeNaming) {
  LiveAgent agent("dgx-h100", "native");
  ASSERT_GT(agent.port(), 0);
  const std::string body = agent.metricsWhen(
      {"gpuwarden_gpu_prof_graphics_engine_active_ratio", "gpuwarden_gpu_prof_tensor_pipe_active_ratio"}, 8);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  expectAllIn(valuesByGpu(parsed, "gpuwarden_gpu_prof_graphics_engine_active_ratio"), kTrainingGr, 8, "gr engine");
  expectAllIn(valuesByGpu(parsed, "gpuwarden_gpu_prof_tensor_pipe_active_ratio"), kTrainingTensor, 8, "tensor");
  expectAllIn(valuesByGpu(parsed, "gpuwarden_gpu_prof_sm_active_ratio"), kTrainingSm, 8, "sm active");
  for (const auto& s : parsed.samples) EXPECT_EQ(s.name.rfind("DCGM_FI_PROF_", 0), std::string::npos) << s.name;
}

// The driver's recovery action is an INT64 field in DCGM (1523): a whole number in both namings,
// per GPU, 4 (drain and reset) on the GPU its Xid 154 named and 0 on the other.
TEST(LiveMetrics, RecoveryActionIsAWholeNumberPerGpu) {
  test::TempDir dir;
  const std::string scenario = dir.write("recovery.yaml",
                                         "gpus:\n"
                                         "  - {profile: H100-SXM5-80GB, bus_id: \"0000:18:00.0\"}\n"
                                         "  - {profile: H100-SXM5-80GB, bus_id: \"0000:2A:00.0\"}\n"
                                         "faults:\n"
                                         "  - {type: xid, gpu: 1, at: 0, code: 154, action: drain_and_reset}\n");
  for (const std::string naming : {"dcgm", "native"}) {
    SCOPED_TRACE(naming);
    const std::string family =
        naming == "dcgm" ? "DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION" : "gpuwarden_gpu_recovery_action";
    LiveAgent agent(scenario, naming);
    ASSERT_GT(agent.port(), 0);
    const auto parsed = testing::parseExposition(agent.metricsWhen({family}, 2), false);
    ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
    EXPECT_EQ(parsed.type.at(family), "gauge");
    std::map<std::string, std::string> by_gpu;
    for (const auto& s : parsed.samples)
      if (s.name == family) by_gpu[label(s, "gpu")] = s.value;
    EXPECT_EQ(by_gpu, (std::map<std::string, std::string>{{"0", "0"}, {"1", "4"}}));
  }
}

TEST(LiveMetrics, ProfilingMetricsOfAnIdleHopperAreNearZero) {
  test::TempDir dir;
  const std::string scenario = dir.write("idle-h100.yaml",
                                         "gpus:\n"
                                         "  - {profile: H100-SXM5-80GB, bus_id: \"0000:18:00.0\", workload: idle}\n"
                                         "  - {profile: H100-SXM5-80GB, bus_id: \"0000:2A:00.0\", workload: idle}\n");
  LiveAgent agent(scenario, "dcgm");
  ASSERT_GT(agent.port(), 0);
  const std::string body = agent.metricsWhen({"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"}, 2);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  // Idle: 0 %, or 1 % in the seconds its noise is above 0.8 (workload.cpp).
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_GR_ENGINE_ACTIVE"), {0, 0.01}, 2, "gr engine");
  expectAllIn(valuesByGpu(parsed, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), {0, 0.0062}, 2, "tensor");
}

// MIG on Hopper (mig-h100): each GPU instance has its own series; the two running training report
// the training load on their own SMs, the empty one zero, and the whole GPU their SM-weighted sum,
// 92 of its 132 SMs busy. PCIe belongs to the whole GPU only.
TEST(LiveMetrics, ProfilingMetricsPerMigInstance) {
  LiveAgent agent("mig-h100", "dcgm");
  ASSERT_GT(agent.port(), 0);
  std::string body;
  test::eventually(
      [&] {
        body = agent.metricsWhen({"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}, 2);
        return valuesByGpu(testing::parseExposition(body, false), "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU_I_ID").size() ==
               4;  // three instances, and "<absent>" for the two whole GPUs
      },
      20s);
  const auto parsed = testing::parseExposition(body, false);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  std::map<std::string, double> whole, inst;
  std::size_t pcie_mig = 0;
  for (const auto& s : parsed.samples) {
    const bool is_mig = label(s, "GPU_I_ID") != "<absent>";
    if (s.name == "DCGM_FI_PROF_PCIE_TX_BYTES" && is_mig) ++pcie_mig;
    if (s.name != "DCGM_FI_PROF_GR_ENGINE_ACTIVE") continue;
    if (!is_mig)
      whole[label(s, "gpu")] = std::stod(s.value);
    else
      inst[label(s, "GPU_I_ID")] = std::stod(s.value);
  }
  ASSERT_EQ(inst.size(), 3u) << body;
  EXPECT_GE(inst["2"], kTrainingGr.lo);
  EXPECT_LE(inst["2"], kTrainingGr.hi);
  EXPECT_GE(inst["3"], kTrainingGr.lo);
  EXPECT_LE(inst["3"], kTrainingGr.hi);
  EXPECT_EQ(inst["9"], 0.0);
  EXPECT_GE(whole["0"], 92.0 / 132 * kTrainingGr.lo);
  EXPECT_LE(whole["0"], 92.0 / 132 * kTrainingGr.hi);
  EXPECT_GE(whole["1"], kTrainingGr.lo);  // GPU1 trains on the whole GPU
  EXPECT_LE(whole["1"], kTrainingGr.hi);
  EXPECT_EQ(pcie_mig, 0u) << body;
}

}  // namespace
}  // namespace gw::exporter
