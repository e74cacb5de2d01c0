#include "golden_inputs.h"

#include <bit>
#include <limits>
#include <random>

#include "alert/queue.h"
#include "fields/catalog.h"
#include "health/incidents.h"
#include "node/jobs.h"
#include "node/records.h"
#include "store/chunk_codec.h"
#include "store/store.h"

namespace gw::golden {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

double fromBits(uint64_t b) { return std::bit_cast<double>(b); }

// Delta-of-delta edges: every bucket's ends and one step past them (docs/store.md), plus escapes.
// Each edge e is followed by 0 and -e, so the delta returns and both signs of each edge occur.
constexpr int64_t kDodEdges[] = {1, -1, 63, -64, 64, -65, 2047, -2048, 2048, -2049, 524287, -524288, 524288, -524289};

std::vector<int64_t> edgeTimestamps(int64_t t0, int64_t first_delta, const std::vector<int64_t>& extra_edges) {
  std::vector<int64_t> edges(std::begin(kDodEdges), std::end(kDodEdges));
  edges.insert(edges.end(), extra_edges.begin(), extra_edges.end());
  std::vector<int64_t> ts = {t0, t0 + first_delta};
  int64_t delta = first_delta;
  for (int64_t e : edges) {
    for (int64_t dod : {e, int64_t{0}, -e}) {
      delta += dod;
      ts.push_back(ts.back() + delta);
    }
  }
  return ts;
}

// Special values: NaNs (quiet, negative, with a payload, signalling), infinities, signed zeros,
// the smallest and largest subnormal, the largest finite values.
const uint64_t kSpecialBits[] = {
    0x7ff8000000000000, 0xfff8000000000000, 0x7ff8000000000abc, 0x7ff0000000000001,
    0x7ff0000000000000, 0xfff0000000000000, 0x8000000000000000, 0x0000000000000000,
    0x0000000000000001, 0x000fffffffffffff, 0x7fefffffffffffff, 0xffefffffffffffff,
};

std::vector<double> valuePatterns() {
  std::vector<double> v;
  for (int i = 0; i < 10; ++i) v.push_back(67.0);               // repeats
  for (int i = 0; i < 10; ++i) v.push_back(67.0 + 0.25 * i);    // small changes
  for (uint64_t b : kSpecialBits) v.push_back(fromBits(b));     // specials
  for (int i = 0; i < 10; ++i) v.push_back(i % 2 ? 2.0 : 1.0);  // alternating
  for (double x : {1e300, -1e-300, 42.0, 1e-300, -1e300, 0.1, 1e15, -7.0, 3.5e-200, 123456789.125})
    v.push_back(x);                                           // large jumps
  std::mt19937_64 rng(20260101);                              // the engine's output is fixed by the C++ standard
  for (int i = 0; i < 32; ++i) v.push_back(fromBits(rng()));  // random bits
  double temp = 65;
  for (int i = 0; i < 16; ++i) v.push_back(temp += static_cast<double>(rng() % 3) - 1);  // a walk
  return v;
}

}  // namespace

