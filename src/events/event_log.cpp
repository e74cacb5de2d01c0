#include "events/event_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "events/line_reader.h"
#include "platform/atomic_file.h"
#include "platform/bounded_json.h"
#include "platform/regular_file.h"

namespace gw::events {
namespace {

using platform::wholeNumber;
using platform::wholeNumberOr;

std::uint64_t saturatingAdd(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

// An event id from a file: at most kMaxEventId.
std::uint64_t eventId(const nlohmann::json& j, const char* key) {
  const auto id = wholeNumber<std::uint64_t>(j, key);
  if (id > kMaxEventId) throw std::runtime_error(std::string("\"") + key + "\" is past the largest event id");
  return id;
}

bool isXid79(const GpuEvent& e) {
  return (e.kind == EventKind::Xid && e.code == 79) || e.kind == EventKind::FallenOffBus;
}

bool seenBy(const GpuEvent& e, EventSource s) {
  return e.source == s || std::find(e.also_seen_by.begin(), e.also_seen_by.end(), s) != e.also_seen_by.end();
}

std::optional<EventKind> kindFromName(const std::string& n) {
  for (EventKind k : {EventKind::Xid, EventKind::SXid, EventKind::EccSingleBit, EventKind::EccDoubleBit,
                      EventKind::PState, EventKind::Clock, EventKind::FallenOffBus}) {
    if (n == eventKindName(k)) return k;
  }
  return std::nullopt;
}

std::optional<EventSource> sourceFromName(const std::string& n) {
  for (EventSource s : {EventSource::Nvml, EventSource::KernelLog}) {
    if (n == eventSourceName(s)) return s;
  }
  return std::nullopt;
}

// Merges b into a (a is the earlier, stored one); returns the result.
GpuEvent merge(const GpuEvent& a, const GpuEvent& b) {
  // The primary (whose text is kept): the kernel log's explicit Xid line over NVML's event, and
  // an explicit Xid over an inferred "fallen off the bus".
  auto richness = [](const GpuEvent& e) {
    int r = 0;
    if (e.source == EventSource::KernelLog) r += 2;
    if (e.kind != EventKind::FallenOffBus) r += 1;
    return r;
  };
  const bool b_primary = richness(b) > richness(a);
  const GpuEvent& p = b_primary ? b : a;
  const GpuEvent& o = b_primary ? a : b;
  GpuEvent m = p;
  m.id = a.id;
  m.timestamp_ms = std::min(a.timestamp_ms, b.timestamp_ms);
  if (isXid79(a) && isXid79(b)) {
    m.kind = (a.kind == EventKind::Xid || b.kind == EventKind::Xid) ? EventKind::Xid : EventKind::FallenOffBus;
    m.code = 79;
  }
  if (m.gpu_index < 0) m.gpu_index = o.gpu_index;
  if (m.gpu_uuid.empty()) m.gpu_uuid = o.gpu_uuid;
  if (m.pci_bus_id.empty()) m.pci_bus_id = o.pci_bus_id;
  if (m.pid < 0 && o.pid >= 0) {
    m.pid = o.pid;
    m.process = o.process;
  }
  if (m.message.empty()) m.message = o.message;
  if (m.raw.empty()) m.raw = o.raw;
  // Sources: everything either has seen, minus the primary.
  m.also_seen_by.clear();
  for (EventSource s : {EventSource::Nvml, EventSource::KernelLog}) {
    if (s != m.source && (seenBy(a, s) || seenBy(b, s))) m.also_seen_by.push_back(s);
  }
  return m;
}

}  // namespace

bool EventLog::sameGpu(const GpuEvent& a, const GpuEvent& b) {
  if (!a.gpu_uuid.empty() && !b.gpu_uuid.empty()) return a.gpu_uuid == b.gpu_uuid;
  if (!a.pci_bus_id.empty() && !b.pci_bus_id.empty()) return a.pci_bus_id == b.pci_bus_id;
  if (a.gpu_index >= 0 && b.gpu_index >= 0) return a.gpu_index == b.gpu_index;
  return false;
}

EventLog::EventLog(EventLogOptions options, EventBus* out) : opt_(std::move(options)), out_(out) {
  if (opt_.capacity == 0) opt_.capacity = 1;
  if (opt_.max_bytes < 4096) opt_.max_bytes = 4096;
  if (!opt_.persist_path.empty()) load();
}

EventLog::~EventLog() {
  std::lock_guard lock(mu_);
  if (!opt_.persist_path.empty()) (void)saveCountersLocked();
}

void EventLog::attach(EventBus& in) {
  in.subscribe([this](const GpuEvent& e) { add(e); });
}

void EventLog::count(const GpuEvent& e) {
  if (e.kind != EventKind::Xid && e.kind != EventKind::FallenOffBus) return;
  const int code = e.kind == EventKind::FallenOffBus ? 79 : e.code;
  auto key = std::make_tuple(e.gpu_index, e.gpu_uuid, code);
  auto it = xids_.find(key);
  if (it == xids_.end()) {
    if (xids_.size() >= opt_.max_counters) {
      ++xid_dropped_;
      return;
    }
    it = xids_.emplace(std::move(key), Counter{}).first;
  }
  it->second.count = saturatingAdd(it->second.count, 1);  // a counters file may have started it at the top
  it->second.last_ms = std::max(it->second.last_ms, e.timestamp_ms);
  xid_total_ = saturatingAdd(xid_total_, 1);
}

EventLog::AddResult EventLog::add(GpuEvent e) {
  AddResult res;
  {
    std::lock_guard lock(mu_);
    e.also_seen_by.erase(std::remove(e.also_seen_by.begin(), e.also_seen_by.end(), e.source), e.also_seen_by.end());
    // Newest first: candidates are rarely more than a few entries back.
    for (auto it = ring_.rbegin(); it != ring_.rend(); ++it) {
      GpuEvent& old = *it;
      if (std::llabs(old.timestamp_ms - e.timestamp_ms) > opt_.window_ms) {
        if (old.timestamp_ms < e.timestamp_ms - opt_.window_ms * 4) break;  // far enough back
        continue;
      }
      if (!sameGpu(old, e)) continue;
      const bool both79 = isXid79(old) && isXid79(e);
      const bool same = both79 || (old.kind == e.kind && old.code == e.code);
      if (!same) continue;
      const bool new_source = !seenBy(old, e.source);
      const bool fallen_pair = both79 && ((old.kind == EventKind::FallenOffBus) != (e.kind == EventKind::FallenOffBus));
      if (!new_source && !fallen_pair) continue;
      old = merge(old, e);
      ++merged_;
      res.merged = true;
      res.event = old;
      break;
    }
    if (!res.merged) {
      e.id = next_id_++;
      ring_.push_back(e);
      while (ring_.size() > opt_.capacity) ring_.pop_front();
      count(e);
      res.event = e;
    }
    persist(res.event);
  }
  if (!res.merged && out_) out_->publish(res.event);
  return res;
}

std::vector<GpuEvent> EventLog::since(std::int64_t ts_ms, std::size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<GpuEvent> out;
  for (const auto& e : ring_) {
    if (e.timestamp_ms >= ts_ms) out.push_back(e);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GpuEvent& a, const GpuEvent& b) { return a.timestamp_ms < b.timestamp_ms; });
  if (limit > 0 && out.size() > limit) out.erase(out.begin(), out.end() - static_cast<std::ptrdiff_t>(limit));
  return out;
}

std::size_t EventLog::size() const {
  std::lock_guard lock(mu_);
  return ring_.size();
}

std::uint64_t EventLog::mergedCount() const {
  std::lock_guard lock(mu_);
  return merged_;
}

std::vector<XidCount> EventLog::xidCounts() const {
  std::lock_guard lock(mu_);
  std::vector<XidCount> out;
  for (const auto& [k, n] : xids_) {
    out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n.count, n.last_ms});
  }
  return out;
}

