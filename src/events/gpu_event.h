// One GPU event, whichever source saw it: NVML's event set (Xid, ECC, P-state, clock) or the
// kernel log (NVRM Xid lines, "fallen off the bus", NVLink5 Xid 144-150, NVSwitch SXid). Sources
// publish to an EventBus; consumers (health rules, incidents, the API) subscribe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace gw::events {

enum class EventKind { Xid, SXid, EccSingleBit, EccDoubleBit, PState, Clock, FallenOffBus };
const char* eventKindName(EventKind k);

enum class EventSource { Nvml, KernelLog };
const char* eventSourceName(EventSource s);

struct GpuEvent {
  std::int64_t timestamp_ms = 0;  // wall clock, ms since epoch
  EventSource source = EventSource::Nvml;
  EventKind kind = EventKind::Xid;
  int code = 0;        // Xid / SXid number; 0 where the kind has none
  int gpu_index = -1;  // -1 when the GPU could not be matched
  std::string gpu_uuid;
  std::string pci_bus_id;  // "00000000:3B:00.0"
  std::string message;     // text after the code, or a description
  std::string raw;         // the kernel-log line, when that is the source
  int pid = -1;
  std::string process;
  // Added by EventLog (event_log.h): a stable id within one log, and the other sources that saw
  // the same event (merged by the de-duplication window); `source` is the one whose text is kept.
  std::uint64_t id = 0;
  std::vector<EventSource> also_seen_by;
};

// A small synchronous fan-out: publish() calls every subscriber on the publishing thread.
class EventBus {
 public:
  using Handler = std::function<void(const GpuEvent&)>;
  void subscribe(Handler h) {
    std::lock_guard lock(mu_);
    handlers_.push_back(std::move(h));
  }
  void publish(const GpuEvent& e) {
    std::vector<Handler> hs;
    {
      std::lock_guard lock(mu_);
      hs = handlers_;
    }
    for (auto& h : hs) h(e);
  }

 private:
  std::mutex mu_;
  std::vector<Handler> handlers_;
};

}  // namespace gw::events
