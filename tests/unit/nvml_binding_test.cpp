// The binding against real libraries: an old minimal NVML (fallbacks, missing symbols) and the
// simulator (every symbol present), loaded with dlopen as production loads libnvidia-ml.so.1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "nvml/inventory.h"
#include "nvml/inventory_json.h"
#include "nvml/nvml.h"
#include "nvml/topology.h"
#include "../support/temp_dir.h"

namespace gw::nvml {
namespace {

TEST(NvmlBinding, MissingLibraryIsAClearTypedError) {
  auto s = Session::open({"/nonexistent/libnvidia-ml.so.1"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().nvmlCode(), NVML_ERROR_LIBRARY_NOT_FOUND);
  EXPECT_NE(s.error().find("no NVIDIA driver is installed"), std::string::npos) << s.error();
}

TEST(NvmlBinding, NotAnNvmlLibraryIsRefused) {
  auto s = Session::open({"libz.so.1"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("does not export nvmlInit"), std::string::npos) << s.error();
}

TEST(NvmlBinding, OldDriverFallsBackToPlainSymbols) {
  auto s = Session::open({GW_MINIMAL_NVML});
  ASSERT_TRUE(s.ok()) << s.error();
  const NvmlApi& api = (*s)->api();
  EXPECT_EQ(api.nvmlInit_v2, nullptr);
  EXPECT_NE(api.nvmlInit, nullptr);
  EXPECT_EQ(api.nvmlDeviceGetCount_v2, nullptr);
  auto n = (*s)->deviceCount();
  ASSERT_TRUE(n.ok()) << n.error();
  EXPECT_EQ(*n, 1u);
  auto d = (*s)->deviceByIndex(0);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d->name().value_or(""), "Tesla V100-SXM2-16GB");
  auto pci = d->pciInfo();  // _v3 and _v2 missing: the plain symbol answers
  ASSERT_TRUE(pci.ok()) << pci.error();
  EXPECT_EQ(pci->bus_id, "00000000:06:00.0");
  EXPECT_EQ(pci->device_id, 0x1DB1u);
  auto mem = d->memory();  // _v2 missing: v1 struct
  ASSERT_TRUE(mem.ok()) << mem.error();
  EXPECT_EQ(mem->total, 16ULL << 30);
}

TEST(NvmlBinding, SymbolTheDriverLacksIsUnsupportedNotACrash) {
  auto s = Session::open({GW_MINIMAL_NVML});
  ASSERT_TRUE(s.ok()) << s.error();
  auto d = (*s)->deviceByIndex(0);
  ASSERT_TRUE(d.ok());
  auto t = d->temperature();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().nvmlCode(), NVML_ERROR_FUNCTION_NOT_FOUND);
  EXPECT_TRUE(isUnsupported(t.status().nvmlCode()));
  EXPECT_NE(t.error().find("nvmlDeviceGetTemperature"), std::string::npos);
  // The inventory still reads what exists.
  auto inv = readInventory(**s, std::chrono::seconds(10));
  ASSERT_TRUE(inv.ok()) << inv.error();
  ASSERT_EQ(inv->gpus.size(), 1u);
  EXPECT_EQ(inv->gpus[0].state, "ok");
  EXPECT_EQ(inv->gpus[0].memory_total_mib.value_or(0), 16384u);
  EXPECT_FALSE(inv->gpus[0].power_limit_w.has_value());
  EXPECT_EQ(inv->driver_version, "418.87.01");
}

TEST(NvmlBinding, SimulatorExportsEverySymbolWeDeclare) {
  auto lib = platform::DynamicLibrary::open(GW_SIM_LIB);
  ASSERT_TRUE(lib.ok()) << lib.error();
  auto api = loadNvmlApi(*lib);
  ASSERT_TRUE(api.ok()) << api.error();
  std::string missing;
  for (const auto& m : api->missing) missing += m + " ";
  EXPECT_TRUE(api->missing.empty()) << "simulator lacks: " << missing;
  EXPECT_NE(api->gwSimSetTime, nullptr);
}

// smi -L and the monitors read each GPU's identity only: the same names, UUIDs, bus ids, minor
// numbers and MIG devices as the full inventory, and none of the rest (whose calls cost a real
// driver most of a list's time).
TEST(NvmlBinding, AnIdentityInventoryNamesTheGpusAsTheFullOneAndReadsNothingElse) {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/mig-h100.yaml", 1);
  ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
  ::unsetenv("GPUWARDEN_SIM_STATE");
  {
    auto s = Session::open({GW_SIM_LIB});
    ASSERT_TRUE(s.ok()) << s.error();
    auto full = readInventory(**s, std::chrono::seconds(10));
    auto ident = readInventory(**s, std::chrono::seconds(10), InventoryDepth::Identity);
    ASSERT_TRUE(full.ok() && ident.ok());
    ASSERT_EQ(full->gpus.size(), ident->gpus.size());
    ASSERT_FALSE(full->gpus.empty());
    EXPECT_EQ(full->driver_version, ident->driver_version);
    std::size_t mig = 0;
    for (std::size_t i = 0; i < full->gpus.size(); ++i) {
      const GpuInfo &f = full->gpus[i], &g = ident->gpus[i];
      EXPECT_EQ(g.state, "ok");
      EXPECT_EQ(g.index, f.index);
      EXPECT_EQ(g.name, f.name);
      EXPECT_EQ(g.uuid, f.uuid);
      EXPECT_EQ(g.pci.bus_id, f.pci.bus_id);
      EXPECT_EQ(g.minor_number, f.minor_number);
      EXPECT_EQ(g.mig_enabled, f.mig_enabled);
      ASSERT_EQ(g.mig_devices.size(), f.mig_devices.size()) << i;
      for (std::size_t m = 0; m < g.mig_devices.size(); ++m) {
        EXPECT_EQ(g.mig_devices[m].uuid, f.mig_devices[m].uuid);
        EXPECT_EQ(g.mig_devices[m].profile, f.mig_devices[m].profile);
        EXPECT_EQ(g.mig_devices[m].gpu_instance_id, f.mig_devices[m].gpu_instance_id);
      }
      mig += g.mig_devices.size();
      EXPECT_FALSE(f.serial.empty());
      EXPECT_TRUE(g.serial.empty() && g.vbios.empty() && !g.power_limit_w && !g.memory_total_mib && g.cpus.empty())
          << i;
    }
    EXPECT_GT(mig, 0u);  // the scenario's MIG devices were listed
  }
  ::unsetenv("GPUWARDEN_SIM_SCENARIO");
  ::unsetenv("GPUWARDEN_SIM_CLOCK");
}

// The simulator reads this scenario for the sessions opened while the object lives.
struct SimScenario {
  explicit SimScenario(const std::string& path) {
    ::setenv("GPUWARDEN_SIM_SCENARIO", path.c_str(), 1);
    ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
    ::unsetenv("GPUWARDEN_SIM_STATE");
  }
  ~SimScenario() {
    ::unsetenv("GPUWARDEN_SIM_SCENARIO");
    ::unsetenv("GPUWARDEN_SIM_CLOCK");
  }
};

// The CPU mask NVML is asked for holds 1024 CPUs (16 words), read bit by bit across the word
// boundaries; a process list longer than the first buffer (16) is fetched again at its size.
TEST(NvmlBinding, CpuAffinityTo1024CpusAndMoreProcessesThanTheFirstBuffer) {
  testsupport::TempDir dir;
  std::string yaml =
      "description: a wide host\nseed: 1\ndriver_version: \"550.54.15\"\ncuda_driver_version: 12040\n"
      "gpus:\n  - profile: L40S\n    bus_id: \"0000:41:00.0\"\n    cpus: \"0,63-64,1023\"\n    processes:\n";
  for (int i = 0; i < 17; ++i) yaml += "      - {pid: " + std::to_string(1001 + i) + ", name: w, memory: 1GiB}\n";
  SimScenario sim(dir.write("wide.yaml", yaml));
  auto s = Session::open({GW_SIM_LIB});
  ASSERT_TRUE(s.ok()) << s.error();
  auto d = (*s)->deviceByIndex(0);
  ASSERT_TRUE(d.ok()) << d.error();
  auto cpus = d->cpuAffinity();
  ASSERT_TRUE(cpus.ok()) << cpus.error();
  EXPECT_EQ(*cpus, (std::vector<unsigned>{0, 63, 64, 1023}));
  auto procs = d->computeProcesses();
  ASSERT_TRUE(procs.ok()) << procs.error();
  ASSERT_EQ(procs->size(), 17u);
  for (unsigned i = 0; i < 17; ++i) EXPECT_EQ((*procs)[i].pid, 1001 + i);
  EXPECT_EQ((*procs)[16].used_bytes, 1ull << 30);
}

// Every PCIe level once: a warning for each pair whose traffic crosses the CPU (PHB, NODE, SYS),
// once per pair, and none for PIX and PXB; across NUMA nodes the warning says so.
TEST(NvmlBinding, TopologyWarnsForEveryPairThatCrossesTheCpuAndNoOther) {
  testsupport::TempDir dir;
  std::string yaml =
      "description: every PCIe level\nseed: 1\ndriver_version: \"550.54.15\"\ncuda_driver_version: 12040\n"
      "host:\n  numa_nodes:\n    0: \"0-31\"\n    1: \"32-63\"\ngpus:\n";
  // GPU0/1 share a switch (PIX), GPU2 has its own below the same bridge (PXB), GPU3 sits on that
  // bridge (PHB), GPU4 on another bridge of NUMA node 0 (NODE), GPU5 on NUMA node 1 (SYS).
  const char* const gpus[] = {"numa: 0\n    pcie_switch: 0\n    host_bridge: 0",
                              "numa: 0\n    pcie_switch: 0\n    host_bridge: 0",
                              "numa: 0\n    pcie_switch: 1\n    host_bridge: 0",
                              "numa: 0\n    host_bridge: 0",
                              "numa: 0\n    host_bridge: 1",
                              "numa: 1\n    host_bridge: 2"};
  for (int i = 0; i < 6; ++i)
    yaml += "  - profile: L40S\n    bus_id: \"0000:" + std::to_string(41 + i) + ":00.0\"\n    " + gpus[i] + "\n";
  SimScenario sim(dir.write("levels.yaml", yaml));
  {
    auto s = Session::open({GW_SIM_LIB});
    ASSERT_TRUE(s.ok()) << s.error();
    auto inv = readInventory(**s, std::chrono::seconds(10));
    ASSERT_TRUE(inv.ok()) << inv.error();
    ASSERT_EQ(inv->gpus.size(), 6u);
    const Topology t = readTopology(*inv);
    ASSERT_EQ(t.gpus.size(), 6u);
    EXPECT_EQ(t.gpus[0].links, (std::vector<std::string>{"X", "PIX", "PXB", "PHB", "NODE", "SYS"}));
    EXPECT_EQ(t.gpus[3].links, (std::vector<std::string>{"PHB", "PHB", "PHB", "X", "NODE", "SYS"}));
    std::vector<std::string> pairs;
    for (const auto& w : t.warnings) pairs.push_back(w.substr(0, w.find(':')));
    EXPECT_EQ(pairs, (std::vector<std::string>{"GPU0 <-> GPU3 (PHB)", "GPU0 <-> GPU4 (NODE)", "GPU0 <-> GPU5 (SYS)",
                                               "GPU1 <-> GPU3 (PHB)", "GPU1 <-> GPU4 (NODE)", "GPU1 <-> GPU5 (SYS)",
                                               "GPU2 <-> GPU3 (PHB)", "GPU2 <-> GPU4 (NODE)", "GPU2 <-> GPU5 (SYS)",
                                               "GPU3 <-> GPU4 (NODE)", "GPU3 <-> GPU5 (SYS)", "GPU4 <-> GPU5 (SYS)"}));
    ASSERT_EQ(t.warnings.size(), 12u);
    EXPECT_EQ(t.warnings[1],
              "GPU0 <-> GPU4 (NODE): peer-to-peer traffic crosses the CPU; expect lower all-reduce bandwidth than "
              "PIX/PXB or NVLink");
    EXPECT_EQ(t.warnings[2],
              "GPU0 <-> GPU5 (SYS): peer-to-peer traffic crosses the CPU and the link between NUMA nodes; expect "
              "lower all-reduce bandwidth than PIX/PXB or NVLink");
  }
}

// NVML answers power limits in milliwatts; the inventory keeps watts, fractions included
// (pcie-mixed caps GPU 3, an RTX 4090 of 150..600 W and 450 W by default, at 312.5 W).
TEST(NvmlBinding, InventoryPowerLimitsAreWattsFromMilliwatts) {
  SimScenario sim(GW_SOURCE_DIR "/scenarios/pcie-mixed.yaml");
  auto s = Session::open({GW_SIM_LIB});
  ASSERT_TRUE(s.ok()) << s.error();
  auto inv = readInventory(**s, std::chrono::seconds(10));
  ASSERT_TRUE(inv.ok()) << inv.error();
  ASSERT_EQ(inv->gpus.size(), 4u);
  const GpuInfo& g = inv->gpus[3];
  EXPECT_DOUBLE_EQ(g.power_limit_w.value_or(0), 312.5);
  EXPECT_DOUBLE_EQ(g.power_default_w.value_or(0), 450.0);
  EXPECT_DOUBLE_EQ(g.power_min_w.value_or(0), 150.0);
  EXPECT_DOUBLE_EQ(g.power_max_w.value_or(0), 600.0);
}

// Retired pages: none is an empty list, not an error; once GPU 5 of fault-retired-pages reaches
// the limit (t = 30 s: 40 single-bit, 24 double-bit) the count and the addresses agree.
TEST(NvmlBinding, RetiredPagesCountAndAddressesAgree) {
  SimScenario sim(GW_SOURCE_DIR "/scenarios/fault-retired-pages.yaml");
  auto s = Session::open({GW_SIM_LIB});
  ASSERT_TRUE(s.ok()) << s.error();
  auto d = (*s)->deviceByIndex(5);
  ASSERT_TRUE(d.ok()) << d.error();
  auto before = d->retiredPageAddresses(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
  ASSERT_TRUE(before.ok()) << before.error();
  EXPECT_TRUE(before->empty());
  ASSERT_NE((*s)->api().gwSimSetTime, nullptr);
  (*s)->api().gwSimSetTime(31);
  EXPECT_EQ(d->retiredPages(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS).value_or(0), 40u);
  EXPECT_EQ(d->retiredPages(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR).value_or(0), 24u);
  auto sbe = d->retiredPageAddresses(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
  ASSERT_TRUE(sbe.ok()) << sbe.error();
  EXPECT_EQ(sbe->size(), 40u);
  auto dbe = d->retiredPageAddresses(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
  ASSERT_TRUE(dbe.ok()) << dbe.error();
  EXPECT_EQ(dbe->size(), 24u);
}

// A single retired page is a list of one (the count-only query's smallest non-empty answer).
TEST(NvmlBinding, OneRetiredPageIsListed) {
  testsupport::TempDir dir;
  SimScenario sim(dir.write("one-page.yaml",
                            "description: one page\nseed: 1\ndriver_version: \"550.54.15\"\n"
                            "cuda_driver_version: 12040\ngpus:\n  - profile: L40S\n    cpus: \"0-7\"\n"
                            "faults:\n  - {type: retired_pages, gpu: 0, at: 0, sbe: 0, dbe: 1, pending: false}\n"));
  auto s = Session::open({GW_SIM_LIB});
  ASSERT_TRUE(s.ok()) << s.error();
  auto d = (*s)->deviceByIndex(0);
  ASSERT_TRUE(d.ok()) << d.error();
  (*s)->api().gwSimSetTime(1);
  auto dbe = d->retiredPageAddresses(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
  ASSERT_TRUE(dbe.ok()) << dbe.error();
  EXPECT_EQ(dbe->size(), 1u);
}

TEST(NvmlBinding, ErrorMeaningsNameTheFailure) {
  EXPECT_NE(errorMeaning(NVML_ERROR_LIB_RM_VERSION_MISMATCH).find("Driver/library version mismatch"),
            std::string::npos);
  EXPECT_NE(errorMeaning(NVML_ERROR_GPU_IS_LOST).find("GPU is lost"), std::string::npos);
  EXPECT_NE(errorMeaning(NVML_ERROR_DRIVER_NOT_LOADED).find("driver is not loaded"), std::string::npos);
  EXPECT_STREQ(errorName(NVML_ERROR_RESET_REQUIRED), "RESET_REQUIRED");
  Status st = nvmlError(NVML_ERROR_GPU_IS_LOST, "nvmlDeviceGetTemperature");
  EXPECT_EQ(st.nvmlCode(), NVML_ERROR_GPU_IS_LOST);
  EXPECT_TRUE(isLost(st.nvmlCode()));
  EXPECT_FALSE(isUnsupported(st.nvmlCode()));
}

TEST(NvmlHelpers, BusIdNormalisation) {
  EXPECT_EQ(normalizeBusId("0000:3b:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(normalizeBusId("00000000:3B:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(normalizeBusId("3b:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(normalizeBusId("0000:3b:00"), "00000000:3B:00.0");
  EXPECT_EQ(normalizeBusId("garbage"), "garbage");
  // A non-zero function and domain survive (the shorter forms would read them as 0).
  EXPECT_EQ(normalizeBusId("0001:3b:00.3"), "00000001:3B:00.3");
}

TEST(NvmlHelpers, VersionsBandwidthAndRanges) {
  EXPECT_EQ(cudaVersionString(12040), "12.4");
  EXPECT_EQ(cudaVersionString(11080), "11.8");
  // H100 SXM5: 2619 MHz x 2 x 5120 bit = 3352 GB/s; RTX 4090: 10501 MHz x 2 x 384 bit = 1008 GB/s.
  EXPECT_NEAR(peakMemoryBandwidthGBs(2619, 5120), 3352.3, 0.5);
  EXPECT_NEAR(peakMemoryBandwidthGBs(10501, 384), 1008.1, 0.5);
  EXPECT_EQ(formatIdRanges({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(formatIdRanges({}), "");
  EXPECT_EQ(smCountFromCores(NVML_DEVICE_ARCH_HOPPER, 16896).value_or(0), 132u);
  EXPECT_EQ(smCountFromCores(NVML_DEVICE_ARCH_AMPERE, 6912).value_or(0), 108u);
  EXPECT_FALSE(smCountFromCores(NVML_DEVICE_ARCH_UNKNOWN, 100).has_value());
}

// The inventory's JSON: the device node from the driver's minor (not the index), the PCI device id
// as four upper-case hex digits, the peak bandwidth to one decimal, null for what was not read.
TEST(NvmlHelpers, InventoryJsonFormatsEachField) {
  GpuInfo g;
  g.index = 2;
  g.uuid = "GPU-p";
  g.minor_number = 5;
  g.pci.device_id = 0xAB;
  g.compute_capability = Version{9, 0};
  g.peak_bandwidth_gbs = 3352.34;
  MigInfo m;
  m.uuid = "MIG-c";
  g.mig_devices.push_back(m);
  const auto j = gpuJson(g);
  EXPECT_EQ(j["minor_number"], 5);
  EXPECT_EQ(j["device_node"], "/dev/nvidia5");
  EXPECT_EQ(j["pci_device_id"], "0x00AB");
  EXPECT_EQ(j["compute_capability"], "9.0");
  EXPECT_DOUBLE_EQ(j["peak_memory_bandwidth_gbs"].get<double>(), 3352.3);
  g.peak_bandwidth_gbs = 1008.06;
  EXPECT_DOUBLE_EQ(gpuJson(g)["peak_memory_bandwidth_gbs"].get<double>(), 1008.1);
  ASSERT_EQ(j["mig_devices"].size(), 1u);
  EXPECT_EQ(j["mig_devices"][0]["parent_index"], 2);
  EXPECT_EQ(j["mig_devices"][0]["parent_uuid"], "GPU-p");
  const auto none = gpuJson(GpuInfo{});
  EXPECT_EQ(none.size(), j.size()) << "every key whatever was read";
  for (const char* k :
       {"minor_number", "device_node", "pci_device_id", "compute_capability", "peak_memory_bandwidth_gbs"})
    EXPECT_TRUE(none[k].is_null()) << k;
}

// CUDA cores per SM: 64 on Volta and Turing (V100 5120/80, TU102 4608/72), 128 on Ada (L40S
// 18176/142). No cores, or a count that is not a whole number of SMs, gives no SM count.
TEST(NvmlHelpers, SmCountFromCoresPerArchitecture) {
  EXPECT_EQ(smCountFromCores(NVML_DEVICE_ARCH_VOLTA, 5120).value_or(0), 80u);
  EXPECT_EQ(smCountFromCores(NVML_DEVICE_ARCH_TURING, 4608).value_or(0), 72u);
  EXPECT_EQ(smCountFromCores(NVML_DEVICE_ARCH_ADA, 18176).value_or(0), 142u);
  EXPECT_FALSE(smCountFromCores(NVML_DEVICE_ARCH_HOPPER, 0).has_value());
  EXPECT_FALSE(smCountFromCores(NVML_DEVICE_ARCH_HOPPER, 16896 + 64).has_value());
  EXPECT_EQ(smCountFromCores(NVML_DEVICE_ARCH_AMPERE, 64).value_or(0), 1u);
}

}  // namespace
}  // namespace gw::nvml
