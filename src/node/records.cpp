#include "node/records.h"

#include <filesystem>
#include <map>
#include <set>

#include "doctor/doctor.h"
#include "nvml/nvml.h"
#include "platform/bounded_json.h"

extern char** environ;

namespace gw::node {

using json = nlohmann::json;

namespace {
constexpr const char* kColumns = "id, time_ms, kind, who, summary, state, changes";

// The doctor checks whose finding is a version of something installed (their `found` text).
constexpr const char* kStackChecks[] = {"toolkit.installed", "toolkit.nvcc",     "lib.cudnn",
                                        "framework.pytorch", "framework.paddle", "container.gpu_access"};

std::string orEmpty(const Result<std::string>& r) { return r ? *r : std::string(); }

void flatten(const json& j, const std::string& at, std::map<std::string, json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, at.empty() ? k : at + "." + k, out);
  } else {
    out[at] = j;
  }
}
}  // namespace

json recordJson(const Record& r) {
  return json{{"id", r.id},           {"time_ms", r.time_ms}, {"kind", r.kind},      {"who", r.who},
              {"summary", r.summary}, {"state", r.state},     {"changes", r.changes}};
}

Result<std::unique_ptr<RecordStore>> RecordStore::open(const std::string& path) {
  return platform::openOrMoveAside<std::unique_ptr<RecordStore>>(path, "records database",
                                                                 [&] { return openOnce(path); });
}

Result<std::unique_ptr<RecordStore>> RecordStore::openOnce(const std::string& path) {
  std::unique_ptr<RecordStore> s(new RecordStore());
  auto db = platform::openWithSchema(
      path, "records database", kSchemaVersion,
      {
          "PRAGMA journal_mode=WAL;",
          "PRAGMA synchronous=NORMAL;",
          "CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY AUTOINCREMENT, time_ms INTEGER NOT NULL, "
          "kind TEXT NOT NULL, who TEXT NOT NULL, summary TEXT NOT NULL, state TEXT NOT NULL, changes TEXT NOT NULL);",
          "CREATE INDEX IF NOT EXISTS records_kind ON records(kind, id);",
      });
  if (!db) return db.status();
  s->db_ = std::move(db.value());
  platform::Database& d = *s->db_;
  auto prep = [&](const std::string& sql, platform::Statement& out) -> Status {
    auto st = d.prepare(sql);
    if (!st) return st.status();
    out = std::move(st.value());
    return Status::Ok();
  };
  if (auto st =
          prep("INSERT INTO records (time_ms, kind, who, summary, state, changes) VALUES (?,?,?,?,?,?)", s->insert_);
      !st.ok())
    return st;
  // ?1: kind ("" any); ?2: at most this many
  if (auto st = prep(
          std::string("SELECT ") + kColumns + " FROM records WHERE (?1 = '' OR kind = ?1) ORDER BY id DESC LIMIT ?2",
          s->list_);
      !st.ok())
    return st;
  if (auto st = prep(std::string("SELECT ") + kColumns + " FROM records WHERE id = ?", s->get_); !st.ok()) return st;
  return s;
}

Result<std::int64_t> RecordStore::append(const Record& r) {
  const std::string state = r.state.dump(), changes = r.changes.dump();
  auto q = insert_.use();
  q.bind(1, r.time_ms).bind(2, r.kind).bind(3, r.who).bind(4, r.summary).bind(5, state).bind(6, changes);
  if (auto st = q.run(); !st.ok()) return st;
  return db_->lastInsertRowId();
}

