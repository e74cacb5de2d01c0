#include "health/incidents.h"

#include "knowledge/xid_catalog.h"

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

Incident readRow(const platform::Query& q) {
  Incident i;
  i.id = q.int64(0);
  i.key = q.text(1);
  i.rule = q.text(2);
  i.gpu_index = q.int32(3);
  i.gpu_uuid = q.text(4);
  i.severity = static_cast<Severity>(std::clamp(q.int32(5), 0, 3));
  i.summary = q.text(6);
  i.action = q.text(7);
  i.kb_id = q.text(8);
  i.evidence = q.text(9);
  i.xid = q.int32(10);
  i.sticky = q.int32(11) != 0;
  i.escalated = q.int32(12) != 0;
  i.status = static_cast<IncidentStatus>(std::clamp(q.int32(13), 0, 2));
  i.opened_ms = q.int64(14);
  i.last_seen_ms = q.int64(15);
  i.updated_ms = q.int64(16);
  i.resolved_ms = q.int64(17);
  i.resolved_by = q.text(18);
  i.boot = q.int64(19);
  i.occurrences = q.int32(20);
  i.context_json = q.text(21);
  return i;
}

// Binds every column but id, starting at parameter 1 (key) .. 21 (context).
void bindIncident(platform::Query& q, const Incident& i) {
  q.bind(1, i.key)
      .bind(2, i.rule)
      .bind(3, i.gpu_index)
      .bind(4, i.gpu_uuid)
      .bind(5, static_cast<int>(i.severity))
      .bind(6, i.summary)
      .bind(7, i.action)
      .bind(8, i.kb_id)
      .bind(9, i.evidence)
      .bind(10, i.xid)
      .bind(11, i.sticky ? 1 : 0)
      .bind(12, i.escalated ? 1 : 0)
      .bind(13, static_cast<int>(i.status))
      .bind(14, i.opened_ms)
      .bind(15, i.last_seen_ms)
      .bind(16, i.updated_ms)
      .bind(17, i.resolved_ms)
      .bind(18, i.resolved_by)
      .bind(19, i.boot)
      .bind(20, i.occurrences)
      .bind(21, i.context_json);
}

}  // namespace

HealthState worstOf(HealthState a, HealthState b) { return rank(a) >= rank(b) ? a : b; }

Result<std::unique_ptr<IncidentStore>> IncidentStore::open(const std::string& path, IncidentConfig config) {
  // A damaged file is moved aside (kept for inspection, logged) and a fresh one started: the
  // incidents it held are lost, health judging and /metrics are not.
  return platform::openOrMoveAside<std::unique_ptr<IncidentStore>>(path, "incident database",
                                                                   [&] { return openOnce(path, config); });
}