std::uint64_t EventLog::xidTotal() const {
  std::lock_guard lock(mu_);
  return xid_total_;
}

std::uint64_t EventLog::xidDropped() const {
  std::lock_guard lock(mu_);
  return xid_dropped_;
}

std::string EventLog::loadError() const {
  std::lock_guard lock(mu_);
  return load_error_;
}

// ------------------------------------------------------------------ persistence

std::string eventToJsonLine(const GpuEvent& e) {
  nlohmann::json j;
  j["id"] = e.id;
  j["ts_ms"] = e.timestamp_ms;
  j["source"] = eventSourceName(e.source);
  j["kind"] = eventKindName(e.kind);
  j["code"] = e.code;
  j["gpu"] = e.gpu_index;
  j["uuid"] = e.gpu_uuid;
  j["bus_id"] = e.pci_bus_id;
  j["message"] = e.message;
  j["raw"] = e.raw;
  j["pid"] = e.pid;
  j["process"] = e.process;
  auto also = nlohmann::json::array();
  for (EventSource s : e.also_seen_by) also.push_back(eventSourceName(s));
  j["also_seen_by"] = also;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<GpuEvent> eventFromJsonLine(const std::string& line) {
  // An event's line is an object one level deep with one list: the bounds leave room and no more.
  auto parsed = platform::parseBounded(line, 3, 256);
  if (!parsed) return Status::Error("bad event line: " + parsed.error());
  try {
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) return Status::Error("bad event line: not a JSON object");
    GpuEvent e;
    e.id = eventId(j, "id");
    e.timestamp_ms = wholeNumber<std::int64_t>(j, "ts_ms");
    // The de-duplication window subtracts times: one from outside the calendar would overflow it.
    if (e.timestamp_ms < 0 || e.timestamp_ms > kMaxEventTimeMs)
      return Status::Error("bad event line: \"ts_ms\" is not a time from 1970 to 9999");
    auto src = sourceFromName(j.at("source").get<std::string>());
    auto kind = kindFromName(j.at("kind").get<std::string>());
    if (!src || !kind) return Status::Error("unknown source or kind");
    e.source = *src;
    e.kind = *kind;
    e.code = wholeNumberOr(j, "code", 0);
    e.gpu_index = wholeNumberOr(j, "gpu", -1);
    e.gpu_uuid = j.value("uuid", std::string());
    e.pci_bus_id = j.value("bus_id", std::string());
    e.message = j.value("message", std::string());
    e.raw = j.value("raw", std::string());
    e.pid = wholeNumberOr(j, "pid", -1);
    e.process = j.value("process", std::string());
    if (j.contains("also_seen_by")) {
      for (const auto& s : j["also_seen_by"]) {
        if (auto v = sourceFromName(s.get<std::string>())) e.also_seen_by.push_back(*v);
      }
    }
    return e;
  } catch (const std::exception& ex) {
    return Status::Error(std::string("bad event line: ") + ex.what());
  }
}

