#include "events/event_log.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "platform/atomic_file.h"

namespace gw::events {
namespace {

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
  if (!opt_.persist_path.empty()) load();
}

void EventLog::attach(EventBus& in) {
  in.subscribe([this](const GpuEvent& e) { add(e); });
}

void EventLog::count(const GpuEvent& e) {
  if (e.kind != EventKind::Xid && e.kind != EventKind::FallenOffBus) return;
  const int code = e.kind == EventKind::FallenOffBus ? 79 : e.code;
  ++xids_[{e.gpu_index, e.gpu_uuid, code}];
  ++xid_total_;
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
    out.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), n});
  }
  return out;
}

std::uint64_t EventLog::xidTotal() const {
  std::lock_guard lock(mu_);
  return xid_total_;
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
  try {
    auto j = nlohmann::json::parse(line);
    GpuEvent e;
    e.id = j.at("id").get<std::uint64_t>();
    e.timestamp_ms = j.at("ts_ms").get<std::int64_t>();
    auto src = sourceFromName(j.at("source").get<std::string>());
    auto kind = kindFromName(j.at("kind").get<std::string>());
    if (!src || !kind) return Status::Error("unknown source or kind");
    e.source = *src;
    e.kind = *kind;
    e.code = j.value("code", 0);
    e.gpu_index = j.value("gpu", -1);
    e.gpu_uuid = j.value("uuid", std::string());
    e.pci_bus_id = j.value("bus_id", std::string());
    e.message = j.value("message", std::string());
    e.raw = j.value("raw", std::string());
    e.pid = j.value("pid", -1);
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
  if (!platform::appendToFile(opt_.persist_path, text).ok()) return false;
  unpersisted_.clear();
  return true;
}

void EventLog::load() {
  std::ifstream in(opt_.persist_path);
  if (!in) return;  // first run
  std::vector<GpuEvent> order;
  std::unordered_map<std::uint64_t, std::size_t> where;
  std::size_t lines = 0, bad = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++lines;
    auto r = eventFromJsonLine(line);
    if (!r.ok()) {
      ++bad;
      continue;
    }
    auto it = where.find(r->id);
    if (it != where.end()) {
      order[it->second] = *r;  // a later (merged) version of the same event
    } else {
      where[r->id] = order.size();
      order.push_back(*r);
    }
  }
  std::lock_guard lock(mu_);
  const std::size_t first = order.size() > opt_.capacity ? order.size() - opt_.capacity : 0;
  for (std::size_t i = first; i < order.size(); ++i) ring_.push_back(order[i]);
  for (const auto& e : order) next_id_ = std::max(next_id_, e.id + 1);
  for (const auto& e : ring_) count(e);
  if (bad > 0) load_error_ = std::to_string(bad) + " unreadable line(s) in " + opt_.persist_path + " skipped";
  // Compact: rewrite the file when it holds much more than what we keep.
  if (lines > 2 * opt_.capacity || bad > 0) {
    std::string text;
    for (const auto& e : ring_) text += eventToJsonLine(e) + '\n';
    if (Status s = platform::writeFileAtomic(opt_.persist_path, text); !s.ok())
      load_error_ += (load_error_.empty() ? "" : "; ") + s.message();
  }
}

}  // namespace gw::events
