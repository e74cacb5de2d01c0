// Every fault type, at its time and not before.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "sim_harness.h"

namespace simtest {
namespace {

using Faults = SimTest;

TEST_F(Faults, XidIsDeliveredOnceAtItsTimeToSetsThatExistedThen) {
  Start(FreshShipped("fault-gpu-lost"));
  nvmlDevice_t gpu3 = Gpu(3);
  nvmlEventSet_t set = nullptr, other = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlEventSetCreate(&other), NVML_SUCCESS);
  unsigned long long supported = 0;
  ASSERT_EQ(nv.nvmlDeviceGetSupportedEventTypes(Gpu(3), &supported), NVML_SUCCESS);
  ASSERT_TRUE(supported & nvmlEventTypeXidCriticalError);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Gpu(3), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Gpu(0), nvmlEventTypeXidCriticalError, other), NVML_SUCCESS);

  nvmlEventData_t ev{};
  At(19.5);
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 1000), NVML_ERROR_TIMEOUT);  // manual clock: at once
  At(21);
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_SUCCESS);
  EXPECT_EQ(ev.eventType, nvmlEventTypeXidCriticalError);
  EXPECT_EQ(ev.eventData, 79u);
  EXPECT_EQ(ev.device, gpu3);
  nvmlPciInfo_t pci{};
  EXPECT_EQ(nv.nvmlDeviceGetPciInfo_v3(ev.device, &pci), NVML_ERROR_GPU_IS_LOST);  // it fell off at 20 s
  EXPECT_EQ(nv.nvmlEventSetWait(set, &ev, 0), NVML_ERROR_TIMEOUT);                 // once only
  EXPECT_EQ(nv.nvmlEventSetWait_v2(other, &ev, 0), NVML_ERROR_TIMEOUT);            // GPU 0 had none

  nvmlEventSet_t late = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&late), NVML_SUCCESS);
  // A set created after the Xid never sees it.
  EXPECT_EQ(nv.nvmlDeviceRegisterEvents(Gpu(0), nvmlEventTypeXidCriticalError, late), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlEventSetWait_v2(late, &ev, 0), NVML_ERROR_TIMEOUT);
  for (auto s : {set, other, late}) EXPECT_EQ(nv.nvmlEventSetFree(s), NVML_SUCCESS);
}

TEST_F(Faults, EventsBeforeRegistrationAreNotDelivered) {
  StartYaml(R"(
count: 1
defaults: {profile: A100-SXM4-80GB}
faults:
  - {type: xid, gpu: 0, at: 5, code: 13}
  - {type: xid, gpu: 0, at: 50, code: 31}
)");
  At(10);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Gpu(0), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  nvmlEventData_t ev{};
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT);
  At(60);
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_SUCCESS);
  EXPECT_EQ(ev.eventData, 31u);
  EXPECT_EQ(ev.gpuInstanceId, 0xFFFFFFFFu);
  nv.nvmlEventSetFree(set);
}

TEST_F(Faults, RealClockWaitReturnsTheEventWhenItComesDue) {
  // 1000 simulated seconds per wall second: the Xid at t=20 comes due after ~20 ms.
  UseScenario(WriteScenario("count: 1\ndefaults: {profile: L40S}\nfaults: [{type: xid, gpu: 0, at: 20, code: 43}]\n"),
              nullptr, nullptr, "1000");
  ASSERT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS) << nv.gwSimLastError();
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Gpu(0), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  nvmlEventData_t ev{};
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 5000), NVML_SUCCESS);
  EXPECT_EQ(ev.eventData, 43u);
  EXPECT_GE(nv.gwSimGetTime(), 20.0);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 30), NVML_ERROR_TIMEOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(25));
  nv.nvmlEventSetFree(set);
}

TEST_F(Faults, LostGpuAnswersGpuIsLostWhileOthersAnswer) {
  Start(FreshShipped("fault-gpu-lost"));
  nvmlDevice_t lost = Gpu(3);
  At(19);
  EXPECT_GT(Power(lost), 0u);
  At(20);
  unsigned mw = 0;
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(lost, &mw), NVML_ERROR_GPU_IS_LOST);
  EXPECT_NE(std::string(nv.gwSimLastError()).find("fell off the bus"), std::string::npos);
  char name[96];
  EXPECT_EQ(nv.nvmlDeviceGetName(lost, name, sizeof name), NVML_ERROR_GPU_IS_LOST);
  nvmlDevice_t again = nullptr;
  EXPECT_EQ(nv.nvmlDeviceGetHandleByIndex_v2(3, &again), NVML_ERROR_GPU_IS_LOST);
  unsigned count = 0;
  ASSERT_EQ(nv.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 8u);
  for (unsigned i : {0u, 2u, 4u, 7u}) EXPECT_GT(Power(Gpu(i)), 0u);
  At(1000);
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(lost, &mw), NVML_ERROR_GPU_IS_LOST);  // permanent
}