std::vector<ChunkInput> chunkInputs() {
  std::vector<ChunkInput> out;

  ChunkInput edges{"dod-edges", 1, {}};
  const auto ts = edgeTimestamps(kT0, 10'000'000, {int64_t{1} << 40, int64_t{1} << 60});
  for (size_t i = 0; i < ts.size(); ++i)
    edges.rows.push_back({ts[i], {i % 4 == 3 ? edges.rows.back().values[0] : 0.5 * static_cast<double>(i)}});
  out.push_back(std::move(edges));

  ChunkInput extremes{"extremes", 1, {}};
  const int64_t extreme_ts[] = {kMin, kMin + 1, -1, 0, kMax - 1, kMax};
  const double extreme_values[] = {kInf,
                                   -kInf,
                                   fromBits(0x7ff8000000000001),
                                   -0.0,
                                   std::numeric_limits<double>::max(),
                                   std::numeric_limits<double>::denorm_min()};
  for (int i = 0; i < 6; ++i) extremes.rows.push_back({extreme_ts[i], {extreme_values[i]}});
  out.push_back(std::move(extremes));

  ChunkInput values{"values", 1, {}};
  const std::vector<double> patterns = valuePatterns();
  for (size_t i = 0; i < patterns.size(); ++i)
    values.rows.push_back({kT0 + 1000 * static_cast<int64_t>(i), {patterns[i]}});
  out.push_back(std::move(values));

  ChunkInput rollup{"rollup", 4, {}};  // min, max, sum, count, as the store's downsampled rows
  for (int i = 0; i < 40; ++i) {
    const double lo = 60 + i % 3, hi = lo + i % 5, count = i % 7 == 0 ? 59 : 60;
    double sum = (lo + hi) / 2 * count;
    if (i == 17) sum = fromBits(0xfff8000000000000);  // inf + -inf in one step
    rollup.rows.push_back({kT0 + 60'000LL * i, {i == 9 ? -0.0 : lo, i == 23 ? kInf : hi, sum, count}});
  }
  out.push_back(std::move(rollup));

  out.push_back({"single", 1, {{-5, {-0.0}}}});
  out.push_back({"empty", 1, {}});
  return out;
}

std::vector<uint8_t> encodeChunk(const ChunkInput& in) {
  store::ChunkEncoder enc(in.columns);
  for (const ChunkRow& r : in.rows)
    if (!enc.append(r.ts, r.values)) return {};  // an input the encoder refuses: the caller sees no bytes
  std::vector<uint8_t> blob;
  enc.encodeTo(blob);
  return blob;
}

std::vector<SeriesInput> historyInputs() {
  std::vector<SeriesInput> out;
  const std::string gpu0 = "GPU-0a0a0a0a-0000-4000-8000-000000000000";
  const std::string gpu1 = "GPU-0a0a0a0a-0000-4000-8000-000000000001";

  SeriesInput temp{gpu0, "gpu_temp", {}};  // integer temperatures every 5 s: repeats, ±1
  std::mt19937_64 rng(7);
  double t = 65;
  for (int i = 0; i < 150; ++i) {
    temp.samples.push_back({kT0 + 5000LL * i, t});
    t += static_cast<double>(rng() % 3) - 1;
  }
  out.push_back(std::move(temp));

  // Power every second with a few ms of jitter: small changes, jumps, and the special values.
  SeriesInput power{gpu0, "power_usage", {}};
  for (int i = 0; i < 120; ++i) {
    double v = 250.0 + 0.25 * (i % 10);
    if (i % 13 == 12) v = 1e6;
    if (i >= 20 && i < 32) v = fromBits(kSpecialBits[i - 20]);
    if (i >= 60 && i < 70) v = 300.0;
    power.samples.push_back({kT0 + 500 + 1000LL * i + (i * 7919) % 11 - 5, v});
  }
  out.push_back(std::move(power));

  // Every delta-of-delta edge, ten minutes apart on average.
  SeriesInput edges{gpu1, "dod_edges", {}};
  const auto ts = edgeTimestamps(kT0 + 250, 600'000, {});
  for (size_t i = 0; i < ts.size(); ++i)
    edges.samples.push_back({ts[i], i % 5 == 4 ? edges.samples.back().value : -2 + 0.125 * static_cast<double>(i)});
  out.push_back(std::move(edges));

  // Two days old: only its downsampled rows survive the compaction.
  SeriesInput retired{gpu1, "retired", {}};
  for (int i = 0; i < 40; ++i)
    retired.samples.push_back(
        {kT0 - 48 * 3'600'000LL + 30'000LL * i, i == 7 ? fromBits(0x7ff8000000000000) : static_cast<double>(i + 1)});
  out.push_back(std::move(retired));
  return out;
}

store::StoreOptions historyOptions(const std::string& path) {
  store::StoreOptions o;
  o.path = path;
  o.background = false;
  o.chunk_samples = 16;
  o.raw_retention = std::chrono::hours(24);
  o.downsampled_retention = std::chrono::hours(24 * 30);
  o.downsample_step = std::chrono::seconds(kHistoryStepMs / 1000);
  return o;
}

Status writeHistoryDb(const std::string& path) {
  auto opened = store::Store::open(historyOptions(path));
  if (!opened) return opened.status();
  store::Store& s = **opened;
  for (const SeriesInput& in : historyInputs()) {
    auto id = s.series(in.gpu_uuid, in.field);
    if (!id) return id.status();
    for (const HistorySample& x : in.samples)
      if (!s.append(*id, x.ts, x.value))
        return Status::Error("golden history input refused: " + in.field + " at " + std::to_string(x.ts));
  }
  return s.compact(kHistoryCompactAt);
}

namespace {

health::Finding finding(const std::string& rule, int gpu, health::Severity severity, bool sticky, int xid = 0) {
  health::Finding f;
  f.rule = rule;
  f.gpu_index = gpu;
  f.gpu_uuid = "GPU-0a0a0a0a-0000-4000-8000-00000000000" + std::to_string(gpu);
  f.severity = severity;
  f.sticky = sticky;
  f.xid = xid;
  f.summary = rule + " on GPU " + std::to_string(gpu) + ": \"quoted\", ünïcode, a\nnewline";
  f.action = "Check " + rule;
  f.kb_id = "kb-" + rule;
  f.evidence = rule + " evidence " + std::to_string(gpu);
  f.key = rule + "|" + f.gpu_uuid + (xid ? "|" + std::to_string(xid) : "");
  return f;
}

}  // namespace

Status writeIncidentsDb(const std::string& path) {
  using health::Severity;
  const health::IncidentConfig config{.grace_ms = 120'000, .new_lifetime = true};
  const auto thermal = finding("thermal_slowdown", 0, Severity::Warning, false);
  const auto xid = finding("xid", 1, Severity::Critical, true, 79);
  const auto ecc = finding("ecc_dbe", 0, Severity::Critical, true);
  auto power = finding("power_brake", 1, Severity::Warning, false);
  const auto lost = finding("gpu_lost", 2, Severity::Fatal, true);
  const int64_t t = kT0 + 1000;
  {
    auto opened = health::IncidentStore::open(path, config);  // lifetime 1
    if (!opened) return opened.status();
    health::IncidentStore& s = **opened;
    if (auto r = s.apply({thermal, xid, ecc, power}, t); !r) return r.status();  // ids 1..4
    power.severity = Severity::Critical;                                         // worsens: written at once
    power.summary = "power_brake got worse";
    if (auto r = s.apply({thermal, xid, ecc, power}, t + 5000); !r) return r.status();
    if (Status st = s.acknowledge(3, t + 6000); !st.ok()) return st;
    if (Status st = s.resolve(2, t + 7000, "operator"); !st.ok()) return st;
    if (auto r = s.apply({ecc, power}, t + 20'000); !r) return r.status();
    if (auto r = s.apply({power}, t + 200'000); !r) return r.status();  // thermal: auto-resolved
  }
  auto opened = health::IncidentStore::open(path, config);  // lifetime 2
  if (!opened) return opened.status();
  health::IncidentStore& s = **opened;
  if (auto r = s.apply({xid, power, lost}, t + 400'000); !r) return r.status();  // xid recurs: escalated
  auto healed = s.markHealthy(lost.gpu_uuid, t + 401'000);
  if (!healed) return healed.status();
  return Status::Ok();
}

alert::Alert goldenAlert(int which) {
  alert::Alert a;
  switch (which) {
    case 0:
    case 2:
      a.id = "thermal_slowdown/GPU-0a0a0a0a-0000-4000-8000-000000000000";
      a.rule = "thermal_slowdown";
      a.severity = "warning";
      a.summary = "GPU 0 at 91 °C — throttling";
      a.action = "Check airflow; see \"cooling\"\nthen the fans";
      a.gpu_uuid = "GPU-0a0a0a0a-0000-4000-8000-000000000000";
      a.hostname = "node-golden-01";
      a.gpu_index = 0;
      a.labels = {{"cluster", "golden"}, {"rack", "r1"}};
      a.annotations = {{"runbook", "https://example.invalid/runbook#thermal"}};
      a.starts_at_ms = kT0 + 1000;
      a.ends_at_ms = which == 2 ? kT0 + 5000 : 0;
      break;
    case 1:
      a.id = "xid/GPU-0a0a0a0a-0000-4000-8000-000000000001/79";
      a.rule = "xid";
      a.severity = "fatal";
      a.summary = "Xid 79: GPU fell off the bus";
      a.action = "Drain the node";
      a.gpu_uuid = "GPU-0a0a0a0a-0000-4000-8000-000000000001";
      a.hostname = "node-golden-01";
      a.gpu_index = 1;
      a.starts_at_ms = kT0 + 2000;
      break;
    default:
      a.id = "node/driver_mismatch";
      a.rule = "driver_mismatch";
      a.severity = "critical";
      a.summary = "driver and library differ";
      a.action = "Reinstall the driver";
      a.hostname = "node-golden-01";
      a.labels = {{"k", "v"}};
      a.starts_at_ms = kT0 + 6000;
      break;
  }
  return a;
}

Status writeAlertsDb(const std::string& path) {
  auto opened = alert::DiskQueue::open(path);
  if (!opened) return opened.status();
  alert::DiskQueue& q = **opened;
  constexpr int64_t kRepeat = 3'600'000;
  for (auto [which, sinks] : std::vector<std::pair<int, std::vector<std::string>>>{
           {0, {"webhook", "alertmanager"}}, {1, {"webhook"}}, {2, {"webhook", "alertmanager"}}, {3, {"command"}}}) {
    const alert::Alert a = goldenAlert(which);
    auto r = q.submit(a, sinks, a.firing() ? a.starts_at_ms : a.ends_at_ms, kRepeat);  // seq 1..6
    if (!r) return r.status();
    if (!*r) return Status::Error("golden alert " + std::to_string(which) + " was deduplicated");
  }
  if (Status st = q.ack(2); !st.ok()) return st;              // alertmanager took A firing
  return q.reject(6, "HTTP 400 Bad Request: unknown field");  // the command sink refused C for good
}

namespace {

collect::GpuView jobGpu(unsigned index, const std::string& uuid, unsigned minor) {
  collect::GpuView v;
  v.id.index = index;
  v.id.uuid = uuid;
  v.id.device = "nvidia" + std::to_string(minor);
  v.id.pci_bus_id = "00000000:" + std::to_string(18 + index * 10) + ":00.0";
  v.values.resize(fields::all().size());
  return v;
}

void put(collect::GpuView& v, const char* key, double value, std::int64_t ms) {
  v.values[fields::indexOf(*fields::findByKey(key))] = {value, ms, true};
}

// One sampling pass at `ms`, k seconds into job 17: A loaded, B half loaded.
void pass(std::vector<collect::GpuView>& views, std::int64_t ms, int k) {
  collect::GpuView& a = views[0];
  collect::GpuView& b = views[1];
  for (auto* v : {&a, &b}) v->last_sample_ms = ms;
  put(a, "gpu_util", k == 0 ? 0 : 100, ms);
  put(a, "power_usage", k == 0 ? 100 : 400, ms);
  put(a, "gpu_temp", 60 + k, ms);
  put(a, "total_energy", 1'000'000 + 400'000.0 * k, ms);  // mJ: 400 W
  put(a, "sm_clock", 1980, ms);
  put(a, "pcie_replay_counter", 5 + k, ms);
  put(a, "fb_used", 40'960 + 1024.0 * k, ms);
  put(b, "gpu_util", k == 0 ? 0 : 50, ms);
  put(b, "power_usage", 250, ms);
  put(b, "gpu_temp", 50, ms);
  put(b, "total_energy", 2'000'000 + 250'000.0 * k, ms);
  put(b, "ecc_sbe_volatile", k >= 2 ? 3 : 0, ms);
}

}  // namespace

Status writeJobsDb(const std::string& path) {
  auto t = node::JobTracker::open(path);
  if (!t) return t.status();
  std::vector<collect::GpuView> views = {jobGpu(0, "GPU-golden-a", 1), jobGpu(1, "GPU-golden-b", 0)};
  pass(views, kT0, 0);
  node::JobStartRequest a;
  a.job_id = "17";
  a.user = "alice";
  a.uid = 1000;
  a.source = "slurm";
  a.gpus = {"0", "1"};  // Slurm's numbers: minor 0 (GPU-golden-b), then minor 1
  a.numbering = node::GpuNumbering::Slurm;
  a.install = {{"install_record", 2}, {"driver_version", "550.54.15"}, {"cuda_driver_version", "12.4"}};
  if (auto r = (*t)->start(a, views, kT0); !r) return r.status();
  for (int k = 1; k <= 4; ++k) {
    pass(views, kT0 + 1000 * k, k);
    (*t)->observe(views, kT0 + 1000 * k);
    if (k == 2) {
      events::GpuEvent e;
      e.timestamp_ms = kT0 + 2500;
      e.code = 79;
      e.gpu_index = 0;
      e.gpu_uuid = "GPU-golden-a";
      (*t)->onEvent(e);
    }
  }
  if (auto r = (*t)->end("17", kT0 + 4000); !r) return r.status();
  node::JobStartRequest b;
  b.job_id = "18";
  b.source = "api";
  b.gpus = {"GPU-golden-b"};
  if (auto r = (*t)->start(b, views, kT0 + 5000); !r) return r.status();
  pass(views, kT0 + 6000, 5);
  (*t)->observe(views, kT0 + 6000);
  return (*t)->checkpoint();
}

Status writeRecordsDb(const std::string& path) {
  auto s = node::RecordStore::open(path);
  if (!s) return s.status();
  const nlohmann::json first = {{"driver_version", "550.54.15"}, {"gpus", {{{"serial", "1650023000001"}}}}};
  const nlohmann::json second = {{"driver_version", "560.28.03"}, {"gpus", {{{"serial", "1650023000001"}}}}};
  const node::Record records[] = {
      {0, kT0, "install", "agent", "first record: driver 550.54.15, 1 GPU(s)", first, nlohmann::json::array()},
      {0, kT0 + 86'400'000, "install", "agent", "driver_version 550.54.15 -> 560.28.03", second,
       nlohmann::json::array({{{"what", "driver_version"}, {"before", "550.54.15"}, {"after", "560.28.03"}}})},
      {0,
       kT0 + 90'000'000,
       "setting",
       "uid 0 (root) pid 4242",
       "GPU 0 power limit 700 W -> 500 W",
       {{"power_limit_w", 500}},
       nlohmann::json::array({{{"what", "power_limit_w"}, {"before", 700}, {"after", 500}}})},
  };
  for (const auto& r : records)
    if (auto id = (*s)->append(r); !id) return id.status();
  return Status::Ok();
}

}  // namespace gw::golden
