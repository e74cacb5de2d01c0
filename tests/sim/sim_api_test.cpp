// Library surface: exported symbols, init/shutdown, error strings, time control, profiles.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "sim_harness.h"

namespace simtest {
namespace {

// GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, lower-case hex. (No std::regex: GCC 12 warns
// inside it under the sanitizers.)
bool IsGpuUuid(const std::string& s) {
  if (s.size() != 40 || s.rfind("GPU-", 0) != 0) return false;
  for (std::size_t i = 4; i < s.size(); ++i) {
    bool dash = i == 12 || i == 17 || i == 22 || i == 27;
    bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
    if (dash ? s[i] != '-' : !hex) return false;
  }
  return true;
}

using Api_ = SimTest;

TEST_F(Api_, EveryDeclaredFunctionIsExported) { EXPECT_EQ(Nvml().missing, ""); }

TEST_F(Api_, CallsBeforeInitAreUninitializedAndInitIsReferenceCounted) {
  unsigned n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nv.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
  UseScenario(ShippedPath("dgx-h100"));
  ASSERT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS) << nv.gwSimLastError();
  ASSERT_EQ(nv.nvmlInit(), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);  // one reference left
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(nv.nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nv.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

TEST_F(Api_, ErrorStringsAreNvidias) {
  EXPECT_STREQ(nv.nvmlErrorString(NVML_SUCCESS), "Success");
  EXPECT_STREQ(nv.nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED), "Driver Not Loaded");
  EXPECT_STREQ(nv.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
  EXPECT_STREQ(nv.nvmlErrorString(NVML_ERROR_LIB_RM_VERSION_MISMATCH), "Driver/library version mismatch");
  EXPECT_STREQ(nv.nvmlErrorString(NVML_ERROR_INSUFFICIENT_SIZE), "Insufficient Size");
  EXPECT_STREQ(nv.nvmlErrorString(NVML_ERROR_UNKNOWN), "Unknown Error");
  EXPECT_STREQ(nv.nvmlErrorString(12345), "Unknown Error");
}

TEST_F(Api_, NoScenarioVariableFailsInitWithAMessage) {
  unsetenv("GPUWARDEN_SIM_SCENARIO");
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  EXPECT_NE(std::string(nv.gwSimLastError()).find("GPUWARDEN_SIM_SCENARIO is not set"), std::string::npos);
}

TEST_F(Api_, InitErrorsFromScenarios) {
  UseScenario(ShippedPath("no-driver"));
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
  EXPECT_NE(std::string(nv.gwSimLastError()).find("driver"), std::string::npos);
  UseScenario(ShippedPath("driver-mismatch"));
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  UseScenario(WriteScenario("init_error: no_permission\n"));
  EXPECT_EQ(nv.nvmlInitWithFlags(0), NVML_ERROR_NO_PERMISSION);
  unsigned n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
  // A good scenario afterwards works and clears the message.
  UseScenario(ShippedPath("pcie-mixed"));
  ASSERT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_STREQ(nv.gwSimLastError(), "");
}

TEST_F(Api_, ManualClockStartsAtStartAndNeverRunsBackwards) {
  UseScenario(FreshShipped("dgx-h100"), "manual", "100");
  ASSERT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS) << nv.gwSimLastError();
  EXPECT_DOUBLE_EQ(nv.gwSimGetTime(), 100.0);
  nv.gwSimSetTime(50);
  EXPECT_DOUBLE_EQ(nv.gwSimGetTime(), 100.0);
  nv.gwSimSetTime(150.5);
  EXPECT_DOUBLE_EQ(nv.gwSimGetTime(), 150.5);
}

TEST_F(Api_, RealClockRunsAtSpeedFromStart) {
  UseScenario(FreshShipped("dgx-h100"), nullptr, "1000", "1000000");
  ASSERT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS) << nv.gwSimLastError();
  double t1 = nv.gwSimGetTime();
  EXPECT_GE(t1, 1000.0);
  double t2 = t1;
  for (long i = 0; i < 1000000000L && t2 == t1; ++i) t2 = nv.gwSimGetTime();  // until the coarse clock ticks
  EXPECT_GT(t2, t1);
  nv.gwSimSetTime(t2 + 1e7);  // jumps forward in real mode too
  EXPECT_GE(nv.gwSimGetTime(), t2 + 1e7);
}

// The file clock: the simulated seconds are the number in the file, which a test (or another
// process) rewrites; time never runs backwards, and a missing, malformed, negative or empty file
// leaves it where it was.
TEST_F(Api_, FileClockFollowsTheFileAndNeverRunsBackwards) {
  const std::filesystem::path file = TempDir() / "file-clock";
  std::filesystem::remove(file);
  auto write = [&](const std::string& text) {
    std::ofstream(file.string() + ".tmp") << text;
    std::filesystem::rename(file.string() + ".tmp", file);
  };
  // Polls until the simulated time is `t` (10 s bounds only a failure).
  auto reaches = [&](double t) {
    for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10); std::chrono::steady_clock::now() < end;
         std::this_thread::sleep_for(std::chrono::milliseconds(1)))
      if (nv.gwSimGetTime() == t) return true;
    return nv.gwSimGetTime() == t;
  };
  // What must not move the time is judged after waiting longer than the 10 ms between reads of
  // the file, so that the simulator has read it again: waiting longer only makes it surer.
  auto staysAt = [&](double t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return nv.gwSimGetTime() == t;
  };
  const std::string env = "file:" + file.string();
  UseScenario(FreshShipped("dgx-h100"), env.c_str(), "7");
  ASSERT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS) << nv.gwSimLastError();
  EXPECT_DOUBLE_EQ(nv.gwSimGetTime(), 7.0) << "no file yet: START";
  write("42\n");
  EXPECT_TRUE(reaches(42)) << nv.gwSimGetTime();
  write("100.5");
  EXPECT_TRUE(reaches(100.5)) << nv.gwSimGetTime();
  write("50\n");
  EXPECT_TRUE(staysAt(100.5)) << "backwards to " << nv.gwSimGetTime();
  for (const char* bad : {"soon", "", "-5", "1e300"}) {
    write(bad);
    EXPECT_TRUE(staysAt(100.5)) << "'" << bad << "' moved it to " << nv.gwSimGetTime();
  }
  std::filesystem::remove(file);
  EXPECT_TRUE(staysAt(100.5)) << "a removed file moved it to " << nv.gwSimGetTime();
  write("300");  // and it still follows the file afterwards
  EXPECT_TRUE(reaches(300)) << nv.gwSimGetTime();
}