TEST_F(Faults, LostGpuTakesItsMigDevicesWithIt) {
  Start(WriteScenario("base: " + ShippedPath("mig-a100") + "\nfaults: [{type: fall_off_bus, gpu: 0, at: 5}]\n"));
  nvmlDevice_t mig = nullptr;
  ASSERT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(Gpu(0), 0, &mig), NVML_SUCCESS);
  At(6);
  char name[96];
  EXPECT_EQ(nv.nvmlDeviceGetName(mig, name, sizeof name), NVML_ERROR_GPU_IS_LOST);
  EXPECT_EQ(nv.nvmlDeviceGetName(Gpu(1), name, sizeof name), NVML_SUCCESS);
}

TEST_F(Faults, EccErrorsAccumulateAndDoubleBitFiresAnEvent) {
  StartYaml(R"(
count: 2
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: ecc_sbe, gpu: 1, at: 10, count: 5}
  - {type: ecc_sbe, gpu: 1, at: 30, count: 2}
  - {type: ecc_dbe, gpu: 1, at: 20, count: 2}
)");
  nvmlDevice_t d = Gpu(1);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(d, nvmlEventTypeDoubleBitEccError, set), NVML_SUCCESS);
  auto counts = [&](nvmlEccCounterType_t type) {
    unsigned long long sbe = 99, dbe = 99;
    EXPECT_EQ(nv.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, type, &sbe), NVML_SUCCESS);
    EXPECT_EQ(nv.nvmlDeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, type, &dbe), NVML_SUCCESS);
    return std::make_pair(sbe, dbe);
  };
  At(5);
  EXPECT_EQ(counts(NVML_VOLATILE_ECC), std::make_pair(0ull, 0ull));
  At(15);
  EXPECT_EQ(counts(NVML_VOLATILE_ECC), std::make_pair(5ull, 0ull));
  nvmlEventData_t ev{};
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT);
  At(35);
  EXPECT_EQ(counts(NVML_VOLATILE_ECC), std::make_pair(7ull, 2ull));
  EXPECT_EQ(counts(NVML_AGGREGATE_ECC), std::make_pair(7ull, 2ull));
  EXPECT_EQ(Field(d, NVML_FI_DEV_ECC_DBE_VOL_TOTAL).value.ullVal, 2u);
  EXPECT_EQ(Field(d, NVML_FI_DEV_ECC_SBE_AGG_TOTAL).value.ullVal, 7u);
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_SUCCESS);
  EXPECT_EQ(ev.eventType, nvmlEventTypeDoubleBitEccError);
  unsigned long long other = 9;
  ASSERT_EQ(nv.nvmlDeviceGetTotalEccErrors(Gpu(0), NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &other),
            NVML_SUCCESS);
  EXPECT_EQ(other, 0u);
  nv.nvmlEventSetFree(set);
}

