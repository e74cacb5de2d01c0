// nvidia-smi's query properties (src/fields/smi_query.cpp): every name of a real driver's
// --help-query-gpu is accepted with nvidia-smi's unit, sampled fields keep their catalog home, and
// the help text has nvidia-smi's layout.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "fields/smi_query.h"
#include "nvml/nvml_api.h"

namespace gw::fields::smi {
namespace {

struct PinnedName {
  std::string name, unit;
  bool alias = false;
};

std::vector<PinnedName> pinnedNames() {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/tests/unit/smi-query-gpu-names.txt");
  EXPECT_TRUE(in) << "tests/unit/smi-query-gpu-names.txt missing";
  std::vector<PinnedName> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    PinnedName n{line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)};
    n.alias = n.unit == "=";
    out.push_back(n);
  }
  return out;
}

TEST(SmiQuery, EveryNameOfTheDriversListIsAcceptedWithItsUnit) {
  auto names = pinnedNames();
  ASSERT_GE(names.size(), 250u) << "the pinned list lost lines";
  for (const auto& n : names) {
    const Property* p = findGpuProperty(n.name);
    ASSERT_NE(p, nullptr) << n.name << " is refused";
    if (!n.alias) {
      EXPECT_EQ(p->name, n.name) << "a name of nvidia-smi's own is not an alias here";
      EXPECT_EQ(unitOf(*p), n.unit) << n.name;
    }
  }
}

TEST(SmiQuery, TheTableHoldsNoNameTheDriverLacks) {
  std::set<std::string> pinned;
  for (const auto& n : pinnedNames()) pinned.insert(n.name);
  for (const auto& p : gpuProperties()) {
    EXPECT_TRUE(pinned.count(std::string(p.name))) << p.name << " is not in the driver's list";
    std::istringstream aliases{std::string(p.aliases)};
    for (std::string a; aliases >> a;) {
      EXPECT_TRUE(pinned.count(a)) << a << " is not in the driver's list";
    }
  }
}

TEST(SmiQuery, NamesAndAliasesAreUnique) {
  std::set<std::string> seen;
  for (const auto& p : gpuProperties()) {
    EXPECT_TRUE(seen.insert(std::string(p.name)).second) << p.name;
    std::istringstream aliases{std::string(p.aliases)};
    for (std::string a; aliases >> a;) {
      EXPECT_TRUE(seen.insert(a).second) << a;
    }
  }
}

// One home: a property without a reader is a sampled field, and every catalog field that names
// itself after nvidia-smi is reachable by that name.
TEST(SmiQuery, SampledPropertiesReadTheirCatalogField) {
  for (const auto& p : gpuProperties()) {
    if (p.read) {
      EXPECT_EQ(catalogField(p), nullptr) << p.name;
    } else {
      EXPECT_NE(catalogField(p), nullptr) << p.name << " reads nothing";
    }
  }
  for (const auto& f : all()) {
    if (f.smi_name.empty()) continue;
    const Property* p = findGpuProperty(f.smi_name);
    ASSERT_NE(p, nullptr) << "catalog field " << f.key << " names " << f.smi_name << ", which nvidia-smi lacks";
    EXPECT_EQ(catalogField(*p), &f) << f.smi_name;
    EXPECT_EQ(findAny(f.smi_name), &f);
  }
  // nvidia-smi's aliases reach the same catalog field.
  EXPECT_EQ(findAny("clocks.current.sm"), findBySmiName("clocks.sm"));
  EXPECT_EQ(findAny("clocks_throttle_reasons.active"), findBySmiName("clocks_event_reasons.active"));
  EXPECT_EQ(findAny("gpu_bus_id"), findBySmiName("pci.bus_id"));
}

// nvidia-smi's temperature.gpu.tlimit is the margin before the maximum operating temperature,
// not a threshold.
TEST(SmiQuery, TlimitIsTheMarginNotTheThreshold) {
  const Property* p = findGpuProperty("temperature.gpu.tlimit");
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p->read, nullptr);
  EXPECT_EQ(catalogField(*p), nullptr);
  ASSERT_NE(findByKey("slowdown_temp"), nullptr);
  EXPECT_EQ(findByKey("slowdown_temp")->smi_name, "");
}

TEST(SmiQuery, ErrorsPrintAsNvidiaSmiPrintsThem) {
  EXPECT_EQ(describeError(nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "x")), "[N/A]");
  EXPECT_EQ(describeError(nvml::nvmlError(NVML_ERROR_GPU_IS_LOST, "x")), "[GPU is lost]");
  EXPECT_EQ(describeError(nvml::nvmlError(NVML_ERROR_UNKNOWN, "x")), "[Unknown Error]");
  EXPECT_EQ(describeError(nvml::nvmlError(NVML_ERROR_NO_PERMISSION, "x")), "[Insufficient Permissions]");
}

