// Incidents: findings with a lifecycle (open -> acknowledged -> resolved), a recommended action
// and a context snapshot of the GPU's signals at that moment and over the minute before it,
// persisted in SQLite (incidents.db in the data directory, WAL) so open incidents survive
// restarts. Non-sticky incidents resolve themselves a grace period after their condition cleared;
// sticky ones (Xid, ECC, row remapping, retired pages, lost GPU) wait for an operator. An Xid that
// recurs on the same GPU in a later agent lifetime escalates to hardware inspection.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "collect/gpu_view.h"
#include "common/result.h"
#include "health/rules.h"
#include "platform/sqlite.h"

namespace gw::health {

enum class IncidentStatus { Open, Acknowledged, Resolved };
std::string_view statusName(IncidentStatus s);

struct Incident {
  std::int64_t id = 0;
  std::string key;  // Finding::key
  std::string rule;
  int gpu_index = -1;
  std::string gpu_uuid;
  Severity severity = Severity::Warning;
  std::string summary, action, kb_id, evidence;
  int xid = 0;
  bool sticky = false;
  bool escalated = false;  // recurred across agent restarts: hardware inspection
  IncidentStatus status = IncidentStatus::Open;
  std::int64_t opened_ms = 0, last_seen_ms = 0, updated_ms = 0, resolved_ms = 0;
  std::string resolved_by;           // "auto", "operator", "mark-healthy"
  std::int64_t boot = 0;             // agent start count when it opened
  int occurrences = 1;               // evaluation passes that reported it
  std::int64_t last_written_ms = 0;  // not persisted: when it was last written to the database
  std::string context_json;          // RuleEngine::contextSnapshot at opening
};

enum class HealthState { Healthy, Warning, Critical, Fatal, Unknown };
std::string_view healthStateName(HealthState s);
// `gpuwarden health` exit code: 0 healthy, 1 warning, 2 critical or fatal, 3 unknown.
int healthExitCode(HealthState s);
HealthState worstOf(HealthState a, HealthState b);

struct IncidentConfig {
  std::int64_t grace_ms = 120'000;  // a cleared, non-sticky condition resolves after this
  // The agent opens the store once per start, and that start is a new lifetime for recurrence
  // checks; an operator's `gpuwarden incidents ...` is not.
  bool new_lifetime = true;
};

class IncidentStore {
 public:
  // The schema version incidents.db carries (PRAGMA user_version). 0 is the same schema from before
  // files carried a version; a newer one is refused at open. A change to the schema or to what a
  // column means needs a new version, a migration and a golden (tests/golden/, docs/testing.md).
  static constexpr int kSchemaVersion = 1;

  // Opens (creating) the database at `path` (node::DataDir::incidentsDb()); counts a new agent
  // lifetime when config says so.
  static Result<std::unique_ptr<IncidentStore>> open(const std::string& path, IncidentConfig config = {});
  ~IncidentStore();
  IncidentStore(const IncidentStore&) = delete;
  IncidentStore& operator=(const IncidentStore&) = delete;

  std::int64_t bootId() const { return boot_; }

  // Merges the engine's current findings: new keys open incidents (with a context snapshot from
  // `engine`, when given), known keys refresh last_seen/severity, non-sticky incidents absent for
  // grace_ms resolve. Returns the incidents opened or escalated by this call.
  Result<std::vector<Incident>> apply(const std::vector<Finding>& findings, std::int64_t now_ms,
                                      const RuleEngine* engine = nullptr);

  Status acknowledge(std::int64_t id, std::int64_t now_ms);
  Status resolve(std::int64_t id, std::int64_t now_ms, const std::string& by = "operator");
  // Resolves every unresolved incident of the GPU (the operator says it is healthy again).
  Result<int> markHealthy(const std::string& uuid, std::int64_t now_ms, const std::string& by = "mark-healthy");

  std::vector<Incident> unresolved() const;             // open + acknowledged, newest first
  std::vector<Incident> recent(int limit = 100) const;  // any status, newest first
  std::optional<Incident> get(std::int64_t id) const;

  // Worst unresolved severity of the GPU (info counts as healthy).
  HealthState healthOf(const std::string& uuid) const;
  // Per GPU of `views` (MIG devices skipped): Unknown when the GPU is down/stalled with nothing
  // worse open, else from its incidents.
  std::vector<std::pair<collect::GpuIdentity, HealthState>> healthStates(
      const std::vector<collect::GpuView>& views) const;
  std::map<Severity, int> openCountBySeverity() const;
  // A hash of what healthStates() and openCountBySeverity() are computed from (each unresolved
  // incident's GPU and severity): equal digests, equal health metrics for the same views.
  std::uint64_t healthDigest() const;

 private:
  IncidentStore() = default;
  static Result<std::unique_ptr<IncidentStore>> openOnce(const std::string& path, IncidentConfig config);
  // Newest first; `id` > 0 selects that incident only, `unresolved_only` open and acknowledged.
  std::vector<Incident> query(std::int64_t id, bool unresolved_only, int limit) const;
  Status insert(Incident& inc);
  Status update(const Incident& inc);

  IncidentConfig config_;
  std::unique_ptr<platform::Database> db_;
  platform::Statement insert_, update_;
  platform::Statement prior_;  // an earlier-boot incident with the same key
  mutable platform::Statement select_;
  std::int64_t boot_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, Incident> live_;  // unresolved incidents by key (cache of the table)
  // Keys an operator resolved while their condition still held: not reopened until the condition
  // clears once (an Xid: until a new one of that code arrives, which changes its evidence).
  std::map<std::string, std::string> silenced_;  // key -> evidence when resolved (Xids), else ""
  void silence(const Incident& inc);
};

}  // namespace gw::health
