// The /metrics exporter: exact lines in both namings and formats, MIG, lost/stalled GPUs,
// omitted invalid values, escaping, family structure, extra labels, field selection,
// negotiation, docs/metrics.md in sync.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "export/dcgm_compat.h"
#include "export/export_fixture.h"
#include "export/exposition_parser.h"
#include "export/prometheus.h"

namespace gw::exporter {
namespace {

using namespace gw::exporter::testing;

const std::string kGpu0Dcgm = "gpu=\"0\",UUID=\"" + gpuUuid(0) +
                              "\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB "
                              "HBM3\",Hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\"";
const std::string kGpu0Native = "gpu=\"0\",uuid=\"" + gpuUuid(0) +
                                "\",pci_bus_id=\"00000000:18:00.0\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"node1\"";

SelfMetrics self() {
  SelfMetrics s;
  s.last_scrape_duration_seconds = 0.000042;
  s.sample_lag_seconds_max = 60;
  s.scrapes = 12;
  s.now_ms = kNowMs;
  s.version = "0.1.0";
  return s;
}

std::string render(Naming n, Format f, const std::vector<collect::GpuView>& gpus = makeNode(), ExportOptions o = {},
                   const collect::AgentStats& agent = makeAgent()) {
  o.naming = n;
  std::string out;
  renderMetrics(out, gpus, agent, self(), o, f);
  return out;
}

bool hasLine(const std::string& text, const std::string& line) {
  if (text.compare(0, line.size() + 1, line + "\n") == 0) return true;
  return text.find("\n" + line + "\n") != std::string::npos;
}
std::size_t countLinesStartingWith(const std::string& text, const std::string& prefix) {
  std::size_t n = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.compare(0, prefix.size(), prefix) == 0) ++n;
  return n;
}

#define EXPECT_LINE(text, line) \
  EXPECT_TRUE(hasLine(text, line)) << "missing line: " << (line) << "\n--- output ---\n" << (text)
#define EXPECT_NO_LINE(text, line) EXPECT_FALSE(hasLine(text, line)) << "unexpected line: " << (line)

// ---------------------------------------------------------------------------------------------
// Dcgm naming.

TEST(DcgmNaming, ExactSeriesLikeDcgmExporter) {
  const std::string t = render(Naming::Dcgm, Format::Text004);
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).");
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_GPU_TEMP gauge");
  EXPECT_LINE(t, "DCGM_FI_DEV_GPU_TEMP{" + kGpu0Dcgm + "} 45");
  // Power is DCGM_FT_DOUBLE: dcgm-exporter prints it with %f.
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).");
  EXPECT_LINE(t, "DCGM_FI_DEV_POWER_USAGE{" + kGpu0Dcgm + "} 412.345000");
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).");
  EXPECT_LINE(t, "DCGM_FI_DEV_FB_USED{" + kGpu0Dcgm + "} 12345");
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter");
  EXPECT_LINE(t, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" + kGpu0Dcgm + "} 123456789");
  EXPECT_LINE(t, "DCGM_FI_DEV_GPU_UTIL{" + kGpu0Dcgm + "} 57");
  // dcgm-exporter's declarations, even where the catalog disagrees (a KB/s rate as counter).
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_PCIE_TX_THROUGHPUT counter");
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS counter");
  // A field dcgm-exporter does not ship keeps the catalog's type and help.
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_PSTATE Performance state number, 0 is maximum performance.");
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_PSTATE gauge");
  EXPECT_LINE(t, "DCGM_FI_DEV_SM_CLOCK{gpu=\"7\",UUID=\"" + gpuUuid(7) +
                     "\",pci_bus_id=\"00000000:DB:00.0\",device=\"nvidia7\",modelName=\"NVIDIA H100 80GB "
                     "HBM3\",Hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 1980");
  EXPECT_EQ(t.find("# EOF"), std::string::npos);
}

// dcgm_fields.h's types at the edges of the DOUBLE ranges: a DOUBLE prints with %f, an INT64 as a
// whole number, and the shutdown and slowdown temperatures next to the power limits are INT64.
TEST(DcgmNaming, ValueKindsAreDcgmsFieldTypes) {
  using detail::DcgmValueKind;
  const std::map<int, DcgmValueKind> dcgm = {
      {150, DcgmValueKind::Int64},    // GPU_TEMP
      {155, DcgmValueKind::Double},   // POWER_USAGE
      {156, DcgmValueKind::Int64},    // TOTAL_ENERGY_CONSUMPTION
      {157, DcgmValueKind::Double},   // POWER_USAGE_INSTANT
      {158, DcgmValueKind::Int64},    // SLOWDOWN_TEMP
      {159, DcgmValueKind::Int64},    // SHUTDOWN_TEMP
      {160, DcgmValueKind::Double},   // POWER_MGMT_LIMIT
      {161, DcgmValueKind::Double},   // POWER_MGMT_LIMIT_MIN
      {164, DcgmValueKind::Double},   // ENFORCED_POWER_LIMIT
      {165, DcgmValueKind::Int64},    // past the power limits
      {1000, DcgmValueKind::Int64},   // below the profiling fields
      {1099, DcgmValueKind::Double},  // the last profiling id
      {1100, DcgmValueKind::Int64},   // past them
      {170, DcgmValueKind::Int64},    // FABRIC_MANAGER_STATUS
      {175, DcgmValueKind::Int64},    // FABRIC_HEALTH_SUMMARY
      {1001, DcgmValueKind::Double},  // PROF_GR_ENGINE_ACTIVE
      {1012, DcgmValueKind::Double},  // PROF_NVLINK_RX_BYTES
      {1523, DcgmValueKind::Int64},   // GET_GPU_RECOVERY_ACTION
  };
  for (const auto& [id, kind] : dcgm) EXPECT_EQ(detail::dcgmValueKind(id), kind) << "DCGM field " << id;
}

TEST(DcgmNaming, MigDeviceCarriesParentIdentityAndInstanceLabels) {
  const std::string t = render(Naming::Dcgm, Format::Text004);
  const std::string mig = "gpu=\"0\",UUID=\"" + gpuUuid(0) +
                          "\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB "
                          "HBM3\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"5\",Hostname=\"node1\","
                          "DCGM_FI_DRIVER_VERSION=\"550.54.15\"";
  EXPECT_LINE(t, "DCGM_FI_DEV_FB_USED{" + mig + "} 9728");
  EXPECT_LINE(t, "DCGM_FI_DEV_FB_TOTAL{" + mig + "} 9984");
  EXPECT_EQ(t.find("DCGM_FI_DEV_GPU_TEMP{" + mig), std::string::npos) << "MIG has no temperature of its own";
  EXPECT_LINE(t, "gpuwarden_gpu_up{" + mig + "} 1");
}