TEST(SmiQuery, HelpHasNvidiaSmisLayout) {
  std::string h = helpText("--query-gpu", gpuProperties());
  EXPECT_EQ(h.rfind("List of valid properties to query for the switch \"--query-gpu\":\n\n", 0), 0u);
  EXPECT_NE(h.find("\n\"clocks_event_reasons.active\" or \"clocks_throttle_reasons.active\"\n"), std::string::npos);
  EXPECT_NE(h.find("\n\"pci.bus_id\" or \"gpu_bus_id\"\n"), std::string::npos);
  std::string apps = helpText("--query-compute-apps", computeAppProperties());
  EXPECT_NE(apps.find("\"used_gpu_memory\" or \"used_memory\""), std::string::npos);
  EXPECT_NE(apps.find("\"process_name\" or \"name\""), std::string::npos);
}

// Today every property has at most one alias, but the table allows several (space-separated):
// each is named in the help and accepted.
TEST(SmiQuery, SeveralAliasesAreEachNamedAndAccepted) {
  const ListProperty table[] = {{"first.name", "one two.x three", "", "Three aliases"},
                                {"second", "", "MiB", "No alias"}};
  EXPECT_EQ(helpText("--query-x", std::span<const ListProperty>(table)),
            "List of valid properties to query for the switch \"--query-x\":\n\n"
            "\"first.name\" or \"one\" or \"two.x\" or \"three\"\nThree aliases.\n\n"
            "\"second\"\nNo alias.\n\n");
  for (const char* n : {"first.name", "one", "two.x", "three"}) EXPECT_EQ(findListProperty(table, n), &table[0]) << n;
  for (const char* n : {"two", "one two.x", "", "thre"}) EXPECT_EQ(findListProperty(table, n), nullptr) << n;
}

TEST(SmiQuery, ListViewsAcceptNvidiaSmisNames) {
  for (const char* n : {"timestamp", "gpu_name", "gpu_bus_id", "gpu_serial", "gpu_uuid", "pid", "process_name", "name",
                        "used_gpu_memory", "used_memory"})
    EXPECT_NE(findListProperty(computeAppProperties(), n), nullptr) << n;
  for (const char* n : {"timestamp", "gpu_name", "gpu_bus_id", "gpu_serial", "gpu_uuid", "retired_pages.address",
                        "retired_pages.timestamp", "retired_pages.cause"})
    EXPECT_NE(findListProperty(retiredPageProperties(), n), nullptr) << n;
  for (const char* n : {"gpu_bus_id", "gpu_uuid", "remapped_rows.correctable", "remapped_rows.uncorrectable",
                        "remapped_rows.pending", "remapped_rows.failure"})
    EXPECT_NE(findListProperty(remappedRowProperties(), n), nullptr) << n;
  EXPECT_EQ(findListProperty(computeAppProperties(), "memory.used"), nullptr);
  EXPECT_EQ(findListProperty(computeAppProperties(), "used_memory")->unit, "MiB");
}

// The simulator's own fabric call, counted: the test wraps the real one, it does not answer for it.
int fabric_calls = 0;
decltype(nvml::NvmlApi::nvmlDeviceGetGpuFabricInfoV) real_fabric_call = nullptr;
nvmlReturn_t countedFabricCall(nvmlDevice_t d, nvmlGpuFabricInfo_v3_t* info) {
  ++fabric_calls;
  return real_fabric_call(d, info);
}

// `-q` prints eleven fabric lines per GPU: NVML is asked once for them all, and each line says what a
// context of its own would have read.
TEST(SmiQuery, TheFabricIsAskedOncePerGpuForAllItsNames) {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
  ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
  ::unsetenv("GPUWARDEN_SIM_STATE");
  {
    auto s = nvml::Session::open({GW_SIM_LIB});
    ASSERT_TRUE(s.ok()) << s.error();
    nvml::NvmlApi api = (*s)->api();
    real_fabric_call = api.nvmlDeviceGetGpuFabricInfoV;
    ASSERT_NE(real_fabric_call, nullptr);
    api.nvmlDeviceGetGpuFabricInfoV = countedFabricCall;
    auto d = (*s)->deviceByIndex(1);
    ASSERT_TRUE(d.ok()) << d.error();
    const nvml::Device counted(&api, d->handle());
    const ReadContext once{**s, counted, 1};
    fabric_calls = 0;
    unsigned names = 0;
    for (const auto& p : gpuProperties()) {
      if (!p.name.starts_with("fabric.")) continue;
      ++names;
      const ReadContext alone{**s, *d, 1};
      EXPECT_EQ(read(p, once, true), read(p, alone, true)) << p.name;
    }
    EXPECT_EQ(names, 11u);
    EXPECT_EQ(fabric_calls, 1);
    EXPECT_EQ(read(*findGpuProperty("fabric.state"), once, true), "Completed");
    EXPECT_EQ(read(*findGpuProperty("fabric.health.summary"), once, true), "Healthy");
  }
  ::unsetenv("GPUWARDEN_SIM_SCENARIO");
  ::unsetenv("GPUWARDEN_SIM_CLOCK");
}

}  // namespace
}  // namespace gw::fields::smi