Result<std::vector<Record>> RecordStore::read(platform::Query& q) {
  std::vector<Record> out;
  while (q.step()) {
    Record r;
    r.id = q.int64(0);
    r.time_ms = q.int64(1);
    r.kind = q.text(2);
    r.who = q.text(3);
    r.summary = q.text(4);
    r.state = platform::parseBoundedOr(q.text(5), json::object());
    r.changes = platform::parseBoundedOr(q.text(6), json::array());
    out.push_back(std::move(r));
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Result<std::vector<Record>> RecordStore::list(std::size_t limit, const std::string& kind) {
  auto q = list_.use();
  q.bind(1, kind).bind(2, static_cast<std::int64_t>(limit ? limit : 1));
  return read(q);
}

Result<std::optional<Record>> RecordStore::latest(const std::string& kind) {
  auto r = list(1, kind);
  if (!r) return r.status();
  if (r->empty()) return std::optional<Record>{};
  return std::optional<Record>(std::move(r->front()));
}

Result<std::optional<Record>> RecordStore::get(std::int64_t id) {
  auto q = get_.use();
  q.bind(1, id);
  auto r = read(q);
  if (!r) return r.status();
  if (r->empty()) return std::optional<Record>{};
  return std::optional<Record>(std::move(r->front()));
}

json readInstallState(const nvml::Session& session, const platform::FsRoot& root, platform::ProcessRunner& runner) {
  json state;
  state["driver_version"] = orEmpty(session.driverVersion());
  state["nvml_version"] = orEmpty(session.nvmlVersion());
  auto cuda = session.cudaDriverVersion();
  state["cuda_driver_version"] = cuda ? *cuda : 0;
  json gpus = json::object();
  for (unsigned i = 0; i < session.deviceCount().value_or(0); ++i) {
    auto d = session.deviceByIndex(i);
    if (!d) continue;
    auto uuid = d->uuid();
    if (!uuid) continue;
    gpus[*uuid] = {{"index", i},
                   {"name", orEmpty(d->name())},
                   {"serial", orEmpty(d->serial())},
                   {"vbios", orEmpty(d->vbiosVersion())},
                   {"inforom", orEmpty(d->inforomImageVersion())}};
  }
  state["gpus"] = gpus;
  // The rest of the stack as the doctor finds it; a simulated fleet has no stack of its own.
  json stack = json::object();
  if (!session.isSimulator())
    stack = readStackState(root, runner, state["driver_version"], state["cuda_driver_version"]);
  state["stack"] = stack;
  return state;
}

json readStackState(const platform::FsRoot& root, platform::ProcessRunner& runner, const std::string& driver_version,
                    int cuda_driver_version) {
  json stack = json::object();
  doctor::NvmlFacts facts;
  facts.library_loaded = true;
  facts.init_return = 0;
  facts.driver_version = driver_version;
  facts.cuda_driver_version = cuda_driver_version;
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  doctor::DoctorInput in{root, runner, facts, env, ""};
  const std::set<std::string> wanted(std::begin(kStackChecks), std::end(kStackChecks));
  for (const auto& c : doctor::runDoctor(in))
    if (wanted.count(c.id)) stack[c.id] = c.found;
  // The container runtime: each piece that is installed says its version on its first line.
  platform::RunOptions ro;
  ro.timeout = std::chrono::seconds(3);
  ro.max_output = 4096;
  for (const char* program : {"nvidia-ctk", "nvidia-container-cli", "docker", "containerd", "podman"}) {
    auto r = runner.run({program, "--version"}, ro);
    if (r.not_found || r.timed_out || r.exit_code != 0) continue;
    std::string first = r.out.substr(0, r.out.find('\n'));
    if (first.empty()) continue;
    stack[std::string("container_runtime.") + program] = first.substr(0, 200);
  }
  return stack;
}

json installChanges(const json& before, const json& after) {
  std::map<std::string, json> a, b;
  flatten(before, "", a);
  flatten(after, "", b);
  json out = json::array();
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& k : keys) {
    const json x = a.count(k) ? a[k] : json(), y = b.count(k) ? b[k] : json();
    if (x != y) out.push_back({{"what", k}, {"before", x}, {"after", y}});
  }
  return out;
}

std::string changesSummary(const json& changes) {
  if (!changes.is_array() || changes.empty()) return "no change";
  std::string s;
  std::size_t shown = 0;
  auto text = [](const json& v) {
    return v.is_null() ? std::string("(none)") : v.is_string() ? v.get<std::string>() : v.dump();
  };
  for (const auto& c : changes) {
    if (shown == 4) break;
    if (!s.empty()) s += "; ";
    s += c.value("what", "?") + " " + text(c.value("before", json())) + " -> " + text(c.value("after", json()));
    ++shown;
  }
  if (changes.size() > shown) s += "; +" + std::to_string(changes.size() - shown) + " more";
  return s;
}

Result<std::int64_t> InstallRecorder::check(const nvml::Session& session, std::int64_t now_ms) {
  // Read outside the lock: the doctor may take seconds (nvcc, python3).
  json state = readInstallState(session, platform::FsRoot(root_), platform::defaultProcessRunner());
  std::lock_guard lock(mu_);
  if (!loaded_) {
    auto last = store_->latest("install");
    if (!last) return last.status();
    if (*last) {
      latest_id_ = (*last)->id;
      latest_state_ = (*last)->state;
      latest_summary_ = (*last)->summary;
    }
    loaded_ = true;
  }
  json changes = latest_id_ ? installChanges(latest_state_, state) : json::array();
  if (latest_id_ && changes.empty()) return latest_id_;
  Record r;
  r.time_ms = now_ms;
  r.kind = "install";
  r.who = "agent";
  r.state = state;
  r.changes = changes;
  r.summary = latest_id_ ? changesSummary(changes)
                         : "first record: driver " + state.value("driver_version", std::string("?")) + ", " +
                               std::to_string(state["gpus"].size()) + " GPU(s)";
  auto id = store_->append(r);
  if (!id) return id.status();
  latest_id_ = *id;
  latest_state_ = std::move(state);
  latest_summary_ = r.summary;
  return latest_id_;
}

std::int64_t InstallRecorder::latestId() const {
  std::lock_guard lock(mu_);
  return latest_id_;
}

Result<std::int64_t> InstallRecorder::append(const Record& r) {
  std::lock_guard lock(mu_);
  return store_->append(r);
}

Result<std::vector<Record>> InstallRecorder::list(std::size_t limit, const std::string& kind) {
  std::lock_guard lock(mu_);
  return store_->list(limit, kind);
}

std::string InstallRecorder::latestSummary() const {
  std::lock_guard lock(mu_);
  return latest_summary_;
}

json InstallRecorder::latestState() const {
  std::lock_guard lock(mu_);
  return latest_state_;
}

}  // namespace gw::node
