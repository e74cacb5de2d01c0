// The two alert routes agree: the Prometheus rules of deploy/prometheus/gpuwarden-rules.yml name,
// grade and document a condition as the agent's own alerts do (src/node/health_json.cpp), so that
// Alertmanager takes an alert that arrives both ways for one. tests/integration/alert_paths_test.sh
// delivers the same fault both ways to a real Alertmanager; this test covers every rule.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>
#include <string>

#include "alert/alert.h"
#include "health/rule_registry.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/xid_catalog.h"

namespace gw::health {
namespace {

const std::string kRoot = GW_SOURCE_DIR;

struct PromAlert {
  std::string name, severity, component, runbook, expr;
  int line = 0;
};

std::vector<PromAlert> promAlerts() {
  std::vector<PromAlert> out;
  const YAML::Node file = YAML::LoadFile(kRoot + "/deploy/prometheus/gpuwarden-rules.yml");
  for (const auto& group : file["groups"])
    for (const auto& r : group["rules"]) {
      if (!r["alert"]) continue;
      PromAlert a;
      a.name = r["alert"].as<std::string>();
      a.line = r.Mark().line + 1;
      a.expr = r["expr"].as<std::string>();
      if (auto l = r["labels"]) {
        a.severity = l["severity"] ? l["severity"].as<std::string>() : "";
        a.component = l["component"] ? l["component"].as<std::string>() : "";
      }
      if (auto an = r["annotations"]; an && an["runbook_url"]) a.runbook = an["runbook_url"].as<std::string>();
      out.push_back(a);
    }
  return out;
}

// Alerts about the agent itself: Prometheus sees them, no rule on the agent can.
const std::set<std::string> kPrometheusOnly = {"GpuSampleLagHigh", "GpuwardenDown"};

TEST(AlertNames, AreTheRulesPascalCaseWithoutTheirGpuPrefix) {
  EXPECT_EQ(alertName("thermal_slowdown"), "GpuThermalSlowdown");
  EXPECT_EQ(alertName("gpu_lost"), "GpuLost");
  EXPECT_EQ(alertName("ecc_dbe"), "GpuEccDbe");
  EXPECT_EQ(alertName("xid"), "GpuXid");
  // Unique over the registry, and never one of Prometheus' own.
  std::set<std::string> seen;
  for (const Rule* r : ruleRegistry()) {
    const std::string n = alertName(r->info.name);
    EXPECT_TRUE(seen.insert(n).second) << n;
    EXPECT_EQ(kPrometheusOnly.count(n), 0u) << n;
  }
}

TEST(AlertNames, EveryPrometheusAlertIsNamedGradedAndDocumentedAsTheAgentDoes) {
  std::map<std::string, const Rule*> byAlert;
  for (const Rule* r : ruleRegistry()) byAlert[alertName(r->info.name)] = r;
  const std::string base = std::string(alert::kDefaultRunbookBase) + "#";
  const auto alerts = promAlerts();
  ASSERT_GE(alerts.size(), 20u);
  for (const PromAlert& a : alerts) {
    SCOPED_TRACE("gpuwarden-rules.yml:" + std::to_string(a.line) + " " + a.name);
    EXPECT_EQ(a.component, "gpu");
    if (!a.runbook.empty()) {
      ASSERT_EQ(a.runbook.rfind(base, 0), 0u) << a.runbook << " does not start with " << base;
      EXPECT_NE(knowledge::findKbEntry(a.runbook.substr(base.size())), nullptr) << "no such entry: " << a.runbook;
    }
    if (kPrometheusOnly.count(a.name)) {
      EXPECT_TRUE(a.severity == "warning" || a.severity == "critical") << a.severity;
      continue;
    }
    auto it = byAlert.find(a.name);
    ASSERT_NE(it, byAlert.end()) << "no health rule is alerted as " << a.name
                                 << ": name it health::alertName(rule) or list it as Prometheus' own";
    const RuleInfo& info = it->second->info;
    if (it->second->scope == RuleScope::kXid) {
      EXPECT_TRUE(a.runbook.empty()) << "the entry depends on the code: the description names `explain xid`";
      continue;
    }
    // A severity the agent's rule gives the condition: its usual one or that of one of its thresholds.
    std::set<std::string> can{std::string(severityName(info.severity))};
    for (const Threshold& t : info.thresholds) can.insert(std::string(severityName(t.severity)));
    EXPECT_TRUE(can.count(a.severity)) << "the agent's " << info.name << " never reports " << a.severity;
    if (!info.kb_id.empty()) {
      EXPECT_EQ(a.runbook, base + std::string(info.kb_id)) << "the agent's runbook_url for " << info.name;
    }
  }
}

// The GpuXid rules list each code under the severity the agent gives it; a code the catalog learns
// or regrades shows here with the list to paste.
TEST(AlertNames, XidAlertsGradeEachCodeAsTheAgentDoes) {
  std::map<std::string, std::set<int>> want;  // severity -> codes
  for (const auto& x : knowledge::xidCatalog()) {
    const Severity s = xidSeverity(x.code);
    if (s != Severity::Info) want[std::string(severityName(s))].insert(x.code);
  }
  std::map<std::string, std::set<int>> have;
  const std::regex codes(R"re(code=~"([0-9|]+)")re");
  for (const PromAlert& a : promAlerts()) {
    if (a.name != "GpuXid") continue;
    std::smatch m;
    std::set<int>& set = have[a.severity];
    if (!std::regex_search(a.expr, m, codes)) {
      ADD_FAILURE() << "no code=~\"N|N|…\" in " << a.expr;
      continue;
    }
    const std::string list = m[1];
    for (std::size_t p = 0; p < list.size();) {
      const std::size_t bar = std::min(list.find('|', p), list.size());
      set.insert(std::stoi(list.substr(p, bar - p)));
      p = bar + 1;
    }
  }
  for (const auto& [severity, set] : want) {
    std::string regex;
    for (int c : set) regex += (regex.empty() ? "" : "|") + std::to_string(c);
    EXPECT_EQ(have[severity], set) << "GpuXid severity " << severity << ": code=~\"" << regex << "\"";
  }
  EXPECT_EQ(have.size(), want.size());
}

// prometheus.yml cuts a Prometheus alert's labels to the agent's set, and names the node as the
// agent does (instance = the host name from Hostname / hostname, not the scrape address).
TEST(AlertNames, PrometheusConfigCutsAlertLabelsToTheAgentsSet) {
  const YAML::Node file = YAML::LoadFile(kRoot + "/deploy/prometheus/prometheus.yml");
  const YAML::Node relabel = file["alerting"]["alert_relabel_configs"];
  ASSERT_TRUE(relabel && relabel.IsSequence()) << "alerting.alert_relabel_configs missing";
  bool instance = false, keep = false;
  for (const auto& r : relabel) {
    const std::string action = r["action"] ? r["action"].as<std::string>() : "replace";
    if (action == "replace" && r["target_label"] && r["target_label"].as<std::string>() == "instance") {
      std::set<std::string> from;
      for (const auto& l : r["source_labels"]) from.insert(l.as<std::string>());
      instance = from == std::set<std::string>{"Hostname", "hostname"};
    }
    if (action == "labelkeep") {
      const std::regex re(r["regex"].as<std::string>());
      for (const char* l : {"alertname", "severity", "component", "instance", "gpu", "UUID", "code"})
        EXPECT_TRUE(std::regex_match(std::string(l), re)) << l << " is dropped";
      for (const char* l : {"job", "Hostname", "pci_bus_id", "modelName", "device", "state", "cluster"})
        EXPECT_FALSE(std::regex_match(std::string(l), re)) << l << " is kept";
      keep = true;
    }
  }
  EXPECT_TRUE(instance) << "no relabelling of instance from Hostname/hostname";
  EXPECT_TRUE(keep) << "no labelkeep";
}

}  // namespace
}  // namespace gw::health
