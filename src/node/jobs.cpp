#include "node/jobs.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>

#include "platform/regular_file.h"

namespace gw::node {

using json = nlohmann::json;

namespace {

constexpr std::int64_t kCheckpointEveryMs = 60'000;
constexpr std::size_t kMapFileBytes = 4096;
constexpr std::size_t kMapIdsPerFile = 16;
constexpr std::size_t kMapFiles = 1024;

bool isWholeNumber(const std::string& s, unsigned& out) {
  if (s.empty() || s.size() > 6) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// A mapping file: a regular file (not a link: the folder is written by prolog scripts, and what
// a link points at must not end up in a label) of at most kMapFileBytes.
std::optional<std::string> readMappingFile(const std::string& path) {
  platform::RegularFile file(path, platform::RegularFile::Links::kRefuse);
  if (!file.ok() || file.size() > kMapFileBytes) return std::nullopt;
  std::string text;
  if (file.readUpTo(kMapFileBytes + 1, text) != 0 || text.size() > kMapFileBytes) return std::nullopt;
  return text;
}

// The device minor number of a view ("nvidia3" → 3), or -1 when not known.
long minorOf(const collect::GpuView& v) {
  const std::string& d = v.id.device;
  unsigned m = 0;
  if (d.rfind("nvidia", 0) == 0 && isWholeNumber(d.substr(6), m)) return m;
  return -1;
}

}  // namespace

Status checkJobWord(const std::string& s, const char* what, std::size_t max) {
  if (s.empty()) return Status::Error(std::string(what) + " is empty");
  if (s.size() > max) return Status::Error(std::string(what) + " is longer than " + std::to_string(max) + " bytes");
  // Slurm's ids ("1234", "1234_7" in an array, "1234+1" in a heterogeneous job) and user names
  // fit; what would need quoting in a label, a log line or a shell does not.
  for (unsigned char c : s)
    if (!std::isalnum(c) && !std::strchr("._+-:@", c))
      return Status::Error(std::string(what) + " '" + s.substr(0, max) +
                           "' holds a character other than letters, digits and . _ + - : @");
  return Status::Ok();
}

json jobJson(const JobRun& r, std::int64_t now_ms) {
  json gpus = json::array();
  for (const auto& g : r.gpus) {
    json o = g;
    if (o.is_object()) {
      o.erase("state");
      o.erase("throttled_ms");
    }
    gpus.push_back(std::move(o));
  }
  const std::int64_t end = r.end_ms ? r.end_ms : now_ms;
  return json{{"job_id", r.job_id},
              {"run", r.run},
              {"user", r.user},
              {"uid", r.uid >= 0 ? json(r.uid) : json(nullptr)},
              {"source", r.source},
              {"state", r.end_ms ? "ended" : "running"},
              {"start_ms", r.start_ms},
              {"end_ms", r.end_ms ? json(r.end_ms) : json(nullptr)},
              {"duration_s", static_cast<double>(std::max<std::int64_t>(0, end - r.start_ms)) / 1000.0},
              {"gpus", gpus},
              {"fingerprint", r.fingerprint}};
}

Result<std::unique_ptr<JobTracker>> JobTracker::open(const std::string& path) {
  std::unique_ptr<JobTracker> t(new JobTracker());
  if (path.empty()) return t;
  auto store = JobStore::open(path);
  if (!store) return store.status();
  t->store_ = std::move(store.value());
  // Runs the previous agent left running carry on: their accounts were checkpointed.
  auto running = t->store_->running();
  if (!running) return running.status();
  for (auto& r : *running) {
    Running rr;
    for (const auto& g : r.gpus)
      if (auto a = JobGpuAccount::fromJson(g)) rr.accounts.push_back(std::move(*a));
    rr.run = std::move(r);
    if (rr.run.source == "dcgm-map") {
      std::vector<std::string> uuids;
      for (const auto& a : rr.accounts) uuids.push_back(a.uuid());
      t->from_map_[rr.run.job_id] = uuids;
    }
    t->running_[rr.run.job_id] = std::move(rr);
  }
  return t;
}

Result<std::vector<const collect::GpuView*>> JobTracker::resolveGpus(const JobStartRequest& req,
                                                                     const std::vector<collect::GpuView>& views,
                                                                     bool* unmapped) {
  if (unmapped) *unmapped = false;
  if (req.gpus.size() > kMaxJobGpus)
    return Status::Error("a job lists at most " + std::to_string(kMaxJobGpus) + " GPUs");
  std::vector<const collect::GpuView*> boards;
  for (const auto& v : views)
    if (!v.id.is_mig) boards.push_back(&v);
  // Slurm's GRES index counts the GPUs in device-minor order (`slurm gres` writes them so).
  std::vector<const collect::GpuView*> by_minor;
  std::string unknown_minor;  // the first board whose minor nobody knows
  if (req.numbering == GpuNumbering::Slurm) {
    std::vector<nvml::BoardMinor> minors;
    for (const auto* v : boards) minors.push_back({v->id.pci_bus_id, v->id.uuid, minorOf(*v)});
    nvml::completeMinors(minors, req.driver_gpus);
    std::vector<std::pair<long, const collect::GpuView*>> order;
    for (std::size_t i = 0; i < boards.size(); ++i) {
      if (minors[i].minor < 0 && unknown_minor.empty())
        unknown_minor = "GPU " + std::to_string(boards[i]->id.index) +
                        (boards[i]->state == collect::GpuState::Up
                             ? std::string()
                             : " (" + std::string(collect::stateName(boards[i]->state)) + ")");
      order.emplace_back(minors[i].minor, boards[i]);
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [m, v] : order) by_minor.push_back(v);
  }
  std::vector<const collect::GpuView*> out;
  for (const auto& g : req.gpus) {
    const collect::GpuView* found = nullptr;
    unsigned n = 0;
    if (g.rfind("GPU-", 0) == 0 || g.rfind("MIG-", 0) == 0) {
      for (const auto& v : views)
        if (v.id.uuid == g) found = &v;
    } else if (isWholeNumber(g, n)) {
      if (req.numbering == GpuNumbering::Slurm) {
        if (!unknown_minor.empty()) {
          if (unmapped) *unmapped = true;
          return Status::Error("Slurm's GPU " + g + " cannot be matched to a GPU: the device minor of " +
                               unknown_minor +
                               " is known neither to NVML nor to /proc/driver/nvidia/gpus, and Slurm numbers GPUs by "
                               "device minor");
        }
        if (n < by_minor.size()) found = by_minor[n];
      } else {
        for (const auto* v : boards)
          if (v->id.index == n) found = v;
      }
    } else {
      return Status::Error("GPU '" + g.substr(0, 80) + "' is neither a number nor a GPU-/MIG- UUID");
    }
    if (!found) return Status::Error("no GPU " + g + " on this node");
    if (std::find(out.begin(), out.end(), found) == out.end()) out.push_back(found);
  }
  return out;
}

JobRun JobTracker::snapshotLocked(const Running& r) const {
  JobRun out = r.run;
  out.gpus = json::array();
  for (const auto& a : r.accounts) out.gpus.push_back(a.toJson());
  return out;
}

Result<JobRun> JobTracker::start(const JobStartRequest& req, const std::vector<collect::GpuView>& views,
                                 std::int64_t now_ms) {
  if (auto st = checkJobWord(req.job_id, "the job id", kMaxJobIdBytes); !st.ok()) return st;
  if (!req.user.empty())
    if (auto st = checkJobWord(req.user, "the user", kMaxJobUserBytes); !st.ok()) return st;
  if (req.gpus.empty()) return Status::Error("the job lists no GPU");
  auto gpus = resolveGpus(req, views);
  if (!gpus) return gpus.status();
  std::lock_guard lock(mu_);
  if (auto it = running_.find(req.job_id); it != running_.end()) {
    std::set<std::string> have, want;
    for (const auto& a : it->second.accounts) have.insert(a.uuid());
    for (const auto* v : *gpus) want.insert(v->id.uuid);
    if (have != want) return Status::Error("job " + req.job_id + " is already running on other GPUs");
    return snapshotLocked(it->second);  // a prolog run twice: the same job
  }
  if (running_.size() >= kMaxRunningJobs)
    return Status::Error("already " + std::to_string(kMaxRunningJobs) + " jobs running on this node");
  Running r;
  r.run.job_id = req.job_id;
  r.run.user = req.user;
  r.run.uid = req.uid;
  r.run.source = req.source;
  r.run.start_ms = now_ms;
  r.run.fingerprint = json{{"install", req.install.is_object() ? req.install : json::object()}};
  for (const auto* v : *gpus) {
    r.accounts.emplace_back(v->id.uuid, static_cast<int>(v->id.index), now_ms);
    r.accounts.back().observe(*v, now_ms);  // the counters' values at the start
  }
  if (store_) {
    auto id = store_->insert(snapshotLocked(r));
    if (!id) return id.status();
    r.run.run = *id;
  }
  JobRun out = snapshotLocked(r);
  running_[req.job_id] = std::move(r);
  ++generation_;
  return out;
}

Result<JobRun> JobTracker::end(const std::string& job_id, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = running_.find(job_id);
  if (it == running_.end()) return Status::Error("job " + job_id.substr(0, kMaxJobIdBytes) + " is not running");
  Running& r = it->second;
  r.run.end_ms = std::max(now_ms, r.run.start_ms);
  for (auto& a : r.accounts) a.finish(r.run.end_ms);
  // The second half of the fingerprint: each GPU at load (clock, power, temperature).
  json at_load = json::array();
  for (const auto& a : r.accounts) {
    json g = a.toJson();
    at_load.push_back({{"uuid", a.uuid()}, {"index", a.index()}, {"at_load", g["at_load"]}});
  }
  if (!r.run.fingerprint.is_object()) r.run.fingerprint = json::object();
  r.run.fingerprint["gpus"] = at_load;
  JobRun out = snapshotLocked(r);
  if (store_) {
    // Not stored (a full disk): the run stays in the database as running, and is ended here.
    if (auto st = store_->update(out); !st.ok()) {
      running_.erase(it);
      from_map_.erase(job_id);
      ++generation_;
      return st;
    }
  }
  running_.erase(it);
  from_map_.erase(job_id);
  ++generation_;
  return out;
}

void JobTracker::observe(const std::vector<collect::GpuView>& views, std::int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (running_.empty()) return;
  std::map<std::string, const collect::GpuView*> by_uuid;
  for (const auto& v : views) by_uuid[v.id.uuid] = &v;
  for (auto& [id, r] : running_)
    for (auto& a : r.accounts)
      if (auto it = by_uuid.find(a.uuid()); it != by_uuid.end()) a.observe(*it->second, now_ms);
  if (store_ && now_ms >= next_checkpoint_ms_) {
    next_checkpoint_ms_ = now_ms + kCheckpointEveryMs;
    for (const auto& [id, r] : running_) (void)store_->update(snapshotLocked(r));
  }
}

void JobTracker::onEvent(const events::GpuEvent& e) {
  if (e.kind != events::EventKind::Xid && e.kind != events::EventKind::FallenOffBus) return;
  const int code = e.kind == events::EventKind::FallenOffBus && e.code == 0 ? 79 : e.code;
  std::lock_guard lock(mu_);
  for (auto& [id, r] : running_)
    for (auto& a : r.accounts)
      if ((!e.gpu_uuid.empty() && e.gpu_uuid == a.uuid()) ||
          (e.gpu_uuid.empty() && e.gpu_index >= 0 && e.gpu_index == a.index()))
        if (e.timestamp_ms >= r.run.start_ms) a.addXid(code);
}

std::string JobTracker::pollMappingDir(const std::string& dir, const std::vector<collect::GpuView>& views,
                                       std::int64_t now_ms) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return "cannot read the job-mapping folder " + dir + ": " + std::strerror(errno);
  // job id → GPU names (the file names) as found now
  std::map<std::string, std::vector<std::string>> found;
  std::size_t files = 0;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    unsigned n = 0;
    const bool uuid = name.rfind("GPU-", 0) == 0 || name.rfind("MIG-", 0) == 0;
    if (!isWholeNumber(name, n) && !(uuid && name.size() < 96)) continue;
    if (++files > kMapFiles) break;
    auto text = readMappingFile(dir + "/" + name);
    if (!text) continue;  // a link, a folder, too large, or gone: not a mapping
    std::size_t ids = 0, pos = 0;
    while (pos < text->size() && ids < kMapIdsPerFile) {
      std::size_t nl = text->find('\n', pos);
      if (nl == std::string::npos) nl = text->size();
      std::string id = text->substr(pos, nl - pos);
      pos = nl + 1;
      while (!id.empty() && (id.back() == '\r' || id.back() == ' ' || id.back() == '\t')) id.pop_back();
      while (!id.empty() && (id.front() == ' ' || id.front() == '\t')) id.erase(0, 1);
      if (id.empty() || !checkJobWord(id, "job id", kMaxJobIdBytes).ok()) continue;
      auto& g = found[id];
      if (std::find(g.begin(), g.end(), name) == g.end()) g.push_back(name);
      ++ids;
    }
  }
  ::closedir(d);
  // A job whose files are gone has ended; one whose GPUs changed ends and starts again as a new
  // run, so that its labels follow the files, as dcgm-exporter's do.
  std::vector<std::string> ended;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, uuids] : from_map_) {
      auto it = found.find(id);
      if (it == found.end()) {
        ended.push_back(id);
        continue;
      }
      JobStartRequest now;
      now.gpus = it->second;
      auto gpus = resolveGpus(now, views);
      std::vector<std::string> have = uuids, want;
      if (gpus)
        for (const auto* v : *gpus) want.push_back(v->id.uuid);
      std::sort(have.begin(), have.end());
      std::sort(want.begin(), want.end());
      if (gpus && have != want) ended.push_back(id);
    }
  }
  for (const auto& id : ended) (void)end(id, now_ms);
  for (auto& [id, names] : found) {
    {
      std::lock_guard lock(mu_);
      if (running_.count(id)) continue;  // known (from here, or from a prolog that said more)
    }
    JobStartRequest req;
    req.job_id = id;
    req.source = "dcgm-map";
    req.gpus = names;
    req.numbering = GpuNumbering::Nvml;
    auto r = start(req, views, now_ms);
    if (!r) continue;  // a GPU that is not here (yet): tried again at the next poll
    std::vector<std::string> uuids;
    for (const auto& g : r->gpus) uuids.push_back(g.value("uuid", ""));
    std::lock_guard lock(mu_);
    from_map_[id] = uuids;
  }
  return "";
}

