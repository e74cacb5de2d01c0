// NVML events (R26): one thread registers every GPU for the supported types among Xid, single-
// and double-bit ECC, P-state and clock changes, waits on the event set and publishes a GpuEvent
// per NVML event.
//
// Failure is local: a GPU that is lost (GPU_IS_LOST) is dropped from the set and the others keep
// being heard. When the driver goes away (UNINITIALIZED, DRIVER_NOT_LOADED, a version mismatch,
// an event set that became invalid) the thread stops and healthy() turns false; the owner
// re-initialises the session and calls start() again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "events/gpu_event.h"
#include "nvml/nvml.h"

namespace gw::events {

struct NvmlEventSourceOptions {
  unsigned wait_ms = 500;  // nvmlEventSetWait_v2 timeout; bounds how long stop() takes
  // Wanted types; each GPU registers the subset it supports. Not clock changes: a real H200
  // (driver 580.159.04) under load sent 1126 of them in 46 s, each one stored and served as an
  // event while saying nothing the sampled clocks do not (the kind stays for whoever asks).
  unsigned long long types = nvmlEventTypeXidCriticalError | nvmlEventTypeSingleBitEccError |
                             nvmlEventTypeDoubleBitEccError | nvmlEventTypePState;
  // When a wait answers "timeout" much sooner than asked (the simulator's manual clock does),
  // sleep this long before waiting again, so the thread does not spin.
  unsigned idle_ms = 20;
  // GPUs not to register now (the caller knows them stalled: every call on a hung GPU blocks for
  // as long as the hang, and registration must not). Listed in stats as skipped.
  std::function<bool(unsigned index)> skip;
  // false: no thread; the owner calls drain() (a synchronous monitor on the simulator's manual
  // clock, where events must arrive in the pass that caused them).
  bool thread = true;
};

struct NvmlEventSourceStats {
  std::uint64_t events = 0;      // published
  std::uint64_t waits = 0;       // wait calls
  std::uint64_t errors = 0;      // wait calls that failed (other than timeout)
  std::vector<int> registered;   // GPU indices in the event set
  std::vector<int> lost;         // GPU indices dropped as lost
  std::vector<int> unsupported;  // GPU indices that support none of the wanted types
  std::vector<int> skipped;      // GPU indices the caller asked to leave out (stalled)
};

class NvmlEventSource {
 public:
  // The session must outlive the source (or at least its running thread).
  NvmlEventSource(const nvml::Session& session, EventBus& bus, NvmlEventSourceOptions options = {});
  ~NvmlEventSource();
  NvmlEventSource(const NvmlEventSource&) = delete;
  NvmlEventSource& operator=(const NvmlEventSource&) = delete;

  // Creates the event set and registers every GPU synchronously (events that happen after
  // start() returns are heard), then starts the thread. Fails when NVML cannot create a set or
  // enumerate GPUs. Calling start() on a running source restarts it.
  Status start();
  // Stops the thread (within about wait_ms) and frees the set. Idempotent.
  void stop();

  bool running() const { return running_.load(); }
  // False once the thread stopped on a driver-level error (see lastError()).
  bool healthy() const { return healthy_.load(); }
  std::string lastError() const;
  NvmlEventSourceStats stats() const;
  // Without a thread (options.thread = false): publishes the events pending now, on the caller's
  // thread, without waiting. Does nothing with a thread.
  void drain();

 private:
  enum class Waited { kEvent, kTimeout, kRetry, kStop };
  // One wait on the set: an event is published; an error is recorded and handled.
  Waited waitOnce(unsigned wait_ms);
  struct GpuInfo {
    int index = -1;
    std::string uuid;
    std::string bus_id;
  };

  Status registerAll();  // (re)creates set_ and registers the live GPUs
  void run();
  void freeSet();
  void setError(const std::string& e);
  GpuInfo infoFor(nvmlDevice_t h);
  GpuEvent toEvent(const nvmlEventData_t& d);
  bool dropLostGpus();  // true if at least one GPU was found lost

  const nvml::Session& session_;
  EventBus& bus_;
  NvmlEventSourceOptions opt_;

  nvmlEventSet_t set_ = nullptr;
  std::map<nvmlDevice_t, GpuInfo> gpus_;  // registered devices (thread-owned while running)
  std::vector<nvmlDevice_t> lost_handles_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<bool> healthy_{true};
  mutable std::mutex mu_;  // guards stats_, last_error_, and the cv
  std::condition_variable cv_;
  NvmlEventSourceStats stats_;
  std::string last_error_;
};

}  // namespace gw::events