TEST_F(Faults, RetiredPagesAndRemappedRows) {
  StartYaml(R"(
count: 1
defaults: {profile: A100-SXM4-80GB}
faults:
  - {type: retired_pages, gpu: 0, at: 10, sbe: 2, dbe: 1, pending: true}
  - {type: row_remap, gpu: 0, at: 10, correctable: 3, uncorrectable: 1, pending: true}
)");
  nvmlDevice_t d = Gpu(0);
  unsigned corr = 9, unc = 9, pending = 9, failure = 9;
  At(5);
  ASSERT_EQ(nv.nvmlDeviceGetRemappedRows(d, &corr, &unc, &pending, &failure), NVML_SUCCESS);
  EXPECT_EQ(corr + unc + pending + failure, 0u);
  unsigned n = 0;
  ASSERT_EQ(nv.nvmlDeviceGetRetiredPages(d, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &n, nullptr),
            NVML_SUCCESS);
  EXPECT_EQ(n, 0u);
  At(11);
  ASSERT_EQ(nv.nvmlDeviceGetRemappedRows(d, &corr, &unc, &pending, &failure), NVML_SUCCESS);
  EXPECT_EQ(corr, 3u);
  EXPECT_EQ(unc, 1u);
  EXPECT_EQ(pending, 1u);
  EXPECT_EQ(failure, 0u);
  n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetRetiredPages(d, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &n, nullptr),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(n, 2u);
  unsigned long long addr[2] = {1, 1};
  ASSERT_EQ(nv.nvmlDeviceGetRetiredPages(d, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, &n, addr),
            NVML_SUCCESS);
  EXPECT_EQ(addr[0] % 4096, 0u);
  EXPECT_NE(addr[0], addr[1]);
  nvmlEnableState_t is_pending = NVML_FEATURE_DISABLED;
  ASSERT_EQ(nv.nvmlDeviceGetRetiredPagesPendingStatus(d, &is_pending), NVML_SUCCESS);
  EXPECT_EQ(is_pending, NVML_FEATURE_ENABLED);
  EXPECT_EQ(Field(d, NVML_FI_DEV_RETIRED_DBE).value.ullVal, 1u);
  EXPECT_EQ(Field(d, NVML_FI_DEV_REMAPPED_COR).value.uiVal, 3u);
  EXPECT_EQ(Field(d, NVML_FI_DEV_REMAPPED_PENDING).value.uiVal, 1u);
  // The A100's bank count was never recorded: the histogram is not invented.
  nvmlRowRemapperHistogramValues_t h{};
  EXPECT_EQ(nv.nvmlDeviceGetRowRemapperHistogram(d, &h), NVML_ERROR_NOT_SUPPORTED);
}

// The H200's 3072 banks (recorded from a real one) all have their spare rows until rows are
// remapped: each remapped row moves one bank from "max" to "high".
TEST_F(Faults, RemappedRowsTakeBanksFromTheHistogram) {
  StartYaml(R"(
count: 1
defaults: {profile: H200-SXM-141GB}
faults:
  - {type: row_remap, gpu: 0, at: 10, correctable: 3, uncorrectable: 1}
)");
  nvmlDevice_t d = Gpu(0);
  nvmlRowRemapperHistogramValues_t h{9, 9, 9, 9, 9};
  At(5);
  ASSERT_EQ(nv.nvmlDeviceGetRowRemapperHistogram(d, &h), NVML_SUCCESS);
  EXPECT_EQ(h.max, 3072u);
  EXPECT_EQ(h.high + h.partial + h.low + h.none, 0u);
  At(11);
  ASSERT_EQ(nv.nvmlDeviceGetRowRemapperHistogram(d, &h), NVML_SUCCESS);
  EXPECT_EQ(h.max, 3068u);
  EXPECT_EQ(h.high, 4u);
  EXPECT_EQ(h.partial + h.low + h.none, 0u);
  EXPECT_EQ(nv.nvmlDeviceGetRowRemapperHistogram(d, nullptr), NVML_ERROR_INVALID_ARGUMENT);
  // The instantaneous power is a whole-milliwatt sample near the averaged reading.
  unsigned avg_mw = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPowerUsage(d, &avg_mw), NVML_SUCCESS);
  const nvmlFieldValue_t instant = Field(d, NVML_FI_DEV_POWER_INSTANT);
  EXPECT_EQ(instant.nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(instant.valueType, NVML_VALUE_TYPE_UNSIGNED_INT);
  EXPECT_NEAR(instant.value.uiVal, avg_mw, 0.1 * avg_mw);
}

TEST_F(Faults, ThermalSlowdownHeatsTheGpuAndCutsClocks) {
  StartYaml(R"(
count: 1
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: thermal_slowdown, gpu: 0, at: 300, duration: 600}
)");
  nvmlDevice_t d = Gpu(0);
  At(299);
  const unsigned clock_before = SmClock(d);
  EXPECT_FALSE(Reasons(d) & (nvmlClocksThrottleReasonHwThermalSlowdown | nvmlClocksThrottleReasonSwThermalSlowdown));
  EXPECT_LT(Temp(d), 85u);
  At(600);
  unsigned slowdown = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &slowdown), NVML_SUCCESS);
  EXPECT_GE(Temp(d), slowdown);
  unsigned long long r = Reasons(d);
  EXPECT_TRUE(r & nvmlClocksThrottleReasonHwThermalSlowdown);
  EXPECT_TRUE(r & nvmlClocksThrottleReasonSwThermalSlowdown);
  EXPECT_LT(SmClock(d), clock_before * 3 / 4);
  // Held in slowdown, below shutdown: the cooler is failing, not gone.
  unsigned shutdown = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &shutdown), NVML_SUCCESS);
  for (double t = 300; t <= 900; t += 1) {
    At(t);
    ASSERT_LT(Temp(d), shutdown) << "t=" << t;
  }
  At(1500);  // window over: it cools and recovers
  EXPECT_LT(Temp(d), slowdown - 5);
  EXPECT_FALSE(Reasons(d) & nvmlClocksThrottleReasonHwThermalSlowdown);
}