std::vector<JobRun> JobTracker::runningJobs() const {
  std::lock_guard lock(mu_);
  std::vector<JobRun> out;
  for (const auto& [id, r] : running_) out.push_back(snapshotLocked(r));
  std::sort(out.begin(), out.end(), [](const JobRun& a, const JobRun& b) { return a.start_ms < b.start_ms; });
  return out;
}

Result<std::vector<JobRun>> JobTracker::list(std::size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<JobRun> out;
  if (store_) {
    auto stored = store_->list(limit);
    if (!stored) return stored.status();
    out = std::move(*stored);
  }
  // A running run's stored account is up to a minute old: show the live one.
  for (auto& r : out)
    if (auto it = running_.find(r.job_id); it != running_.end() && r.end_ms == 0 && it->second.run.run == r.run)
      r = snapshotLocked(it->second);
  if (!store_)
    for (const auto& [id, r] : running_) out.push_back(snapshotLocked(r));
  return out;
}

Result<std::optional<JobRun>> JobTracker::show(const std::string& job_id) const {
  std::lock_guard lock(mu_);
  if (auto it = running_.find(job_id); it != running_.end()) return std::optional<JobRun>(snapshotLocked(it->second));
  if (!store_) return std::optional<JobRun>{};
  return store_->latest(job_id);
}

std::map<std::string, std::string> JobTracker::gpuJobLabels() const {
  std::lock_guard lock(mu_);
  std::vector<const Running*> order;
  for (const auto& [id, r] : running_) order.push_back(&r);
  std::sort(order.begin(), order.end(), [](const Running* a, const Running* b) {
    return a->run.start_ms != b->run.start_ms ? a->run.start_ms < b->run.start_ms : a->run.job_id < b->run.job_id;
  });
  std::map<std::string, std::string> out;
  for (const auto* r : order)
    for (const auto& a : r->accounts) {
      std::string& s = out[a.uuid()];
      if (!s.empty()) s += ',';
      s += r->run.job_id;
    }
  return out;
}

std::uint64_t JobTracker::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

Status JobTracker::checkpoint() {
  std::lock_guard lock(mu_);
  if (!store_) return Status::Ok();
  Status worst = Status::Ok();
  for (const auto& [id, r] : running_)
    if (auto st = store_->update(snapshotLocked(r)); !st.ok()) worst = st;
  return worst;
}

}  // namespace gw::node
