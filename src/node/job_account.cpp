#include "node/job_account.h"

#include <algorithm>
#include <cmath>

#include "knowledge/clock_events.h"
#include "platform/bounded_json.h"

namespace gw::node {

using json = nlohmann::json;

namespace {

// The catalog fields the account reads, by key; one list so requiredFields and observe agree.
enum Col {
  kUtil,
  kMemUtil,
  kFbUsed,
  kTemp,
  kPower,
  kEnergy,
  kReasons,
  kEccSbe,
  kEccDbe,
  kRetiredSbe,
  kRetiredDbe,
  kRemapCorr,
  kRemapUnc,
  kPcieReplay,
  kPcieTx,
  kPcieRx,
  kSmClock,
  kNvlTx,
  kNvlRx,
  kColN
};
constexpr const char* kKeys[kColN] = {"gpu_util",
                                      "mem_copy_util",
                                      "fb_used",
                                      "gpu_temp",
                                      "power_usage",
                                      "total_energy",
                                      "clock_event_reasons",
                                      "ecc_sbe_volatile",
                                      "ecc_dbe_volatile",
                                      "retired_pages_sbe",
                                      "retired_pages_dbe",
                                      "remapped_rows_correctable",
                                      "remapped_rows_uncorrectable",
                                      "pcie_replay_counter",
                                      "pcie_tx_throughput",
                                      "pcie_rx_throughput",
                                      "sm_clock",
                                      "nvlink_tx_kib",
                                      "nvlink_rx_kib"};

const std::vector<std::size_t>& colIndex() {
  static const std::vector<std::size_t> idx = [] {
    std::vector<std::size_t> v;
    for (const char* k : kKeys) {
      const fields::Field* f = fields::findByKey(k);
      v.push_back(f ? fields::indexOf(*f) : SIZE_MAX);
    }
    return v;
  }();
  return idx;
}

std::optional<double> value(const collect::GpuView& v, Col c) {
  const std::size_t i = colIndex()[c];
  if (i >= v.values.size() || !v.values[i].valid || !std::isfinite(v.values[i].value)) return std::nullopt;
  return v.values[i].value;
}

double num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

std::vector<const fields::Field*> JobGpuAccount::requiredFields() {
  std::vector<const fields::Field*> out;
  for (const char* k : kKeys)
    if (const fields::Field* f = fields::findByKey(k)) out.push_back(f);
  return out;
}

void JobGpuAccount::Counter::take(double v) {
  if (!seen) {
    seen = true;
    first = last = v;
    return;
  }
  gained += v >= last ? v - last : v;  // lower than before: the counter restarted from 0
  last = v;
}

void JobGpuAccount::Stat::take(double v) {
  max = n == 0 ? v : std::max(max, v);
  sum += v;
  ++n;
}

void JobGpuAccount::observe(const collect::GpuView& v, std::int64_t now_ms) {
  if (v.state != collect::GpuState::Up) return;
  const std::int64_t at = v.last_sample_ms > 0 ? v.last_sample_ms : now_ms;
  if (at <= last_ms_ || at < start_ms_) return;
  const std::int64_t gap = last_ms_ > 0 ? at - last_ms_ : 0;
  const bool timed = gap > 0 && gap <= kMaxSampleGapMs;  // credit this sample's rates over the gap
  last_ms_ = at;
  ++samples_;
  if (auto x = value(v, kUtil)) {
    util_.take(*x);
    if (*x >= kLoadUtilPct) {
      load_util_.take(*x);
      if (auto c = value(v, kSmClock)) load_clock_.take(*c);
      if (auto p = value(v, kPower)) load_power_.take(*p);
      if (auto t = value(v, kTemp)) load_temp_.take(*t);
    }
  }
  if (auto x = value(v, kMemUtil)) mem_util_.take(*x);
  if (auto x = value(v, kFbUsed)) mem_used_max_mib_ = std::max(mem_used_max_mib_, *x);
  if (auto x = value(v, kTemp)) temp_.take(*x);
  if (auto x = value(v, kPower)) {
    power_.take(*x);
    if (timed) energy_integrated_j_ += *x * static_cast<double>(gap) / 1000.0;
  }
  if (auto x = value(v, kEnergy)) energy_mj_.take(*x);
  if (auto x = value(v, kReasons); x && timed) {
    const auto bits = static_cast<std::uint64_t>(*x);
    for (const auto& r : knowledge::clockEventReasons())
      if (r.bit != knowledge::kClockEventGpuIdle && (bits & r.bit)) throttle_ms_[r.name] += gap;
  }
  if (auto x = value(v, kEccSbe)) ecc_sbe_.take(*x);
  if (auto x = value(v, kEccDbe)) ecc_dbe_.take(*x);
  if (auto x = value(v, kRetiredSbe)) retired_sbe_.take(*x);
  if (auto x = value(v, kRetiredDbe)) retired_dbe_.take(*x);
  if (auto x = value(v, kRemapCorr)) remapped_corr_.take(*x);
  if (auto x = value(v, kRemapUnc)) remapped_unc_.take(*x);
  if (auto x = value(v, kPcieReplay)) pcie_replays_.take(*x);
  if (auto x = value(v, kNvlTx)) nvlink_tx_kib_.take(*x);
  if (auto x = value(v, kNvlRx)) nvlink_rx_kib_.take(*x);
  // NVML's PCIe throughput is a rate in KB/s over its last 20 ms window: bytes ≈ rate × time.
  auto tx = value(v, kPcieTx), rx = value(v, kPcieRx);
  if (tx || rx) pcie_seen_ = true;
  if (timed) {
    if (tx) pcie_tx_bytes_ += *tx * 1024.0 * static_cast<double>(gap) / 1000.0;
    if (rx) pcie_rx_bytes_ += *rx * 1024.0 * static_cast<double>(gap) / 1000.0;
  }
}

void JobGpuAccount::addXid(int code) { ++xids_[code]; }

const JobGpuAccount::StatPart JobGpuAccount::kStatParts[] = {
    {"util", &JobGpuAccount::util_},
    {"mem_util", &JobGpuAccount::mem_util_},
    {"temp", &JobGpuAccount::temp_},
    {"power", &JobGpuAccount::power_},
    {"load_util", &JobGpuAccount::load_util_},
    {"load_clock", &JobGpuAccount::load_clock_},
    {"load_power", &JobGpuAccount::load_power_},
    {"load_temp", &JobGpuAccount::load_temp_},
};
const JobGpuAccount::CounterPart JobGpuAccount::kCounterParts[] = {
    {"energy_mj", &JobGpuAccount::energy_mj_},
    {"ecc_sbe", &JobGpuAccount::ecc_sbe_},
    {"ecc_dbe", &JobGpuAccount::ecc_dbe_},
    {"retired_sbe", &JobGpuAccount::retired_sbe_},
    {"retired_dbe", &JobGpuAccount::retired_dbe_},
    {"remapped_corr", &JobGpuAccount::remapped_corr_},
    {"remapped_unc", &JobGpuAccount::remapped_unc_},
    {"pcie_replays", &JobGpuAccount::pcie_replays_},
    {"nvlink_tx_kib", &JobGpuAccount::nvlink_tx_kib_},
    {"nvlink_rx_kib", &JobGpuAccount::nvlink_rx_kib_},
};

json JobGpuAccount::toJson() const {
  auto mean = [](const Stat& s) -> json { return s.n ? json(s.sum / static_cast<double>(s.n)) : json(nullptr); };
  auto maxOf = [](const Stat& s) -> json { return s.n ? json(s.max) : json(nullptr); };
  auto delta = [](const Counter& c) -> json { return c.seen ? json(c.gained) : json(nullptr); };
  auto counter = [](const Counter& c) {
    return json{{"seen", c.seen}, {"first", c.first}, {"last", c.last}, {"gained", c.gained}};
  };
  auto stat = [](const Stat& s) { return json{{"n", s.n}, {"sum", s.sum}, {"max", s.max}}; };
  json xids = json::object();
  std::uint64_t xid_total = 0;
  for (const auto& [code, n] : xids_) {
    xids[std::to_string(code)] = n;
    xid_total += n;
  }
  json throttle = json::object();
  for (const auto& [name, ms] : throttle_ms_) throttle[name] = static_cast<double>(ms) / 1000.0;
  const bool counter_energy = energy_mj_.seen && samples_ > 1;
  json j = {
      {"uuid", uuid_},
      {"index", index_},
      {"start_ms", start_ms_},
      {"end_ms", end_ms_ ? json(end_ms_) : json(nullptr)},
      {"samples", samples_},
      {"energy_j",
       counter_energy ? json(energy_mj_.gained / 1000.0) : (power_.n > 1 ? json(energy_integrated_j_) : json(nullptr))},
      {"energy_source", counter_energy ? "counter" : "power"},
      {"utilization_pct", {{"mean", mean(util_)}, {"max", maxOf(util_)}}},
      {"memory_utilization_pct", {{"mean", mean(mem_util_)}, {"max", maxOf(mem_util_)}}},
      {"memory_used_max_bytes", samples_ ? json(mem_used_max_mib_ * 1024.0 * 1024.0) : json(nullptr)},
      {"temperature_c", {{"mean", mean(temp_)}, {"max", maxOf(temp_)}}},
      {"power_w", {{"mean", mean(power_)}, {"max", maxOf(power_)}}},
      {"throttled_s", throttle},
      {"xids", xids},
      {"xid_count", xid_total},
      {"ecc_sbe", delta(ecc_sbe_)},
      {"ecc_dbe", delta(ecc_dbe_)},
      {"retired_pages_sbe", delta(retired_sbe_)},
      {"retired_pages_dbe", delta(retired_dbe_)},
      {"remapped_rows_correctable", delta(remapped_corr_)},
      {"remapped_rows_uncorrectable", delta(remapped_unc_)},
      {"pcie_replays", delta(pcie_replays_)},
      {"pcie_tx_bytes", pcie_seen_ ? json(pcie_tx_bytes_) : json(nullptr)},
      {"pcie_rx_bytes", pcie_seen_ ? json(pcie_rx_bytes_) : json(nullptr)},
      {"nvlink_tx_bytes", nvlink_tx_kib_.seen ? json(nvlink_tx_kib_.gained * 1024.0) : json(nullptr)},
      {"nvlink_rx_bytes", nvlink_rx_kib_.seen ? json(nvlink_rx_kib_.gained * 1024.0) : json(nullptr)},
      {"at_load",
       {{"samples", load_util_.n},
        {"utilization_pct", mean(load_util_)},
        {"sm_clock_mhz", mean(load_clock_)},
        {"power_w", mean(load_power_)},
        {"temperature_c", mean(load_temp_)}}},
      // Running state, so that an agent restarted during a job carries on where it stopped.
      {"state",
       {{"last_ms", last_ms_},
        {"mem_used_max_mib", mem_used_max_mib_},
        {"energy_integrated_j", energy_integrated_j_},
        {"pcie_seen", pcie_seen_}}},
  };
  for (const auto& p : kStatParts) j["state"][p.key] = stat(this->*p.member);
  for (const auto& p : kCounterParts) j["state"][p.key] = counter(this->*p.member);
  j["throttled_ms"] = json::object();
  for (const auto& [name, ms] : throttle_ms_) j["throttled_ms"][name] = ms;
  return j;
}

std::optional<JobGpuAccount> JobGpuAccount::fromJson(const json& j) {
  if (!j.is_object() || !j.contains("uuid") || !j["uuid"].is_string() || !j.contains("state") ||
      !j["state"].is_object())
    return std::nullopt;
  JobGpuAccount a;
  a.uuid_ = j["uuid"].get<std::string>();
  a.index_ = static_cast<int>(num(j, "index"));
  a.start_ms_ = static_cast<std::int64_t>(num(j, "start_ms"));
  a.end_ms_ = static_cast<std::int64_t>(num(j, "end_ms"));
  a.samples_ = static_cast<std::uint64_t>(num(j, "samples"));
  const json& s = j["state"];
  auto counter = [&](const char* k, Counter& c) {
    if (!s.contains(k) || !s[k].is_object()) return;
    const json& o = s[k];
    c.seen = o.value("seen", false);
    c.first = num(o, "first");
    c.last = num(o, "last");
    c.gained = num(o, "gained");
  };
  auto stat = [&](const char* k, Stat& st) {
    if (!s.contains(k) || !s[k].is_object()) return;
    st.n = static_cast<std::uint64_t>(num(s[k], "n"));
    st.sum = num(s[k], "sum");
    st.max = num(s[k], "max");
  };
  a.last_ms_ = static_cast<std::int64_t>(num(s, "last_ms"));
  for (const auto& p : kStatParts) stat(p.key, a.*p.member);
  for (const auto& p : kCounterParts) counter(p.key, a.*p.member);
  a.mem_used_max_mib_ = num(s, "mem_used_max_mib");
  a.energy_integrated_j_ = num(s, "energy_integrated_j");
  a.pcie_seen_ = s.value("pcie_seen", false);
  a.pcie_tx_bytes_ = num(j, "pcie_tx_bytes");
  a.pcie_rx_bytes_ = num(j, "pcie_rx_bytes");
  if (j.contains("throttled_ms") && j["throttled_ms"].is_object())
    for (const auto& [k, v] : j["throttled_ms"].items())
      if (auto ms = platform::asWholeNumber<std::int64_t>(v)) a.throttle_ms_[k] = *ms;
  if (j.contains("xids") && j["xids"].is_object())
    for (const auto& [k, v] : j["xids"].items()) {
      char* end = nullptr;
      const long code = std::strtol(k.c_str(), &end, 10);
      if (end && *end == '\0' && code > 0 && code < 100000 && v.is_number_unsigned())
        a.xids_[static_cast<int>(code)] = v.get<std::uint64_t>();
    }
  return a;
}

}  // namespace gw::node
