// The one field catalog: names unique, every field readable, native names Prometheus-clean, the
// R15 core metrics present, docs/fields.md in sync with the table.
#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "../support/pinned_lines.h"
#include "fields/catalog.h"
#include "fields/smi_query.h"
#include "nvml/nvml.h"

namespace gw::fields {
namespace {

TEST(Catalog, NamesAreUniqueInEveryNamespace) {
  std::set<std::string_view> keys, smi, dcgm, native;
  std::set<int> ids;
  for (const auto& f : all()) {
    EXPECT_TRUE(keys.insert(f.key).second) << "duplicate key " << f.key;
    if (!f.smi_name.empty()) {
      EXPECT_TRUE(smi.insert(f.smi_name).second) << "duplicate smi name " << f.smi_name;
    }
    if (!f.dcgm_name.empty()) {
      EXPECT_TRUE(dcgm.insert(f.dcgm_name).second) << "duplicate DCGM name " << f.dcgm_name;
    }
    if (!f.native_name.empty()) {
      EXPECT_TRUE(native.insert(f.native_name).second) << "duplicate native " << f.native_name;
    }
    if (f.dcgm_id) {
      EXPECT_TRUE(ids.insert(f.dcgm_id).second) << "duplicate DCGM id " << f.dcgm_id;
    }
  }
  EXPECT_GE(all().size(), 60u);
}

TEST(Catalog, EveryFieldHasExactlyOneReaderOfTheRightKind) {
  for (const auto& f : all()) {
    if (f.type == Type::Label) {
      EXPECT_NE(f.read_text, nullptr) << f.key;
      EXPECT_EQ(f.read_number, nullptr) << f.key;
    } else {
      EXPECT_NE(f.read_number, nullptr) << f.key;
      EXPECT_EQ(f.read_text, nullptr) << f.key;
      EXPECT_FALSE(f.native_name.empty()) << f.key << " needs a native metric name";
    }
    EXPECT_FALSE(f.help.empty()) << f.key;
  }
}

TEST(Catalog, NativeNamesFollowPrometheusConventions) {
  const std::regex valid("^[a-zA-Z_:][a-zA-Z0-9_:]*$");
  for (const auto& f : all()) {
    if (f.native_name.empty()) continue;
    std::string n(f.native_name);
    EXPECT_TRUE(std::regex_match(n, valid)) << n;
    EXPECT_EQ(n.rfind("gpuwarden_", 0), 0u) << n;
    if (f.type == Type::Counter) {
      EXPECT_TRUE(n.ends_with("_total")) << n << " is a counter";
    }
    if (f.type == Type::Gauge) {
      EXPECT_FALSE(n.ends_with("_total")) << n << " is a gauge";
    }
    // Base units: no MiB, MHz or percent in a native name.
    EXPECT_EQ(n.find("mib"), std::string::npos) << n;
    EXPECT_EQ(n.find("mhz"), std::string::npos) << n;
    EXPECT_EQ(n.find("percent"), std::string::npos) << n;
  }
}

TEST(Catalog, TheSevenCoreMetricsOfR15AndTheirNeighbours) {
  for (const char* dcgm :
       {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP",
        "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_PCIE_LINK_GEN",
        "DCGM_FI_DEV_PCIE_LINK_WIDTH", "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_PSTATE",
        "DCGM_FI_DEV_FAN_SPEED", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "DCGM_FI_DEV_RETIRED_PENDING", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"}) {
    EXPECT_NE(findByDcgmName(dcgm), nullptr) << dcgm;
  }
  // DCGM's ids are facts of dcgm_fields.h; spot-check that ours match.
  EXPECT_EQ(findByDcgmName("DCGM_FI_DEV_GPU_TEMP")->dcgm_id, 150);
  EXPECT_EQ(findByDcgmName("DCGM_FI_DEV_POWER_USAGE")->dcgm_id, 155);
  EXPECT_EQ(findByDcgmName("DCGM_FI_DEV_FB_USED")->dcgm_id, 252);
  EXPECT_EQ(findByDcgmName("DCGM_FI_DEV_ROW_REMAP_PENDING")->dcgm_id, 396);
}

// DCGM's profiling field ids (dcgm_fields.h) and the NVML GPM metric each is read from; ratios
// come from GPM's percent, rates from its MiB/s.
TEST(Catalog, ProfilingFieldsAreDcgmsIdsReadFromGpm) {
  struct Expected {
    const char* dcgm;
    int id;
    unsigned gpm;
    double scale;
  };
  const Expected expected[] = {
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1001, NVML_GPM_METRIC_GRAPHICS_UTIL, 0.01},
      {"DCGM_FI_PROF_SM_ACTIVE", 1002, NVML_GPM_METRIC_SM_UTIL, 0.01},
      {"DCGM_FI_PROF_SM_OCCUPANCY", 1003, NVML_GPM_METRIC_SM_OCCUPANCY, 0.01},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1004, NVML_GPM_METRIC_ANY_TENSOR_UTIL, 0.01},
      {"DCGM_FI_PROF_DRAM_ACTIVE", 1005, NVML_GPM_METRIC_DRAM_BW_UTIL, 0.01},
      {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", 1006, NVML_GPM_METRIC_FP64_UTIL, 0.01},
      {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", 1007, NVML_GPM_METRIC_FP32_UTIL, 0.01},
      {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", 1008, NVML_GPM_METRIC_FP16_UTIL, 0.01},
      {"DCGM_FI_PROF_PCIE_TX_BYTES", 1009, NVML_GPM_METRIC_PCIE_TX_PER_SEC, 1048576},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", 1010, NVML_GPM_METRIC_PCIE_RX_PER_SEC, 1048576},
      {"DCGM_FI_PROF_NVLINK_TX_BYTES", 1011, NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, 1048576},
      {"DCGM_FI_PROF_NVLINK_RX_BYTES", 1012, NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, 1048576},
  };
  std::size_t gpm_fields = 0;
  for (const auto& f : all()) gpm_fields += f.gpm.metric ? 1 : 0;
  EXPECT_EQ(gpm_fields, std::size(expected));
  for (const Expected& e : expected) {
    const Field* f = findByDcgmName(e.dcgm);
    ASSERT_NE(f, nullptr) << e.dcgm;
    EXPECT_EQ(f->dcgm_id, e.id) << e.dcgm;
    EXPECT_EQ(f->gpm.metric, e.gpm) << e.dcgm;
    EXPECT_EQ(f->gpm.scale, e.scale) << e.dcgm;
    EXPECT_EQ(f->type, Type::Gauge) << e.dcgm;
    EXPECT_EQ(f->cadence, Cadence::Fast) << e.dcgm;
    // A one-shot read has one sample, not two: it says unsupported instead of inventing a value.
    auto r = f->read_number(nvml::Device());
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().nvmlCode(), NVML_ERROR_NOT_SUPPORTED);
  }
}

// Every DCGM field id, written from DCGM's dcgm_fields.h (the DCGM_FI_* defines), not from the
// table: `fields --json` and the value style of the dcgm naming key on them, and a dcgm-exporter
// user looks fields up by them. A field not listed here has no DCGM id (0).
TEST(Catalog, EveryDcgmIdIsDcgmsOwn) {
  const std::map<std::string, int> want{{"name", 50},
                                        {"uuid", 54},
                                        {"serial", 53},
                                        {"pci_bus_id", 57},
                                        {"pci_device_id", 58},
                                        {"driver_version", 1},
                                        {"vbios_version", 85},
                                        {"compute_cap", 63},
                                        {"gpu_util", 203},
                                        {"mem_copy_util", 204},
                                        {"enc_util", 206},
                                        {"dec_util", 207},
                                        {"fb_total", 250},
                                        {"fb_used", 252},
                                        {"fb_free", 251},
                                        {"fb_reserved", 253},
                                        {"gpu_temp", 150},
                                        {"memory_temp", 140},
                                        {"power_usage", 155},
                                        {"total_energy", 156},
                                        {"power_limit", 160},
                                        {"enforced_power_limit", 164},
                                        {"power_default_limit", 163},
                                        {"power_min_limit", 161},
                                        {"power_max_limit", 162},
                                        {"sm_clock", 100},
                                        {"mem_clock", 101},
                                        {"video_clock", 102},
                                        {"max_sm_clock", 113},
                                        {"max_mem_clock", 114},
                                        {"app_sm_clock", 110},
                                        {"app_mem_clock", 111},
                                        {"pstate", 190},
                                        {"fan_speed", 191},
                                        {"clock_event_reasons", 112},
                                        {"slowdown_temp", 158},
                                        {"shutdown_temp", 159},
                                        {"pcie_link_gen", 237},
                                        {"pcie_link_width", 238},
                                        {"pcie_max_link_gen", 235},
                                        {"pcie_max_link_width", 236},
                                        {"pcie_tx_throughput", 200},
                                        {"pcie_rx_throughput", 201},
                                        {"pcie_replay_counter", 202},
                                        {"ecc_mode", 300},
                                        {"ecc_sbe_volatile", 310},
                                        {"ecc_dbe_volatile", 311},
                                        {"ecc_sbe_aggregate", 312},
                                        {"ecc_dbe_aggregate", 313},
                                        {"retired_pages_sbe", 390},
                                        {"retired_pages_dbe", 391},
                                        {"retired_pages_pending", 392},
                                        {"remapped_rows_correctable", 394},
                                        {"remapped_rows_uncorrectable", 393},
                                        {"row_remap_pending", 396},
                                        {"row_remap_failure", 395},
                                        // DCGM 4: "GPU Recovery Action (see nvmlDeviceGpuRecoveryAction_t)"
                                        {"recovery_action", 1523},
                                        {"nvlink_crc_flit_errors", 409},
                                        {"nvlink_crc_data_errors", 419},
                                        {"nvlink_replay_errors", 429},
                                        {"nvlink_recovery_errors", 439},
                                        {"nvlink_total_kib", 449},
                                        // dcgm_fields.h: dcgmFabricManagerStatus_t; NVML_GPU_FABRIC_HEALTH_SUMMARY_*
                                        {"fabric_status", 170},
                                        {"fabric_health", 175},
                                        {"prof_gr_engine_active", 1001},
                                        {"prof_sm_active", 1002},
                                        {"prof_sm_occupancy", 1003},
                                        {"prof_pipe_tensor_active", 1004},
                                        {"prof_dram_active", 1005},
                                        {"prof_pipe_fp64_active", 1006},
                                        {"prof_pipe_fp32_active", 1007},
                                        {"prof_pipe_fp16_active", 1008},
                                        {"prof_pcie_tx_bytes", 1009},
                                        {"prof_pcie_rx_bytes", 1010},
                                        {"prof_nvlink_tx_bytes", 1011},
                                        {"prof_nvlink_rx_bytes", 1012},
                                        {"persistence_mode", 66},
                                        {"mig_mode", 67}};
  std::map<std::string, int> got;
  for (const auto& f : all())
    if (f.dcgm_id) got.emplace(std::string(f.key), f.dcgm_id);
  EXPECT_EQ(got, want);
}

TEST(Catalog, LookupByAnyNameAndAlias) {
  EXPECT_EQ(findAny("temperature.gpu"), findByKey("gpu_temp"));
  EXPECT_EQ(findAny("gpu_temp"), findByKey("gpu_temp"));
  EXPECT_EQ(findAny("DCGM_FI_DEV_GPU_TEMP"), findByKey("gpu_temp"));
  EXPECT_EQ(findAny("clocks.current.sm"), findByKey("sm_clock"));
  EXPECT_EQ(findAny("clocks_throttle_reasons.active"), findBySmiName("clocks_event_reasons.active"));
  EXPECT_EQ(findAny("no.such.field"), nullptr);
  const Field* mem = findBySmiName("memory.used");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->smi_unit, "MiB");
  EXPECT_DOUBLE_EQ(mem->native_scale, 1024.0 * 1024.0);
  EXPECT_EQ(indexOf(*mem), static_cast<std::size_t>(mem - all().data()));
}

// Every field's facts (names in each namespace, nvidia-smi's unit and decimals, the native base
// unit and scale, type, cadence, NVML field id, GPM metric and scale), pinned in
// field-catalog.tsv. The catalog is their home; this file is the test's own statement of them,
// checked against nvidia-smi's and DCGM's documentation when a field was added, and nothing
// regenerates it: a changed fact is a deliberate edit of both. (Help texts are free to change.)
std::string factsLine(const Field& f) {
  auto num = [](double v) {
    std::ostringstream o;
    o.precision(17);
    o << v;
    return o.str();
  };
  const char* type = f.type == Type::Gauge ? "gauge" : f.type == Type::Counter ? "counter" : "label";
  const char* cadence = f.cadence == Cadence::Fast ? "fast" : f.cadence == Cadence::Slow ? "slow" : "static";
  std::string l(f.key);
  for (const std::string& c : {std::to_string(f.dcgm_id), std::string(f.dcgm_name), std::string(f.smi_name),
                               std::string(f.smi_unit), std::to_string(f.decimals), std::string(f.native_name),
                               num(f.native_scale), std::string(f.unit), std::string(type), std::string(cadence),
                               std::to_string(f.nvml_fi), std::to_string(f.gpm.metric), num(f.gpm.scale)}) {
    l += '\t';
    l += c;
  }
  return l;
}

// NVML gives the power limits in milliwatts; the fields are watts. The simulated H100 SXM5 takes
// 200 to 700 W and defaults to 700 W.
// Only a field whose DCGM name was renamed has a current name; the others keep theirs.
TEST(Catalog, CurrentDcgmNameOnlyForRenamedFields) {
  const Field* reasons = findByKey("clock_event_reasons");
  ASSERT_NE(reasons, nullptr);
  EXPECT_EQ(currentDcgmName(*reasons), "DCGM_FI_DEV_CLOCKS_EVENT_REASONS");
  const Field* limit = findByKey("enforced_power_limit");
  ASSERT_NE(limit, nullptr);
  EXPECT_TRUE(currentDcgmName(*limit).empty()) << currentDcgmName(*limit);
}

TEST(Catalog, PowerLimitFieldsReadWattsFromNvmlsMilliwatts) {
  ::setenv("GPUWARDEN_SIM_SCENARIO", (std::string(GW_SOURCE_DIR) + "/scenarios/dgx-h100.yaml").c_str(), 1);
  auto s = nvml::Session::open({GW_SIM_LIB});
  ASSERT_TRUE(s.ok()) << s.error();
  auto d = (*s)->deviceByIndex(0);
  ASSERT_TRUE(d.ok()) << d.error();
  for (const auto& [key, watts] : std::vector<std::pair<std::string, double>>{
           {"power_min_limit", 200.0}, {"power_max_limit", 700.0}, {"power_default_limit", 700.0}}) {
    const Field* f = findByKey(key);
    ASSERT_NE(f, nullptr) << key;
    auto v = f->read_number(*d);
    ASSERT_TRUE(v.ok()) << key << ": " << v.error();
    EXPECT_DOUBLE_EQ(*v, watts) << key;
  }
}

// dgx-h100 on the simulator's manual clock, held at 120 s: a reader and a direct NVML query of the
// same GPU see one instant.
struct FrozenDgx {
  std::unique_ptr<nvml::Session> session;
  std::string error;
  FrozenDgx() {
    ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
    ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
    ::unsetenv("GPUWARDEN_SIM_START");
    ::unsetenv("GPUWARDEN_SIM_SPEED");
    auto s = nvml::Session::open({GW_SIM_LIB});
    if (!s.ok()) {
      error = s.error();
      return;
    }
    session = std::move(s).value();
    if (session->api().gwSimSetTime) session->api().gwSimSetTime(120.0);
  }
  ~FrozenDgx() {
    session.reset();
    ::unsetenv("GPUWARDEN_SIM_SCENARIO");
    ::unsetenv("GPUWARDEN_SIM_CLOCK");
  }
};

// Power draw is NVML's milliwatts over a thousand, nothing rounded: the catalog field, and
// nvidia-smi's power.draw / power.draw.average with two decimals, on one frozen instant.
TEST(Catalog, PowerDrawIsNvmlsMilliwattsInWatts) {
  {
    const FrozenDgx sim;
    ASSERT_NE(sim.session, nullptr) << sim.error;
    const auto& s = sim.session;
    auto d = s->deviceByIndex(0);
    ASSERT_TRUE(d.ok()) << d.error();
    auto mw = d->powerUsageMw();
    ASSERT_TRUE(mw.ok()) << mw.error();
    ASSERT_NE(*mw % 1000, 0u) << "a whole number of watts would hide a wrong divisor";
    auto w = findByKey("power_usage")->read_number(*d);
    ASSERT_TRUE(w.ok()) << w.error();
    EXPECT_DOUBLE_EQ(*w, *mw / 1000.0);
    char want[32];
    std::snprintf(want, sizeof want, "%.2f", *mw / 1000.0);
    const ReadContext ctx{*s, *d, 0};
    EXPECT_EQ(smi::read(*smi::findGpuProperty("power.draw"), ctx, false), want);
    EXPECT_EQ(smi::read(*smi::findGpuProperty("power.draw.average"), ctx, false), want);
  }
}

// DCGM's NVLink total (field 449) is the sum of the two throughput counters, on one frozen instant;
// dgx-h100's training GPU moves data both ways, so a difference would not pass for a sum.
TEST(Catalog, NvlinkTotalIsTransmittedPlusReceived) {
  const FrozenDgx sim;
  ASSERT_NE(sim.session, nullptr) << sim.error;
  auto count = sim.session->deviceCount();
  ASSERT_TRUE(count.ok()) << count.error();
  int both_ways = 0;
  for (unsigned i = 0; i < *count; ++i) {
    auto d = sim.session->deviceByIndex(i);
    ASSERT_TRUE(d.ok()) << d.error();
    auto tx = findByKey("nvlink_tx_kib")->read_number(*d);
    auto rx = findByKey("nvlink_rx_kib")->read_number(*d);
    auto total = findByKey("nvlink_total_kib")->read_number(*d);
    ASSERT_TRUE(tx.ok() && rx.ok() && total.ok()) << i;
    EXPECT_DOUBLE_EQ(*total, *tx + *rx) << "GPU " << i;
    both_ways += *tx > 0 && *rx > 0;
  }
  EXPECT_GT(both_ways, 0) << "no GPU moves NVLink data both ways: the sum is not tested";
}

TEST(Catalog, EveryFieldsFactsArePinned) {
  std::vector<std::string> got;
  for (const auto& x : all()) got.push_back(factsLine(x));
  testsupport::expectLinesAsPinned(std::string(GW_SOURCE_DIR) + "/tests/unit/field-catalog.tsv", got);
}

TEST(Catalog, DocsAreRenderedFromTheTable) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/docs/fields.md");
  ASSERT_TRUE(in) << "docs/fields.md missing: regenerate with `gpuwarden fields --markdown > docs/fields.md`";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), renderMarkdown())
      << "docs/fields.md is stale: run `gpuwarden fields --markdown > docs/fields.md`";
}