TEST_F(Faults, PowerBrakeHoldsPowerAndClocksDown) {
  StartYaml(R"(
count: 1
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: power_brake, gpu: 0, at: 30, duration: 60}
  - {type: power_slowdown, gpu: 0, at: 200, duration: 10, clock_factor: 0.5}
)");
  nvmlDevice_t d = Gpu(0);
  At(40);
  EXPECT_TRUE(Reasons(d) & nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
  EXPECT_TRUE(Reasons(d) & nvmlClocksThrottleReasonHwSlowdown);
  EXPECT_LT(SmClock(d), 1980u / 2);
  EXPECT_LT(Power(d), 350000u);
  EXPECT_GT(Util(d).gpu, 85u);  // the job still runs: full utilisation at low power
  At(100);
  EXPECT_FALSE(Reasons(d) & nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
  EXPECT_GT(Power(d), 600000u);
  At(205);
  EXPECT_TRUE(Reasons(d) & nvmlClocksThrottleReasonHwSlowdown);
  EXPECT_FALSE(Reasons(d) & nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
}

TEST_F(Faults, LockedClocksKeepAnIdleGpuInP0AtHigherPower) {
  StartYaml(R"(
count: 2
defaults: {profile: H100-SXM5-80GB, workload: idle}
faults:
  - {type: clocks_locked, gpu: 0, at: 30, duration: 60}
  - {type: clocks_locked, gpu: 1, at: 30, watts: 150}
)");
  nvmlDevice_t d = Gpu(0);
  auto pstate = [&](nvmlDevice_t dev) {
    nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
    EXPECT_EQ(nv.nvmlDeviceGetPerformanceState(dev, &p), NVML_SUCCESS);
    return p;
  };
  At(20);
  EXPECT_EQ(pstate(d), NVML_PSTATE_8);
  EXPECT_TRUE(Reasons(d) & nvmlClocksThrottleReasonGpuIdle);
  EXPECT_LT(Power(d), 80000u);
  At(40);
  EXPECT_EQ(Util(d).gpu, 0u);
  EXPECT_EQ(pstate(d), NVML_PSTATE_0);
  EXPECT_FALSE(Reasons(d) & nvmlClocksThrottleReasonGpuIdle);
  EXPECT_GE(SmClock(d), 1900u);
  EXPECT_GT(Power(d), 110000u);  // the profile default: idle + 8 % of the range, ~122 W
  EXPECT_LT(Power(d), 135000u);
  EXPECT_GT(Power(Gpu(1)), 145000u);  // `watts:` sets the floor
  At(100);                            // window over: back to idle clocks
  EXPECT_EQ(pstate(d), NVML_PSTATE_8);
  EXPECT_LT(Power(d), 80000u);
}

// Under load the board stays in P8 for the fault's window: idle clocks and low power while the
// job keeps it busy, and no slowdown reason for it.
TEST_F(Faults, StuckPstateHoldsP8UnderLoad) {
  StartYaml(R"(
count: 1
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: pstate_stuck, gpu: 0, at: 30, duration: 60}
)");
  nvmlDevice_t d = Gpu(0);
  auto pstate = [&] {
    nvmlPstates_t p = NVML_PSTATE_UNKNOWN;
    EXPECT_EQ(nv.nvmlDeviceGetPerformanceState(d, &p), NVML_SUCCESS);
    return p;
  };
  At(20);
  EXPECT_EQ(pstate(), NVML_PSTATE_0);
  EXPECT_GE(SmClock(d), 1700u);
  At(40);
  EXPECT_EQ(pstate(), NVML_PSTATE_8);
  EXPECT_GE(Util(d).gpu, 90u);
  EXPECT_EQ(SmClock(d), 345u);  // the H100's idle SM clock
  EXPECT_LT(Power(d), 200000u);
  EXPECT_FALSE(Reasons(d) & (nvmlClocksThrottleReasonHwSlowdown | nvmlClocksThrottleReasonSwThermalSlowdown |
                             nvmlClocksThrottleReasonHwThermalSlowdown));
  At(100);  // window over
  EXPECT_EQ(pstate(), NVML_PSTATE_0);
  EXPECT_GT(Power(d), 600000u);
}

TEST_F(Faults, PcieDowntrainAndReplays) {
  StartYaml(R"(
count: 1
defaults: {profile: L40S, workload: training}
faults:
  - {type: pcie_downtrain, gpu: 0, at: 10, gen: 3, width: 8}
  - {type: pcie_replay, gpu: 0, at: 10, duration: 30, rate: 10}
)");
  nvmlDevice_t d = Gpu(0);
  unsigned gen = 0, width = 0, replays = 99, rx_before = 0, rx_after = 0;
  At(5);
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkGeneration(d, &gen), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkWidth(d, &width), NVML_SUCCESS);
  EXPECT_EQ(gen, 4u);
  EXPECT_EQ(width, 16u);
  ASSERT_EQ(nv.nvmlDeviceGetPcieReplayCounter(d, &replays), NVML_SUCCESS);
  EXPECT_EQ(replays, 0u);
  ASSERT_EQ(nv.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &rx_before), NVML_SUCCESS);
  At(20);
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkGeneration(d, &gen), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkWidth(d, &width), NVML_SUCCESS);
  EXPECT_EQ(gen, 3u);
  EXPECT_EQ(width, 8u);
  ASSERT_EQ(nv.nvmlDeviceGetPcieReplayCounter(d, &replays), NVML_SUCCESS);
  EXPECT_EQ(replays, 100u);
  ASSERT_EQ(nv.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &rx_after), NVML_SUCCESS);
  EXPECT_LT(rx_after, rx_before / 2);  // a quarter of the bandwidth
  At(500);
  ASSERT_EQ(nv.nvmlDeviceGetPcieReplayCounter(d, &replays), NVML_SUCCESS);
  EXPECT_EQ(replays, 300u);  // grew for 30 s, then holds
  EXPECT_EQ(Field(d, NVML_FI_DEV_PCIE_REPLAY_COUNTER).value.ullVal, 300u);
}

