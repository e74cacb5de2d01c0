#include "sim/library.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "sim/scenario_parser.h"
#include "sim/sim_state.h"

namespace gw::sim {
namespace {

struct Library {
  std::mutex init_mu;  // nvmlInit / nvmlShutdown / switching worlds
  std::atomic<World*> world{nullptr};
  std::atomic<int> refcount{0};
  std::vector<std::unique_ptr<World>> worlds;  // every world built, kept for stale handles
  std::mutex err_mu;
  std::string last_error;
  // Every distinct message handed out by gwSimLastError, never freed, so a returned pointer
  // stays valid forever. Few distinct messages exist (init failures, faults), so this stays small.
  std::set<std::string> handed_out;
};

Library& lib() {
  static Library instance;
  return instance;
}

std::string formatSeconds(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", t);
  return buf;
}

bool readClockSettings(ClockSettings* cs, std::string* err) {
  auto number = [&](const char* var, double* out, bool positive) {
    const char* v = std::getenv(var);
    if (!v || !*v) return true;
    char* end = nullptr;
    double d = std::strtod(v, &end);
    if (*end != '\0' || !(positive ? d > 0 : d >= 0) || d > 1e12) {
      *err = std::string(var) + ": expected a " + (positive ? "positive" : "non-negative") + " number, got '" + v + "'";
      return false;
    }
    *out = d;
    return true;
  };
  if (!number("GPUWARDEN_SIM_START", &cs->start, false)) return false;
  if (!number("GPUWARDEN_SIM_SPEED", &cs->speed, true)) return false;
  const char* mode = std::getenv("GPUWARDEN_SIM_CLOCK");
  std::string m = mode ? mode : "";
  if (m == "manual") {
    cs->manual = true;
  } else if (m.rfind("file:", 0) == 0 && m.size() > 5) {
    cs->file = m.substr(5);
  } else if (m.empty() || m == "real") {
    cs->manual = false;
  } else {
    *err = "GPUWARDEN_SIM_CLOCK: expected manual, real or file:PATH, got '" + m + "'";
    return false;
  }
  return true;
}

// "nvmlDeviceGetPciInfo_v3" → "nvmlDeviceGetPciInfo": a hang's `call:` names the function,
// whichever versioned entry point the caller uses.
std::string_view baseName(std::string_view name) {
  std::size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= name.size()) return name;
  for (std::size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, v);
}

}  // namespace

World* currentWorld() { return lib().world.load(std::memory_order_acquire); }

void setLastError(std::string message) {
  Library& L = lib();
  std::lock_guard lock(L.err_mu);
  L.last_error = std::move(message);
}

void clearLastError() { setLastError(""); }

// Not a thread_local copy: TLS in a dlopen()ed library goes through __tls_get_addr, which the
// sanitizer runtime of GCC <= 13 misreads about one time in 256 (a dynamic TLS block at offset
// 16 of a page looks like a glibc 2.19 header), and LeakSanitizer's tracer then crashes at exit.
const char* lastError() {
  Library& L = lib();
  std::lock_guard lock(L.err_mu);
  return L.handed_out.insert(L.last_error).first->c_str();
}

