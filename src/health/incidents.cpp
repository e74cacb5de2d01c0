#include "health/incidents.h"

#include "knowledge/xid_catalog.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace gw::health {

std::string_view statusName(IncidentStatus s) {
  switch (s) {
    case IncidentStatus::Open:
      return "open";
    case IncidentStatus::Acknowledged:
      return "acknowledged";
    case IncidentStatus::Resolved:
      return "resolved";
  }
  return "open";
}

std::string_view healthStateName(HealthState s) {
  switch (s) {
    case HealthState::Healthy:
      return "healthy";
    case HealthState::Warning:
      return "warning";
    case HealthState::Critical:
      return "critical";
    case HealthState::Fatal:
      return "fatal";
    case HealthState::Unknown:
      return "unknown";
  }
  return "unknown";
}

int healthExitCode(HealthState s) {
  switch (s) {
    case HealthState::Healthy:
      return 0;
    case HealthState::Warning:
      return 1;
    case HealthState::Critical:
    case HealthState::Fatal:
      return 2;
    case HealthState::Unknown:
      return 3;
  }
  return 3;
}

namespace {
constexpr std::int64_t kSeenWriteMs = 10'000;

int rank(HealthState s) {
  switch (s) {
    case HealthState::Healthy:
      return 0;
    case HealthState::Warning:
      return 1;
    case HealthState::Unknown:
      return 2;
    case HealthState::Critical:
      return 3;
    case HealthState::Fatal:
      return 4;
  }
  return 2;
}
HealthState fromSeverity(Severity s) {
  switch (s) {
    case Severity::Info:
      return HealthState::Healthy;
    case Severity::Warning:
      return HealthState::Warning;
    case Severity::Critical:
      return HealthState::Critical;
    case Severity::Fatal:
      return HealthState::Fatal;
  }
  return HealthState::Unknown;
}

constexpr const char* kColumns =
    "id, key, rule, gpu_index, gpu_uuid, severity, summary, action, kb_id, evidence, xid, sticky, escalated, "
    "status, opened_ms, last_seen_ms, updated_ms, resolved_ms, resolved_by, boot, occurrences, context";

std::string text(sqlite3_stmt* st, int col) {
  const unsigned char* p = sqlite3_column_text(st, col);
  return p ? reinterpret_cast<const char*>(p) : "";
}

Incident readRow(sqlite3_stmt* st) {
  Incident i;
  i.id = sqlite3_column_int64(st, 0);
  i.key = text(st, 1);
  i.rule = text(st, 2);
  i.gpu_index = sqlite3_column_int(st, 3);
  i.gpu_uuid = text(st, 4);
  i.severity = static_cast<Severity>(std::clamp(sqlite3_column_int(st, 5), 0, 3));
  i.summary = text(st, 6);
  i.action = text(st, 7);
  i.kb_id = text(st, 8);
  i.evidence = text(st, 9);
  i.xid = sqlite3_column_int(st, 10);
  i.sticky = sqlite3_column_int(st, 11) != 0;
  i.escalated = sqlite3_column_int(st, 12) != 0;
  i.status = static_cast<IncidentStatus>(std::clamp(sqlite3_column_int(st, 13), 0, 2));
  i.opened_ms = sqlite3_column_int64(st, 14);
  i.last_seen_ms = sqlite3_column_int64(st, 15);
  i.updated_ms = sqlite3_column_int64(st, 16);
  i.resolved_ms = sqlite3_column_int64(st, 17);
  i.resolved_by = text(st, 18);
  i.boot = sqlite3_column_int64(st, 19);
  i.occurrences = sqlite3_column_int(st, 20);
  i.context_json = text(st, 21);
  return i;
}

void bindText(sqlite3_stmt* st, int idx, const std::string& s) {
  sqlite3_bind_text(st, idx, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

// Binds every column but id, starting at parameter 1 (key) .. 21 (context).
void bindIncident(sqlite3_stmt* st, const Incident& i) {
  bindText(st, 1, i.key);
  bindText(st, 2, i.rule);
  sqlite3_bind_int(st, 3, i.gpu_index);
  bindText(st, 4, i.gpu_uuid);
  sqlite3_bind_int(st, 5, static_cast<int>(i.severity));
  bindText(st, 6, i.summary);
  bindText(st, 7, i.action);
  bindText(st, 8, i.kb_id);
  bindText(st, 9, i.evidence);
  sqlite3_bind_int(st, 10, i.xid);
  sqlite3_bind_int(st, 11, i.sticky ? 1 : 0);
  sqlite3_bind_int(st, 12, i.escalated ? 1 : 0);
  sqlite3_bind_int(st, 13, static_cast<int>(i.status));
  sqlite3_bind_int64(st, 14, i.opened_ms);
  sqlite3_bind_int64(st, 15, i.last_seen_ms);
  sqlite3_bind_int64(st, 16, i.updated_ms);
  sqlite3_bind_int64(st, 17, i.resolved_ms);
  bindText(st, 18, i.resolved_by);
  sqlite3_bind_int64(st, 19, i.boot);
  sqlite3_bind_int(st, 20, i.occurrences);
  bindText(st, 21, i.context_json);
}

}  // namespace

HealthState worstOf(HealthState a, HealthState b) { return rank(a) >= rank(b) ? a : b; }

Status IncidentStore::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::Error(std::string("incidents.db: ") + m);
  }
  return Status::Ok();
}