TEST_F(Faults, NvlinkDownAndErrorCounters) {
  StartYaml(R"(
count: 1
defaults: {profile: H100-SXM5-80GB, workload: training}
nvlink: {nvswitch: true}
faults:
  - {type: nvlink_down, gpu: 0, at: 10, link: 3}
  - {type: nvlink_errors, gpu: 0, at: 10, link: 2, crc_flit: 5, replay: 1}
  - {type: nvlink_errors, gpu: 0, at: 10, duration: 5, recovery: 2}
)");
  nvmlDevice_t d = Gpu(0);
  nvmlEnableState_t active = NVML_FEATURE_DISABLED;
  At(5);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkState(d, 3, &active), NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_ENABLED);
  At(20);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkState(d, 3, &active), NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_DISABLED);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkState(d, 2, &active), NVML_SUCCESS);
  EXPECT_EQ(active, NVML_FEATURE_ENABLED);
  unsigned long long v = 0;
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkErrorCounter(d, 2, NVML_NVLINK_ERROR_DL_CRC_FLIT, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 50u);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkErrorCounter(d, 2, NVML_NVLINK_ERROR_DL_REPLAY, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 10u);
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkErrorCounter(d, 1, NVML_NVLINK_ERROR_DL_CRC_FLIT, &v), NVML_SUCCESS);
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(Field(d, NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL).value.ullVal, 50u);
  EXPECT_EQ(Field(d, NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL).value.ullVal, 18u * 10);  // 2/s x 5 s x 18 links
  EXPECT_EQ(Field(d, NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, 2).value.ullVal, 50u);    // scoped to link 2
  auto unknown = Field(d, 7777);
  EXPECT_EQ(unknown.nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
}

TEST_F(Faults, FanFailureStopsTheFanAndTheCardHeats) {
  StartYaml(R"(
count: 2
defaults: {profile: RTX-4090, workload: training}
faults: [{type: fan_failure, gpu: 1, at: 0}]
)");
  At(900);
  unsigned good = 0, bad = 99;
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed(Gpu(0), &good), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed(Gpu(1), &bad), NVML_SUCCESS);
  EXPECT_GT(good, 40u);
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(Temp(Gpu(1)), Temp(Gpu(0)) + 10);
}