// A field dcgm-exporter does not ship takes its HELP from the catalog with the unit appended,
// except where the "unit" only says how to read the number (bool, bitmask).
TEST(DcgmNaming, CatalogHelpNamesTheUnitButNotBoolOrBitmask) {
  const std::string t = render(Naming::Dcgm, Format::Text004);
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_SLOWDOWN_TEMP Temperature at which the GPU slows down (in C).");
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_ECC_CURRENT ECC mode, 1 enabled.");
  EXPECT_LINE(t,
              "# HELP DCGM_FI_DEV_CLOCK_THROTTLE_REASONS Active clock event (throttle) reasons: 1 idle, 4 SW power "
              "cap, 8 HW slowdown, 32 SW thermal, 64 HW thermal, 128 power brake.");
}

TEST(DcgmNaming, DriverVersionLabelCanBeTurnedOff) {
  ExportOptions o;
  o.dcgm_driver_version_label = false;
  const std::string t = render(Naming::Dcgm, Format::Text004, makeNode(), o);
  EXPECT_EQ(t.find("DCGM_FI_DRIVER_VERSION="), std::string::npos);
  EXPECT_LINE(t, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"" + gpuUuid(0) +
                     "\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB "
                     "HBM3\",Hostname=\"node1\"} 45");
}

TEST(DcgmNaming, TheHostLabelsNameAndValueAreConfigurable) {
  ExportOptions o;
  o.dcgm_driver_version_label = false;
  o.host_value = "gpu-node-17";  // NODE_NAME in Kubernetes
  std::string t = render(Naming::Dcgm, Format::Text004, makeNode(), o);
  const std::string before =
      "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"" + gpuUuid(0) +
      "\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\"";
  EXPECT_LINE(t, before + ",Hostname=\"gpu-node-17\"} 45");
  o.host_label = "node";
  t = render(Naming::Dcgm, Format::Text004, makeNode(), o);
  EXPECT_LINE(t, before + ",node=\"gpu-node-17\"} 45");
  EXPECT_EQ(t.find("Hostname="), std::string::npos);
  o.host_label = "";  // dcgm-exporter's --no-hostname
  t = render(Naming::Dcgm, Format::Text004, makeNode(), o);
  EXPECT_LINE(t, before + "} 45");
  o.host_label = std::nullopt;
  o.host_value = std::nullopt;
  t = render(Naming::Native, Format::Text004, makeNode(), o);
  EXPECT_LINE(t, "gpuwarden_gpu_temperature_celsius{" + kGpu0Native + "} 45");
}