bool EventLog::retryPersist() {
  std::lock_guard lock(mu_);
  return writeUnpersisted();
}

void EventLog::rotateLocked() {
  // The counters first: once the rename below replaces the older file, its events are gone, and
  // the counters (which say up to which id they counted) are what keeps them counted.
  if (Status s = saveCountersLocked(); !s) {
    load_error_ = "not rotating " + opt_.persist_path + ": " + s.message();
    return;
  }
  const std::string older = opt_.persist_path + ".1";
  if (::rename(opt_.persist_path.c_str(), older.c_str()) != 0) {
    load_error_ = "cannot rotate " + opt_.persist_path + ": " + std::strerror(errno);
    return;
  }
  file_bytes_ = 0;
}

void EventLog::persist(const GpuEvent& e) {
  if (opt_.persist_path.empty()) return;
  // Lines the disk refused (full; logged once by storage health) wait in memory, oldest first,
  // and go out with the next event or retryPersist(); bounded like the ring.
  unpersisted_.push_back(eventToJsonLine(e) + '\n');
  while (unpersisted_.size() > opt_.capacity) unpersisted_.pop_front();
  writeUnpersisted();
}

bool EventLog::writeUnpersisted() {
  if (unpersisted_.empty()) return true;
  std::string text;
  for (const auto& l : unpersisted_) text += l;
  if (file_bytes_ > 0 && file_bytes_ + text.size() > opt_.max_bytes) rotateLocked();
  if (Status st = platform::appendToFile(opt_.persist_path, text, 0640); !st.ok()) {
    load_error_ = "cannot append to " + opt_.persist_path + ": " + st.message();
    return false;
  }
  struct stat sb {};
  file_bytes_ =
      ::stat(opt_.persist_path.c_str(), &sb) == 0 ? static_cast<std::uint64_t>(sb.st_size) : file_bytes_ + text.size();
  unpersisted_.clear();
  return true;
}

Status EventLog::saveCounters() {
  std::lock_guard lock(mu_);
  return saveCountersLocked();
}