Result<std::unique_ptr<IncidentStore>> IncidentStore::open(const std::string& data_dir, IncidentConfig config) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  const std::string path = (std::filesystem::path(data_dir) / "incidents.db").string();
  std::unique_ptr<IncidentStore> s(new IncidentStore());
  s->config_ = config;
  if (sqlite3_open_v2(path.c_str(), &s->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK)
    return Status::Error(path + ": " + (s->db_ ? sqlite3_errmsg(s->db_) : "cannot open"));
  sqlite3_busy_timeout(s->db_, 2000);
  for (const char* sql : {
           "PRAGMA journal_mode=WAL;",
           "PRAGMA synchronous=NORMAL;",
           "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);",
           "CREATE TABLE IF NOT EXISTS incidents (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, "
           "rule TEXT NOT NULL, gpu_index INTEGER, gpu_uuid TEXT, severity INTEGER, summary TEXT, action TEXT, "
           "kb_id TEXT, evidence TEXT, xid INTEGER, sticky INTEGER, escalated INTEGER, status INTEGER, "
           "opened_ms INTEGER, last_seen_ms INTEGER, updated_ms INTEGER, resolved_ms INTEGER, resolved_by TEXT, "
           "boot INTEGER, occurrences INTEGER, context TEXT);",
           "CREATE INDEX IF NOT EXISTS incidents_key ON incidents(key, boot);",
           "CREATE INDEX IF NOT EXISTS incidents_status ON incidents(status);",
       }) {
    if (auto st = s->exec(sql); !st.ok()) return Status::Error(path + ": " + st.message());
  }
  if (auto st = s->exec(config.new_lifetime
                            ? "INSERT INTO meta(k, v) VALUES('boot', 1) ON CONFLICT(k) DO UPDATE SET v = v + 1;"
                            : "INSERT INTO meta(k, v) VALUES('boot', 1) ON CONFLICT(k) DO NOTHING;");
      !st.ok())
    return Status::Error(path + ": " + st.message());
  {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(s->db_, "SELECT v FROM meta WHERE k='boot'", -1, &st, nullptr);
    if (st && sqlite3_step(st) == SQLITE_ROW) s->boot_ = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  auto prep = [&](const std::string& sql, sqlite3_stmt** out) -> Status {
    if (sqlite3_prepare_v3(s->db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, out, nullptr) != SQLITE_OK)
      return Status::Error(path + ": " + sqlite3_errmsg(s->db_));
    return Status::Ok();
  };
  if (auto st = prep("INSERT INTO incidents (key, rule, gpu_index, gpu_uuid, severity, summary, action, kb_id, "
                     "evidence, xid, sticky, escalated, status, opened_ms, last_seen_ms, updated_ms, resolved_ms, "
                     "resolved_by, boot, occurrences, context) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     &s->insert_);
      !st.ok())
    return st;
  if (auto st = prep("UPDATE incidents SET key=?, rule=?, gpu_index=?, gpu_uuid=?, severity=?, summary=?, action=?, "
                     "kb_id=?, evidence=?, xid=?, sticky=?, escalated=?, status=?, opened_ms=?, last_seen_ms=?, "
                     "updated_ms=?, resolved_ms=?, resolved_by=?, boot=?, occurrences=?, context=? WHERE id=?",
                     &s->update_);
      !st.ok())
    return st;
  if (auto st = prep("SELECT COUNT(*) FROM incidents WHERE key=? AND boot<?", &s->prior_); !st.ok()) return st;
  for (auto& i : s->query("status<>2", {}, 100000)) s->live_[i.key] = i;
  return s;
}

IncidentStore::~IncidentStore() {
  sqlite3_finalize(insert_);
  sqlite3_finalize(update_);
  sqlite3_finalize(prior_);
  if (db_) sqlite3_close(db_);
}

Status IncidentStore::insert(Incident& inc) {
  sqlite3_reset(insert_);
  sqlite3_clear_bindings(insert_);
  bindIncident(insert_, inc);
  if (sqlite3_step(insert_) != SQLITE_DONE)
    return Status::Error(std::string("incidents.db insert: ") + sqlite3_errmsg(db_));
  inc.id = sqlite3_last_insert_rowid(db_);
  return Status::Ok();
}

Status IncidentStore::update(const Incident& inc) {
  sqlite3_reset(update_);
  sqlite3_clear_bindings(update_);
  bindIncident(update_, inc);
  sqlite3_bind_int64(update_, 22, inc.id);
  if (sqlite3_step(update_) != SQLITE_DONE)
    return Status::Error(std::string("incidents.db update: ") + sqlite3_errmsg(db_));
  return Status::Ok();
}

std::vector<Incident> IncidentStore::query(const std::string& where, const std::vector<std::string>& args,
                                           int limit) const {
  std::vector<Incident> out;
  std::string sql = std::string("SELECT ") + kColumns + " FROM incidents" + (where.empty() ? "" : " WHERE " + where) +
                    " ORDER BY id DESC LIMIT " + std::to_string(limit);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return out;
  for (std::size_t k = 0; k < args.size(); ++k) bindText(st, static_cast<int>(k + 1), args[k]);
  while (sqlite3_step(st) == SQLITE_ROW) out.push_back(readRow(st));
  sqlite3_finalize(st);
  return out;
}

Result<std::vector<Incident>> IncidentStore::apply(const std::vector<Finding>& findings, std::int64_t now,
                                                   const RuleEngine* engine) {
  std::lock_guard lock(mu_);
  std::vector<Incident> opened;
  std::set<std::string> seen;
  exec("BEGIN");
  for (const auto& f : findings) {
    seen.insert(f.key);
    if (auto sil = silenced_.find(f.key); sil != silenced_.end()) {
      if (f.rule != "xid" || f.evidence == sil->second) continue;
      silenced_.erase(sil);  // a new Xid of that code after the operator's resolve
    }
    auto it = live_.find(f.key);
    if (it != live_.end()) {
      Incident& inc = it->second;
      // Write through only when something an operator reads changed, or every kSeenWriteMs so
      // that last_seen survives a restart; a steady condition costs no write per pass.
      bool changed = false;
      if (f.severity > inc.severity && !inc.escalated) {  // a condition can worsen, never silently improve
        inc.severity = f.severity;
        inc.summary = f.summary;
        inc.action = f.action;
        inc.updated_ms = now;
        changed = true;
      }
      if (inc.evidence != f.evidence) inc.evidence = f.evidence;
      if (now - inc.last_written_ms >= kSeenWriteMs) changed = true;
      inc.last_seen_ms = now;
      ++inc.occurrences;
      if (changed) {
        inc.last_written_ms = now;
        if (auto st = update(inc); !st.ok()) {
          exec("ROLLBACK");
          return st;
        }
      }
      continue;
    }
    Incident inc;
    inc.key = f.key;
    inc.rule = f.rule;
    inc.gpu_index = f.gpu_index;
    inc.gpu_uuid = f.gpu_uuid;
    inc.severity = f.severity;
    inc.summary = f.summary;
    inc.action = f.action;
    inc.kb_id = f.kb_id;
    inc.evidence = f.evidence;
    inc.xid = f.xid;
    inc.sticky = f.sticky;
    inc.status = IncidentStatus::Open;
    inc.opened_ms = inc.last_seen_ms = inc.updated_ms = now;
    inc.boot = boot_;
    if (engine && !f.gpu_uuid.empty()) inc.context_json = engine->contextSnapshot(f.gpu_uuid, now).dump();
    // An Xid that this GPU already had in an earlier agent lifetime: hardware inspection.
    if (f.rule == "xid" && f.severity >= Severity::Warning) {
      sqlite3_reset(prior_);
      sqlite3_clear_bindings(prior_);
      bindText(prior_, 1, f.key);
      sqlite3_bind_int64(prior_, 2, boot_);
      if (sqlite3_step(prior_) == SQLITE_ROW && sqlite3_column_int64(prior_, 0) > 0) {
        inc.escalated = true;
        inc.sticky = true;
        inc.severity = f.severity >= Severity::Critical ? Severity::Fatal : Severity::Critical;
        inc.summary = f.summary + " It recurred after a restart: hardware inspection needed.";
        inc.action = "Hardware inspection: " + std::string(knowledge::describe(knowledge::XidAction::kDrainAndReplace));
      }
    }
    inc.last_written_ms = now;
    if (auto st = insert(inc); !st.ok()) {
      exec("ROLLBACK");
      return st;
    }
    live_[inc.key] = inc;
    opened.push_back(inc);
  }
  for (auto it = silenced_.begin(); it != silenced_.end();)
    it = seen.count(it->first) ? std::next(it) : silenced_.erase(it);
  // auto-resolve cleared, non-sticky incidents after the grace period
  for (auto it = live_.begin(); it != live_.end();) {
    Incident& inc = it->second;
    if (!inc.sticky && !seen.count(inc.key) && now - inc.last_seen_ms >= config_.grace_ms) {
      inc.status = IncidentStatus::Resolved;
      inc.resolved_ms = inc.updated_ms = now;
      inc.resolved_by = "auto";
      if (auto st = update(inc); !st.ok()) {
        exec("ROLLBACK");
        return st;
      }
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  if (auto st = exec("COMMIT"); !st.ok()) return st;
  return opened;
}

void IncidentStore::silence(const Incident& inc) { silenced_[inc.key] = inc.rule == "xid" ? inc.evidence : ""; }

Status IncidentStore::acknowledge(std::int64_t id, std::int64_t now) {
  std::lock_guard lock(mu_);
  for (auto& [k, inc] : live_)
    if (inc.id == id) {
      inc.status = IncidentStatus::Acknowledged;
      inc.updated_ms = now;
      return update(inc);
    }
  return Status::Error("no unresolved incident with id " + std::to_string(id));
}

Status IncidentStore::resolve(std::int64_t id, std::int64_t now, const std::string& by) {
  std::lock_guard lock(mu_);
  for (auto it = live_.begin(); it != live_.end(); ++it)
    if (it->second.id == id) {
      Incident& inc = it->second;
      inc.status = IncidentStatus::Resolved;
      inc.resolved_ms = inc.updated_ms = now;
      inc.resolved_by = by;
      auto st = update(inc);
      silence(inc);
      live_.erase(it);
      return st;
    }
  return Status::Error("no unresolved incident with id " + std::to_string(id));
}

Result<int> IncidentStore::markHealthy(const std::string& uuid, std::int64_t now, const std::string& by) {
  std::lock_guard lock(mu_);
  int n = 0;
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->second.gpu_uuid == uuid) {
      Incident& inc = it->second;
      inc.status = IncidentStatus::Resolved;
      inc.resolved_ms = inc.updated_ms = now;
      inc.resolved_by = by;
      if (auto st = update(inc); !st.ok()) return st;
      silence(inc);
      it = live_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

std::vector<Incident> IncidentStore::unresolved() const {
  std::lock_guard lock(mu_);
  std::vector<Incident> out;
  for (const auto& [k, i] : live_) out.push_back(i);
  std::sort(out.begin(), out.end(), [](const Incident& a, const Incident& b) { return a.id > b.id; });
  return out;
}

std::vector<Incident> IncidentStore::recent(int limit) const {
  std::lock_guard lock(mu_);
  return query("", {}, limit);
}

std::optional<Incident> IncidentStore::get(std::int64_t id) const {
  std::lock_guard lock(mu_);
  auto r = query("id=" + std::to_string(id), {}, 1);
  if (r.empty()) return std::nullopt;
  return r.front();
}

HealthState IncidentStore::healthOf(const std::string& uuid) const {
  std::lock_guard lock(mu_);
  HealthState h = HealthState::Healthy;
  for (const auto& [k, i] : live_)
    if (i.gpu_uuid == uuid) h = worstOf(h, fromSeverity(i.severity));
  return h;
}

std::vector<std::pair<collect::GpuIdentity, HealthState>> IncidentStore::healthStates(
    const std::vector<collect::GpuView>& views) const {
  std::vector<std::pair<collect::GpuIdentity, HealthState>> out;
  for (const auto& v : views) {
    if (v.id.is_mig) continue;
    HealthState h = healthOf(v.id.uuid);
    if ((v.state == collect::GpuState::Down || v.state == collect::GpuState::Stalled) &&
        rank(h) < rank(HealthState::Unknown))
      h = HealthState::Unknown;
    out.emplace_back(v.id, h);
  }
  return out;
}

std::uint64_t IncidentStore::healthDigest() const {
  std::lock_guard lock(mu_);
  std::uint64_t h = live_.size();
  for (const auto& [k, i] : live_) {
    // boost::hash_combine's mixing step; live_ is ordered, so the digest is too.
    h ^= std::hash<std::string>{}(i.gpu_uuid) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= static_cast<std::uint64_t>(i.severity) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

std::map<Severity, int> IncidentStore::openCountBySeverity() const {
  std::lock_guard lock(mu_);
  std::map<Severity, int> out{
      {Severity::Info, 0}, {Severity::Warning, 0}, {Severity::Critical, 0}, {Severity::Fatal, 0}};
  for (const auto& [k, i] : live_) ++out[i.severity];
  return out;
}

}  // namespace gw::health