// A dead fan on a loaded card does not level off: it climbs into hardware slowdown, and the slowed
// clocks then hold it there, below shutdown, for as long as the load lasts.
TEST_F(Faults, DeadFanUnderLoadClimbsIntoSlowdownButNotToShutdown) {
  StartYaml(R"(
count: 2
defaults: {profile: RTX-4090, workload: training}
faults: [{type: fan_failure, gpu: 1, at: 600}]
)");
  nvmlDevice_t bad = Gpu(1);
  At(599);
  EXPECT_EQ(Temp(bad), 68u);  // the fan curve's equilibrium under load (72 %)
  EXPECT_FALSE(Reasons(bad) & nvmlClocksThrottleReasonHwThermalSlowdown);
  unsigned slowdown = 0, shutdown = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(bad, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &slowdown), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(bad, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &shutdown), NVML_SUCCESS);
  double first_slowdown = -1;
  unsigned hottest = 0;
  for (double t = 600; t <= 1800; t += 1) {
    At(t);
    const unsigned temp = Temp(bad);
    hottest = std::max(hottest, temp);
    if (first_slowdown < 0 && (Reasons(bad) & nvmlClocksThrottleReasonHwThermalSlowdown)) first_slowdown = t;
  }
  EXPECT_EQ(first_slowdown, 617) << "reached " << slowdown << " C";
  EXPECT_EQ(hottest, 91u);
  EXPECT_LT(hottest, shutdown);
  EXPECT_EQ(Temp(Gpu(0)), 68u);  // its neighbour, fan working, is where it was
}

// Cooling lost under load: the core passes slowdown, the slowed clocks still heat it faster than it
// sheds heat, and at its shutdown temperature the board shuts down the way a real one does: it falls
// off the bus (every call GPU_IS_LOST) and the driver reports Xid 79. No reading at or above
// shutdown is ever answered.
TEST_F(Faults, ThermalRunawayShutsTheGpuDownAndItFallsOffTheBus) {
  Start(FreshShipped("fault-thermal-runaway"));
  nvmlDevice_t hot = Gpu(0);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(hot, nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceRegisterEvents(Gpu(1), nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
  unsigned shutdown = 0, slowdown = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(hot, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &shutdown), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetTemperatureThreshold(hot, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &slowdown), NVML_SUCCESS);
  EXPECT_EQ(shutdown, 92u);
  nvmlEventData_t ev{};
  double lost_at = -1, slowdown_at = -1;
  unsigned last_temp = 0;
  unsigned long long last_reasons = 0;
  for (double t = 0; t <= 120 && lost_at < 0; t += 1) {
    At(t);
    unsigned temp = 0;
    const nvmlReturn_t rc = nv.nvmlDeviceGetTemperature(hot, NVML_TEMPERATURE_GPU, &temp);
    if (rc == NVML_ERROR_GPU_IS_LOST) {
      lost_at = t;
      break;
    }
    ASSERT_EQ(rc, NVML_SUCCESS) << "t=" << t;
    ASSERT_LT(temp, shutdown) << "t=" << t;
    last_temp = temp;
    last_reasons = Reasons(hot);
    if (slowdown_at < 0 && (last_reasons & nvmlClocksThrottleReasonHwThermalSlowdown)) slowdown_at = t;
    EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT) << "an event before the shutdown, t=" << t;
  }
  EXPECT_EQ(slowdown_at, 45);
  EXPECT_EQ(lost_at, 51);
  EXPECT_EQ(last_temp, 91u);
  // The thermal events before it: hardware and software thermal slowdown, clocks cut.
  EXPECT_TRUE(last_reasons & nvmlClocksThrottleReasonHwThermalSlowdown);
  EXPECT_TRUE(last_reasons & nvmlClocksThrottleReasonSwThermalSlowdown);
  EXPECT_NE(
      std::string(nv.gwSimLastError()).find("reached its shutdown temperature (92 C) and fell off the bus at t=51s"),
      std::string::npos)
      << nv.gwSimLastError();
  // Off the bus: the handle, a new handle, every call; the device count stays; the others answer.
  unsigned mw = 0, count = 0;
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(hot, &mw), NVML_ERROR_GPU_IS_LOST);
  nvmlDevice_t again = nullptr;
  EXPECT_EQ(nv.nvmlDeviceGetHandleByIndex_v2(0, &again), NVML_ERROR_GPU_IS_LOST);
  ASSERT_EQ(nv.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 8u);
  EXPECT_GT(Power(Gpu(1)), 600000u);
  // Xid 79, once, for GPU 0 only.
  ASSERT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_SUCCESS);
  EXPECT_EQ(ev.eventType, nvmlEventTypeXidCriticalError);
  EXPECT_EQ(ev.eventData, 79u);
  EXPECT_EQ(ev.device, hot);
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT);
  At(3600);
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(hot, &mw), NVML_ERROR_GPU_IS_LOST);  // it stays off the bus
  EXPECT_EQ(nv.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT);
  EXPECT_EQ(nv.nvmlEventSetFree(set), NVML_SUCCESS);
}