TEST(DcgmNaming, RenamedFieldsUnderBothNamesAndNvlinkBandwidthIsTxPlusRx) {
  auto node = makeNode();
  const auto set = [&](const char* key, double v) {
    node[0].values[fields::indexOf(*fields::findByKey(key))] = {v, kNowMs, true};
  };
  set("clock_event_reasons", 4);
  set("nvlink_tx_kib", 1000);
  set("nvlink_rx_kib", 234);
  set("nvlink_total_kib", 1234);  // the sampler reads it from NVML; here the exporter prints it
  const std::string t = render(Naming::Dcgm, Format::Text004, node);
  EXPECT_LINE(t, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{" + kGpu0Dcgm + "} 4");
  EXPECT_LINE(t, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS{" + kGpu0Dcgm + "} 4");
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counter");
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL Total number of NVLink bandwidth counters for all lanes");
  EXPECT_LINE(t, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{" + kGpu0Dcgm + "} 1234");
  EXPECT_EQ(fields::findByDcgmName("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"), fields::findByKey("clock_event_reasons"));
  EXPECT_EQ(fields::currentDcgmName(*fields::findByKey("clock_event_reasons")), "DCGM_FI_DEV_CLOCKS_EVENT_REASONS");
  // Selecting the field by either name exports both.
  ExportOptions o;
  o.fields = {fields::findByDcgmName("DCGM_FI_DEV_CLOCKS_EVENT_REASONS")};
  const std::string s = render(Naming::Dcgm, Format::Text004, node, o);
  EXPECT_LINE(s, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS{" + kGpu0Dcgm + "} 4");
  EXPECT_LINE(s, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{" + kGpu0Dcgm + "} 4");
  // The native naming has one name.
  EXPECT_EQ(render(Naming::Native, Format::Text004, node).find("CLOCKS_EVENT"), std::string::npos);
}

TEST(DcgmNaming, NoHostnameLabelWhenHostnameUnknown) {
  auto agent = makeAgent();
  agent.hostname.clear();
  const std::string t = render(Naming::Dcgm, Format::Text004, makeNode(), {}, agent);
  EXPECT_EQ(t.find("Hostname="), std::string::npos);
}

TEST(DcgmNaming, OpenMetricsTypesCountersAsCountersWithTotalSamples) {
  const std::string t = render(Naming::Dcgm, Format::OpenMetrics);
  // OpenMetrics counters' samples end in _total; dcgm-exporter's names do not, so they get it, as
  // the Prometheus client libraries write them (negotiation keeps Prometheus on text 0.0.4).
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter");
  EXPECT_LINE(t, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total{" + kGpu0Dcgm + "} 123456789");
  EXPECT_EQ(t.find(" unknown\n"), std::string::npos);
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_GPU_TEMP gauge");
  EXPECT_LINE(t, "DCGM_FI_DEV_GPU_TEMP{" + kGpu0Dcgm + "} 45");
  EXPECT_LINE(t, "# TYPE gpuwarden_nvml_errors counter");
  EXPECT_LINE(t, "gpuwarden_nvml_errors_total{" + kGpu0Dcgm + "} 0");
  EXPECT_TRUE(t.size() >= 6 && t.substr(t.size() - 6) == "# EOF\n");
}

// ---------------------------------------------------------------------------------------------
// Native naming.

TEST(NativeNaming, BaseUnitsAndSnakeCaseLabels) {
  const std::string t = render(Naming::Native, Format::Text004);
  EXPECT_LINE(t, "# HELP gpuwarden_gpu_temperature_celsius GPU core temperature");
  EXPECT_LINE(t, "# TYPE gpuwarden_gpu_temperature_celsius gauge");
  EXPECT_LINE(t, "gpuwarden_gpu_temperature_celsius{" + kGpu0Native + "} 45");
  EXPECT_LINE(t, "gpuwarden_gpu_memory_used_bytes{" + kGpu0Native + "} 12944670720");  // 12345 MiB
  EXPECT_LINE(t, "gpuwarden_gpu_utilization_ratio{" + kGpu0Native + "} 0.57");
  EXPECT_LINE(t, "gpuwarden_gpu_power_watts{" + kGpu0Native + "} 412.345");
  EXPECT_LINE(t, "gpuwarden_gpu_sm_clock_hertz{" + kGpu0Native + "} 1980000000");
  EXPECT_LINE(t, "gpuwarden_gpu_pcie_tx_bytes_per_second{" + kGpu0Native + "} 1263616");
  EXPECT_LINE(t, "# TYPE gpuwarden_gpu_energy_joules_total counter");
  EXPECT_LINE(t, "gpuwarden_gpu_energy_joules_total{" + kGpu0Native + "} 123456.789");
  EXPECT_EQ(t.find("# UNIT"), std::string::npos);
  EXPECT_EQ(t.find("DCGM_"), std::string::npos);
}

TEST(NativeNaming, MigDeviceHasItsOwnUuidAndInstanceLabels) {
  const std::string t = render(Naming::Native, Format::Text004);
  EXPECT_LINE(t, "gpuwarden_gpu_memory_used_bytes{gpu=\"0\",uuid=\"" + kMigUuid +
                     "\",pci_bus_id=\"00000000:18:00.0\",model=\"NVIDIA H100 80GB HBM3\",mig_profile=\"1g.10gb\","
                     "gpu_instance_id=\"5\",hostname=\"node1\"} 10200547328");
}

TEST(NativeNaming, OpenMetricsFamiliesUnitsAndEof) {
  const std::string t = render(Naming::Native, Format::OpenMetrics);
  EXPECT_LINE(t, "# HELP gpuwarden_gpu_energy_joules Energy consumed since the driver was loaded");
  EXPECT_LINE(t, "# TYPE gpuwarden_gpu_energy_joules counter");
  EXPECT_LINE(t, "# UNIT gpuwarden_gpu_energy_joules joules");
  EXPECT_LINE(t, "gpuwarden_gpu_energy_joules_total{" + kGpu0Native + "} 123456.789");
  EXPECT_LINE(t, "# TYPE gpuwarden_gpu_temperature_celsius gauge");
  EXPECT_LINE(t, "# UNIT gpuwarden_gpu_temperature_celsius celsius");
  EXPECT_LINE(t, "# TYPE gpuwarden_gpu_pstate gauge");
  EXPECT_EQ(t.find("# UNIT gpuwarden_gpu_pstate"), std::string::npos);
  EXPECT_LINE(t, "# TYPE gpuwarden_build info");
  EXPECT_LINE(t, "gpuwarden_build_info{version=\"0.1.0\"} 1");
  EXPECT_LINE(t,
              "gpuwarden_driver_info{driver_version=\"550.54.15\",nvml_version=\"12.550.54.15\",cuda_driver_version="
              "\"12.4\"} 1");
  EXPECT_EQ(t.find("# EOF"), t.size() - 6) << "# EOF must be the last line, once";
}

// NVML's CUDA version is major*1000 + minor*10: 12090 is 12.9 (not 12.10), 13000 is 13.0; an
// unknown one (0) leaves the label out rather than printing "0.0".
TEST(NativeNaming, TheCudaVersionLabelDecodesNvmlsNumber) {
  const std::string info = "gpuwarden_driver_info{driver_version=\"550.54.15\",nvml_version=\"12.550.54.15\"";
  auto agent = makeAgent();
  for (const auto& [v, text] : std::vector<std::pair<int, std::string>>{{12090, "12.9"}, {13000, "13.0"}}) {
    agent.cuda_driver_version = v;
    EXPECT_LINE(render(Naming::Native, Format::Text004, makeNode(), {}, agent),
                info + ",cuda_driver_version=\"" + text + "\"} 1");
  }
  agent.cuda_driver_version = 0;
  EXPECT_LINE(render(Naming::Native, Format::Text004, makeNode(), {}, agent), info + "} 1");
}

// A GPU sampled "after" the scrape's clock (the wall clock stepped back) has no negative lag: 0.
TEST(Values, ASampleFromTheFutureHasALagOfZero) {
  auto node = makeNode();
  node[3].last_sample_ms = kNowMs + 5000;
  node[4].last_sample_ms = kNowMs;
  const std::string t = render(Naming::Native, Format::Text004, node);
  const std::string prefix = "gpuwarden_sample_lag_seconds{gpu=\"";
  for (const char* gpu : {"3", "4"}) {
    const auto at = t.find(prefix + gpu + "\"");
    ASSERT_NE(at, std::string::npos) << gpu;
    const std::string line = t.substr(at, t.find('\n', at) - at);
    EXPECT_EQ(line.substr(line.rfind(' ') + 1), "0") << line;
  }
}

// ---------------------------------------------------------------------------------------------
// Both namings.

class BothNamings : public ::testing::TestWithParam<std::tuple<Naming, Format>> {
 protected:
  Naming naming() const { return std::get<0>(GetParam()); }
  Format format() const { return std::get<1>(GetParam()); }
  std::string labels(unsigned i) const {
    if (naming() == Naming::Dcgm)
      return "gpu=\"" + std::to_string(i) + "\",UUID=\"" + gpuUuid(i) + "\",pci_bus_id=\"" + kBusIds[i] +
             "\",device=\"nvidia" + std::to_string(i) +
             "\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\"";
    return "gpu=\"" + std::to_string(i) + "\",uuid=\"" + gpuUuid(i) + "\",pci_bus_id=\"" + kBusIds[i] +
           "\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"node1\"";
  }
  std::string temp() const {
    return naming() == Naming::Dcgm ? "DCGM_FI_DEV_GPU_TEMP" : "gpuwarden_gpu_temperature_celsius";
  }
  std::string memTemp() const {
    return naming() == Naming::Dcgm ? "DCGM_FI_DEV_MEMORY_TEMP" : "gpuwarden_gpu_memory_temperature_celsius";
  }
};

TEST_P(BothNamings, StructureIsValid) {
  const std::string t = render(naming(), format());
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  // Every family has exactly one HELP and one TYPE (the parser refuses a second one).
  for (const auto& fam : p.family_order) {
    EXPECT_TRUE(p.help.count(fam)) << fam << " has no HELP";
    EXPECT_TRUE(p.type.count(fam)) << fam << " has no TYPE";
  }
  EXPECT_EQ(countLinesStartingWith(t, "# HELP " + temp() + " "), 1u);
  EXPECT_EQ(countLinesStartingWith(t, "# TYPE " + temp() + " "), 1u);
  // 8 GPUs, 2 not up: 6 temperatures (the MIG device has none).
  EXPECT_EQ(countLinesStartingWith(t, temp() + "{"), 6u);
  EXPECT_GT(p.samples.size(), 200u);
}

TEST_P(BothNamings, LostAndStalledGpusKeepStateSeriesButNoValues) {
  const std::string t = render(naming(), format());
  EXPECT_EQ(t.find(temp() + "{" + labels(5) + "}"), std::string::npos) << "lost GPU served a stale value";
  EXPECT_EQ(t.find(temp() + "{" + labels(6) + "}"), std::string::npos) << "stalled GPU served a stale value";
  EXPECT_LINE(t, temp() + "{" + labels(4) + "} 49");

  EXPECT_LINE(t, "gpuwarden_gpu_up{" + labels(5) + "} 0");
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(5) + ",state=\"lost\"} 1");
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(5) + ",state=\"up\"} 0");
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(5) + ",state=\"stalled\"} 0");
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(5) + ",state=\"down\"} 0");
  EXPECT_LINE(t, "gpuwarden_gpu_up{" + labels(6) + "} 0");
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(6) + ",state=\"stalled\"} 1");
  EXPECT_LINE(t, "gpuwarden_gpu_up{" + labels(0) + "} 1");
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(0) + ",state=\"up\"} 1");
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(0) + ",state=\"lost\"} 0");
  EXPECT_EQ(countLinesStartingWith(t, "gpuwarden_gpu_state{"), 9u * 4u);

  EXPECT_LINE(t, "gpuwarden_sample_lag_seconds{" + labels(0) + "} 1.5");
  EXPECT_LINE(t, "gpuwarden_sample_lag_seconds{" + labels(5) + "} 60");
  EXPECT_LINE(t, "gpuwarden_sample_lag_seconds{" + labels(6) + "} 7.25");
  EXPECT_LINE(t, "gpuwarden_nvml_errors_total{" + labels(5) + "} 17");
}

