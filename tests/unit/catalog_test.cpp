// The one field catalog: names unique, every field readable, native names Prometheus-clean, the
// R15 core metrics present, docs/fields.md in sync with the table.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "fields/catalog.h"

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

TEST(Catalog, DocsAreRenderedFromTheTable) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/docs/fields.md");
  ASSERT_TRUE(in) << "docs/fields.md missing: regenerate with `gpuwarden fields --markdown > docs/fields.md`";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), renderMarkdown())
      << "docs/fields.md is stale: run `gpuwarden fields --markdown > docs/fields.md`";
}

}  // namespace
}  // namespace gw::fields
