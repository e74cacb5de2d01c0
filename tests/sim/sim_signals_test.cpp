// Time-varying signals: coherence (utilisation → power → temperature → clocks), limits,
// determinism, processes and memory.
#include <cmath>
#include <vector>

#include "sim_harness.h"

namespace simtest {
namespace {

using Signals = SimTest;

const char* kIdleVsTraining = R"(
seed: 7
count: 2
defaults: {profile: H100-SXM5-80GB}
gpus:
  - {workload: idle}
  - {workload: training}
)";

TEST_F(Signals, UtilisationDrivesPowerDrivesTemperature) {
  StartYaml(kIdleVsTraining);
  nvmlDevice_t idle = Gpu(0), busy = Gpu(1);
  At(2);
  const unsigned idle_start = Temp(idle), busy_start = Temp(busy);
  EXPECT_NEAR(double(idle_start), double(busy_start), 2.0);  // both start in idle equilibrium
  At(300);
  EXPECT_LT(Util(idle).gpu, 5u);
  EXPECT_GT(Util(busy).gpu, 85u);
  EXPECT_LT(Power(idle), 100000u);  // ~70 W idle on an H100
  EXPECT_GT(Power(busy), 600000u);
  EXPECT_GT(Temp(busy), Temp(idle) + 20);
  nvmlPstates_t p_idle = NVML_PSTATE_UNKNOWN, p_busy = NVML_PSTATE_UNKNOWN;
  ASSERT_EQ(nv.nvmlDeviceGetPerformanceState(idle, &p_idle), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetPerformanceState(busy, &p_busy), NVML_SUCCESS);
  EXPECT_EQ(p_idle, NVML_PSTATE_8);
  EXPECT_EQ(p_busy, NVML_PSTATE_0);
  EXPECT_TRUE(Reasons(idle) & nvmlClocksThrottleReasonGpuIdle);
  EXPECT_FALSE(Reasons(busy) & nvmlClocksThrottleReasonGpuIdle);
  EXPECT_GT(SmClock(busy), 3 * SmClock(idle));
}

TEST_F(Signals, TemperatureFollowsPowerWithALag) {
  StartYaml(kIdleVsTraining);
  nvmlDevice_t busy = Gpu(1);
  std::vector<unsigned> temps;
  for (double t : {1.0, 10.0, 30.0, 60.0, 120.0, 300.0}) {
    At(t);
    temps.push_back(Temp(busy));
  }
  for (std::size_t i = 1; i < temps.size(); ++i) EXPECT_GE(temps[i], temps[i - 1]) << "step " << i;
  EXPECT_GT(temps[2], temps[0] + 5);   // clearly warming after 30 s
  EXPECT_LT(temps[1], temps[5] - 10);  // but far from steady state after 10 s
  // Memory (HBM) runs a few degrees above the core.
  auto mem = Field(busy, NVML_FI_DEV_MEMORY_TEMP);
  ASSERT_EQ(mem.nvmlReturn, NVML_SUCCESS);
  EXPECT_GE(mem.value.uiVal, temps.back() + 2);
  EXPECT_LE(mem.value.uiVal, temps.back() + 8);
}

TEST_F(Signals, PowerNeverExceedsTheEnforcedLimitAndCapsAreReported) {
  StartYaml(kIdleVsTraining);
  nvmlDevice_t busy = Gpu(1);
  unsigned limit = 0;
  ASSERT_EQ(nv.nvmlDeviceGetEnforcedPowerLimit(busy, &limit), NVML_SUCCESS);
  int capped = 0;
  for (double t = 0; t < 1200; t += 7) {
    At(t);
    EXPECT_LE(Power(busy), limit) << "t=" << t;
    if (Reasons(busy) & nvmlClocksThrottleReasonSwPowerCap) {
      ++capped;
      EXPECT_LT(SmClock(busy), 1980u);  // the cap costs clock
    }
  }
  EXPECT_GT(capped, 10);  // a training H100 sits at its 700 W cap
}

TEST_F(Signals, EnergyIsTheIntegralOfPowerAndMonotonic) {
  StartYaml(kIdleVsTraining);
  nvmlDevice_t busy = Gpu(1);
  unsigned long long e_prev = 0;
  double power_sum = 0;
  unsigned long long e_start = 0;
  At(100);
  ASSERT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(busy, &e_start), NVML_SUCCESS);
  e_prev = e_start;
  for (int t = 100; t < 200; ++t) {
    At(t + 0.5);
    power_sum += Power(busy) / 1000.0;  // W over one second
    unsigned long long e = 0;
    ASSERT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(busy, &e), NVML_SUCCESS);
    EXPECT_GE(e, e_prev);
    e_prev = e;
  }
  At(200);
  unsigned long long e_end = 0;
  ASSERT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(busy, &e_end), NVML_SUCCESS);
  EXPECT_NEAR(double(e_end - e_start) / 1000.0, power_sum, power_sum * 0.02);
  EXPECT_EQ(Field(busy, NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION).value.ullVal, e_end);
}

