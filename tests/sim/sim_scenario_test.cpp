// Scenario files: every shipped scenario loads; malformed ones fail nvmlInit with a message
// naming file, line and field.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim_harness.h"

namespace simtest {
namespace {

using Scenarios = SimTest;

TEST_F(Scenarios, EveryShippedScenarioLoads) {
  const std::map<std::string, std::pair<nvmlReturn_t, unsigned>> expected = {
      {"dgx-h100", {NVML_SUCCESS, 8}},
      {"dgx-h200", {NVML_SUCCESS, 8}},
      {"pcie-mixed", {NVML_SUCCESS, 4}},
      {"mig-a100", {NVML_SUCCESS, 2}},
      {"fault-gpu-lost", {NVML_SUCCESS, 8}},
      {"fault-hang", {NVML_SUCCESS, 8}},
      {"fault-driver-reload", {NVML_SUCCESS, 8}},
      {"no-driver", {NVML_ERROR_DRIVER_NOT_LOADED, 0}},
      {"driver-mismatch", {NVML_ERROR_LIB_RM_VERSION_MISMATCH, 0}},
  };
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GW_SCENARIO_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    ++seen;
    UseScenario(entry.path().string());
    nvmlReturn_t rc = nv.nvmlInit_v2();
    auto it = expected.find(name);
    if (it == expected.end()) {
      EXPECT_EQ(rc, NVML_SUCCESS) << nv.gwSimLastError();  // a scenario added later
    } else {
      EXPECT_EQ(rc, it->second.first) << nv.gwSimLastError();
    }
    if (rc != NVML_SUCCESS) continue;
    unsigned count = 0;
    EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
    if (it != expected.end()) {
      EXPECT_EQ(count, it->second.second);
    }
    for (unsigned i = 0; i < count; ++i) {
      char name_buf[96];
      EXPECT_EQ(nv.nvmlDeviceGetName(Gpu(i), name_buf, sizeof name_buf), NVML_SUCCESS);
    }
    nv.nvmlShutdown();
  }
  EXPECT_GE(seen, expected.size());
}

// A card cannot sit above its shutdown temperature: in no shipped scenario, over 20 minutes, does
// any GPU answer a core temperature at or above its own shutdown threshold. It answers one below,
// or it has shut down and answers GPU_IS_LOST. (fault-hang is left out: its calls block for real.)
TEST_F(Scenarios, NoShippedScenarioReadsAtOrAboveShutdown) {
  std::size_t checked = 0, lost = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GW_SCENARIO_DIR)) {
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() != ".yaml" || name == "fault-hang") continue;
    SCOPED_TRACE(name);
    UseScenario(WriteScenario("base: " + entry.path().string() + "\n", name));
    if (nv.nvmlInit_v2() != NVML_SUCCESS) continue;
    unsigned count = 0;
    ASSERT_EQ(nv.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
    std::vector<nvmlDevice_t> gpus(count);
    std::vector<unsigned> shutdown(count);
    for (unsigned i = 0; i < count; ++i) {
      ASSERT_EQ(nv.nvmlDeviceGetHandleByIndex_v2(i, &gpus[i]), NVML_SUCCESS);
      ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(gpus[i], NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &shutdown[i]),
                NVML_SUCCESS);
    }
    std::vector<bool> gone(count, false);
    for (double t = 0; t <= 1200; t += 3) {
      At(t);
      for (unsigned i = 0; i < count; ++i) {
        unsigned temp = 0;
        const nvmlReturn_t rc = nv.nvmlDeviceGetTemperature(gpus[i], NVML_TEMPERATURE_GPU, &temp);
        if (rc == NVML_SUCCESS) {
          ASSERT_LT(temp, shutdown[i]) << "GPU " << i << " at t=" << t;
          ++checked;
        } else {
          ASSERT_TRUE(rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_UNINITIALIZED) << "GPU " << i << " rc " << rc;
          gone[i] = gone[i] || rc == NVML_ERROR_GPU_IS_LOST;
        }
      }
    }
    for (bool g : gone) lost += g;
    while (nv.nvmlShutdown() == NVML_SUCCESS) {
    }
  }
  EXPECT_GT(checked, 30000u);
  EXPECT_EQ(lost, 3u);  // fault-gpu-lost, fault-xid-79 (off the bus by fault) and fault-thermal-runaway
}

