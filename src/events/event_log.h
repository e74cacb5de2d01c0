// The merged event log (R26): every source publishes into it; it de-duplicates, keeps a bounded
// ring of recent events for the API, and counts Xids per (GPU, code) for the exporter.
//
// De-duplication: an incoming event is merged into an earlier one when both are about the same
// GPU (UUID, else PCI bus id, else index), are the same kind and code, lie within the window
// (default 5 s) of each other, and either
//   - the incoming source has not seen the earlier one yet (NVML's Xid 79 and the kernel log's
//     Xid 79 line are one event), or
//   - one of them is the kernel log's "fallen off the bus" line (FallenOffBus, counted as Xid 79)
//     and the other an Xid 79: the Xid 79 line followed by "GPU has fallen off the bus" is one.
// The merged event keeps the richer text (the kernel log's: pid, process, message, raw line), the
// earliest timestamp, the GPU identity of whichever had it, and the other sources in
// also_seen_by.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/result.h"
#include "events/gpu_event.h"

namespace gw::events {

// What reading the files back trusts (they are ours, but a damaged disk or a hand edit can put
// anything there): an event's line is at most a kernel-log line escaped as JSON and its fields; the
// counters file holds a few hundred bytes per counted pair; ids stay below 2^63 so the next one
// never wraps; an event's time lies between 1970 and the end of 9999.
inline constexpr std::size_t kMaxEventLineBytes = 256 * 1024;
inline constexpr std::size_t kMaxCountersFileBytes = 16 << 20;
inline constexpr std::uint64_t kMaxEventId = std::uint64_t{1} << 63;
inline constexpr std::int64_t kMaxEventTimeMs = 253402300799999;  // the last millisecond of 9999

struct EventLogOptions {
  std::size_t capacity = 10000;   // events kept in memory
  std::int64_t window_ms = 5000;  // de-duplication window
  // JSON-lines file (one event per line, a merged event is appended again with the same id);
  // empty: nothing persisted. Loaded by the constructor.
  std::string persist_path;
  // When an append would take persist_path past this, it is renamed to persist_path + ".1"
  // (replacing the one before) and a new file begun: the log never holds more than twice this.
  std::size_t max_bytes = 16 << 20;
  // The Xid counters as of the last rotation (or clean stop), with the last event id they
  // include, written atomically before a rotation drops events. Loaded with persist_path: the
  // counters plus the events after that id in the files count from the log's beginning across
  // restarts and rotations. Empty: not kept (the counters count what the files still hold).
  std::string counters_path;
  // Distinct (GPU, code) counters kept; Xids of further pairs are counted in xidDropped().
  std::size_t max_counters = 4096;
};

struct XidCount {
  int gpu_index = -1;
  std::string gpu_uuid;
  int code = 0;
  std::uint64_t count = 0;
  std::int64_t last_ms = 0;  // when the latest of them happened; 0 when a counters file did not say
};

class EventLog {
 public:
  // Events that are new (not merged) are republished on `out` when given.
  explicit EventLog(EventLogOptions options = {}, EventBus* out = nullptr);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Subscribes add() to a source bus. The log must outlive the bus's publishing.
  void attach(EventBus& in);

  struct AddResult {
    bool merged = false;
    GpuEvent event;  // as stored (after merging)
  };
  AddResult add(GpuEvent e);

  // Events with timestamp_ms >= ts_ms, oldest first; at most `limit` (the newest) if limit > 0.
  std::vector<GpuEvent> since(std::int64_t ts_ms, std::size_t limit = 0) const;
  std::vector<GpuEvent> all() const { return since(INT64_MIN); }
  std::size_t size() const;
  std::uint64_t mergedCount() const;
  // Xid counters (FallenOffBus counts as Xid 79), one per (GPU, code); never decrease.
  std::vector<XidCount> xidCounts() const;
  // Sum of xidCounts(): grows with every Xid counted, so a cache of them knows when to refresh.
  std::uint64_t xidTotal() const;
  // Xids not counted because max_counters distinct (GPU, code) pairs were already counted.
  std::uint64_t xidDropped() const;
  // Appends the events the file refused so far (a full disk), if any; called periodically so that
  // they reach the file when space returns even if no new event comes. True when none are left.
  bool retryPersist();
  // Why loading the persisted file failed or skipped lines, or the last rotation / append / counter
  // write failed; empty if nothing went wrong.
  std::string loadError() const;
  // Writes the counters file now (the destructor does too).
  Status saveCounters();

  // Exposed for tests: would these two events be merged (ignoring the window)?
  static bool sameGpu(const GpuEvent& a, const GpuEvent& b);

 private:
  void load();
  void loadFile(const std::string& path, std::uint64_t counted_through, std::uint64_t* max_id, std::size_t* lines,
                std::size_t* bad);
  bool loadCounters(std::uint64_t* through_id);
  Status saveCountersLocked();
  void rotateLocked();
  void persist(const GpuEvent& e);
  bool writeUnpersisted();  // under mu_
  void count(const GpuEvent& e);
  void placeInRing(GpuEvent e);

  EventLogOptions opt_;
  EventBus* out_;
  mutable std::mutex mu_;
  std::deque<GpuEvent> ring_;
  std::uint64_t next_id_ = 1;
  std::uint64_t merged_ = 0;
  struct Counter {
    std::uint64_t count = 0;
    std::int64_t last_ms = 0;
  };
  std::map<std::tuple<int, std::string, int>, Counter> xids_;  // (index, uuid, code)
  std::uint64_t xid_total_ = 0;
  std::uint64_t xid_dropped_ = 0;
  std::uint64_t file_bytes_ = 0;  // size of persist_path
  std::string load_error_;
  std::deque<std::string> unpersisted_;  // lines not yet appended (the disk refused them)
};

// JSON form used by the persisted file (and usable by the API).
std::string eventToJsonLine(const GpuEvent& e);
Result<GpuEvent> eventFromJsonLine(const std::string& line);

}  // namespace gw::events