// The performance state reads as nvidia-smi spells it ("P0", "P8"), through the text reader.
TEST(Catalog, PstateReadsAsItsPName) {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/pcie-mixed.yaml", 1);
  ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
  ::unsetenv("GPUWARDEN_SIM_START");
  ::unsetenv("GPUWARDEN_SIM_SPEED");
  const Field* f = findByKey("pstate_name");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(f->read_text, nullptr);
  {
    auto s = nvml::Session::open({GW_SIM_LIB});
    ASSERT_TRUE(s.ok()) << s.error();
    auto d = (*s)->deviceByIndex(0);
    ASSERT_TRUE(d.ok()) << d.error();
    auto r = f->read_text(ReadContext{**s, *d, 0});
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_TRUE(*r == "P0" || *r == "P8") << *r;
  }
  ::unsetenv("GPUWARDEN_SIM_SCENARIO");
  ::unsetenv("GPUWARDEN_SIM_CLOCK");
}

// A PCIe card answers no NVLink link at all: its count of active links is "not supported", not
// 0 links up, which would read as every link down on the dashboard and in the exported series.
TEST(Catalog, NvlinkActiveLinksAreUnsupportedOnAPcieGpu) {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/pcie-mixed.yaml", 1);
  ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
  ::unsetenv("GPUWARDEN_SIM_START");
  ::unsetenv("GPUWARDEN_SIM_SPEED");
  const Field* f = findByKey("nvlink_active_links");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(f->read_number, nullptr);
  {
    auto s = nvml::Session::open({GW_SIM_LIB});
    ASSERT_TRUE(s.ok()) << s.error();
    auto d = (*s)->deviceByIndex(0);  // an L40S: no NVLink
    ASSERT_TRUE(d.ok()) << d.error();
    auto r = f->read_number(*d);
    ASSERT_FALSE(r.ok()) << *r;
    EXPECT_EQ(r.status().nvmlCode(), NVML_ERROR_NOT_SUPPORTED) << r.error();
  }
  ::unsetenv("GPUWARDEN_SIM_SCENARIO");
  ::unsetenv("GPUWARDEN_SIM_CLOCK");
}

