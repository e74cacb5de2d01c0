#include "node/job_store.h"
#include "platform/bounded_json.h"

#include <filesystem>

namespace gw::node {

using json = nlohmann::json;

namespace {
constexpr const char* kColumns = "run, job_id, user, uid, source, start_ms, end_ms, gpus, fingerprint";

}  // namespace

Result<std::unique_ptr<JobStore>> JobStore::open(const std::string& path) {
  return platform::openOrMoveAside<std::unique_ptr<JobStore>>(path, "jobs database", [&] { return openOnce(path); });
}

Result<std::unique_ptr<JobStore>> JobStore::openOnce(const std::string& path) {
  std::unique_ptr<JobStore> s(new JobStore());
  auto db = platform::openWithSchema(
      path, "jobs database", kSchemaVersion,
      {
          "PRAGMA journal_mode=WAL;",
          "PRAGMA synchronous=NORMAL;",
          "CREATE TABLE IF NOT EXISTS jobs (run INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, "
          "user TEXT NOT NULL, uid INTEGER NOT NULL, source TEXT NOT NULL, start_ms INTEGER NOT NULL, "
          "end_ms INTEGER NOT NULL, gpus TEXT NOT NULL, fingerprint TEXT NOT NULL);",
          "CREATE INDEX IF NOT EXISTS jobs_id ON jobs(job_id, run);",
          "CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_ms);",
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
  for (auto [sql, st] : {
           std::pair<std::string, platform::Statement*>{
               "INSERT INTO jobs (job_id, user, uid, source, start_ms, end_ms, gpus, fingerprint) "
               "VALUES (?,?,?,?,?,?,?,?)",
               &s->insert_},
           {"UPDATE jobs SET end_ms=?, gpus=?, fingerprint=? WHERE run=?", &s->update_},
           {std::string("SELECT ") + kColumns + " FROM jobs ORDER BY run DESC LIMIT ?", &s->list_},
           {std::string("SELECT ") + kColumns + " FROM jobs WHERE job_id=? ORDER BY run DESC LIMIT 1", &s->latest_},
           {std::string("SELECT ") + kColumns + " FROM jobs WHERE end_ms=0 ORDER BY run", &s->running_},
       })
    if (auto r = prep(sql, *st); !r.ok()) return r;
  return s;
}

Result<std::int64_t> JobStore::insert(const JobRun& r) {
  const std::string gpus = r.gpus.dump(), fp = r.fingerprint.dump();
  auto q = insert_.use();
  q.bind(1, r.job_id).bind(2, r.user).bind(3, r.uid).bind(4, r.source).bind(5, r.start_ms).bind(6, r.end_ms);
  q.bind(7, gpus).bind(8, fp);
  if (auto st = q.run(); !st.ok()) return st;
  return db_->lastInsertRowId();
}

Status JobStore::update(const JobRun& r) {
  const std::string gpus = r.gpus.dump(), fp = r.fingerprint.dump();
  auto q = update_.use();
  q.bind(1, r.end_ms).bind(2, gpus).bind(3, fp).bind(4, r.run);
  return q.run();
}

Result<std::vector<JobRun>> JobStore::read(platform::Statement& st, const std::string* job_id, std::size_t limit) {
  std::vector<JobRun> out;
  auto q = st.use();
  if (job_id) q.bind(1, *job_id);
  if (limit) q.bind(1, static_cast<std::int64_t>(limit));
  while (q.step()) {
    JobRun r;
    r.run = q.int64(0);
    r.job_id = q.text(1);
    r.user = q.text(2);
    r.uid = q.int64(3);
    r.source = q.text(4);
    r.start_ms = q.int64(5);
    r.end_ms = q.int64(6);
    r.gpus = platform::parseBoundedOr(q.text(7), json::array());
    if (!r.gpus.is_array()) r.gpus = json::array();
    r.fingerprint = platform::parseBoundedOr(q.text(8), json(nullptr));
    out.push_back(std::move(r));
  }
  if (!q.status().ok()) return q.status();
  return out;
}

Result<std::vector<JobRun>> JobStore::list(std::size_t limit) { return read(list_, nullptr, limit ? limit : 1); }

Result<std::optional<JobRun>> JobStore::latest(const std::string& job_id) {
  auto r = read(latest_, &job_id, 0);
  if (!r) return r.status();
  if (r->empty()) return std::optional<JobRun>{};
  return std::optional<JobRun>(std::move(r->front()));
}

Result<std::vector<JobRun>> JobStore::running() { return read(running_, nullptr, 0); }

}  // namespace gw::node