TEST_P(BothNamings, InvalidValueIsOmittedNotZero) {
  const std::string t = render(naming(), format());
  EXPECT_EQ(t.find(memTemp() + "{" + labels(3) + "}"), std::string::npos);
  EXPECT_LINE(t, memTemp() + "{" + labels(2) + "} 54");
  EXPECT_LINE(t, temp() + "{" + labels(3) + "} 48");
}

TEST_P(BothNamings, FamilyWithoutAnySeriesIsLeftOut) {
  auto node = makeNode();
  for (auto& g : node) valueOf(g, "memory_temp").valid = false;
  const std::string t = render(naming(), format(), node);
  EXPECT_EQ(t.find(memTemp()), std::string::npos);
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
}

TEST_P(BothNamings, LabelValuesAreEscaped) {
  auto node = makeNode();
  const std::string model = "Weird \"H100\" \\ board\nline two \xC3\xBC\xE2\x80\x94\xE6\x97\xA5";  // ü — 日
  node[1].id.name = model;
  auto agent = makeAgent();
  agent.hostname = "host\\with\"quotes";
  const std::string t = render(naming(), format(), node, {}, agent);
  const std::string escaped = "Weird \\\"H100\\\" \\\\ board\\nline two \xC3\xBC\xE2\x80\x94\xE6\x97\xA5";
  const std::string model_label = naming() == Naming::Dcgm ? "modelName" : "model";
  EXPECT_NE(t.find(model_label + "=\"" + escaped + "\""), std::string::npos) << t.substr(0, 2000);
  EXPECT_NE(t.find("=\"host\\\\with\\\"quotes\""), std::string::npos);
  // And a strict reader gets the original strings back.
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  ASSERT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  bool found = false;
  for (const auto& s : p.samples) {
    if (s.label("gpu") != "1") continue;
    EXPECT_EQ(s.label(model_label), model);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST_P(BothNamings, ExtraLabelsOnEverySeriesInvalidOnesDropped) {
  ExportOptions o;
  o.extra_labels = {{"cluster", "train-a"}, {"A_rack", "r\"1"}, {"gpu", "clash"},
                    {"bad-name", "x"},      {"__x", "y"},       {"state", "s"}};
  const std::string t = render(naming(), format(), makeNode(), o);
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  ASSERT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  for (const auto& s : p.samples) {
    EXPECT_EQ(s.label("cluster"), "train-a") << s.name;
    EXPECT_EQ(s.label("A_rack"), "r\"1") << s.name;
    EXPECT_EQ(s.label("bad-name"), "<absent>");
    EXPECT_EQ(s.label("__x"), "<absent>");
    EXPECT_NE(s.label("gpu"), "clash");
    EXPECT_NE(s.label("state"), "s");
  }
  if (naming() == Naming::Dcgm) {
    // Label fields and extra labels follow the identity labels in name order, as dcgm-exporter's
    // template ranges over its label map.
    EXPECT_LINE(t, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"" + gpuUuid(0) +
                       "\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB "
                       "HBM3\",Hostname=\"node1\",A_rack=\"r\\\"1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\",cluster="
                       "\"train-a\"} 45");
  }
  EXPECT_LINE(t, "gpuwarden_driver_up{A_rack=\"r\\\"1\",cluster=\"train-a\"} 1");
}

TEST_P(BothNamings, FieldSelectionInOrderWithoutDuplicates) {
  ExportOptions o;
  o.fields = {fields::findByKey("power_usage"), fields::findByKey("gpu_temp"), fields::findByKey("power_usage"),
              fields::findByKey("name") /* label field: ignored */, nullptr};
  const std::string t = render(naming(), format(), makeNode(), o);
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  ASSERT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  ASSERT_GE(p.family_order.size(), 2u);
  const bool om = format() == Format::OpenMetrics;
  EXPECT_EQ(p.family_order[0], naming() == Naming::Dcgm ? "DCGM_FI_DEV_POWER_USAGE" : "gpuwarden_gpu_power_watts");
  EXPECT_EQ(p.family_order[1], temp());
  EXPECT_EQ(p.family_order[2], "gpuwarden_gpu_up");
  (void)om;
}

TEST_P(BothNamings, MigDevicesCanBeLeftOut) {
  ExportOptions o;
  o.include_mig = false;
  const std::string t = render(naming(), format(), makeNode(), o);
  EXPECT_EQ(t.find("1g.10gb"), std::string::npos);
  EXPECT_EQ(countLinesStartingWith(t, "gpuwarden_gpu_up{"), 8u);
}

TEST_P(BothNamings, NoGpusStillValid) {
  const std::string t = render(naming(), format(), {});
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  EXPECT_EQ(t.find("gpuwarden_gpu_up"), std::string::npos);
  EXPECT_LINE(t, "gpuwarden_driver_up 1");
  EXPECT_LINE(t, "gpuwarden_nvml_reinits_total 2");
  EXPECT_LINE(t, "gpuwarden_scrape_duration_seconds 4.2e-05");
  EXPECT_LINE(t, "gpuwarden_scrapes_total 12");
  EXPECT_LINE(t, "gpuwarden_sample_lag_max_seconds 60");
}

TEST_P(BothNamings, DriverDownAndGpusDown) {
  auto node = makeNode();
  for (auto& g : node) g.state = collect::GpuState::Down;
  auto agent = makeAgent();
  agent.driver_up = false;
  const std::string t = render(naming(), format(), node, {}, agent);
  EXPECT_LINE(t, "gpuwarden_driver_up 0");
  EXPECT_EQ(t.find(temp()), std::string::npos);
  EXPECT_LINE(t, "gpuwarden_gpu_state{" + labels(2) + ",state=\"down\"} 1");
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
}

TEST_P(BothNamings, AppendsToTheBuffer) {
  std::string out = "prefix\n";
  ExportOptions o;
  o.naming = naming();
  renderMetrics(out, makeNode(), makeAgent(), self(), o, format());
  EXPECT_EQ(out.compare(0, 7, "prefix\n"), 0);
  EXPECT_EQ(out.substr(7), render(naming(), format()));
}

TEST_P(BothNamings, EachOpenIncidentIsAFindingSeriesOfItsGpu) {
  ExportOptions o;
  o.naming = naming();
  std::string out;
  renderPage(out, makeNode(), makeAgent(), self(), o, format());
  const std::string gpu5 =
      naming() == Naming::Dcgm
          ? "gpu=\"5\",UUID=\"" + gpuUuid(5) +
                "\",pci_bus_id=\"00000000:AB:00.0\",device=\"nvidia5\",modelName=\"NVIDIA H100 80GB "
                "HBM3\",Hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\""
          : "gpu=\"5\",uuid=\"" + gpuUuid(5) +
                "\",pci_bus_id=\"00000000:AB:00.0\",model=\"NVIDIA H100 80GB HBM3\",hostname=\"node1\"";
  EXPECT_LINE(out, "# TYPE gpuwarden_gpu_finding gauge");
  EXPECT_LINE(out, "gpuwarden_gpu_finding{" + gpu5 + ",rule=\"gpu_lost\",severity=\"fatal\"} 1");
  EXPECT_EQ(countLinesStartingWith(out, "gpuwarden_gpu_finding{"), 2u);  // GPU-gone's is not in the node
  EXPECT_NE(out.find("rule=\"thermal_slowdown\",severity=\"warning\"} 1"), std::string::npos);
  EXPECT_FALSE(isValidExtraLabel("rule", naming()));
}

// The server caches the sampled part between samples: what changes per scrape must all be in
// the scrape part, and the two together must be the whole exposition.
TEST_P(BothNamings, SampledPlusScrapePartIsTheWholeExposition) {
  ExportOptions o;
  o.naming = naming();
  const SelfMetrics s = self();
  std::string sampled, scrape;
  renderSampledMetrics(sampled, makeNode(), makeAgent(), o, format(), s.version);
  renderScrapeMetrics(scrape, makeNode(), makeAgent(), s, o, format());
  EXPECT_EQ(sampled + scrape, render(naming(), format()));
  EXPECT_EQ(sampled.find("# EOF"), std::string::npos);
  EXPECT_EQ(sampled.find("gpuwarden_scrapes"), std::string::npos);
  EXPECT_EQ(sampled.find("gpuwarden_sample_lag_seconds"), std::string::npos);
  // Another scrape of the same samples: the sampled part is byte for byte the same.
  SelfMetrics later = s;
  later.now_ms += 700;
  later.scrapes += 1;
  std::string sampled2, scrape2;
  renderSampledMetrics(sampled2, makeNode(), makeAgent(), o, format(), s.version);
  renderScrapeMetrics(scrape2, makeNode(), makeAgent(), later, o, format());
  EXPECT_EQ(sampled2, sampled);
  EXPECT_NE(scrape2, scrape);
  const Parsed p = parseExposition(sampled2 + scrape2, format() == Format::OpenMetrics);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
}

// ---------------------------------------------------------------------------------------------
// Health and Xid series: rendered by the exporter with each GPU's own label set.

std::string renderWithHealth(Naming n, Format f, ExportOptions o = {}, const HealthSeries& h = makeHealth(),
                             const std::vector<collect::GpuView>& gpus = makeNode()) {
  o.naming = n;
  std::string out;
  renderPage(out, gpus, makeAgent(), self(), o, f, h);
  return out;
}

// The labels of a sample without the one that tells a family's series apart.
std::vector<std::pair<std::string, std::string>> labelsWithout(const Sample& s, std::string_view name) {
  auto l = s.labels;
  std::erase_if(l, [&](const auto& kv) { return kv.first == name; });
  return l;
}

TEST_P(BothNamings, HealthAndXidSeriesCarryTheLabelsOfTheGpusFieldSeries) {
  ExportOptions o;
  o.extra_labels = {{"cluster", "train-a"}, {"A_rack", "r\"1"}};
  const std::string t = renderWithHealth(naming(), format(), o);
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  ASSERT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  // gpu index -> the label set of its temperature (of gpuwarden_gpu_up for GPUs not up).
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> temp_labels, up_labels;
  for (const auto& s : p.samples) {
    if (s.name == temp()) temp_labels[s.label("gpu")] = s.labels;
    if (s.name == "gpuwarden_gpu_up" &&
        s.label(naming() == Naming::Dcgm ? "GPU_I_ID" : "gpu_instance_id") == "<absent>")
      up_labels[s.label("gpu")] = s.labels;
  }
  ASSERT_EQ(temp_labels.count("2"), 1u);
  std::size_t health = 0, xids = 0;
  for (const auto& s : p.samples) {
    if (s.name == "gpuwarden_gpu_health") {
      ++health;
      EXPECT_EQ(labelsWithout(s, "state"), up_labels[s.label("gpu")]) << s.name;
      if (temp_labels.count(s.label("gpu"))) {
        EXPECT_EQ(labelsWithout(s, "state"), temp_labels[s.label("gpu")]);
      }
    }
    if (s.name == "gpuwarden_xid_errors_total" && s.label("gpu") != "9") {
      ++xids;
      EXPECT_EQ(labelsWithout(s, "code"), up_labels[s.label("gpu")]);
    }
  }
  EXPECT_EQ(health, 8u * 5u);
  EXPECT_EQ(xids, 2u) << "GPU 2's Xid 13 under its UUID and under its index is one series";
  // The label set spelled out, the driver and extra labels included.
  const std::string l2 = naming() == Naming::Dcgm
                             ? "gpu=\"2\",UUID=\"" + gpuUuid(2) +
                                   "\",pci_bus_id=\"00000000:3A:00.0\",device=\"nvidia2\",modelName=\"NVIDIA H100 80GB "
                                   "HBM3\",Hostname=\"node1\",A_rack=\"r\\\"1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\","
                                   "cluster=\"train-a\""
                             : "gpu=\"2\",uuid=\"" + gpuUuid(2) +
                                   "\",pci_bus_id=\"00000000:3A:00.0\",model=\"NVIDIA H100 80GB HBM3\",hostname="
                                   "\"node1\",A_rack=\"r\\\"1\",cluster=\"train-a\"";
  EXPECT_LINE(t, temp() + "{" + l2 + "} 47");
  EXPECT_LINE(t, "gpuwarden_gpu_health{" + l2 + ",state=\"warning\"} 1");
  EXPECT_LINE(t, "gpuwarden_gpu_health{" + l2 + ",state=\"healthy\"} 0");
  EXPECT_LINE(t, "gpuwarden_xid_errors_total{" + l2 + ",code=\"13\"} 3");
  EXPECT_LINE(t, "gpuwarden_incidents_open{A_rack=\"r\\\"1\",cluster=\"train-a\",severity=\"fatal\"} 1");
  EXPECT_LINE(t, "gpuwarden_incidents_open{A_rack=\"r\\\"1\",cluster=\"train-a\",severity=\"info\"} 0");
}

TEST_P(BothNamings, XidOfAGpuNotInTheNodeKeepsTheLabelNames) {
  const std::string t = renderWithHealth(naming(), format());
  const std::string l = naming() == Naming::Dcgm
                            ? "gpu=\"9\",UUID=\"GPU-gone\",pci_bus_id=\"\",device=\"\",modelName=\"\",Hostname="
                              "\"node1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\""
                            : "gpu=\"9\",uuid=\"GPU-gone\",pci_bus_id=\"\",model=\"\",hostname=\"node1\"";
  EXPECT_LINE(t, "gpuwarden_xid_errors_total{" + l + ",code=\"48\"} 4");
  // After the node's own GPUs, which come in their order.
  EXPECT_LT(t.find("gpuwarden_xid_errors_total{" + labels(2)), t.find("gpuwarden_xid_errors_total{" + labels(5)));
  EXPECT_LT(t.find("gpuwarden_xid_errors_total{" + labels(5)), t.find("gpuwarden_xid_errors_total{" + l));
}

// GPU 0 is an index like any other: the Xids of a GPU 0 that left the node keep gpu="0", where an
// Xid that never had an index gets an empty one.
TEST_P(BothNamings, XidOfAGoneGpuZeroKeepsItsIndex) {
  HealthSeries h = makeHealth();
  h.xids.clear();
  h.xids.push_back({0, "GPU-gone", 48, 4});
  const std::string t = renderWithHealth(naming(), format(), {}, h);
  const std::string l = naming() == Naming::Dcgm
                            ? "gpu=\"0\",UUID=\"GPU-gone\",pci_bus_id=\"\",device=\"\",modelName=\"\",Hostname="
                              "\"node1\",DCGM_FI_DRIVER_VERSION=\"550.54.15\""
                            : "gpu=\"0\",uuid=\"GPU-gone\",pci_bus_id=\"\",model=\"\",hostname=\"node1\"";
  EXPECT_LINE(t, "gpuwarden_xid_errors_total{" + l + ",code=\"48\"} 4");
}

TEST_P(BothNamings, HealthFamiliesInEitherFormat) {
  const std::string t = renderWithHealth(naming(), format());
  const bool om = format() == Format::OpenMetrics;
  EXPECT_LINE(t, om ? "# TYPE gpuwarden_xid_errors counter" : "# TYPE gpuwarden_xid_errors_total counter");
  EXPECT_LINE(t, "# TYPE gpuwarden_gpu_health gauge");
  EXPECT_LINE(t, "# TYPE gpuwarden_incidents_open gauge");
  EXPECT_LINE(t, "gpuwarden_gpu_health{" + labels(5) + ",state=\"fatal\"} 1");
  EXPECT_LINE(t, "gpuwarden_xid_errors_total{" + labels(5) + ",code=\"79\"} 1");
  if (om) {
    EXPECT_LT(t.find("gpuwarden_gpu_health{"), t.find("# EOF"));
  }
  // Nothing to say: the per-GPU families are left out, as every other empty family is.
  HealthSeries none;
  none.states = makeHealth().states;
  none.open_incidents = makeHealth().open_incidents;
  const std::string e = renderWithHealth(naming(), format(), {}, none);
  EXPECT_EQ(e.find("gpuwarden_gpu_health"), std::string::npos);
  EXPECT_EQ(e.find("gpuwarden_xid_errors"), std::string::npos);
  EXPECT_LINE(e, "gpuwarden_incidents_open{severity=\"warning\"} 1");
  const Parsed p = parseExposition(e, om);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
}

// GPU 0 is a GPU like any other for an Xid that only knows its index (the kernel log's): it joins
// GPU 0's series under its UUID, and it is GPU 0's latest Xid in dcgm-exporter's gauge.
TEST_P(BothNamings, AnXidKnownByIndexZeroJoinsGpuZero) {
  HealthSeries h = makeHealth();
  h.xids = {{0, gpuUuid(0), 13, 2, 5'000}, {0, "", 13, 1, 6'000}, {0, "", 31, 1, 9'000}};
  const std::string t = renderWithHealth(naming(), format(), {}, h);
  const std::string l0 = naming() == Naming::Dcgm ? kGpu0Dcgm : kGpu0Native;
  EXPECT_LINE(t, "gpuwarden_xid_errors_total{" + l0 + ",code=\"13\"} 3");
  EXPECT_LINE(t, "gpuwarden_xid_errors_total{" + l0 + ",code=\"31\"} 1");
  EXPECT_EQ(countLinesStartingWith(t, "gpuwarden_xid_errors_total{"), 2u) << t;
  if (naming() == Naming::Dcgm) {
    EXPECT_LINE(t, "DCGM_FI_DEV_XID_ERRORS{" + l0 + "} 31");
  }
}

// dcgm-exporter's DCGM_FI_DEV_XID_ERRORS: a gauge of each GPU's latest Xid code, 0 before any.
TEST_P(BothNamings, DcgmXidErrorsIsEachGpusLatestXid) {
  HealthSeries h = makeHealth();
  h.xids = {{2, gpuUuid(2), 13, 2, 5'000},
            {2, gpuUuid(2), 48, 1, 9'000},
            {2, "", 31, 1, 7'000},
            {5, gpuUuid(5), 79, 1, 1'000},
            {9, "GPU-gone", 48, 4, 99'000}};
  const std::string t = renderWithHealth(naming(), format(), {}, h);
  const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
  ASSERT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  std::map<std::string, std::string> last;
  for (const auto& s : p.samples)
    if (s.name == "DCGM_FI_DEV_XID_ERRORS") {
      EXPECT_EQ(s.labels, labelsWithout(s, "code")) << "no code label: the value is the code";
      last[s.label("gpu")] = s.value;
    }
  if (naming() != Naming::Dcgm) {
    EXPECT_TRUE(last.empty()) << "dcgm-exporter's name only in its naming";
    return;
  }
  EXPECT_LINE(t, "# TYPE DCGM_FI_DEV_XID_ERRORS gauge");
  EXPECT_LINE(t, "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.");
  ASSERT_EQ(last.size(), 8u) << "one per GPU of the node, none for a MIG device or a GPU it no longer has";
  for (int gpu = 0; gpu < 8; ++gpu)
    EXPECT_EQ(last[std::to_string(gpu)], gpu == 2 ? "48" : gpu == 5 ? "79" : "0") << "GPU " << gpu;
}

TEST_P(BothNamings, HealthOfMigNodeAndWithoutMigDevices) {
  // The MIG device's Xid is its own series (its instance labels tell it apart); health is per GPU.
  HealthSeries h = makeHealth();
  h.xids.push_back({0, kMigUuid, 43, 1});
  for (bool include_mig : {true, false}) {
    ExportOptions o;
    o.include_mig = include_mig;
    const std::string t = renderWithHealth(naming(), format(), o, h);
    const Parsed p = parseExposition(t, format() == Format::OpenMetrics);
    EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
    EXPECT_EQ(countLinesStartingWith(t, "gpuwarden_gpu_health{"), 8u * 5u);
    EXPECT_EQ(t.find("1g.10gb\",") != std::string::npos, include_mig);
    EXPECT_EQ(countLinesStartingWith(t, "gpuwarden_xid_errors_total{"), 4u);
  }
}

TEST(Options, HealthSeriesLabelsAreNotExtraLabels) {
  for (Naming n : {Naming::Dcgm, Naming::Native}) {
    EXPECT_FALSE(isValidExtraLabel("severity", n));
    EXPECT_FALSE(isValidExtraLabel("code", n));
  }
}

INSTANTIATE_TEST_SUITE_P(Export, BothNamings,
                         ::testing::Combine(::testing::Values(Naming::Dcgm, Naming::Native),
                                            ::testing::Values(Format::Text004, Format::OpenMetrics)),
                         [](const auto& param_info) {
                           return std::string(std::get<0>(param_info.param) == Naming::Dcgm ? "Dcgm" : "Native") +
                                  (std::get<1>(param_info.param) == Format::Text004 ? "Text004" : "OpenMetrics");
                         });

// A parser-level check of the dcgm output: every line is a comment or `name{labels} value`.
TEST(DcgmNaming, EveryLineIsACommentOrALabelledSample) {
  const std::string t = render(Naming::Dcgm, Format::Text004);
  const std::regex comment(R"(# (HELP|TYPE) [A-Za-z_:][A-Za-z0-9_:]* .+)");
  const std::regex sample(
      R"([A-Za-z_:][A-Za-z0-9_:]*(\{[A-Za-z_][A-Za-z0-9_]*="([^"\\\n]|\\[\\"n])*"(,[A-Za-z_][A-Za-z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? (-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|[+-]Inf|NaN))");
  std::istringstream in(t);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    const bool ok = std::regex_match(line, comment) || std::regex_match(line, sample);
    EXPECT_TRUE(ok) << "line " << n + 1 << ": " << line;
    if (!ok) break;
    if (line.rfind("DCGM_", 0) == 0) {
      EXPECT_NE(line.find('{'), std::string::npos) << line;
    }
  }
  EXPECT_GT(n, 300u);
}

// ---------------------------------------------------------------------------------------------
// Values.

TEST(Values, SpecialFloatsAndIntegers) {
  auto node = makeNode();
  valueOf(node[0], "power_usage").value = std::numeric_limits<double>::infinity();
  valueOf(node[0], "gpu_temp").value = std::numeric_limits<double>::quiet_NaN();
  valueOf(node[1], "power_usage").value = -std::numeric_limits<double>::infinity();
  valueOf(node[2], "power_usage").value = 1e-7;
  const std::string n = render(Naming::Native, Format::Text004, node);
  EXPECT_LINE(n, "gpuwarden_gpu_power_watts{" + kGpu0Native + "} +Inf");
  EXPECT_LINE(n, "gpuwarden_gpu_temperature_celsius{" + kGpu0Native + "} NaN");
  EXPECT_NE(n.find("gpuwarden_gpu_power_watts{gpu=\"1\""), std::string::npos);
  EXPECT_NE(n.find("} -Inf\n"), std::string::npos);
  EXPECT_NE(n.find("} 1e-07\n"), std::string::npos);
  const std::string d = render(Naming::Dcgm, Format::Text004, node);
  EXPECT_LINE(d, "DCGM_FI_DEV_POWER_USAGE{" + kGpu0Dcgm + "} +Inf");
  EXPECT_NE(d.find("} 0.000000\n"), std::string::npos);
  // An INT64 field cannot hold NaN: dcgm-exporter would have had a blank value and skipped it.
  EXPECT_EQ(d.find("DCGM_FI_DEV_GPU_TEMP{" + kGpu0Dcgm), std::string::npos);
}

// An INT64 field's value is printed as an integer while it fits one with room to spare: up to
// just under 9.2e18, which is left out rather than printed wrapped.
TEST(Values, AnIntegerFieldPastNinePointTwoE18IsLeftOut) {
  auto node = makeNode();
  valueOf(node[0], "gpu_temp").value = 9.1e18;
  valueOf(node[1], "gpu_temp").value = 9.2e18;
  valueOf(node[2], "gpu_temp").value = -9.2e18;
  const std::string d = render(Naming::Dcgm, Format::Text004, node);
  EXPECT_LINE(d, "DCGM_FI_DEV_GPU_TEMP{" + kGpu0Dcgm + "} 9100000000000000000");
  EXPECT_EQ(d.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(d.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"2\""), std::string::npos);
}

TEST(Values, MigDeviceOfALostGpuServesNoValues) {
  auto node = makeNode();
  node[0].state = collect::GpuState::Lost;
  const std::string t = render(Naming::Dcgm, Format::Text004, node);
  EXPECT_EQ(t.find("DCGM_FI_DEV_FB_USED{gpu=\"0\""), std::string::npos);
  EXPECT_NE(t.find("gpuwarden_gpu_up{gpu=\"0\",UUID=\"" + gpuUuid(0) +
                   "\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
                   "modelName=\"NVIDIA H100 80GB HBM3\",GPU_I_PROFILE=\"1g.10gb\""),
            std::string::npos);
}

TEST(Values, ShortValuesVectorIsTolerated) {
  auto node = makeNode();
  node[2].values.resize(3);
  const std::string t = render(Naming::Native, Format::OpenMetrics, node);
  const Parsed p = parseExposition(t, true);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  EXPECT_EQ(t.find("gpuwarden_gpu_temperature_celsius{gpu=\"2\""), std::string::npos);
}

TEST(Values, NeverSampledGpuHasNoLag) {
  auto node = makeNode();
  node[4].last_sample_ms = 0;
  const std::string t = render(Naming::Native, Format::Text004, node);
  EXPECT_EQ(t.find("gpuwarden_sample_lag_seconds{gpu=\"4\""), std::string::npos);
  EXPECT_NE(t.find("gpuwarden_sample_lag_seconds{gpu=\"3\""), std::string::npos);
}

// gpuwarden_storage_ok follows the data folder: 1 while every file takes writes, 0 while one is
// refused.
TEST(Values, StorageOkIsOneOrZero) {
  StorageSeries st;
  std::string ok, refused;
  renderStorageMetrics(ok, st, makeNode(), makeAgent(), ExportOptions{}, Format::Text004);
  EXPECT_LINE(ok, "gpuwarden_storage_ok 1");
  st.ok = false;
  renderStorageMetrics(refused, st, makeNode(), makeAgent(), ExportOptions{}, Format::Text004);
  EXPECT_LINE(refused, "gpuwarden_storage_ok 0");
}

// ---------------------------------------------------------------------------------------------
// Negotiation, names, options.

TEST(Negotiation, PrometheusAcceptHeaders) {
  // Prometheus 2.x's scrape Accept header.
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
                            "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            Format::OpenMetrics);
  // Older Prometheus (2.5 – 2.42).
  EXPECT_EQ(negotiateFormat("application/openmetrics-text; version=0.0.1,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
            Format::OpenMetrics);
  // Prometheus 3.x (escaping parameter, text format 1.0.0 which we do not produce).
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
                            "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;"
                            "escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"),
            Format::OpenMetrics);
  // Prometheus with scrape_protocols limited to the text format.
  EXPECT_EQ(negotiateFormat("text/plain;version=0.0.4;q=0.5,*/*;q=0.1"), Format::Text004);
  EXPECT_EQ(negotiateFormat(""), Format::Text004);
  EXPECT_EQ(negotiateFormat("*/*"), Format::Text004);
  EXPECT_EQ(negotiateFormat("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"), Format::Text004);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text"), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("Application/OpenMetrics-Text; Version=1.0.0"), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;q=0,text/plain"), Format::Text004);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;version=2.0.0,text/plain"), Format::Text004);
  EXPECT_EQ(negotiateFormat("text/plain;q=1,application/openmetrics-text;q=0.5"), Format::Text004);
  EXPECT_EQ(negotiateFormat("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
                            "encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3"),
            Format::Text004);
}

TEST(Negotiation, TheDcgmNamingStaysOnTextWheneverTheScraperTakesIt) {
  const char* prometheus =
      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
      "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
  EXPECT_EQ(negotiateFormat(prometheus, Naming::Dcgm), Format::Text004);
  EXPECT_EQ(negotiateFormat(prometheus, Naming::Native), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;version=1.0.0,*/*;q=0.01", Naming::Dcgm), Format::Text004);
  // Only OpenMetrics taken: it is served.
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;version=1.0.0", Naming::Dcgm), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text,text/plain;q=0", Naming::Dcgm), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("", Naming::Dcgm), Format::Text004);
}

// A version given as a quoted-string is the same version; and OpenMetrics taken at q=0 is refused
// even when nothing else is offered.
TEST(Negotiation, QuotedVersionsAndAZeroWeightAlone) {
  EXPECT_EQ(negotiateFormat("application/openmetrics-text; version=\"1.0.0\""), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;version=\"0.0.1\";q=0.5,text/plain;q=0.4"),
            Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;version=\"2.0.0\""), Format::Text004);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;q=0"), Format::Text004);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;q=0.000"), Format::Text004);
  // A tie goes to OpenMetrics in the native naming; dcgm's naming refuses OpenMetrics at q=0 too.
  EXPECT_EQ(negotiateFormat("application/openmetrics-text, text/plain"), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;q=0.5, text/plain;q=0.5"), Format::OpenMetrics);
  EXPECT_EQ(negotiateFormat("application/openmetrics-text;q=0", Naming::Dcgm), Format::Text004);
}

TEST(Negotiation, ContentTypes) {
  EXPECT_EQ(contentType(Format::Text004), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(contentType(Format::OpenMetrics), "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

TEST(Options, NamingNamesAndExtraLabelValidation) {
  EXPECT_EQ(parseNaming("native"), Naming::Native);
  EXPECT_EQ(parseNaming("dcgm"), Naming::Dcgm);
  EXPECT_EQ(parseNaming("DCGM"), Naming::Dcgm);
  EXPECT_FALSE(parseNaming("prom").has_value());
  EXPECT_EQ(namingName(Naming::Native), "native");
  EXPECT_TRUE(isValidExtraLabel("cluster", Naming::Dcgm));
  EXPECT_TRUE(isValidExtraLabel("uuid", Naming::Dcgm));  // only UUID is dcgm-exporter's
  EXPECT_FALSE(isValidExtraLabel("UUID", Naming::Dcgm));
  EXPECT_FALSE(isValidExtraLabel("uuid", Naming::Native));
  EXPECT_FALSE(isValidExtraLabel("Hostname", Naming::Dcgm));
  EXPECT_FALSE(isValidExtraLabel("state", Naming::Native));
  EXPECT_FALSE(isValidExtraLabel("1abc", Naming::Native));
  EXPECT_FALSE(isValidExtraLabel("a:b", Naming::Native));
  EXPECT_FALSE(isValidExtraLabel("__name__", Naming::Native));
  EXPECT_FALSE(isValidExtraLabel("", Naming::Native));
}

// Prometheus' label names are [a-zA-Z_][a-zA-Z0-9_]*: every digit, 0 and 9 included, may follow
// the first character and none may be it.
TEST(Options, LabelNamesTakeEveryDigitAfterTheFirstCharacter) {
  for (const char* ok : {"rack0", "rack9", "a0b9", "_0", "zone10"}) {
    EXPECT_TRUE(isValidLabelName(ok)) << ok;
    EXPECT_TRUE(isValidExtraLabel(ok, Naming::Native)) << ok;
    EXPECT_TRUE(isValidExtraLabel(ok, Naming::Dcgm)) << ok;
  }
  for (const char* bad : {"0rack", "9rack", "0", "rack/0", "rack-0"}) EXPECT_FALSE(isValidLabelName(bad)) << bad;
}

TEST(Options, MetricNames) {
  EXPECT_EQ(metricName(*fields::findByKey("gpu_temp"), Naming::Dcgm), "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(metricName(*fields::findByKey("gpu_temp"), Naming::Native), "gpuwarden_gpu_temperature_celsius");
  EXPECT_EQ(metricName(*fields::findByKey("name"), Naming::Native), "");
  EXPECT_EQ(metricName(*fields::findByKey("graphics_clock"), Naming::Dcgm), "");
}

// Every numeric catalog field with a name is exported; every native counter ends in _total.
TEST(Catalog, EveryNamedNumericFieldIsExported) {
  auto node = makeNode();
  const std::string d = render(Naming::Dcgm, Format::Text004, node);
  const std::string n = render(Naming::Native, Format::Text004, node);
  for (const auto& f : fields::all()) {
    if (f.read_number == nullptr) continue;
    if (!f.dcgm_name.empty()) {
      EXPECT_NE(d.find("\n" + std::string(f.dcgm_name) + "{"), std::string::npos) << f.key;
    }
    if (!f.native_name.empty()) {
      EXPECT_NE(n.find("\n" + std::string(f.native_name) + "{"), std::string::npos) << f.key;
    }
    if (f.type == fields::Type::Counter && !f.native_name.empty()) {
      EXPECT_TRUE(f.native_name.size() > 6 && f.native_name.substr(f.native_name.size() - 6) == "_total") << f.key;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// docs/metrics.md: the mapping table is rendered from the catalog.

TEST(Docs, MetricsMdTableIsInSync) {
  const std::string path = std::string(GW_SOURCE_DIR) + "/docs/metrics.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " missing";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  const std::string begin = "<!-- BEGIN GENERATED: metrics table -->\n";
  const std::string end = "<!-- END GENERATED: metrics table -->";
  const auto b = doc.find(begin);
  const auto e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << "no BEGIN marker in docs/metrics.md";
  ASSERT_NE(e, std::string::npos) << "no END marker in docs/metrics.md";
  const std::string table = doc.substr(b + begin.size(), e - b - begin.size());
  const std::string expected = renderMetricsTableMarkdown();
  if (table != expected && std::getenv("GW_UPDATE_DOCS") != nullptr) {
    doc.replace(b + begin.size(), e - b - begin.size(), expected);
    std::ofstream(path) << doc;
    GTEST_SKIP() << "docs/metrics.md rewritten";
  }
  EXPECT_EQ(table, expected) << "docs/metrics.md is stale: rerun this test with GW_UPDATE_DOCS=1";
}

}  // namespace
}  // namespace gw::exporter
