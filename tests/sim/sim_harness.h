// Test harness: loads libnvml-sim.so with dlopen (as gpuwarden loads libnvidia-ml.so.1),
// resolves every function of GW_NVML_FUNCTIONS, and runs scenarios with a manual clock.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "nvml/nvml_abi.h"

namespace simtest {

struct Api {
#define GW_FIELD(name, ret, params) ret(*name) params = nullptr;
  GW_NVML_FUNCTIONS(GW_FIELD)
#undef GW_FIELD
  const char* (*gwSimLastError)() = nullptr;
  double (*gwSimGetTime)() = nullptr;
  void (*gwSimSetTime)(double) = nullptr;
  std::string missing;  // names that did not resolve
};

inline Api& Nvml() {
  static Api api = [] {
    Api a;
    void* lib = dlopen(GW_NVML_SIM_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      a.missing = std::string("dlopen: ") + dlerror();
      return a;
    }
#define GW_RESOLVE(name, ret, params)                          \
  a.name = reinterpret_cast<ret(*) params>(dlsym(lib, #name)); \
  if (!a.name) a.missing += #name " ";
    GW_NVML_FUNCTIONS(GW_RESOLVE)
#undef GW_RESOLVE
    a.gwSimLastError = reinterpret_cast<const char* (*)()>(dlsym(lib, "gwSimLastError"));
    a.gwSimGetTime = reinterpret_cast<double (*)()>(dlsym(lib, "gwSimGetTime"));
    a.gwSimSetTime = reinterpret_cast<void (*)(double)>(dlsym(lib, "gwSimSetTime"));
    if (!a.gwSimLastError || !a.gwSimGetTime || !a.gwSimSetTime) a.missing += "gwSim* ";
    return a;
  }();
  return api;
}

inline std::string ShippedPath(const std::string& name) { return std::string(GW_SCENARIO_DIR) + "/" + name + ".yaml"; }

// A private directory for scenario files written by a test.
inline std::filesystem::path TempDir() {
  static std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gw-sim-test-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    return std::filesystem::path(made ? made : "/tmp");
  }();
  return dir;
}

// Writes `yaml` to a fresh file (a fresh file is a fresh simulated machine: time starts again).
inline std::string WriteScenario(const std::string& yaml, const std::string& stem = "scenario") {
  static std::atomic<int> counter{0};
  auto path = TempDir() / (stem + "-" + std::to_string(++counter) + ".yaml");
  std::ofstream(path) << yaml;
  return path.string();
}

// A fresh copy of a shipped scenario (through `base:`), with its own timeline.
inline std::string FreshShipped(const std::string& name) {
  return WriteScenario("base: " + ShippedPath(name) + "\n", name);
}

// Points the environment at a scenario, manual clock unless told otherwise.
inline void UseScenario(const std::string& path, const char* clock = "manual", const char* start = nullptr,
                        const char* speed = nullptr) {
  setenv("GPUWARDEN_SIM_SCENARIO", path.c_str(), 1);
  if (clock)
    setenv("GPUWARDEN_SIM_CLOCK", clock, 1);
  else
    unsetenv("GPUWARDEN_SIM_CLOCK");
  if (start)
    setenv("GPUWARDEN_SIM_START", start, 1);
  else
    unsetenv("GPUWARDEN_SIM_START");
  if (speed)
    setenv("GPUWARDEN_SIM_SPEED", speed, 1);
  else
    unsetenv("GPUWARDEN_SIM_SPEED");
}

// Base fixture: every test starts and ends with NVML shut down.
class SimTest : public ::testing::Test {
 protected:
  Api& nv = Nvml();

  void SetUp() override { ASSERT_EQ(nv.missing, "") << "symbols missing from libnvml-sim.so"; }
  void TearDown() override {
    while (nv.nvmlShutdown() == NVML_SUCCESS) {
    }
  }

  // Loads a scenario file and initialises; fails the test with the simulator's message.
  void Start(const std::string& path) {
    UseScenario(path);
    nvmlReturn_t rc = nv.nvmlInit_v2();
    ASSERT_EQ(rc, NVML_SUCCESS) << nv.gwSimLastError();
  }
  void StartYaml(const std::string& yaml) { Start(WriteScenario(yaml)); }

  nvmlDevice_t Gpu(unsigned i) {
    nvmlDevice_t d = nullptr;
    EXPECT_EQ(nv.nvmlDeviceGetHandleByIndex_v2(i, &d), NVML_SUCCESS) << nv.gwSimLastError();
    return d;
  }
  void At(double t) { nv.gwSimSetTime(t); }

  unsigned Power(nvmlDevice_t d) {
    unsigned mw = 0;
    EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(d, &mw), NVML_SUCCESS);
    return mw;
  }
  unsigned Temp(nvmlDevice_t d) {
    unsigned t = 0;
    EXPECT_EQ(nv.nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &t), NVML_SUCCESS);
    return t;
  }
  unsigned SmClock(nvmlDevice_t d) {
    unsigned mhz = 0;
    EXPECT_EQ(nv.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
    return mhz;
  }
  unsigned long long Reasons(nvmlDevice_t d) {
    unsigned long long r = 0;
    EXPECT_EQ(nv.nvmlDeviceGetCurrentClocksThrottleReasons(d, &r), NVML_SUCCESS);
    return r;
  }
  nvmlUtilization_t Util(nvmlDevice_t d) {
    nvmlUtilization_t u{};
    EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    return u;
  }
  nvmlFieldValue_t Field(nvmlDevice_t d, unsigned id, unsigned scope = 0xFFFFFFFFu) {
    nvmlFieldValue_t v{};
    v.fieldId = id;
    v.scopeId = scope;
    EXPECT_EQ(nv.nvmlDeviceGetFieldValues(d, 1, &v), NVML_SUCCESS);
    return v;
  }
};

}  // namespace simtest