Status EventLog::saveCountersLocked() {
  if (opt_.counters_path.empty()) return Status::Ok();
  nlohmann::json j;
  j["through_id"] = next_id_ - 1;  // every event up to this id is counted below
  auto list = nlohmann::json::array();
  for (const auto& [k, n] : xids_)
    list.push_back({{"gpu", std::get<0>(k)},
                    {"uuid", std::get<1>(k)},
                    {"code", std::get<2>(k)},
                    {"count", n.count},
                    {"last_ms", n.last_ms}});
  j["xids"] = std::move(list);
  j["dropped"] = xid_dropped_;
  return platform::writeFileAtomic(opt_.counters_path,
                                   j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", 0640);
}

bool EventLog::loadCounters(std::uint64_t* through_id) {
  if (opt_.counters_path.empty()) return false;
  const auto unreadable = [&](const std::string& why) {
    load_error_ =
        "ignoring unreadable Xid counters " + opt_.counters_path + " (" + why + "): counting what the event log holds";
    return false;
  };
  auto text = platform::readRegularFileIfThere(opt_.counters_path, kMaxCountersFileBytes, "the Xid counters");
  if (!text) return unreadable(text.error());
  if (!*text) return false;  // none written yet
  auto parsed = platform::parseBounded(**text, 4);
  if (!parsed) return unreadable(parsed.error());
  try {
    const nlohmann::json& j = *parsed;
    const auto through = eventId(j, "through_id");
    std::map<std::tuple<int, std::string, int>, Counter> xids;
    std::uint64_t total = 0;
    for (const auto& x : j.at("xids")) {
      if (xids.size() >= opt_.max_counters) break;
      const auto n = wholeNumber<std::uint64_t>(x, "count");
      // Files written before last_ms was kept lack it: the time is unknown, the count is not.
      const auto last = wholeNumberOr(x, "last_ms", std::int64_t{0});
      Counter& c = xids[{wholeNumber<int>(x, "gpu"), x.at("uuid").get<std::string>(), wholeNumber<int>(x, "code")}];
      c.count = saturatingAdd(c.count, n);
      c.last_ms = std::max(c.last_ms, last);
      total = saturatingAdd(total, n);
    }
    xids_ = std::move(xids);
    xid_total_ = total;
    xid_dropped_ = wholeNumberOr(j, "dropped", std::uint64_t{0});
    *through_id = through;
    return true;
  } catch (const std::exception& ex) {
    return unreadable(ex.what());
  }
}

void EventLog::placeInRing(GpuEvent e) {
  for (auto it = ring_.rbegin(); it != ring_.rend(); ++it) {
    if (it->id == e.id) {
      *it = std::move(e);  // a later (merged) version of the same event
      return;
    }
    if (it->id < e.id) break;
  }
}

// Streams one file: a line with a new id is a new event (ids only grow), one with an id seen before
// is a later (merged) version of it. New events after `counted_through` are counted.
void EventLog::loadFile(const std::string& path, std::uint64_t counted_through, std::uint64_t* max_id,
                        std::size_t* lines, std::size_t* bad) {
  std::ifstream in(path);
  if (!in) return;
  forEachBoundedLine(
      in,
      [&](std::string_view text, bool truncated) {
        if (text.empty()) return;
        ++*lines;
        auto r = truncated ? Result<GpuEvent>(Status::Error("line too long")) : eventFromJsonLine(std::string(text));
        if (!r.ok()) {
          ++*bad;
          return;
        }
        GpuEvent e = std::move(r).value();
        if (e.id <= *max_id) {
          placeInRing(std::move(e));
          return;
        }
        *max_id = e.id;
        if (e.id > counted_through) count(e);
        ring_.push_back(std::move(e));
        while (ring_.size() > opt_.capacity) ring_.pop_front();
      },
      kMaxEventLineBytes);
}

void EventLog::load() {
  std::lock_guard lock(mu_);
  std::uint64_t through = 0;
  const bool have_counters = loadCounters(&through);
  std::uint64_t max_id = 0;
  std::size_t lines = 0, bad = 0;
  loadFile(opt_.persist_path + ".1", have_counters ? through : 0, &max_id, &lines, &bad);
  loadFile(opt_.persist_path, have_counters ? through : 0, &max_id, &lines, &bad);
  next_id_ = std::max(max_id, through) + 1;
  struct stat st {};
  file_bytes_ = ::stat(opt_.persist_path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  if (bad > 0)
    load_error_ += (load_error_.empty() ? "" : "; ") + std::to_string(bad) + " unreadable line(s) in " +
                   opt_.persist_path + " skipped";
}

}  // namespace gw::events