TEST_F(Api_, BadClockEnvironmentIsReported) {
  UseScenario(ShippedPath("dgx-h100"), "manual", nullptr, "fast");
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_UNKNOWN);
  EXPECT_NE(std::string(nv.gwSimLastError()).find("GPUWARDEN_SIM_SPEED"), std::string::npos);
}

TEST_F(Api_, SystemQueries) {
  Start(ShippedPath("dgx-h100"));
  char buf[96];
  ASSERT_EQ(nv.nvmlSystemGetDriverVersion(buf, sizeof buf), NVML_SUCCESS);
  EXPECT_STREQ(buf, "550.54.15");
  ASSERT_EQ(nv.nvmlSystemGetNVMLVersion(buf, sizeof buf), NVML_SUCCESS);
  EXPECT_STREQ(buf, "12.550.54.15");
  EXPECT_EQ(nv.nvmlSystemGetDriverVersion(buf, 4), NVML_ERROR_INSUFFICIENT_SIZE);
  int cuda = 0;
  ASSERT_EQ(nv.nvmlSystemGetCudaDriverVersion_v2(&cuda), NVML_SUCCESS);
  EXPECT_EQ(cuda, 12040);
  ASSERT_EQ(nv.nvmlSystemGetProcessName(41003, buf, sizeof buf), NVML_SUCCESS);
  EXPECT_STREQ(buf, "python3");
  EXPECT_EQ(nv.nvmlSystemGetProcessName(999999, buf, sizeof buf), NVML_ERROR_NOT_FOUND);
}

TEST_F(Api_, IdentityIsWellFormedAndDeterministic) {
  Start(ShippedPath("dgx-h100"));
  std::set<std::string> uuids;
  for (unsigned i = 0; i < 8; ++i) {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    ASSERT_EQ(nv.nvmlDeviceGetUUID(Gpu(i), uuid, sizeof uuid), NVML_SUCCESS);
    EXPECT_TRUE(IsGpuUuid(uuid)) << uuid;
    uuids.insert(uuid);
    nvmlDevice_t by_uuid = nullptr;
    ASSERT_EQ(nv.nvmlDeviceGetHandleByUUID(uuid, &by_uuid), NVML_SUCCESS);
    EXPECT_EQ(by_uuid, Gpu(i));
    unsigned index = 99;
    ASSERT_EQ(nv.nvmlDeviceGetIndex(Gpu(i), &index), NVML_SUCCESS);
    EXPECT_EQ(index, i);
  }
  EXPECT_EQ(uuids.size(), 8u);
  char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE], vbios[32], part[80], inforom[16];
  ASSERT_EQ(nv.nvmlDeviceGetSerial(Gpu(0), serial, sizeof serial), NVML_SUCCESS);
  EXPECT_EQ(std::strlen(serial), 13u);
  ASSERT_EQ(nv.nvmlDeviceGetVbiosVersion(Gpu(0), vbios, sizeof vbios), NVML_SUCCESS);
  EXPECT_STREQ(vbios, "96.00.74.00.0D");
  ASSERT_EQ(nv.nvmlDeviceGetBoardPartNumber(Gpu(0), part, sizeof part), NVML_SUCCESS);
  EXPECT_STREQ(part, "692-2G520-0200-000");
  ASSERT_EQ(nv.nvmlDeviceGetInforomImageVersion(Gpu(0), inforom, sizeof inforom), NVML_SUCCESS);
  EXPECT_STREQ(inforom, "G520.0200.00.05");

  // The same seed and index give the same UUID in another load of the scenario.
  char first[96], again[96];
  ASSERT_EQ(nv.nvmlDeviceGetUUID(Gpu(2), first, sizeof first), NVML_SUCCESS);
  nv.nvmlShutdown();
  Start(FreshShipped("dgx-h100"));
  ASSERT_EQ(nv.nvmlDeviceGetUUID(Gpu(2), again, sizeof again), NVML_SUCCESS);
  EXPECT_STREQ(first, again);
}