TEST_F(Scenarios, H200FleetSpecs) {
  Start(ShippedPath("dgx-h200"));
  char name[96];
  ASSERT_EQ(nv.nvmlDeviceGetName(Gpu(7), name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA H200");
  nvmlMemory_t mem{};
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo(Gpu(7), &mem), NVML_SUCCESS);
  EXPECT_EQ(mem.total, 143771ull << 20);
  EXPECT_GT(mem.used, 125ull << 30);
}

struct BadCase {
  const char* label;
  const char* yaml;
  const char* expected;  // after "<file>:"
};

class Malformed : public SimTest, public ::testing::WithParamInterface<BadCase> {};

TEST_P(Malformed, InitFailsNamingFileLineAndField) {
  const BadCase& c = GetParam();
  std::string path = WriteScenario(c.yaml, "bad");
  UseScenario(path);
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  std::string msg = nv.gwSimLastError();
  EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << msg;
  EXPECT_NE(msg.find(c.expected), std::string::npos) << "message: " << msg;
  unsigned n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
}

const BadCase kBadCases[] = {
    {"InvalidYaml", "count: 2\ngpus: [\n  {profile: L40S\n", ":4: invalid YAML"},
    {"UnknownTopKey", "seeed: 3\ncount: 1\ndefaults: {profile: L40S}\n",
     ":1: seeed: unknown key 'seeed' (expected name, description, base, seed"},
    {"UnknownPreset",
     "count: 3\ndefaults:\n  profile: H100-SXM5-80GB\ngpus:\n  - {workload: idle}\n  - {workload: training}\n"
     "  - workload: trainnig\n",
     ":7: gpus[2].workload: unknown preset 'trainnig' (expected idle, training, inference, bursty, starved)"},
    {"WrongType", "count: eight\ndefaults: {profile: L40S}\n", ":1: count: expected an integer, got 'eight'"},
    {"UnknownProfile", "count: 1\ndefaults:\n  profile: H300\n",
     ":3: defaults.profile: unknown profile 'H300' (expected H100-SXM5-80GB, H200-SXM-141GB"},
    {"OutOfRange", "gpus:\n  - profile: H100-SXM5-80GB\n    power_limit: 900\n",
     ":3: gpus[0].power_limit: 900 is out of range [200, 700]"},
    {"FaultOnMissingGpu", "count: 2\ndefaults: {profile: L40S}\nfaults:\n  - type: xid\n    gpu: 9\n    code: 79\n",
     ":5: faults[0].gpu: GPU 9 does not exist (the scenario has 2)"},
    {"UnknownFaultType", "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: meltdown, gpu: 0}\n",
     ":4: faults[0].type: unknown fault type 'meltdown' (expected xid, ecc_sbe"},
    {"TypoInFaultKey", "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - type: xid\n    gpu: 0\n    cod: 79\n",
     ":6: faults[0].cod: unknown key 'cod'"},
    {"MissingFaultParam", "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: xid, gpu: 0}\n",
     ":4: faults[0]: xid needs code"},
    {"FanFailureWithoutFans",
     "count: 1\ndefaults: {profile: H100-SXM5-80GB}\nfaults:\n  - {type: fan_failure, gpu: 0}\n",
     "faults[0].type: GPU 0 (H100-SXM5-80GB) has no fans"},
    {"FabricWithoutNvSwitch",
     "count: 2\ndefaults: {profile: H100-SXM5-80GB}\nfaults:\n  - {type: fabric, gpu: 1, state: not_started}\n",
     ":4: faults[0].type: GPU 1 (H100-SXM5-80GB) is on no NVSwitch fabric (the scenario needs nvlink: {nvswitch: "
     "true})"},
    {"UnknownFabricState",
     "count: 1\ndefaults: {profile: H100-SXM5-80GB}\nnvlink: {nvswitch: true}\nfaults:\n"
     "  - {type: fabric, gpu: 0, state: broken}\n",
     ":5: faults[0].state: unknown fabric state 'broken' (expected not_started, in_progress or failed)"},
    // An error code is one the ABI declares (1-26 or 999), at its edges.
    {"CallErrorCodeAfterTheLast",
     "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: call_error, call: nvmlEventSetCreate, error: 27}\n",
     ":4: faults[0].error: expected an NVML error code: 1-26 or 999 (NVML_ERROR_UNKNOWN), got 27"},
    {"CallErrorCodeAfterUnknown",
     "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: call_error, call: nvmlEventSetCreate, error: 1000}\n",
     ":4: faults[0].error: "},
    {"CallErrorCodeZero",
     "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: call_error, call: nvmlEventSetCreate, error: 0}\n",
     ":4: faults[0].error: "},
    {"CallErrorWithoutCall", "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: call_error, error: 999}\n",
     ":4: faults[0]: call_error needs call"},
    {"CallErrorOnAGpu",
     "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: call_error, gpu: 0, call: nvmlDeviceGetPowerUsage, "
     "error: 999}\n",
     ":4: faults[0].gpu: call_error affects the whole machine; remove gpu"},
    {"UnknownVirtualization", "host: {virtualization: vgpu}\ncount: 1\ndefaults: {profile: L40S}\n",
     ":1: host.virtualization: unknown virtualization 'vgpu' (expected none or passthrough)"},
    {"MigOnL40S", "count: 1\ndefaults:\n  profile: L40S\n  mig: {enabled: true}\n",
     ":4: defaults.mig.enabled: L40S does not support MIG"},
    {"MissingBase", "base: no-such-scenario\n", ":1: base: cannot read base scenario"},
    {"TooMuchMemory", "gpus:\n  - profile: RTX-4090\n    processes:\n      - {pid: 1, memory: 30GiB}\n",
     ":4: gpus[0].processes: processes hold 30720 MiB at t=0 s, more than the 24233 MiB usable"},
    {"BadCpuList", "host:\n  numa_nodes:\n    0: \"0-x\"\ncount: 1\ndefaults: {profile: L40S}\n",
     ":3: host.numa_nodes.0: expected a CPU list"},
    {"NoGpus", "seed: 1\n", ":1: the scenario has no GPUs"},
    {"DurationOnPermanentFault",
     "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: fall_off_bus, gpu: 0, at: 5, duration: 10}\n",
     ":4: faults[0].duration: fall_off_bus has no duration"},
    // std::stod threw out of nvmlInit (through the C ABI) on these: now an error, not an abort.
    {"DotsForSeconds", "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: xid, gpu: 0, code: 13, at: \"..s\"}\n",
     ":4: faults[0].at: expected a number before the unit, got '..s'"},
    {"TwoPointsInSeconds",
     "count: 1\ndefaults: {profile: L40S}\nfaults:\n  - {type: xid, gpu: 0, code: 13, at: \"1.2.3m\"}\n",
     ":4: faults[0].at: expected a number before the unit"},
    {"PowerLimitBelowTheMinimum", "gpus:\n  - profile: H100-SXM5-80GB\n    power_limit: 199.999\n",
     ":3: gpus[0].power_limit: 199.999 is out of range [200, 700]"},
    {"PowerLimitUnit", "gpus:\n  - profile: H100-SXM5-80GB\n    power_limit: 300kW\n",
     ":3: gpus[0].power_limit: expected watts (a number, or e.g. 312.5W, 312500mW), got '300kW'"},
    {"PowerLimitMilliwattsOutOfRange", "gpus:\n  - profile: L40S\n    power_limit: 350001mW\n",
     ":3: gpus[0].power_limit: 350001mW is out of range [100, 350] W"},
    {"MinorTwice", "count: 2\ndefaults: {profile: L40S}\ngpus:\n  - {minor: 1}\n  - {}\n",
     ":5: gpus[1]: GPU 1 has minor 1, as GPU 0 does (/dev/nvidiaN is one GPU's)"},
    {"MinorOfNvidiactl", "gpus:\n  - {profile: L40S, minor: 255}\n", ":2: gpus[0].minor: 255 is out of range [0, 254]"},
    {"SwitchAcrossPciDomains",
     "count: 2\ndefaults: {profile: L40S, pcie_switch: 0}\ngpus:\n  - {bus_id: \"0000:41:00.0\"}\n"
     "  - {bus_id: \"0001:42:00.0\"}\n",
     ":5: gpus[1]: its host bridge (or PCIe switch) is in PCI domain 0000: GPUs below one root share its domain"},
    {"SameBusIdInOneDomain",
     "count: 2\ndefaults: {profile: L40S}\ngpus:\n  - {bus_id: \"0001:18:00.0\"}\n  - {bus_id: \"0001:18:00.0\"}\n",
     ":5: gpus[1]: GPU 1 has the same bus_id as another GPU"},
    {"DotsForMemory", "gpus:\n  - profile: RTX-4090\n    processes:\n      - {pid: 1, memory: \".MiB\"}\n",
     "expected a number before the unit, got '.MiB'"},
};

INSTANTIATE_TEST_SUITE_P(Scenarios, Malformed, ::testing::ValuesIn(kBadCases),
                         [](const auto& case_info) { return std::string(case_info.param.label); });

TEST_F(Scenarios, ErrorsInABaseFileNameThatFile) {
  std::string base = WriteScenario("count: 1\ndefaults:\n  profile: L40S\n  workload: sleepy\n", "base");
  std::string derived =
      WriteScenario("base: " + base + "\nfaults: [{type: xid, gpu: 0, at: 1, code: 13}]\n", "derived");
  UseScenario(derived);
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  EXPECT_NE(std::string(nv.gwSimLastError()).find(base + ":4: defaults.workload: unknown preset 'sleepy'"),
            std::string::npos)
      << nv.gwSimLastError();
}

TEST_F(Scenarios, DerivedScenarioOverridesAndAddsFaults) {
  Start(WriteScenario("base: " + ShippedPath("dgx-h100") +
                      "\ndriver_version: \"560.35.03\"\n"
                      "faults: [{type: xid, gpu: all, at: 5, code: 94}]\n"));
  char version[80];
  ASSERT_EQ(nv.nvmlSystemGetDriverVersion(version, sizeof version), NVML_SUCCESS);
  EXPECT_STREQ(version, "560.35.03");
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), NVML_SUCCESS);
  for (unsigned i = 0; i < 8; ++i)
    ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Gpu(i), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  At(6);
  int events = 0;
  nvmlEventData_t ev{};
  while (nv.nvmlEventSetWait_v2(set, &ev, 0) == NVML_SUCCESS) {
    EXPECT_EQ(ev.eventData, 94u);
    ++events;
  }
  EXPECT_EQ(events, 8);
  nv.nvmlEventSetFree(set);
}

}  // namespace
}  // namespace simtest
