// Event sets: the timeline of Xid and ECC events is fixed by the scenario; a set receives each
// event of a GPU and type it registered for, once, if the event happened after it registered.
// One event is not in the timeline: the Xid 79 of a GPU whose thermal shutdown takes it off the
// bus, because when that happens depends on the physics (the load, a power limit set meanwhile).
#include "sim/export_api.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/world.h"

using namespace gw::sim;

namespace {

constexpr std::uint32_t kEventSetMagic = 0x53564557;  // "WEVS"
constexpr unsigned long long kXidFallenOffBus = 79;

struct Registration {
  unsigned gpu;
  unsigned long long types;
  double since;  // simulated time of registration
};

struct EventSet {
  std::uint32_t magic = kEventSetMagic;
  World* world = nullptr;
  std::mutex mu;
  std::vector<Registration> regs;
  std::vector<bool> delivered;           // parallel to world->events
  std::vector<bool> shutdown_delivered;  // parallel to world->gpus
};

EventSet* toSet(nvmlEventSet_t set) {
  auto* s = reinterpret_cast<EventSet*>(set);
  return s && s->magic == kEventSetMagic ? s : nullptr;
}

unsigned long long supportedEvents(const Device& d) {
  unsigned long long types = nvmlEventTypeXidCriticalError | nvmlEventTypePState | nvmlEventTypeClock;
  if (d.cfg->ecc) types |= nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError;
  if (d.profile->mig_capable) types |= nvmlEventMigConfigChange;
  return types;
}

bool wanted(const EventSet& s, const TimedEvent& e) {
  for (const auto& r : s.regs) {
    if (r.gpu == e.gpu && (r.types & e.type) && e.t >= r.since) return true;
  }
  return false;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  GW_ENTER_SYSTEM();
  if (!set) return NVML_ERROR_INVALID_ARGUMENT;
  auto* s = new EventSet;
  s->world = c.world;
  s->delivered.assign(c.world->events.size(), false);
  s->shutdown_delivered.assign(c.world->gpus.size(), false);
  *set = reinterpret_cast<nvmlEventSet_t>(s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  EventSet* s = toSet(set);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  s->magic = 0;
  delete s;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long* eventTypes) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!eventTypes) return NVML_ERROR_INVALID_ARGUMENT;
  *eventTypes = supportedEvents(*c.dev);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  EventSet* s = toSet(set);
  if (!s || s->world != c.world) return NVML_ERROR_INVALID_ARGUMENT;
  if (eventTypes & ~supportedEvents(*c.dev)) return NVML_ERROR_NOT_SUPPORTED;
  std::lock_guard lock(s->mu);
  s->regs.push_back({c.dev->index, eventTypes, c.t});
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
  EventSet* s = toSet(set);
  if (!s || !data) return NVML_ERROR_INVALID_ARGUMENT;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutms);
  for (;;) {
    GW_ENTER_SYSTEM();
    if (s->world != c.world) return NVML_ERROR_INVALID_ARGUMENT;
    double next_due = kForever;
    {
      std::lock_guard lock(s->mu);
      const auto& events = c.world->events;
      std::size_t due = events.size();  // the earliest undelivered event that is due
      for (std::size_t i = 0; i < events.size(); ++i) {
        const TimedEvent& e = events[i];
        if (s->delivered[i] || !wanted(*s, e)) continue;
        if (e.t > c.t) {
          next_due = std::min(next_due, e.t);
          continue;
        }
        due = i;
        break;
      }
      // A shutdown that came before it goes first. Its time is known only once reached, so a real
      // clock finds it by the 100 ms poll below.
      std::size_t shut = c.world->gpus.size();
      double shut_at = kForever;
      for (std::size_t g = 0; g < c.world->gpus.size(); ++g) {
        if (s->shutdown_delivered[g] ||
            !wanted(*s, {kForever, static_cast<unsigned>(g), nvmlEventTypeXidCriticalError, 0}))
          continue;  // not registered for it: no need to run its physics
        const auto at = c.world->gpus[g]->physics->shutdownBy(c.t);
        if (!at || !wanted(*s, {*at, static_cast<unsigned>(g), nvmlEventTypeXidCriticalError, kXidFallenOffBus}))
          continue;
        if (*at < shut_at) {
          shut = g;
          shut_at = *at;
        }
      }
      const bool shutdown_first = shut < c.world->gpus.size() && (due == events.size() || shut_at < events[due].t);
      if (shutdown_first || due < events.size()) {
        TimedEvent e{};
        if (shutdown_first) {
          s->shutdown_delivered[shut] = true;
          e = {shut_at, static_cast<unsigned>(shut), nvmlEventTypeXidCriticalError, kXidFallenOffBus};
        } else {
          s->delivered[due] = true;
          e = events[due];
        }
        *data = {};
        data->device = reinterpret_cast<nvmlDevice_t>(c.world->gpus[e.gpu].get());
        data->eventType = e.type;
        data->eventData = e.data;
        data->gpuInstanceId = kNoInstance;
        data->computeInstanceId = kNoInstance;
        return NVML_SUCCESS;
      }
    }
    // Manual time never moves while we wait, so nothing can come due: answer at once.
    const auto now = std::chrono::steady_clock::now();
    if (c.world->clock.manual() || now >= deadline) return NVML_ERROR_TIMEOUT;
    auto wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline - now);
    if (next_due != kForever) {
      auto until_due = std::chrono::duration<double>((next_due - c.t) / c.world->clock.speed());
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::steady_clock::duration>(until_due) +
                                std::chrono::milliseconds(1));
    }
    // Poll at least every 100 ms so a re-init or a gwSimSetTime jump is noticed.
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(wait, std::chrono::milliseconds(100)));
  }
}

nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
  return nvmlEventSetWait_v2(set, data, timeoutms);
}

}  // extern "C"