TEST_F(Api_, H100SpecsThroughTheApi) {
  Start(ShippedPath("dgx-h100"));
  nvmlDevice_t d = Gpu(0);
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
  ASSERT_EQ(nv.nvmlDeviceGetName(d, name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3");
  nvmlPciInfo_t pci{};
  ASSERT_EQ(nv.nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
  EXPECT_EQ(pci.pciDeviceId, 0x233010DEu);
  EXPECT_STREQ(pci.busId, "00000000:18:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:18:00.0");
  nvmlMemory_t mem{};
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo(d, &mem), NVML_SUCCESS);
  EXPECT_EQ(mem.total, 81559ull << 20);
  nvmlDeviceAttributes_t attr{};
  ASSERT_EQ(nv.nvmlDeviceGetAttributes_v2(d, &attr), NVML_SUCCESS);
  EXPECT_EQ(attr.multiprocessorCount, 132u);
  unsigned v = 0;
  ASSERT_EQ(nv.nvmlDeviceGetNumGpuCores(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 16896u);
  EXPECT_EQ(Field(d, NVML_FI_DEV_NVLINK_LINK_COUNT).value.uiVal, 18u);
  int major = 0, minor = 0;
  ASSERT_EQ(nv.nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
  EXPECT_EQ(major * 10 + minor, 90);
  nvmlDeviceArchitecture_t arch = 0;
  ASSERT_EQ(nv.nvmlDeviceGetArchitecture(d, &arch), NVML_SUCCESS);
  EXPECT_EQ(arch, NVML_DEVICE_ARCH_HOPPER);
  ASSERT_EQ(nv.nvmlDeviceGetMemoryBusWidth(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 5120u);
  ASSERT_EQ(nv.nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 2619u);
  ASSERT_EQ(nv.nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 1980u);
  unsigned lo = 0, hi = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementLimitConstraints(d, &lo, &hi), NVML_SUCCESS);
  EXPECT_EQ(lo, 200000u);
  EXPECT_EQ(hi, 700000u);
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementDefaultLimit(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 700000u);
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 89u);
  ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkGeneration(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 5u);
  ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkWidth(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 16u);
  EXPECT_EQ(nv.nvmlDeviceGetFanSpeed(d, &v), NVML_ERROR_NOT_SUPPORTED);  // SXM: no fan
  nvmlEnableState_t cur = NVML_FEATURE_DISABLED, pend = NVML_FEATURE_DISABLED;
  ASSERT_EQ(nv.nvmlDeviceGetEccMode(d, &cur, &pend), NVML_SUCCESS);
  EXPECT_EQ(cur, NVML_FEATURE_ENABLED);
  unsigned mig = 9, mig_pending = 9;
  ASSERT_EQ(nv.nvmlDeviceGetMigMode(d, &mig, &mig_pending), NVML_SUCCESS);
  EXPECT_EQ(mig, unsigned(NVML_DEVICE_MIG_DISABLE));
  nvmlEnableState_t persistence = NVML_FEATURE_DISABLED;
  ASSERT_EQ(nv.nvmlDeviceGetPersistenceMode(d, &persistence), NVML_SUCCESS);
  EXPECT_EQ(persistence, NVML_FEATURE_ENABLED);
}

TEST_F(Api_, EveryProfileMatchesItsDataSheet) {
  StartYaml(R"(
gpus:
  - {profile: H100-SXM5-80GB}
  - {profile: H200-SXM-141GB}
  - {profile: A100-SXM4-80GB}
  - {profile: L40S}
  - {profile: RTX-4090}
)");
  struct Want {
    const char* name;
    unsigned devid, mem_mib, sms, cc, bus, mem_clock, power_w, gen, links;
    bool fan;
  };
  const Want want[] = {
      {"NVIDIA H100 80GB HBM3", 0x2330, 81559, 132, 90, 5120, 2619, 700, 5, 18, false},
      {"NVIDIA H200", 0x2335, 143771, 132, 90, 6144, 3201, 700, 5, 18, false},
      {"NVIDIA A100-SXM4-80GB", 0x20B2, 81920, 108, 80, 5120, 1593, 400, 4, 12, false},
      {"NVIDIA L40S", 0x26B9, 46068, 142, 89, 384, 9001, 350, 4, 0, false},
      {"NVIDIA GeForce RTX 4090", 0x2684, 24564, 128, 89, 384, 10501, 450, 4, 0, true},
  };
  for (unsigned i = 0; i < 5; ++i) {
    SCOPED_TRACE(want[i].name);
    nvmlDevice_t d = Gpu(i);
    char name[96];
    ASSERT_EQ(nv.nvmlDeviceGetName(d, name, sizeof name), NVML_SUCCESS);
    EXPECT_STREQ(name, want[i].name);
    nvmlPciInfo_t pci{};
    ASSERT_EQ(nv.nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
    EXPECT_EQ(pci.pciDeviceId, (want[i].devid << 16) | 0x10DEu);
    nvmlMemory_v2_t mem{};
    mem.version = nvmlMemory_v2;
    ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(d, &mem), NVML_SUCCESS);
    EXPECT_EQ(mem.total, static_cast<unsigned long long>(want[i].mem_mib) << 20);
    EXPECT_EQ(mem.total, mem.reserved + mem.used + mem.free);
    nvmlDeviceAttributes_t attr{};
    ASSERT_EQ(nv.nvmlDeviceGetAttributes_v2(d, &attr), NVML_SUCCESS);
    EXPECT_EQ(attr.multiprocessorCount, want[i].sms);
    int major = 0, minor = 0;
    ASSERT_EQ(nv.nvmlDeviceGetCudaComputeCapability(d, &major, &minor), NVML_SUCCESS);
    EXPECT_EQ(unsigned(major * 10 + minor), want[i].cc);
    unsigned v = 0;
    ASSERT_EQ(nv.nvmlDeviceGetMemoryBusWidth(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, want[i].bus);
    ASSERT_EQ(nv.nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
    EXPECT_EQ(v, want[i].mem_clock);
    ASSERT_EQ(nv.nvmlDeviceGetPowerManagementDefaultLimit(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, want[i].power_w * 1000);
    ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkGeneration(d, &v), NVML_SUCCESS);
    EXPECT_EQ(v, want[i].gen);
    nvmlFieldValue_t links = Field(d, NVML_FI_DEV_NVLINK_LINK_COUNT);
    if (want[i].links) {
      EXPECT_EQ(links.nvmlReturn, NVML_SUCCESS);
      EXPECT_EQ(links.value.uiVal, want[i].links);
    } else {
      EXPECT_EQ(links.nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
    }
    EXPECT_EQ(nv.nvmlDeviceGetFanSpeed(d, &v), want[i].fan ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED);
  }
  // GeForce: ECC off by default, no serial number.
  nvmlEnableState_t cur = NVML_FEATURE_ENABLED, pend = NVML_FEATURE_ENABLED;
  ASSERT_EQ(nv.nvmlDeviceGetEccMode(Gpu(4), &cur, &pend), NVML_SUCCESS);
  EXPECT_EQ(cur, NVML_FEATURE_DISABLED);
  char serial[32];
  EXPECT_EQ(nv.nvmlDeviceGetSerial(Gpu(4), serial, sizeof serial), NVML_ERROR_NOT_SUPPORTED);
  nvmlBrandType_t brand = 0;
  ASSERT_EQ(nv.nvmlDeviceGetBrand(Gpu(4), &brand), NVML_SUCCESS);
  EXPECT_EQ(brand, NVML_BRAND_GEFORCE);
}

TEST_F(Api_, SettingThePowerLimitNeedsPrivilegeAndRange) {
  StartYaml("count: 1\ndefaults: {profile: H100-SXM5-80GB, workload: training}\n");
  nvmlDevice_t d = Gpu(0);
  EXPECT_EQ(nv.nvmlDeviceSetPowerManagementLimit(d, 100000), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(nv.nvmlDeviceSetPowerManagementLimit(d, 400000), NVML_SUCCESS);
  unsigned limit = 0;
  ASSERT_EQ(nv.nvmlDeviceGetEnforcedPowerLimit(d, &limit), NVML_SUCCESS);
  EXPECT_EQ(limit, 400000u);
  At(120);
  EXPECT_LE(Power(d), 400000u);
  EXPECT_GT(Power(d), 350000u);
  EXPECT_TRUE(Reasons(d) & nvmlClocksThrottleReasonSwPowerCap);
  nv.nvmlShutdown();
  StartYaml("privileged: false\ncount: 1\ndefaults: {profile: H100-SXM5-80GB}\n");
  EXPECT_EQ(nv.nvmlDeviceSetPowerManagementLimit(Gpu(0), 400000), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceSetPersistenceMode(Gpu(0), NVML_FEATURE_DISABLED), NVML_ERROR_NO_PERMISSION);
}

TEST_F(Api_, ClockModeAndEccSettersChangeWhatTheGettersAnswer) {
  StartYaml("count: 1\ndefaults: {profile: H100-SXM5-80GB, workload: training}\n");
  nvmlDevice_t d = Gpu(0);
  At(30);
  unsigned clock = 0;
  ASSERT_EQ(nv.nvmlDeviceGetClockInfo(d, NVML_CLOCK_GRAPHICS, &clock), NVML_SUCCESS);
  ASSERT_GT(clock, 1200u);
  // Outside the board's range (345..1980 MHz), or min above max: the driver's INVALID_ARGUMENT.
  EXPECT_EQ(nv.nvmlDeviceSetGpuLockedClocks(d, 1000, 2500), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nv.nvmlDeviceSetGpuLockedClocks(d, 100, 1200), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nv.nvmlDeviceSetGpuLockedClocks(d, 1200, 1000), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(nv.nvmlDeviceSetGpuLockedClocks(d, 1000, 1200), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &clock), NVML_SUCCESS);
  EXPECT_EQ(clock, 1200u);
  ASSERT_EQ(nv.nvmlDeviceResetGpuLockedClocks(d), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &clock), NVML_SUCCESS);
  EXPECT_GT(clock, 1200u);
  EXPECT_EQ(nv.nvmlDeviceSetMemoryLockedClocks(d, 1000, 1500), NVML_ERROR_INVALID_ARGUMENT);  // HBM: 2619 only
  EXPECT_EQ(nv.nvmlDeviceSetMemoryLockedClocks(d, 2619, 2619), NVML_SUCCESS);

  EXPECT_EQ(nv.nvmlDeviceSetApplicationsClocks(d, 1000, 1200), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(nv.nvmlDeviceSetApplicationsClocks(d, 2619, 1200), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_GRAPHICS, &clock), NVML_SUCCESS);
  EXPECT_EQ(clock, 1200u);
  ASSERT_EQ(nv.nvmlDeviceGetDefaultApplicationsClock(d, NVML_CLOCK_GRAPHICS, &clock), NVML_SUCCESS);
  EXPECT_EQ(clock, 1980u);
  ASSERT_EQ(nv.nvmlDeviceResetApplicationsClocks(d), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_GRAPHICS, &clock), NVML_SUCCESS);
  EXPECT_EQ(clock, 1980u);

  EXPECT_EQ(nv.nvmlDeviceSetComputeMode(d, 7), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nv.nvmlDeviceSetComputeMode(d, NVML_COMPUTEMODE_EXCLUSIVE_THREAD), NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(nv.nvmlDeviceSetComputeMode(d, NVML_COMPUTEMODE_PROHIBITED), NVML_SUCCESS);
  nvmlComputeMode_t mode = 0;
  ASSERT_EQ(nv.nvmlDeviceGetComputeMode(d, &mode), NVML_SUCCESS);
  EXPECT_EQ(mode, NVML_COMPUTEMODE_PROHIBITED);

  // ECC: pending until a reboot, the current mode unchanged (its counters still answer).
  ASSERT_EQ(nv.nvmlDeviceSetEccMode(d, NVML_FEATURE_DISABLED), NVML_SUCCESS);
  nvmlEnableState_t cur = NVML_FEATURE_DISABLED, pend = NVML_FEATURE_ENABLED;
  ASSERT_EQ(nv.nvmlDeviceGetEccMode(d, &cur, &pend), NVML_SUCCESS);
  EXPECT_EQ(cur, NVML_FEATURE_ENABLED);
  EXPECT_EQ(pend, NVML_FEATURE_DISABLED);
  unsigned long long count = 0;
  EXPECT_EQ(nv.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &count),
            NVML_SUCCESS);
  nv.nvmlShutdown();

  StartYaml("privileged: false\ncount: 1\ndefaults: {profile: H100-SXM5-80GB}\n");
  d = Gpu(0);
  EXPECT_EQ(nv.nvmlDeviceSetGpuLockedClocks(d, 1000, 1200), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceResetGpuLockedClocks(d), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceSetMemoryLockedClocks(d, 2619, 2619), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceResetMemoryLockedClocks(d), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceSetApplicationsClocks(d, 2619, 1200), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceResetApplicationsClocks(d), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceSetComputeMode(d, NVML_COMPUTEMODE_DEFAULT), NVML_ERROR_NO_PERMISSION);
  EXPECT_EQ(nv.nvmlDeviceSetEccMode(d, NVML_FEATURE_DISABLED), NVML_ERROR_NO_PERMISSION);
}

// MIG partitions change after load as on a real driver: GPU instances take memory slices until
// none is left (INSUFFICIENT_RESOURCES), a GPU instance with compute instances is in use, and the
// MIG devices appear and disappear with the compute instances.
TEST_F(Api_, MigInstancesComeAndGoWithCapacityAccounting) {
  StartYaml("count: 1\ndefaults: {profile: H100-SXM5-80GB, workload: idle}\n");
  nvmlDevice_t d = Gpu(0);
  nvmlGpuInstanceProfileInfo_t info{};
  nvmlGpuInstance_t gi = nullptr;
  // MIG is off: the profiles are described (as a real 580 driver does), nothing is created.
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceProfileInfo(d, NVML_GPU_INSTANCE_PROFILE_1_SLICE, &info), NVML_SUCCESS);
  EXPECT_EQ(info.id, 19u);
  EXPECT_EQ(nv.nvmlDeviceCreateGpuInstance(d, 19, &gi), NVML_ERROR_NOT_SUPPORTED);
  nvmlReturn_t activation = NVML_ERROR_UNKNOWN;
  ASSERT_EQ(nv.nvmlDeviceSetMigMode(d, NVML_DEVICE_MIG_ENABLE, &activation), NVML_SUCCESS);
  EXPECT_EQ(activation, NVML_SUCCESS);
  unsigned cur = 0, pend = 0;
  ASSERT_EQ(nv.nvmlDeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
  EXPECT_EQ(cur, NVML_DEVICE_MIG_ENABLE);
  EXPECT_EQ(pend, NVML_DEVICE_MIG_ENABLE);

  ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceProfileInfo(d, NVML_GPU_INSTANCE_PROFILE_1_SLICE, &info), NVML_SUCCESS);
  EXPECT_EQ(info.id, 19u);
  EXPECT_EQ(info.sliceCount, 1u);
  EXPECT_EQ(info.instanceCount, 7u);
  EXPECT_EQ(info.memorySizeMB, 9984u);
  nvmlGpuInstanceProfileInfo_v2_t v2{};
  v2.version = nvmlGpuInstanceProfileInfo_v2;
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceProfileInfoV(d, NVML_GPU_INSTANCE_PROFILE_7_SLICE, &v2), NVML_SUCCESS);
  EXPECT_STREQ(v2.name, "MIG 7g.80gb");
  EXPECT_EQ(v2.id, 0u);
  nvmlGpuInstancePlacement_t places[8] = {};
  unsigned n = 8;
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, 9, places, &n), NVML_SUCCESS);
  ASSERT_EQ(n, 2u);  // 3g.40gb: {0,4}:4
  EXPECT_EQ(places[1].start, 4u);
  EXPECT_EQ(places[1].size, 4u);

  auto capacity = [&](unsigned profile_id) {
    unsigned c = 99;
    EXPECT_EQ(nv.nvmlDeviceGetGpuInstanceRemainingCapacity(d, profile_id, &c), NVML_SUCCESS);
    return c;
  };
  EXPECT_EQ(capacity(19), 7u);
  EXPECT_EQ(capacity(9), 2u);
  EXPECT_EQ(capacity(0), 1u);
  nvmlGpuInstance_t ones[7] = {};
  for (auto& h : ones) ASSERT_EQ(nv.nvmlDeviceCreateGpuInstance(d, 19, &h), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlDeviceCreateGpuInstance(d, 19, &gi), NVML_ERROR_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(capacity(19), 0u);
  EXPECT_EQ(capacity(0), 0u);
  nvmlGpuInstanceInfo_t gi_info{};
  ASSERT_EQ(nv.nvmlGpuInstanceGetInfo(ones[0], &gi_info), NVML_SUCCESS);
  EXPECT_EQ(gi_info.id, 7u);  // NVIDIA's numbering: 1g instances from 7
  EXPECT_EQ(gi_info.placement.start, 0u);
  nvmlDevice_t mig = nullptr;
  EXPECT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &mig), NVML_ERROR_NOT_FOUND);

  // A compute instance: a MIG device appears; its GPU instance is in use until it goes.
  nvmlComputeInstance_t ci = nullptr;
  ASSERT_EQ(nv.nvmlGpuInstanceCreateComputeInstance(ones[0], NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE, &ci), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlGpuInstanceCreateComputeInstance(ones[0], NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE, &ci),
            NVML_ERROR_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(nv.nvmlGpuInstanceCreateComputeInstance(ones[0], NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE, &ci),
            NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &mig), NVML_SUCCESS);
  char name[96];
  ASSERT_EQ(nv.nvmlDeviceGetName(mig, name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3 MIG 1g.10gb");
  unsigned id = 99;
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceId(mig, &id), NVML_SUCCESS);
  EXPECT_EQ(id, 7u);
  nvmlComputeInstance_t cis[7] = {};
  n = 0;
  ASSERT_EQ(nv.nvmlGpuInstanceGetComputeInstances(ones[0], NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE, cis, &n),
            NVML_SUCCESS);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(nv.nvmlGpuInstanceDestroy(ones[0]), NVML_ERROR_IN_USE);
  ASSERT_EQ(nv.nvmlComputeInstanceDestroy(cis[0]), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlDeviceGetName(mig, name, sizeof name), NVML_ERROR_INVALID_ARGUMENT);  // gone with it
  EXPECT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &mig), NVML_ERROR_NOT_FOUND);
  ASSERT_EQ(nv.nvmlGpuInstanceDestroy(ones[0]), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlGpuInstanceGetInfo(ones[0], &gi_info), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(capacity(19), 1u);
  nvmlGpuInstance_t listed[7] = {};
  n = 0;
  ASSERT_EQ(nv.nvmlDeviceGetGpuInstances(d, 19, listed, &n), NVML_SUCCESS);
  EXPECT_EQ(n, 6u);

  // MIG mode does not change under instances; empty, two 3g take the GPU and leave no 4g.
  EXPECT_EQ(nv.nvmlDeviceSetMigMode(d, NVML_DEVICE_MIG_DISABLE, &activation), NVML_ERROR_IN_USE);
  for (unsigned i = 1; i < 7; ++i) ASSERT_EQ(nv.nvmlGpuInstanceDestroy(ones[i]), NVML_SUCCESS);
  EXPECT_EQ(capacity(19), 7u);
  ASSERT_EQ(nv.nvmlDeviceCreateGpuInstance(d, 9, &gi), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceCreateGpuInstance(d, 9, &gi), NVML_SUCCESS);
  EXPECT_EQ(capacity(5), 0u);
  EXPECT_EQ(capacity(19), 0u);  // all 8 memory slices are taken: the seventh compute slice idles
  EXPECT_EQ(nv.nvmlDeviceCreateGpuInstance(d, 5, &gi), NVML_ERROR_INSUFFICIENT_RESOURCES);
  nv.nvmlShutdown();

  StartYaml("privileged: false\ncount: 1\ndefaults: {profile: H100-SXM5-80GB}\n");
  EXPECT_EQ(nv.nvmlDeviceSetMigMode(Gpu(0), NVML_DEVICE_MIG_ENABLE, &activation), NVML_ERROR_NO_PERMISSION);
}