// Hardware slowdown holds a poor cooler's GPU between slowdown and shutdown, however hot the cooler
// alone would let it get; a failed cooler it holds only if the slowed clocks shed enough heat; an
// idle GPU with a failed cooler makes too little heat to matter.
TEST_F(Faults, SlowdownHoldsAPoorCoolerBelowShutdownButNotAFailedOne) {
  StartYaml(R"(
count: 4
defaults: {profile: H100-SXM5-80GB, workload: training}
gpus: [{}, {}, {workload: idle}, {}]
faults:
  - {type: thermal_slowdown, gpu: 0, at: 10, temperature: 110}
  - {type: cooling_failure, gpu: 1, at: 10, factor: 2}
  - {type: cooling_failure, gpu: 2, at: 10}
  - {type: cooling_failure, gpu: 3, at: 10}
)");
  nvmlDevice_t poor = Gpu(0), doubled = Gpu(1), idle = Gpu(2), failed = Gpu(3);
  unsigned temp = 0;
  double lost_at = -1;
  for (double t = 10; t <= 600; t += 1) {
    At(t);
    for (nvmlDevice_t d : {poor, doubled, idle}) ASSERT_LT(Temp(d), 92u) << "t=" << t;
    if (lost_at < 0 && nv.nvmlDeviceGetTemperature(failed, NVML_TEMPERATURE_GPU, &temp) == NVML_ERROR_GPU_IS_LOST)
      lost_at = t;
  }
  EXPECT_EQ(Temp(poor), 90u);  // held halfway between slowdown (89) and shutdown (92)
  EXPECT_TRUE(Reasons(poor) & nvmlClocksThrottleReasonHwThermalSlowdown);
  EXPECT_EQ(Temp(doubled), 89u);
  EXPECT_EQ(Temp(idle), 42u);
  EXPECT_EQ(lost_at, 36);
}

TEST_F(Faults, HangBlocksOnlyTheHungGpuAndOnlyTheNamedCall) {
  StartYaml(R"(
count: 2
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: hang, gpu: 1, at: 10, duration: 60, seconds: 1, call: nvmlDeviceGetPowerUsage}
  - {type: hang, gpu: 1, at: 300, duration: 10, seconds: 0.2, call: nvmlDeviceGetPciInfo}
  - {type: hang, gpu: 1, at: 100, duration: 10, seconds: 0.2}
)");
  nvmlDevice_t good = Gpu(0), hung = Gpu(1);
  At(15);
  using Clock = std::chrono::steady_clock;
  auto started = Clock::now();
  std::atomic<bool> calling{false};
  auto slow = std::async(std::launch::async, [&] {
    unsigned mw = 0;
    calling = true;
    nvmlReturn_t rc = nv.nvmlDeviceGetPowerUsage(hung, &mw);
    return std::make_pair(rc, Clock::now() - started);
  });
  // While that call hangs, GPU 0 (and GPU 1's other calls) answer. Counted: rounds that began
  // after the hung call was made and ended before it returned; were they held by the hang, no more
  // than the first one or two could.
  while (!calling) std::this_thread::yield();
  int answered_during_hang = 0;
  while (slow.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
    unsigned mw = 0, temp = 0;
    EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(good, &mw), NVML_SUCCESS);
    EXPECT_EQ(nv.nvmlDeviceGetTemperature(hung, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
    if (slow.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) ++answered_during_hang;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // pacing the probe, not driving time
  }
  auto [rc, took] = slow.get();
  EXPECT_EQ(rc, NVML_SUCCESS);                      // it answers after the hang
  EXPECT_GE(took, std::chrono::milliseconds(950));  // a lower bound: load only lengthens the hang
  EXPECT_GE(answered_during_hang, 10);
  // Without `call:`, every call on the GPU hangs.
  At(105);
  auto t0 = Clock::now();
  unsigned temp = 0;
  EXPECT_EQ(nv.nvmlDeviceGetTemperature(hung, NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(190));
  At(200);
  // Past the windows no call hangs: 20 calls that would take at least 24 s if the hangs went on
  // (1 s + 0.2 s each, a floor no load lowers) end within 2 s, hundreds of times what they need.
  t0 = Clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_GT(Power(hung), 0u);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  // `call:` names the function whatever versioned entry point is used (_v3 here).
  At(305);
  nvmlPciInfo_t pci{};
  t0 = Clock::now();
  EXPECT_EQ(nv.nvmlDeviceGetPciInfo_v3(hung, &pci), NVML_SUCCESS);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(190));
}