// The NVLink throughput fields are NVML's per-link counters summed over the links, nothing added:
// on the simulator's manual clock the reader and a direct NVML query see the same instant.
TEST(Catalog, NvlinkThroughputIsThePerLinkCountersSummed) {
  {
    const FrozenDgx sim;
    ASSERT_NE(sim.session, nullptr) << sim.error;
    auto d = sim.session->deviceByIndex(0);
    ASSERT_TRUE(d.ok()) << d.error();
    for (const auto& [key, id] :
         std::vector<std::pair<std::string, unsigned>>{{"nvlink_tx_kib", NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX},
                                                       {"nvlink_rx_kib", NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX}}) {
      const Field* f = findByKey(key);
      ASSERT_NE(f, nullptr) << key;
      auto r = f->read_number(*d);
      ASSERT_TRUE(r.ok()) << key << ": " << r.error();
      nvmlFieldValue_t v[NVML_NVLINK_MAX_LINKS] = {};
      for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
        v[link].fieldId = id;
        v[link].scopeId = link;
      }
      ASSERT_TRUE(d->fieldValues(v, NVML_NVLINK_MAX_LINKS).ok()) << key;
      unsigned long long sum = 0;
      for (const auto& x : v)
        if (x.nvmlReturn == NVML_SUCCESS) sum += x.value.ullVal;
      EXPECT_EQ(*r, static_cast<double>(sum)) << key;
    }
  }
}

}  // namespace
}  // namespace gw::fields
