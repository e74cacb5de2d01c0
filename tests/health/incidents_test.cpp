// Incident lifecycle, persistence, recurrence escalation, context snapshots and health metrics.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "health/incidents.h"
#include "platform/sqlite.h"

using namespace gw;
using namespace gw::health;

namespace {

std::string freshDir(const std::string& tag) {
  static int n = 0;
  auto d = std::filesystem::temp_directory_path() /
           ("gw-incidents-" + std::to_string(getpid()) + "-" + tag + std::to_string(++n));
  std::filesystem::remove_all(d);
  return d.string();
}

Finding finding(const std::string& rule, const std::string& uuid, Severity s, bool sticky, int xid = 0) {
  Finding f;
  f.rule = rule;
  f.gpu_uuid = uuid;
  f.gpu_index = 0;
  f.severity = s;
  f.sticky = sticky;
  f.xid = xid;
  f.summary = rule + " on " + uuid;
  f.action = "do something";
  f.key = rule + "|" + uuid + (xid ? "|" + std::to_string(xid) : "");
  return f;
}

}  // namespace

TEST(Incidents, OpenAutoResolveAndSticky) {
  auto s = IncidentStore::open(freshDir("a") + "/incidents.db", {.grace_ms = 60'000});
  ASSERT_TRUE(s.ok()) << s.error();
  auto& st = **s;
  auto temp = finding("gpu_temperature", "GPU-1", Severity::Warning, false);
  auto dbe = finding("ecc_dbe", "GPU-1", Severity::Critical, true);
  auto r = st.apply({temp, dbe}, 1000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 2u);
  EXPECT_EQ(st.apply({temp, dbe}, 2000)->size(), 0u) << "same keys: no new incidents";
  EXPECT_EQ(st.healthOf("GPU-1"), HealthState::Critical);
  st.apply({}, 30'000);
  EXPECT_EQ(st.unresolved().size(), 2u) << "inside the grace period";
  st.apply({}, 70'000);
  auto open = st.unresolved();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].rule, "ecc_dbe") << "sticky incidents wait for an operator";
  auto resolved = st.recent();
  bool autoResolved = false;
  for (auto& i : resolved) autoResolved |= i.rule == "gpu_temperature" && i.resolved_by == "auto";
  EXPECT_TRUE(autoResolved);
}

TEST(Incidents, AcknowledgeResolveMarkHealthy) {
  auto s = IncidentStore::open(freshDir("b") + "/incidents.db");
  ASSERT_TRUE(s.ok());
  auto& st = **s;
  auto r = st.apply(
      {finding("ecc_dbe", "GPU-1", Severity::Critical, true), finding("row_remap", "GPU-1", Severity::Warning, true),
       finding("gpu_lost", "GPU-2", Severity::Fatal, true)},
      1000);
  ASSERT_EQ(r->size(), 3u);
  const auto id = (*r)[0].id;
  ASSERT_TRUE(st.acknowledge(id, 2000).ok());
  EXPECT_EQ(st.get(id)->status, IncidentStatus::Acknowledged);
  EXPECT_EQ(st.healthOf("GPU-1"), HealthState::Critical) << "acknowledged is still unresolved";
  ASSERT_TRUE(st.resolve(id, 3000).ok());
  EXPECT_EQ(st.get(id)->status, IncidentStatus::Resolved);
  EXPECT_FALSE(st.resolve(id, 3000).ok());
  auto n = st.markHealthy("GPU-1", 4000);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(st.healthOf("GPU-1"), HealthState::Healthy);
  EXPECT_EQ(st.healthOf("GPU-2"), HealthState::Fatal);
  EXPECT_EQ(healthExitCode(HealthState::Fatal), 2);
  EXPECT_EQ(healthExitCode(HealthState::Warning), 1);
  EXPECT_EQ(healthExitCode(HealthState::Unknown), 3);
  EXPECT_EQ(healthExitCode(HealthState::Healthy), 0);
}

TEST(Incidents, PersistAcrossReopenAndEscalateRecurringXid) {
  const auto dir = freshDir("c");
  std::int64_t firstId = 0;
  {
    auto s = IncidentStore::open(dir + "/incidents.db");
    ASSERT_TRUE(s.ok());
    auto r = (*s)->apply({finding("xid", "GPU-9", Severity::Critical, true, 48),
                          finding("gpu_temperature", "GPU-9", Severity::Warning, false)},
                         1000);
    firstId = (*r)[0].id;
    EXPECT_FALSE((*r)[0].escalated);
  }
  {
    auto s = IncidentStore::open(dir + "/incidents.db");
    ASSERT_TRUE(s.ok());
    auto& st = **s;
    EXPECT_EQ(st.unresolved().size(), 2u) << "open incidents survive the restart";
    EXPECT_EQ(st.get(firstId)->rule, "xid");
    // the same Xid in this lifetime merges into the open incident; resolve it, then it recurs
    EXPECT_EQ(st.apply({finding("xid", "GPU-9", Severity::Critical, true, 48)}, 5000)->size(), 0u);
    ASSERT_TRUE(st.markHealthy("GPU-9", 6000).ok());
  }
  {
    auto s = IncidentStore::open(dir + "/incidents.db");  // a third lifetime: the Xid comes back after a reboot
    auto& st = **s;
    EXPECT_TRUE(st.unresolved().empty());
    auto r = st.apply({finding("xid", "GPU-9", Severity::Critical, true, 48)}, 9000);
    ASSERT_EQ(r->size(), 1u);
    EXPECT_TRUE((*r)[0].escalated);
    EXPECT_EQ((*r)[0].severity, Severity::Fatal);
    EXPECT_NE((*r)[0].action.find("Hardware inspection"), std::string::npos) << (*r)[0].action;
    EXPECT_GT(st.bootId(), 2);
  }
}

TEST(Incidents, ContextSnapshotFromRuleEngine) {
  RuleEngine e;
  collect::GpuView v;
  v.id.uuid = "GPU-7";
  v.values.assign(fields::all().size(), {});
  auto set = [&](std::string_view k, double x) { v.values[fields::indexOf(*fields::findByKey(k))] = {x, 0, true}; };
  for (int s = 0; s < 120; ++s) {
    set("gpu_temp", 60 + s / 4.0);
    set("power_usage", 500);
    set("sm_clock", 1980 - s);
    set("clock_event_reasons", 0);
    set("pcie_link_gen", 5);
    set("pcie_link_width", 16);
    set("gpu_util", 95);
    set("ecc_dbe_volatile", 0);
    e.observe({v}, 10'000 + s * 1000);
  }
  auto s = IncidentStore::open(freshDir("d") + "/incidents.db");
  auto r = (*s)->apply({finding("gpu_temperature", "GPU-7", Severity::Warning, false)}, 129'000, &e);
  ASSERT_EQ(r->size(), 1u);
  auto j = nlohmann::json::parse((*r)[0].context_json);
  EXPECT_EQ(j["at"]["gpu_temp"], 60 + 119 / 4.0);
  for (const char* k : {"gpu_temp", "power_usage", "sm_clock", "clock_event_reasons", "pcie_link_gen",
                        "pcie_link_width", "gpu_util", "ecc_dbe_volatile"})
    EXPECT_EQ(j["series"][k].size(), 61u) << k;
}

// What a restart or the CLI reads is the stored row: the snapshot and the pass count are columns
// of their own, each read back as written.
TEST(Incidents, TheContextSnapshotAndOccurrencesAreStored) {
  RuleEngine e;
  collect::GpuView v;
  v.id.uuid = "GPU-7";
  v.values.assign(fields::all().size(), {});
  v.values[fields::indexOf(*fields::findByKey("gpu_temp"))] = {71.0, 0, true};
  e.observe({v}, 10'000);
  auto s = IncidentStore::open(freshDir("stored") + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  auto r = (*s)->apply({finding("gpu_temperature", "GPU-7", Severity::Warning, false)}, 11'000, &e);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  ASSERT_FALSE((*r)[0].context_json.empty());
  auto stored = (*s)->get((*r)[0].id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->context_json, (*r)[0].context_json);
  EXPECT_EQ(stored->occurrences, 1);
}

// What an operator reads after a restart comes from the file: the Xid code and that the incident
// waits for an operator must both be what was written.
TEST(Incidents, XidAndStickyAreReadBackFromTheFile) {
  const auto dir = freshDir("readback");
  std::int64_t id = 0;
  {
    auto s = IncidentStore::open(dir + "/incidents.db");
    ASSERT_TRUE(s.ok()) << s.error();
    auto r = (*s)->apply({finding("xid", "GPU-3", Severity::Critical, true, 79)}, 1000);
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(r->size(), 1u);
    id = (*r)[0].id;
  }
  IncidentConfig look;
  look.new_lifetime = false;
  auto s = IncidentStore::open(dir + "/incidents.db", look);
  ASSERT_TRUE(s.ok()) << s.error();
  auto stored = (*s)->get(id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->xid, 79);
  EXPECT_TRUE(stored->sticky);
}

TEST(Incidents, OperatorOpenIsNotANewLifetime) {
  const auto dir = freshDir("lifetime");
  std::int64_t agentBoot = 0;
  {
    auto s = IncidentStore::open(dir + "/incidents.db");
    ASSERT_TRUE(s.ok());
    agentBoot = (*s)->bootId();
    ASSERT_TRUE((*s)->apply({finding("xid", "GPU-7", Severity::Critical, true, 48)}, 1000).ok());
  }
  IncidentConfig look;
  look.new_lifetime = false;
  for (int i = 0; i < 3; ++i) {
    auto s = IncidentStore::open(dir + "/incidents.db", look);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ((*s)->bootId(), agentBoot) << "`gpuwarden incidents` must not count as an agent start";
  }
  // The same Xid again in the agent's same lifetime merges; it is not a recurrence after a reboot.
  auto s = IncidentStore::open(dir + "/incidents.db", look);
  auto r = (*s)->apply({finding("xid", "GPU-7", Severity::Critical, true, 48)}, 2000);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

// The field bug: `gpuwarden incidents resolve` (a second connection) committed while the agent's
// connection still had a statement mid-read from its last pass; from then on every pass of the
// agent failed with "cannot commit transaction - SQL statements in progress".
TEST(Incidents, AgentKeepsWritingAfterAnotherProcessResolves) {
  const auto dir = freshDir("wedge");
  auto agent = IncidentStore::open(dir + "/incidents.db");
  ASSERT_TRUE(agent.ok()) << agent.error();
  auto xid = finding("xid", "GPU-5", Severity::Critical, true, 79);
  auto temp = finding("gpu_temperature", "GPU-5", Severity::Warning, false);
  auto first = (*agent)->apply({xid, temp}, 1000);
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_EQ(first->size(), 2u);

  IncidentConfig cli_config;
  cli_config.new_lifetime = false;
  {
    auto cli = IncidentStore::open(dir + "/incidents.db", cli_config);
    ASSERT_TRUE(cli.ok()) << cli.error();
    ASSERT_TRUE((*cli)->resolve((*first)[0].id, 2000).ok());
  }

  // Passes ten seconds apart so that each one writes (last_seen is written every 10 s).
  for (int pass = 1; pass <= 5; ++pass) {
    auto r = (*agent)->apply({xid, temp}, 1000 + pass * 11'000);
    EXPECT_TRUE(r.ok()) << "pass " << pass << ": " << r.error();
  }
  auto ecc = finding("ecc_dbe", "GPU-5", Severity::Critical, true);
  auto r = (*agent)->apply({xid, temp, ecc}, 70'000);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);

  auto cli = IncidentStore::open(dir + "/incidents.db", cli_config);
  ASSERT_TRUE(cli.ok()) << cli.error();
  auto stored = (*cli)->get((*r)[0].id);
  ASSERT_TRUE(stored.has_value()) << "the agent's new incident reached the file";
  EXPECT_EQ(stored->rule, "ecc_dbe");
}

// A file from a newer gpuwarden (a later schema version) is refused, naming the file and both
// versions, and left as it is: it is not damage, and going back a version must not lose it.
TEST(Incidents, NewerSchemaVersionIsRefusedNamingTheFileAndBothVersions) {
  const auto dir = freshDir("newer");
  const std::string path = dir + "/incidents.db";
  {
    auto s = IncidentStore::open(path);
    ASSERT_TRUE(s.ok()) << s.error();
    ASSERT_TRUE((*s)->apply({finding("xid", "GPU-9", Severity::Critical, true, 79)}, 1000).ok());
  }
  const int newer = IncidentStore::kSchemaVersion + 1;
  {
    auto db = platform::Database::open(path, "test");
    ASSERT_TRUE(db.ok()) << db.error();
    EXPECT_EQ((*db)->queryInt("PRAGMA user_version").value_or(-1), IncidentStore::kSchemaVersion);
    ASSERT_TRUE((*db)->exec(("PRAGMA user_version=" + std::to_string(newer)).c_str()).ok());
  }
  auto s = IncidentStore::open(path);
  ASSERT_FALSE(s.ok());
  const std::string why = s.error();
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("schema version " + std::to_string(newer)), std::string::npos) << why;
  EXPECT_NE(why.find("(" + std::to_string(IncidentStore::kSchemaVersion) + ")"), std::string::npos) << why;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find("damaged"), std::string::npos) << e.path();
  auto db = platform::Database::open(path, "test");
  ASSERT_TRUE(db.ok()) << db.error();
  EXPECT_EQ((*db)->queryInt("PRAGMA user_version").value_or(-1), newer);
  EXPECT_EQ((*db)->queryInt("SELECT count(*) FROM incidents").value_or(-1), 1);
  EXPECT_EQ((*db)->queryInt("SELECT v FROM meta WHERE k = 'boot'").value_or(-1), 1)
      << "the refused open counted a boot";
}

// gpuwarden_incidents_open has one series per severity, 0 included: a severity with nothing open
// must read 0, not disappear or start from another count.
TEST(Incidents, OpenCountsHaveEverySeverityFromZero) {
  auto s = IncidentStore::open(freshDir("counts") + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  auto& st = **s;
  const auto none = st.openCountBySeverity();
  ASSERT_EQ(none.size(), 4u);
  for (const auto& [severity, n] : none) EXPECT_EQ(n, 0) << severityName(severity);
  ASSERT_TRUE(st.apply({finding("gpu_temperature", "GPU-1", Severity::Warning, false),
                        finding("ecc_dbe", "GPU-1", Severity::Critical, true),
                        finding("row_remap", "GPU-2", Severity::Critical, true)},
                       1000)
                  .ok());
  const auto open = st.openCountBySeverity();
  ASSERT_EQ(open.size(), 4u);
  EXPECT_EQ(open.at(Severity::Info), 0);
  EXPECT_EQ(open.at(Severity::Warning), 1);
  EXPECT_EQ(open.at(Severity::Critical), 2);
  EXPECT_EQ(open.at(Severity::Fatal), 0);
}

// A GPU's incidents after a restart are matched to it by index as well as UUID (healthStates):
// the index is a column of its own, read back as written, not a neighbour's value or a default.
TEST(Incidents, TheGpuIndexIsStored) {
  const auto dir = freshDir("index");
  auto f = finding("ecc_dbe", "GPU-6", Severity::Critical, true);
  f.gpu_index = 6;
  std::int64_t id = 0;
  {
    auto s = IncidentStore::open(dir + "/incidents.db");
    ASSERT_TRUE(s.ok()) << s.error();
    auto r = (*s)->apply({f}, 1000);
    ASSERT_TRUE(r.ok()) << r.error();
    ASSERT_EQ(r->size(), 1u);
    id = (*r)[0].id;
    auto stored = (*s)->get(id);
    ASSERT_TRUE(stored.has_value());
    EXPECT_EQ(stored->gpu_index, 6);
    EXPECT_EQ(stored->gpu_uuid, "GPU-6");
  }
  auto s = IncidentStore::open(dir + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  const auto open = (*s)->unresolved();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].id, id);
  EXPECT_EQ(open[0].gpu_index, 6);
}

// recent() without a limit is documented to return the newest hundred: one more than that must be
// left out, and only then.
TEST(Incidents, RecentDefaultsToTheNewestHundred) {
  auto s = IncidentStore::open(freshDir("recent") + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  auto& st = **s;
  std::vector<Finding> many;
  for (int i = 0; i < 101; ++i)
    many.push_back(finding("gpu_temperature", "GPU-" + std::to_string(i), Severity::Warning, false));
  auto r = st.apply(many, 1000);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 101u);
  EXPECT_EQ(st.recent().size(), 100u);
  EXPECT_EQ(st.recent(1000).size(), 101u);
}

// A steady condition costs no write per pass, but its last sighting reaches the file every 10 s, so
// that a restart knows it: 9.999 s after the last write the file still says the first sighting, at
// 10 s it says the latest one and how often it was seen.
TEST(Incidents, LastSeenReachesTheFileEveryTenSeconds) {
  auto s = IncidentStore::open(freshDir("seen") + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  auto& st = **s;
  const auto f = finding("gpu_temperature", "GPU-1", Severity::Warning, false);
  auto r = st.apply({f}, 1000);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  const auto id = (*r)[0].id;
  ASSERT_TRUE(st.apply({f}, 10'999).ok());
  EXPECT_EQ(st.get(id)->last_seen_ms, 1000);
  EXPECT_EQ(st.get(id)->occurrences, 1);
  ASSERT_TRUE(st.apply({f}, 11'000).ok());
  EXPECT_EQ(st.get(id)->last_seen_ms, 11'000);
  EXPECT_EQ(st.get(id)->occurrences, 3);
}

// An Xid that comes back in a later agent lifetime needs hardware inspection from warning up: a
// warning Xid (here an application fault that repeated on this GPU only, so not sticky) recurs as
// a sticky critical, while an informational one is not escalated.
TEST(Incidents, AWarningXidRecurringAfterARestartBecomesCriticalAndAnInfoOneDoesNot) {
  const auto dir = freshDir("recur");
  const auto warning = finding("xid", "GPU-9", Severity::Warning, false, 13);
  const auto info = finding("xid", "GPU-9", Severity::Info, false, 45);
  {
    auto s = IncidentStore::open(dir + "/incidents.db");
    ASSERT_TRUE(s.ok()) << s.error();
    ASSERT_EQ((*s)->apply({warning, info}, 1000)->size(), 2u);
    ASSERT_TRUE((*s)->markHealthy("GPU-9", 2000).ok());
  }
  auto s = IncidentStore::open(dir + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  auto r = (*s)->apply({warning, info}, 9000);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 2u);
  for (const Incident& i : *r) {
    SCOPED_TRACE(i.key);
    if (i.xid == 13) {
      EXPECT_TRUE(i.escalated);
      EXPECT_TRUE(i.sticky);
      EXPECT_EQ(i.severity, Severity::Critical);
    } else {
      EXPECT_FALSE(i.escalated);
      EXPECT_FALSE(i.sticky);
      EXPECT_EQ(i.severity, Severity::Info);
    }
  }
}

// An incident can worsen but is not rewritten at the same severity: a new wording of the same
// condition leaves its summary, action and update time as they were, in memory and in the file.
TEST(Incidents, TheSameSeverityDoesNotRewriteAnIncident) {
  auto s = IncidentStore::open(freshDir("same") + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  auto& st = **s;
  auto f = finding("gpu_temperature", "GPU-1", Severity::Warning, false);
  auto r = st.apply({f}, 1000);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  const auto id = (*r)[0].id;
  f.summary = "reworded";
  f.action = "do something else";
  ASSERT_TRUE(st.apply({f}, 2000).ok());
  const auto stored = st.get(id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->summary, "gpu_temperature on GPU-1");
  EXPECT_EQ(stored->action, "do something");
  EXPECT_EQ(stored->updated_ms, 1000);
  const auto open = st.unresolved();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].summary, "gpu_temperature on GPU-1");
  EXPECT_EQ(open[0].updated_ms, 1000);
}

// The health states from worst to best: fatal, critical, unknown, warning, healthy (docs/api.md:
// a lost or stalled GPU with nothing worse open is unknown). The worse of any two wins, in either
// order.
TEST(Incidents, TheWorseOfTwoHealthStatesWins) {
  const std::vector<HealthState> order = {HealthState::Healthy, HealthState::Warning, HealthState::Unknown,
                                          HealthState::Critical, HealthState::Fatal};
  for (std::size_t a = 0; a < order.size(); ++a)
    for (std::size_t b = 0; b < order.size(); ++b) {
      SCOPED_TRACE(std::string(healthStateName(order[a])) + " and " + std::string(healthStateName(order[b])));
      EXPECT_EQ(worstOf(order[a], order[b]), order[std::max(a, b)]);
    }
}

// A GPU's state from its open incidents and whether it answers: a warning alone reads warning, a
// stalled GPU with only a warning reads unknown (its values are stale), and a stalled GPU with a
// critical incident reads critical.
TEST(Incidents, AStalledGpuReadsUnknownUnlessSomethingWorseIsOpen) {
  auto s = IncidentStore::open(freshDir("states") + "/incidents.db");
  ASSERT_TRUE(s.ok()) << s.error();
  auto& st = **s;
  ASSERT_TRUE(st.apply({finding("gpu_temperature", "GPU-0", Severity::Warning, false),
                        finding("gpu_temperature", "GPU-1", Severity::Warning, false),
                        finding("ecc_dbe", "GPU-2", Severity::Critical, true)},
                       1000)
                  .ok());
  std::vector<collect::GpuView> views(4);
  const collect::GpuState states[] = {collect::GpuState::Up, collect::GpuState::Stalled, collect::GpuState::Stalled,
                                      collect::GpuState::Up};
  for (unsigned i = 0; i < views.size(); ++i) {
    views[i].id.index = i;
    views[i].id.uuid = "GPU-" + std::to_string(i);
    views[i].state = states[i];
  }
  const auto got = st.healthStates(views);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].second, HealthState::Warning);
  EXPECT_EQ(got[1].second, HealthState::Unknown);
  EXPECT_EQ(got[2].second, HealthState::Critical);
  EXPECT_EQ(got[3].second, HealthState::Healthy);
}