// A call_error fault fails only its function, only in its window, after `after_calls` good
// answers there; the error codes 26 and 999 are the last the parser takes.
TEST_F(Faults, CallErrorFailsTheNamedCallInItsWindowAfterItsGoodCalls) {
  StartYaml(R"(
count: 2
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: call_error, call: nvmlGpmSampleAlloc, error: 20, at: 10, duration: 10, after_calls: 1}
  - {type: call_error, call: nvmlDeviceGetPowerUsage_v2, error: 999, at: 30, duration: 5}
  - {type: call_error, call: nvmlEventSetCreate, error: 26, at: 40, duration: 5}
)");
  auto alloc = [&] {
    nvmlGpmSample_t s = nullptr;
    const nvmlReturn_t rc = nv.nvmlGpmSampleAlloc(&s);
    if (rc == NVML_SUCCESS) {
      EXPECT_EQ(nv.nvmlGpmSampleFree(s), NVML_SUCCESS);
    }
    return rc;
  };
  At(9.9);
  EXPECT_EQ(alloc(), NVML_SUCCESS);  // before the window: not counted either
  EXPECT_EQ(alloc(), NVML_SUCCESS);
  At(10);
  EXPECT_EQ(alloc(), NVML_SUCCESS);  // the one good call in the window
  EXPECT_EQ(alloc(), NVML_ERROR_MEMORY);
  EXPECT_NE(std::string(nv.gwSimLastError()).find("nvmlGpmSampleAlloc answers error 20 at t=10"), std::string::npos)
      << nv.gwSimLastError();
  EXPECT_EQ(alloc(), NVML_ERROR_MEMORY);
  unsigned mw = 0;
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(Gpu(1), &mw), NVML_SUCCESS);  // other calls answer
  At(20);
  EXPECT_EQ(alloc(), NVML_SUCCESS);  // the window is over
  // A versioned name in `call:` matches the plain entry point, on every GPU.
  At(30);
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(Gpu(0), &mw), NVML_ERROR_UNKNOWN);
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(Gpu(1), &mw), NVML_ERROR_UNKNOWN);
  unsigned temp = 0;
  EXPECT_EQ(nv.nvmlDeviceGetTemperature(Gpu(1), NVML_TEMPERATURE_GPU, &temp), NVML_SUCCESS);
  At(35);
  EXPECT_GT(Power(Gpu(0)), 0u);
  At(44.9);
  nvmlEventSet_t set = nullptr;
  EXPECT_EQ(nv.nvmlEventSetCreate(&set), NVML_ERROR_DEPRECATED);
  At(45);
  ASSERT_EQ(nv.nvmlEventSetCreate(&set), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlEventSetFree(set), NVML_SUCCESS);
}

TEST_F(Faults, DriverUnloadAndReturn) {
  Start(FreshShipped("fault-driver-reload"));
  nvmlDevice_t d = Gpu(2);
  unsigned count = 0;
  At(9);
  EXPECT_GT(Power(d), 0u);
  At(12);
  unsigned mw = 0;
  EXPECT_EQ(nv.nvmlDeviceGetCount_v2(&count), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(d, &mw), NVML_ERROR_UNINITIALIZED);
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
  EXPECT_EQ(nv.nvmlShutdown(), NVML_SUCCESS);
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
  At(21);
  // The old session stays dead after the driver returns, until it is re-initialised.
  EXPECT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS) << nv.gwSimLastError();
  EXPECT_DOUBLE_EQ(nv.gwSimGetTime(), 21.0);  // the reload did not rewind the scenario
  ASSERT_EQ(nv.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_EQ(count, 8u);
  EXPECT_EQ(Gpu(2), d);  // handles are stable, as with the real library
  EXPECT_GT(Power(d), 0u);
}

}  // namespace
}  // namespace simtest