TEST_F(Signals, PcieThroughputFollowsUtilisation) {
  StartYaml(kIdleVsTraining);
  At(200);
  unsigned idle_rx = 0, busy_rx = 0;
  ASSERT_EQ(nv.nvmlDeviceGetPcieThroughput(Gpu(0), NVML_PCIE_UTIL_RX_BYTES, &idle_rx), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetPcieThroughput(Gpu(1), NVML_PCIE_UTIL_RX_BYTES, &busy_rx), NVML_SUCCESS);
  EXPECT_GT(busy_rx, 20 * idle_rx);
  EXPECT_GT(busy_rx, 1000000u);  // > 1 GB/s feeding a training job over Gen5 x16
}

// Link power management: an idle GPU's link runs at Gen1, a busy one at its maximum; the
// maximum and the width do not change.
TEST_F(Signals, IdleLinkTrainsDownToGen1) {
  StartYaml(kIdleVsTraining);
  At(200);
  for (unsigned i : {0u, 1u}) {
    unsigned gen = 0, width = 0, max_gen = 0;
    ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkGeneration(Gpu(i), &gen), NVML_SUCCESS);
    ASSERT_EQ(nv.nvmlDeviceGetCurrPcieLinkWidth(Gpu(i), &width), NVML_SUCCESS);
    ASSERT_EQ(nv.nvmlDeviceGetMaxPcieLinkGeneration(Gpu(i), &max_gen), NVML_SUCCESS);
    EXPECT_EQ(gen, i == 0 ? 1u : 5u) << "GPU " << i;
    EXPECT_EQ(max_gen, 5u);
    EXPECT_EQ(width, 16u);
  }
}

struct Reading {
  unsigned power, temp, clock, util, mem_util;
  unsigned long long energy;
  bool operator==(const Reading&) const = default;
};

TEST_F(Signals, ValuesDependOnlyOnSeedAndTimeNotOnCallPattern) {
  const char* yaml = R"(
seed: 42
count: 4
defaults: {profile: H100-SXM5-80GB}
gpus:
  - {workload: training}
  - {workload: bursty}
  - {workload: inference}
  - {workload: idle}
)";
  auto read = [&](nvmlDevice_t d) {
    Reading r{Power(d), Temp(d), SmClock(d), Util(d).gpu, Util(d).memory, 0};
    EXPECT_EQ(nv.nvmlDeviceGetTotalEnergyConsumption(d, &r.energy), NVML_SUCCESS);
    return r;
  };
  // Machine A: jump straight to t=250.
  StartYaml(yaml);
  At(250);
  std::vector<Reading> a;
  for (unsigned i = 0; i < 4; ++i) a.push_back(read(Gpu(i)));
  nv.nvmlShutdown();
  // Machine B (same scenario, fresh file): crawl there in odd steps, reading in reverse order.
  StartYaml(yaml);
  for (double t : {0.0, 3.3, 17.0, 17.2, 99.9, 180.0, 249.99}) {
    At(t);
    for (int i = 3; i >= 0; --i) read(Gpu(i));
  }
  At(250);
  for (int i = 3; i >= 0; --i) EXPECT_EQ(read(Gpu(i)), a[i]) << "gpu " << i;
}