// The H100 profile answers what a real H100 SXM5 80GB on a real driver answers (sources in
// src/sim/profiles.cpp): the numbers here are copied from `nvidia-smi -q`, not from the profile.
TEST_F(Api_, H100AnswersWhatARealDriverAnswers) {
  StartYaml("count: 1\ndefaults: {profile: H100-SXM5-80GB, workload: idle}\n");
  nvmlDevice_t d = Gpu(0);
  nvmlPciInfo_t pci{};
  ASSERT_EQ(nv.nvmlDeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
  EXPECT_EQ(pci.pciDeviceId, 0x233010DEu);
  EXPECT_EQ(pci.pciSubSystemId, 0x16C110DEu);
  char text[96];
  ASSERT_EQ(nv.nvmlDeviceGetVbiosVersion(d, text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "96.00.74.00.0D");
  ASSERT_EQ(nv.nvmlDeviceGetBoardPartNumber(d, text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "692-2G520-0200-000");
  ASSERT_EQ(nv.nvmlDeviceGetInforomVersion(d, NVML_INFOROM_OEM, text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "2.1");
  ASSERT_EQ(nv.nvmlDeviceGetInforomVersion(d, NVML_INFOROM_ECC, text, sizeof text), NVML_SUCCESS);
  EXPECT_STREQ(text, "7.16");
  EXPECT_EQ(nv.nvmlDeviceGetInforomVersion(d, NVML_INFOROM_POWER, text, sizeof text), NVML_ERROR_NOT_SUPPORTED);

  // Memory in bytes as NVML reports it: "Total : 81559 MiB", "Reserved : 328 MiB".
  nvmlMemory_v2_t mem{};
  mem.version = nvmlMemory_v2;
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(d, &mem), NVML_SUCCESS);
  EXPECT_EQ(mem.total, 85520809984ull);
  EXPECT_EQ(mem.reserved, 328ull * 1024 * 1024);
  nvmlBAR1Memory_t bar1{};
  ASSERT_EQ(nv.nvmlDeviceGetBAR1MemoryInfo(d, &bar1), NVML_SUCCESS);
  EXPECT_EQ(bar1.bar1Total, 131072ull * 1024 * 1024);

  // Power in milliwatts: limit 700.00 W, default 700.00 W, min 200.00 W, max 700.00 W.
  unsigned v = 0, lo = 0, hi = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementLimit(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 700000u);
  ASSERT_EQ(nv.nvmlDeviceGetEnforcedPowerLimit(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 700000u);
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementDefaultLimit(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 700000u);
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementLimitConstraints(d, &lo, &hi), NVML_SUCCESS);
  EXPECT_EQ(lo, 200000u);
  EXPECT_EQ(hi, 700000u);

  // Thresholds: shutdown 92 C, slowdown 89 C, max operating 87 C, memory max operating 95 C.
  const std::pair<nvmlTemperatureThresholds_t, unsigned> thresholds[] = {{NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, 92},
                                                                         {NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, 89},
                                                                         {NVML_TEMPERATURE_THRESHOLD_GPU_MAX, 87},
                                                                         {NVML_TEMPERATURE_THRESHOLD_MEM_MAX, 95}};
  for (const auto& [which, want] : thresholds) {
    ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(d, which, &v), NVML_SUCCESS) << which;
    EXPECT_EQ(v, want) << which;
  }

  // Clocks: idle 345 MHz graphics/SM, 2619 MHz memory, 765 MHz video; application clocks
  // 1980/2619 MHz; max 1980 graphics and SM, 2619 memory, 1545 video.
  const std::pair<nvmlClockType_t, unsigned> idle[] = {
      {NVML_CLOCK_GRAPHICS, 345}, {NVML_CLOCK_SM, 345}, {NVML_CLOCK_MEM, 2619}, {NVML_CLOCK_VIDEO, 765}};
  for (const auto& [type, want] : idle) {
    ASSERT_EQ(nv.nvmlDeviceGetClockInfo(d, type, &v), NVML_SUCCESS) << type;
    EXPECT_EQ(v, want) << "idle clock " << type;
  }
  const std::pair<nvmlClockType_t, unsigned> max[] = {
      {NVML_CLOCK_GRAPHICS, 1980}, {NVML_CLOCK_SM, 1980}, {NVML_CLOCK_MEM, 2619}, {NVML_CLOCK_VIDEO, 1545}};
  for (const auto& [type, want] : max) {
    ASSERT_EQ(nv.nvmlDeviceGetMaxClockInfo(d, type, &v), NVML_SUCCESS) << type;
    EXPECT_EQ(v, want) << "max clock " << type;
  }
  ASSERT_EQ(nv.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_GRAPHICS, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 1980u);
  ASSERT_EQ(nv.nvmlDeviceGetApplicationsClock(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 2619u);
  ASSERT_EQ(nv.nvmlDeviceGetDefaultApplicationsClock(d, NVML_CLOCK_GRAPHICS, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 1980u);

  // "Fan Speed : N/A" on SXM boards: every fan call is NOT_SUPPORTED, not a zero.
  EXPECT_EQ(nv.nvmlDeviceGetFanSpeed(d, &v), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nv.nvmlDeviceGetFanSpeed_v2(d, 0, &v), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nv.nvmlDeviceGetNumFans(d, &v), NVML_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkGeneration(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 5u);
  ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkWidth(d, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 16u);
}

// /dev/nvidia<minor> is the driver's numbering (probe order), NVML's index is PCI order: on the
// shipped DGX H100 they differ for every GPU, and a scenario may say so per GPU.
TEST_F(Api_, MinorNumbersAreTheDriversNotTheIndex) {
  Start(ShippedPath("dgx-h100"));
  const unsigned want[8] = {2, 3, 0, 1, 6, 7, 4, 5};
  for (unsigned i = 0; i < 8; ++i) {
    unsigned minor = 99, index = 99;
    ASSERT_EQ(nv.nvmlDeviceGetMinorNumber(Gpu(i), &minor), NVML_SUCCESS);
    ASSERT_EQ(nv.nvmlDeviceGetIndex(Gpu(i), &index), NVML_SUCCESS);
    EXPECT_EQ(index, i);
    EXPECT_EQ(minor, want[i]) << "GPU " << i;
    EXPECT_NE(minor, index) << "GPU " << i;
  }
  nv.nvmlShutdown();
  // Without `minor:` the driver numbered them in PCI order, as on many machines.
  StartYaml("count: 3\ndefaults: {profile: L40S}\ngpus:\n  - {}\n  - {minor: 7}\n");
  const unsigned dflt[3] = {0, 7, 2};
  for (unsigned i = 0; i < 3; ++i) {
    unsigned minor = 99;
    ASSERT_EQ(nv.nvmlDeviceGetMinorNumber(Gpu(i), &minor), NVML_SUCCESS);
    EXPECT_EQ(minor, dflt[i]) << "GPU " << i;
  }
  nv.nvmlShutdown();
  // A MIG device answers with its parent GPU's node.
  StartYaml(R"(
gpus:
  - {profile: A100-SXM4-80GB, minor: 3, mig: {enabled: true, instances: [{profile: 3g.40gb}]}}
)");
  nvmlDevice_t mig = nullptr;
  ASSERT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(Gpu(0), 0, &mig), NVML_SUCCESS);
  unsigned minor = 99;
  ASSERT_EQ(nv.nvmlDeviceGetMinorNumber(mig, &minor), NVML_SUCCESS);
  EXPECT_EQ(minor, 3u);
}

// NVML counts power in milliwatts; a limit need not be a whole watt, and the simulator keeps it.
TEST_F(Api_, PowerLimitsKeepTheirMilliwatts) {
  Start(ShippedPath("pcie-mixed"));
  unsigned v = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementLimit(Gpu(3), &v), NVML_SUCCESS);
  EXPECT_EQ(v, 312500u) << "pcie-mixed caps GPU 3 at 312.5 W";
  ASSERT_EQ(nv.nvmlDeviceGetEnforcedPowerLimit(Gpu(3), &v), NVML_SUCCESS);
  EXPECT_EQ(v, 312500u);
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementDefaultLimit(Gpu(3), &v), NVML_SUCCESS);
  EXPECT_EQ(v, 450000u);
  ASSERT_EQ(nv.nvmlDeviceSetPowerManagementLimit(Gpu(2), 287654), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetPowerManagementLimit(Gpu(2), &v), NVML_SUCCESS);
  EXPECT_EQ(v, 287654u) << "a limit set in mW is not rounded to watts";
  nv.nvmlShutdown();
  for (const char* spelled : {"312.5", "312.5W", "312500mW", "\"312500 mW\""}) {
    SCOPED_TRACE(spelled);
    StartYaml(std::string("gpus:\n  - {profile: RTX-4090, power_limit: ") + spelled + "}\n");
    ASSERT_EQ(nv.nvmlDeviceGetPowerManagementLimit(Gpu(0), &v), NVML_SUCCESS);
    EXPECT_EQ(v, 312500u);
    nv.nvmlShutdown();
  }
  // Under a fractional cap the drawn power stays below it.
  StartYaml("gpus:\n  - {profile: RTX-4090, workload: training, power_limit: 200.25}\n");
  At(300);
  EXPECT_LE(Power(Gpu(0)), 200250u);
  EXPECT_GT(Power(Gpu(0)), 190000u);
}

// Reads at one simulated instant all agree, however many there are: a getter returns the state
// of the step it falls in and does not advance anything itself. (What a read costs is measured
// by bench/nvml/field_read_bench, not asserted here.)
TEST_F(Api_, RepeatedReadsAtOneInstantAgree) {
  Start(FreshShipped("dgx-h100"));
  nvmlDevice_t d = Gpu(0);
  At(500);
  unsigned first = 0, mw = 0, temp0 = 0, temp = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPowerUsage(d, &first), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temp0), NVML_SUCCESS);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(nv.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    ASSERT_EQ(mw, first) << "read " << i;
  }
  ASSERT_EQ(nv.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
  EXPECT_EQ(temp, temp0);
  EXPECT_GT(first, 300000u);  // a training H100 at t=500 s
}

}  // namespace
}  // namespace simtest