Result<std::unique_ptr<IncidentStore>> IncidentStore::openOnce(const std::string& path, IncidentConfig config) {
  std::unique_ptr<IncidentStore> s(new IncidentStore());
  s->config_ = config;
  auto db = platform::openWithSchema(
      path, "incident database", kSchemaVersion,
      {
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
      });
  if (!db) return db.status();
  s->db_ = std::move(db.value());
  platform::Database& d = *s->db_;
  if (auto st = d.exec(config.new_lifetime
                           ? "INSERT INTO meta(k, v) VALUES('boot', 1) ON CONFLICT(k) DO UPDATE SET v = v + 1;"
                           : "INSERT INTO meta(k, v) VALUES('boot', 1) ON CONFLICT(k) DO NOTHING;");
      !st.ok())
    return st;
  auto boot = d.queryInt("SELECT v FROM meta WHERE k='boot'");
  if (!boot) return boot.status();
  s->boot_ = *boot;
  auto prep = [&](const std::string& sql, platform::Statement& out) -> Status {
    auto st = d.prepare(sql);
    if (!st) return st.status();
    out = std::move(st.value());
    return Status::Ok();
  };
  if (auto st = prep("INSERT INTO incidents (key, rule, gpu_index, gpu_uuid, severity, summary, action, kb_id, "
                     "evidence, xid, sticky, escalated, status, opened_ms, last_seen_ms, updated_ms, resolved_ms, "
                     "resolved_by, boot, occurrences, context) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     s->insert_);
      !st.ok())
    return st;
  if (auto st = prep("UPDATE incidents SET key=?, rule=?, gpu_index=?, gpu_uuid=?, severity=?, summary=?, action=?, "
                     "kb_id=?, evidence=?, xid=?, sticky=?, escalated=?, status=?, opened_ms=?, last_seen_ms=?, "
                     "updated_ms=?, resolved_ms=?, resolved_by=?, boot=?, occurrences=?, context=? WHERE id=?",
                     s->update_);
      !st.ok())
    return st;
  if (auto st = prep("SELECT COUNT(*) FROM incidents WHERE key=? AND boot<?", s->prior_); !st.ok()) return st;
  // ?1: one incident by id (0: any); ?2: unresolved only; ?3: at most this many.
  if (auto st = prep(std::string("SELECT ") + kColumns +
                         " FROM incidents WHERE (?1 = 0 OR id = ?1) AND (?2 = 0 OR status <> 2) "
                         "ORDER BY id DESC LIMIT ?3",
                     s->select_);
      !st.ok())
    return st;
  for (auto& i : s->query(0, true, 100000)) s->live_[i.key] = i;
  return s;
}

IncidentStore::~IncidentStore() = default;

Status IncidentStore::insert(Incident& inc) {
  platform::Query q = insert_.use();
  bindIncident(q, inc);
  if (Status st = q.run(); !st.ok()) return st.withMessage(db_->describe("insert: " + st.message()));
  inc.id = db_->lastInsertRowId();
  return Status::Ok();
}

Status IncidentStore::update(const Incident& inc) {
  platform::Query q = update_.use();
  bindIncident(q, inc);
  q.bind(22, inc.id);
  if (Status st = q.run(); !st.ok()) return st.withMessage(db_->describe("update: " + st.message()));
  return Status::Ok();
}

std::vector<Incident> IncidentStore::query(std::int64_t id, bool unresolved_only, int limit) const {
  std::vector<Incident> out;
  platform::Query q = select_.use();
  q.bind(1, id).bind(2, unresolved_only ? 1 : 0).bind(3, limit);
  while (q.step()) out.push_back(readRow(q));
  return out;
}

Result<std::vector<Incident>> IncidentStore::apply(const std::vector<Finding>& findings, std::int64_t now,
                                                   const RuleEngine* engine) {
  std::lock_guard lock(mu_);
  std::vector<Incident> opened;
  std::set<std::string> seen;
  // BEGIN IMMEDIATE waits (busy timeout) for a CLI that is writing; rolled back on any return
  // before the commit.
  platform::Transaction tx(*db_);
  if (!tx.begun().ok()) return tx.begun();
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
        if (auto st = update(inc); !st.ok()) return st;
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
      platform::Query prior = prior_.use();
      prior.bind(1, f.key).bind(2, boot_);
      if (prior.step() && prior.int64(0) > 0) {
        inc.escalated = true;
        inc.sticky = true;
        inc.severity = f.severity >= Severity::Critical ? Severity::Fatal : Severity::Critical;
        inc.summary = f.summary + " It recurred after a restart: hardware inspection needed.";
        inc.action = "Hardware inspection: " + std::string(knowledge::describe(knowledge::XidAction::kDrainAndReplace));
      }
    }
    inc.last_written_ms = now;
    if (auto st = insert(inc); !st.ok()) return st;
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
      if (auto st = update(inc); !st.ok()) return st;
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  if (auto st = tx.commit(); !st.ok()) return st;
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
  return query(0, false, limit);
}

std::optional<Incident> IncidentStore::get(std::int64_t id) const {
  std::lock_guard lock(mu_);
  auto r = query(id, false, 1);
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
    HealthState h = HealthState::Healthy;
    {
      std::lock_guard lock(mu_);
      for (const auto& [k, i] : live_)
        if (v.id.names(i.gpu_uuid, i.gpu_index)) h = worstOf(h, fromSeverity(i.severity));
    }
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