TEST_F(Signals, DifferentSeedsGiveDifferentNoise) {
  auto trace = [&](int seed) {
    StartYaml("seed: " + std::to_string(seed) +
              "\ncount: 1\ndefaults: {profile: H100-SXM5-80GB, workload: inference}\n");
    std::vector<unsigned> out;
    for (int t = 0; t < 40; t += 2) {
      At(t);
      out.push_back(Util(Gpu(0)).gpu);
      out.push_back(Power(Gpu(0)));
    }
    nv.nvmlShutdown();
    return out;
  };
  auto s1 = trace(1), s1_again = trace(1), s2 = trace(2);
  EXPECT_EQ(s1, s1_again);
  EXPECT_NE(s1, s2);
}

TEST_F(Signals, BurstyAlternatesBetweenBusyAndIdle) {
  StartYaml("count: 1\ndefaults: {profile: L40S, workload: bursty}\n");
  int busy = 0, idle = 0;
  for (int t = 0; t < 600; t += 3) {
    At(t);
    unsigned u = Util(Gpu(0)).gpu;
    busy += u > 70;
    idle += u < 10;
  }
  EXPECT_GT(busy, 30);
  EXPECT_GT(idle, 30);
}

// A starved job: every second somewhere between 3 % and the level, spread over the whole range.
TEST_F(Signals, StarvedSwingsBetweenThreePercentAndItsLevel) {
  StartYaml("count: 1\ndefaults: {profile: H100-SXM5-80GB, workload: {preset: starved, level: 20}}\n");
  unsigned lo = 100, hi = 0;
  for (int t = 0; t < 300; ++t) {
    At(t);
    const unsigned u = Util(Gpu(0)).gpu;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  EXPECT_GE(lo, 3u);
  EXPECT_LE(lo, 4u);
  EXPECT_LE(hi, 20u);
  EXPECT_GE(hi, 19u);
}

// `power:` scales what the work draws, not what it uses: the seed's 180 W of 300 W at full load.
TEST_F(Signals, WorkloadPowerScalesTheDrawAtTheSameUtilisation) {
  StartYaml(
      "count: 2\ndefaults: {profile: L40S, power_limit: 300}\ngpus:\n  - {workload: training}\n"
      "  - {workload: {preset: training, power: 0.47}}\n");
  for (int t = 10; t < 300; t += 7) {
    At(t);
    EXPECT_GE(Util(Gpu(1)).gpu, 90u) << t;
    EXPECT_GT(Power(Gpu(1)), 170000u) << t;
    EXPECT_LT(Power(Gpu(1)), 190000u) << t;
    EXPECT_GT(Power(Gpu(0)), 290000u) << t;  // the same training without it: at its 300 W limit
  }
}

TEST_F(Signals, CustomCurveIsFollowed) {
  StartYaml("count: 1\ndefaults: {profile: A100-SXM4-80GB, workload: {curve: [[0, 10], [100, 90]]}}\n");
  At(0);
  EXPECT_NEAR(Util(Gpu(0)).gpu, 10.0, 1.5);
  At(50);
  EXPECT_NEAR(Util(Gpu(0)).gpu, 50.0, 1.5);
  At(500);
  EXPECT_NEAR(Util(Gpu(0)).gpu, 90.0, 1.5);
}

TEST_F(Signals, FanSpeedRisesWithTemperatureOnBoardsWithFans) {
  StartYaml("count: 2\ndefaults: {profile: RTX-4090}\ngpus: [{workload: idle}, {workload: training}]\n");
  At(600);
  unsigned idle_fan = 99, busy_fan = 0, fans = 0;
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed(Gpu(0), &idle_fan), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed_v2(Gpu(1), 1, &busy_fan), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetNumFans(Gpu(1), &fans), NVML_SUCCESS);
  EXPECT_EQ(fans, 2u);
  EXPECT_EQ(nv.nvmlDeviceGetFanSpeed_v2(Gpu(1), 2, &busy_fan), NVML_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed_v2(Gpu(1), 1, &busy_fan), NVML_SUCCESS);
  EXPECT_EQ(idle_fan, 0u);  // zero-RPM: an idle RTX 4090 stops its fans
  EXPECT_EQ(busy_fan, 72u);
  EXPECT_EQ(Field(Gpu(0), NVML_FI_DEV_MEMORY_TEMP).nvmlReturn, NVML_ERROR_NOT_SUPPORTED);  // GDDR6X
}