namespace {

nvmlReturn_t initLibraryUnguarded() {
  Library& L = lib();
  std::lock_guard lock(L.init_mu);
  if (L.refcount.load() > 0) {
    World* w = L.world.load();
    if (w->driverUnloadedAt(w->clock.now())) {
      setLastError("the NVIDIA driver is not loaded (driver_unloaded fault)");
      return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    L.refcount.fetch_add(1);
    return NVML_SUCCESS;
  }
  const char* path = std::getenv("GPUWARDEN_SIM_SCENARIO");
  if (!path || !*path) {
    setLastError("GPUWARDEN_SIM_SCENARIO is not set: point it at a scenario file (see docs/scenarios.md)");
    return NVML_ERROR_UNKNOWN;
  }
  ClockSettings cs;
  std::string err;
  if (!readClockSettings(&cs, &err)) {
    setLastError(err);
    return NVML_ERROR_UNKNOWN;
  }
  LoadResult r = loadScenarioFile(path);
  if (!r.ok) {
    setLastError(r.error);
    return NVML_ERROR_UNKNOWN;
  }
  // Same files and clock settings: the same machine, which keeps its time and handles across
  // nvmlShutdown/nvmlInit (a driver reload must not rewind the scenario).
  std::string key = r.sources + "\n#clock " + (cs.manual ? "manual " : "real ") + std::to_string(cs.start) + " " +
                    std::to_string(cs.speed);
  World* w = L.world.load();
  if (!w || w->key != key) {
    auto fresh = std::make_unique<World>(std::move(r.scenario), std::move(key), cs);
    if (!loadSimState(*fresh, &err)) {
      setLastError(err);
      return NVML_ERROR_UNKNOWN;
    }
    w = fresh.get();
    L.worlds.push_back(std::move(fresh));
    L.world.store(w, std::memory_order_release);
  }
  w->clock.start();
  const double t = w->clock.now();
  const std::string who = "scenario '" + w->scenario.name + "'";
  switch (w->scenario.init_error) {
    case InitError::kNone:
      break;
    case InitError::kDriverNotLoaded:
      setLastError(who + ": the NVIDIA kernel driver is not loaded (init_error: driver_not_loaded)");
      return NVML_ERROR_DRIVER_NOT_LOADED;
    case InitError::kLibRmVersionMismatch:
      setLastError(
          who +
          ": the NVML library and the kernel module are different versions (init_error: lib_rm_version_mismatch)");
      return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
    case InitError::kNoPermission:
      setLastError(who + ": no permission to open /dev/nvidiactl (init_error: no_permission)");
      return NVML_ERROR_NO_PERMISSION;
  }
  if (w->driverUnloadedAt(t)) {
    setLastError(who + ": the NVIDIA driver is not loaded at t=" + formatSeconds(t) + " (driver_unloaded fault)");
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  w->session_start.store(t);
  L.refcount.store(1);
  clearLastError();
  return NVML_SUCCESS;
}

}  // namespace

// The C ABI's nvmlInit: no exception may cross it (the caller is C, or C++ built apart from us).
nvmlReturn_t initLibrary() {
  try {
    return initLibraryUnguarded();
  } catch (const std::exception& e) {
    setLastError(std::string("the simulator could not start: ") + e.what());
  } catch (...) {
    setLastError("the simulator could not start (unknown error)");
  }
  return NVML_ERROR_UNKNOWN;
}

nvmlReturn_t shutdownLibrary() {
  Library& L = lib();
  std::lock_guard lock(L.init_mu);
  if (L.refcount.load() == 0) return NVML_ERROR_UNINITIALIZED;
  L.refcount.fetch_sub(1);
  return NVML_SUCCESS;
}

namespace {

// The error a call_error fault makes `function` answer at t, or NVML_SUCCESS: the fault's window
// holds t and `after_calls` calls of the function in the window have been answered already.
nvmlReturn_t injectedError(World& w, const char* function, double t) {
  for (std::size_t i = 0; i < w.call_faults.size(); ++i) {
    const FaultConfig& f = *w.call_faults[i];
    if (!f.activeAt(t) || baseName(f.call) != baseName(function)) continue;
    if (w.call_counts[i].fetch_add(1, std::memory_order_relaxed) < f.after_calls) continue;
    setLastError(std::string(function) + " answers error " + std::to_string(f.error) + " at t=" + formatSeconds(t) +
                 " (call_error fault)");
    return static_cast<nvmlReturn_t>(f.error);
  }
  return NVML_SUCCESS;
}

}  // namespace

Call enterSystem(const char* function) {
  Call c;
  Library& L = lib();
  if (L.refcount.load(std::memory_order_acquire) == 0 || !(c.world = L.world.load(std::memory_order_acquire))) {
    c.rc = NVML_ERROR_UNINITIALIZED;
    return c;
  }
  c.t = c.world->clock.now();
  if (c.world->sessionStale(c.t)) {
    setLastError("the NVIDIA driver was unloaded after nvmlInit: call nvmlShutdown and nvmlInit again");
    c.rc = NVML_ERROR_UNINITIALIZED;
    return c;
  }
  c.rc = injectedError(*c.world, function, c.t);
  return c;
}

nvmlReturn_t passGates(Call* c, Device* gpu, const char* function) {
  for (int pass = 0; pass < 2; ++pass) {
    for (const FaultConfig* f : gpu->gates) {
      if (f->type == FaultType::kFallOffBus && c->t >= f->at) {
        setLastError("GPU " + std::to_string(gpu->index) + " (" + gpu->pci.busIdLegacy +
                     ") fell off the bus at t=" + formatSeconds(f->at));
        return c->rc = NVML_ERROR_GPU_IS_LOST;
      }
    }
    if (auto at = gpu->physics->shutdownBy(c->t)) {
      setLastError("GPU " + std::to_string(gpu->index) + " (" + gpu->pci.busIdLegacy +
                   ") reached its shutdown temperature (" + std::to_string(gpu->profile->temp_shutdown) +
                   " C) and fell off the bus at t=" + formatSeconds(*at));
      return c->rc = NVML_ERROR_GPU_IS_LOST;
    }
    if (pass == 1) break;
    bool slept = false;
    for (const FaultConfig* f : gpu->gates) {
      if (f->type == FaultType::kHang && f->activeAt(c->t) &&
          (f->call.empty() || baseName(f->call) == baseName(function))) {
        // No lock is held here: a hung GPU blocks only its own callers.
        std::this_thread::sleep_for(std::chrono::duration<double>(f->seconds));
        slept = true;
      }
    }
    if (!slept) break;
    c->t = c->world->clock.now();
  }
  return NVML_SUCCESS;
}

Call enterDevice(nvmlDevice_t handle, const char* function, MigPolicy policy) {
  Call c = enterSystem(function);
  if (!c) return c;
  auto* d = reinterpret_cast<Device*>(handle);
  if (!d || d->magic != kDeviceMagic || d->world != c.world || d->gone.load()) {
    c.rc = NVML_ERROR_INVALID_ARGUMENT;
    return c;
  }
  Device* gpu = d->is_mig ? d->parent : d;
  if (passGates(&c, gpu, function) != NVML_SUCCESS) return c;
  if (d->is_mig && policy == MigPolicy::kPhysicalOnly) {
    c.rc = NVML_ERROR_NOT_SUPPORTED;
    return c;
  }
  c.gpu = gpu;
  c.dev = (d->is_mig && policy == MigPolicy::kParent) ? gpu : d;
  return c;
}

bool mayChangeSettings(const Call& c) { return c.world->scenario.privileged && ::geteuid() == 0; }

nvmlReturn_t saved(const Call& c) {
  std::string err;
  if (saveSimState(*c.world, c.t, &err)) return NVML_SUCCESS;
  setLastError(err);
  return NVML_ERROR_UNKNOWN;
}

}  // namespace gw::sim