// Zero-RPM: the fans stay stopped while the board is cool, start when the core reaches the
// profile's 55 °C, and stop again only 10 °C lower, so they do not cycle at the threshold.
TEST_F(Signals, ZeroRpmBoardStopsItsFansWhileCoolAndStartsThemUnderLoad) {
  StartYaml(R"(
count: 1
defaults:
  profile: RTX-4090
  workload: training
  processes: [{pid: 5, name: python3, memory: 1GiB, start: 100, stop: 400}]
)");
  nvmlDevice_t d = Gpu(0);
  auto fan = [&] {
    unsigned f = 99;
    EXPECT_EQ(nv.nvmlDeviceGetFanSpeed(d, &f), NVML_SUCCESS);
    return f;
  };
  At(99);
  EXPECT_EQ(fan(), 0u);
  EXPECT_EQ(Temp(d), 35u);  // idle with the fans stopped: 30 °C air + 22 W through a still heatsink
  double started = -1, stopped = -1;
  unsigned temp_at_start = 0, fan_at_start = 0, temp_at_stop = 0, temp_before = 0;
  for (double t = 100; t <= 900; t += 1) {
    At(t);
    const unsigned f = fan(), temp = Temp(d);
    if (started < 0 && f > 0) {
      started = t;
      temp_at_start = temp;
      fan_at_start = f;
    }
    if (started < 0) temp_before = temp;
    if (started >= 0 && stopped < 0 && f == 0) {
      stopped = t;
      temp_at_stop = temp;
    }
  }
  // The load heats it ~3 °C a step: the first reading at or above 55 °C starts the fans.
  EXPECT_EQ(started, 106);
  EXPECT_LT(temp_before, 55u);
  EXPECT_EQ(temp_at_start, 58u);
  EXPECT_EQ(fan_at_start, 56u);
  EXPECT_EQ(stopped, 421);  // the job ended at 400
  EXPECT_EQ(temp_at_stop, 45u);
  EXPECT_EQ(Temp(d), 35u);
}

// Fans matter: at the same load, a board whose fans are pinned faster runs cooler.
TEST_F(Signals, HigherFanSpeedLowersTheTemperature) {
  StartYaml(R"(
count: 3
defaults: {profile: RTX-4090, workload: training}
gpus: [{fan: 40}, {}, {fan: 100}]
)");
  At(900);
  unsigned f0 = 0, f1 = 0, f2 = 0;
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed(Gpu(0), &f0), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed(Gpu(1), &f1), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetFanSpeed(Gpu(2), &f2), NVML_SUCCESS);
  EXPECT_EQ(f0, 40u);
  EXPECT_EQ(f1, 72u);
  EXPECT_EQ(f2, 100u);
  EXPECT_EQ(Temp(Gpu(0)), 82u);
  EXPECT_EQ(Temp(Gpu(1)), 68u);
  EXPECT_EQ(Temp(Gpu(2)), 61u);
}

// ------------------------------------------------------------------------------------------
// Processes.

const char* kProcesses = R"(
count: 1
defaults:
  profile: H100-SXM5-80GB
  workload: training
  processes:
    - {pid: 100, name: trainer, memory: 20GiB, start: 0, stop: 100}
    - {pid: 200, name: eval.py, memory: 10GiB, start: 50, stop: 80, zombie: true, share: 1}
)";

std::vector<unsigned> Pids(Api& nv, nvmlDevice_t d, unsigned long long* used_total = nullptr) {
  unsigned n = 0;
  nvmlReturn_t rc = nv.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, nullptr);
  EXPECT_TRUE(rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE);
  std::vector<nvmlProcessInfo_t> infos(n);
  EXPECT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(d, &n, infos.data()), NVML_SUCCESS);
  std::vector<unsigned> pids;
  unsigned long long sum = 0;
  for (unsigned i = 0; i < n; ++i) {
    pids.push_back(infos[i].pid);
    sum += infos[i].usedGpuMemory;
    EXPECT_EQ(infos[i].gpuInstanceId, 0xFFFFFFFFu);
  }
  if (used_total) *used_total = sum;
  return pids;
}

unsigned long long UsedMib(Api& nv, nvmlDevice_t d) {
  nvmlMemory_v2_t m{};
  m.version = nvmlMemory_v2;
  EXPECT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(d, &m), NVML_SUCCESS);
  return m.used >> 20;
}

TEST_F(Signals, ProcessesComeAndGoAndZombiesKeepTheirMemory) {
  StartYaml(kProcesses);
  nvmlDevice_t d = Gpu(0);
  At(10);
  EXPECT_EQ(Pids(nv, d), std::vector<unsigned>({100}));
  EXPECT_EQ(UsedMib(nv, d), 20480u);
  At(60);
  unsigned long long listed = 0;
  EXPECT_EQ(Pids(nv, d, &listed), std::vector<unsigned>({100, 200}));
  EXPECT_EQ(listed, 30ull << 30);
  EXPECT_EQ(UsedMib(nv, d), 30720u);
  At(150);  // the trainer has exited; eval.py ended at 80 s but still holds its memory
  EXPECT_EQ(Pids(nv, d), std::vector<unsigned>({200}));
  EXPECT_EQ(UsedMib(nv, d), 10240u);
  EXPECT_LT(Util(d).gpu, 5u);  // nothing runs: the GPU idles with memory held
  char name[64];
  ASSERT_EQ(nv.nvmlSystemGetProcessName(200, name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "eval.py");
  EXPECT_EQ(nv.nvmlSystemGetProcessName(100, name, sizeof name), NVML_ERROR_NOT_FOUND);
  // v1 memory counts the driver reservation as used.
  nvmlMemory_t m1{};
  ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo(d, &m1), NVML_SUCCESS);
  EXPECT_GT(m1.used >> 20, 10240u);
  EXPECT_LT(m1.used >> 20, 10240u + 1024u);
  EXPECT_EQ(m1.total, m1.used + m1.free);
}

TEST_F(Signals, ProcessListsFollowNvmlBufferRules) {
  StartYaml(kProcesses);
  nvmlDevice_t d = Gpu(0);
  At(60);
  unsigned n = 1;
  nvmlProcessInfo_v1_t v1[4];
  EXPECT_EQ(nv.nvmlDeviceGetComputeRunningProcesses(d, &n, v1), NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(n, 2u);
  n = 4;
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses(d, &n, v1), NVML_SUCCESS);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(v1[1].usedGpuMemory, 10ull << 30);
  nvmlProcessInfo_v2_t v2[4];
  n = 4;
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v2(d, &n, v2), NVML_SUCCESS);
  EXPECT_EQ(v2[0].pid, 100u);
  n = 4;
  ASSERT_EQ(nv.nvmlDeviceGetGraphicsRunningProcesses_v3(d, &n, nullptr), NVML_SUCCESS);
  EXPECT_EQ(n, 0u);
}

TEST_F(Signals, PerProcessUtilisationSamples) {
  StartYaml(kProcesses);
  nvmlDevice_t d = Gpu(0);
  At(60.5);
  unsigned n = 0;
  EXPECT_EQ(nv.nvmlDeviceGetProcessUtilization(d, nullptr, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE);
  ASSERT_EQ(n, 2u);
  nvmlProcessUtilizationSample_t s[2];
  ASSERT_EQ(nv.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
  unsigned gpu = Util(d).gpu;
  EXPECT_NEAR(double(s[0].smUtil + s[1].smUtil), double(gpu), 2.0);
  EXPECT_GT(s[0].smUtil, 30u);
  EXPECT_EQ(s[0].timeStamp, s[1].timeStamp);
  // Nothing newer than what was seen: NOT_FOUND.
  EXPECT_EQ(nv.nvmlDeviceGetProcessUtilization(d, s, &n, s[0].timeStamp), NVML_ERROR_NOT_FOUND);
  At(61.5);
  n = 2;
  unsigned long long seen = s[0].timeStamp;
  ASSERT_EQ(nv.nvmlDeviceGetProcessUtilization(d, s, &n, seen), NVML_SUCCESS);
  EXPECT_EQ(s[0].timeStamp, seen + 1000000);  // one simulated second later, in µs
}

}  // namespace
}  // namespace simtest
