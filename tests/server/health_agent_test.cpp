// The real `gpuwarden serve` on fault-xid-79 (GPU 3 falls off the bus at t=30 s), started just
// before the fault: the incident with its action and context, the health and Xid series on
// /metrics, the event in /api/v1/events, /api/v1/health; then `gpuwarden incidents` on the data
// directory the agent left.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gw::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

TEST(HealthAgent, Xid79BecomesAFatalIncidentWithContext) {
  TempDir dir;
  // An operator's extra label: the health series must carry it like every GPU series.
  const std::string config =
      dir.write("agent.yaml", std::string(kFastAgentConfig) + "metrics:\n  extra_labels:\n    cluster: train-a\n");
  const std::string root = dir.path() + "/root";
  std::filesystem::create_directories(root + "/dev");
  std::ofstream(root + "/dev/kmsg").close();  // an empty kernel log: NVML is the Xid source here
  const std::string data = dir.path() + "/data";
  auto proc = std::make_unique<AgentProcess>(
      std::vector<std::string>{"--root", root, "serve", "--simulate", "fault-xid-79", "--config", config, "--data-dir",
                               data},
      std::map<std::string, std::string>{{"GPUWARDEN_SIM_START", "27"}}, dir.path() + "/agent.log");
  const int port = proc->waitListening();
  ASSERT_GT(port, 0) << proc->log();

  // The incident: gpu_lost or xid on GPU 3, with an action and a context snapshot.
  json incidents;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = httpGet(port, "/api/v1/incidents?state=open", {}, 2000ms);
        if (r.status != 200) return false;
        incidents = json::parse(r.body);
        int n = 0;
        for (const auto& i : incidents["incidents"])
          if (i["gpu_index"] == 3 && (i["rule"] == "gpu_lost" || i["rule"] == "xid")) ++n;
        return n >= 2;
      },
      15s))
      << incidents.dump(2) << "\n"
      << proc->log();
  std::int64_t id = 0;
  for (const auto& i : incidents["incidents"]) {
    if (i["gpu_index"] != 3) continue;
    EXPECT_FALSE(i["action"].get<std::string>().empty()) << i.dump(2);
    EXPECT_EQ(i["severity"], "fatal") << i.dump(2);
    if (i["rule"] == "xid") {
      EXPECT_EQ(i["xid"], 79);
      id = i["id"].get<std::int64_t>();
    }
    // The values at the moment (the last sample before the GPU was lost) include temperature and power.
    bool temp = false, power = false;
    const json at = i["context"].value("at", json::object());
    for (const auto& [k, v] : at.items()) {
      temp |= k.find("temp") != std::string::npos;
      power |= k.find("power") != std::string::npos;
    }
    EXPECT_TRUE(temp && power) << i["context"].dump();
  }
  ASSERT_GT(id, 0) << incidents.dump(2);
  auto one = httpGet(port, "/api/v1/incidents/" + std::to_string(id));
  EXPECT_EQ(one.status, 200);
  EXPECT_EQ(json::parse(one.body)["id"], id);
  EXPECT_EQ(httpGet(port, "/api/v1/incidents/999999").status, 404);
  EXPECT_EQ(httpGet(port, "/api/v1/incidents?state=bogus").status, 400);

  // /metrics: the health state and the Xid counter.
  std::vector<Sample> m;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = httpGet(port, "/metrics", {}, 2000ms);
        m = parseExposition(r.body);
        return !select(m, "gpuwarden_xid_errors_total", {{"gpu", "3"}, {"code", "79"}}).empty();
      },
      10s))
      << proc->log();
  auto fatal = select(m, "gpuwarden_gpu_health", {{"gpu", "3"}, {"state", "fatal"}});
  ASSERT_EQ(fatal.size(), 1u);
  EXPECT_EQ(fatal[0].value, 1);
  auto healthy0 = select(m, "gpuwarden_gpu_health", {{"gpu", "0"}, {"state", "healthy"}});
  ASSERT_EQ(healthy0.size(), 1u);
  EXPECT_EQ(healthy0[0].value, 1);
  EXPECT_GE(select(m, "gpuwarden_xid_errors_total", {{"gpu", "3"}, {"code", "79"}})[0].value, 1);
  // They join with the field series: the same labels as the GPU's temperature (GPU 3 is lost and
  // has none, so as its gpuwarden_gpu_up), extra and driver labels included.
  auto without = [](std::map<std::string, std::string> l, const std::string& k) {
    l.erase(k);
    return l;
  };
  auto temp0 = select(m, "DCGM_FI_DEV_GPU_TEMP", {{"gpu", "0"}});
  ASSERT_EQ(temp0.size(), 1u);
  EXPECT_EQ(temp0[0].labels.at("cluster"), "train-a");
  EXPECT_FALSE(temp0[0].labels.at("DCGM_FI_DRIVER_VERSION").empty());
  EXPECT_EQ(without(healthy0[0].labels, "state"), temp0[0].labels);
  auto up3 = select(m, "gpuwarden_gpu_up", {{"gpu", "3"}});
  ASSERT_EQ(up3.size(), 1u);
  EXPECT_EQ(without(fatal[0].labels, "state"), up3[0].labels);
  EXPECT_EQ(without(select(m, "gpuwarden_xid_errors_total", {{"gpu", "3"}, {"code", "79"}})[0].labels, "code"),
            up3[0].labels);
  for (const auto& s : select(m, "gpuwarden_incidents_open")) EXPECT_EQ(s.labels.at("cluster"), "train-a");

  // /api/v1/events lists the Xid 79.
  auto ev = httpGet(port, "/api/v1/events?since=1h");
  ASSERT_EQ(ev.status, 200);
  bool xid79 = false;
  const json evj = json::parse(ev.body);
  for (const auto& e : evj["events"]) xid79 |= e["code"] == 79 && e["gpu"] == 3;
  EXPECT_TRUE(xid79) << ev.body;
  // Without `since`: the last hour (docs/api.md), which holds it too.
  const std::int64_t asked = wallMsNow();
  auto ev_default = httpGet(port, "/api/v1/events");
  const std::int64_t answered = wallMsNow();
  ASSERT_EQ(ev_default.status, 200);
  bool default_xid79 = false;
  const json dj = json::parse(ev_default.body);
  for (const auto& e : dj["events"]) default_xid79 |= e["code"] == 79 && e["gpu"] == 3;
  EXPECT_TRUE(default_xid79) << ev_default.body;
  EXPECT_GE(dj["since_ms"].get<std::int64_t>(), asked - 3'600'000) << ev_default.body;
  EXPECT_LE(dj["since_ms"].get<std::int64_t>(), answered - 3'600'000) << ev_default.body;
  EXPECT_EQ(httpGet(port, "/api/v1/events?since=yesterday-ish").status, 400);
  // limit: digits from 1 on; what std::stoul would have bent ("-1" to 2^64-1, "5x" to 5) is refused.
  auto one_event = httpGet(port, "/api/v1/events?since=1h&limit=1");
  ASSERT_EQ(one_event.status, 200);
  EXPECT_EQ(json::parse(one_event.body)["events"].size(), 1u) << one_event.body;
  for (const char* bad : {"0", "-1", "5x", "1000001"}) {
    auto r = httpGet(port, std::string("/api/v1/events?limit=") + bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_NE(r.body.find("limit must be a whole number from 1 to 1000000"), std::string::npos) << r.body;
  }
  EXPECT_EQ(httpGet(port, "/api/v1/incidents?state=all&limit=10000").status, 200);
  for (const char* bad : {"0", "10001", "5x", "-1"})
    EXPECT_EQ(httpGet(port, std::string("/api/v1/incidents?state=all&limit=") + bad).status, 400) << bad;
  EXPECT_EQ(httpGet(port, "/api/v1/incidents/" + std::to_string(id) + "x").status, 404);

  // /api/v1/health: fatal overall, GPU 3 fatal.
  auto h = json::parse(httpGet(port, "/api/v1/health").body);
  EXPECT_EQ(h["status"], "fatal") << h.dump(2);
  EXPECT_EQ(h["exit_code"], 2);
  EXPECT_EQ(h["gpus"][3]["state"], "fatal");
  EXPECT_EQ(h["gpus"][0]["state"], "healthy");

  proc->signal(SIGTERM);
  auto rc = proc->wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0);
  EXPECT_TRUE(std::filesystem::exists(data + "/events.jsonl"));

  // The CLI on the data directory the agent left.
  auto list = runCli("incidents list --data-dir " + data);
  EXPECT_EQ(list.first, 0) << list.second;
  EXPECT_NE(list.second.find("#" + std::to_string(id)), std::string::npos) << list.second;
  auto ack = runCli("incidents ack " + std::to_string(id) + " --data-dir " + data);
  EXPECT_EQ(ack.first, 0) << ack.second;
  auto show = runCli("--json incidents show " + std::to_string(id) + " --data-dir " + data);
  ASSERT_EQ(show.first, 0) << show.second;
  EXPECT_EQ(json::parse(show.second)["status"], "acknowledged");
  auto res = runCli("incidents resolve " + std::to_string(id) + " --data-dir " + data);
  EXPECT_EQ(res.first, 0) << res.second;
  auto all = runCli("--json incidents list --all --data-dir " + data);
  ASSERT_EQ(all.first, 0) << all.second;
  bool resolved = false;
  const json allj = json::parse(all.second);
  for (const auto& i : allj["incidents"])
    if (i["id"] == id) resolved = i["status"] == "resolved";
  EXPECT_TRUE(resolved) << all.second;
  EXPECT_NE(runCli("incidents show 999999 --data-dir " + data).first, 0);
}

// The health: section in the running agent: a node said to have nine GPUs shows eight, which is
// critical once a SIGHUP brings the new count; a bad section is refused with file:line and key and
// the running rules stay; switching the rule off clears the finding.
TEST(HealthAgent, HealthSectionIsAppliedOnSighup) {
  TempDir dir;
  const std::string fast = kFastAgentConfig;
  const std::string config = dir.write("agent.yaml", fast + "health:\n  expected_gpus: 8\n  gpu_count_hold_ms: 0\n");
  auto proc = std::make_unique<AgentProcess>(std::vector<std::string>{"serve", "--simulate", "dgx-h100", "--config",
                                                                      config, "--data-dir", dir.path() + "/data"},
                                             std::map<std::string, std::string>{}, dir.path() + "/agent.log");
  const int port = proc->waitListening();
  ASSERT_GT(port, 0) << proc->log();
  auto nodeFindings = [&] {
    auto r = httpGet(port, "/api/v1/health", {}, 2000ms);
    return r.status == 200 ? json::parse(r.body).value("node_findings", json::array()) : json::array();
  };
  auto gpuCount = [&](const json& findings) {
    for (const auto& f : findings)
      if (f["rule"] == "gpu_count") return f;
    return json();
  };
  ASSERT_TRUE(eventually([&] { return json::parse(httpGet(port, "/api/v1/health").body)["status"] == "healthy"; }, 10s))
      << proc->log();
  EXPECT_TRUE(gpuCount(nodeFindings()).is_null()) << "eight GPUs expected, eight seen";

  std::ofstream(config) << fast << "health:\n  expected_gpus: 9\n  gpu_count_hold_ms: 0\n";
  proc->signal(SIGHUP);
  json f;
  ASSERT_TRUE(eventually([&] { return !(f = gpuCount(nodeFindings())).is_null(); }, 10s)) << proc->log();
  EXPECT_EQ(f["severity"], "critical") << f.dump();
  EXPECT_EQ(f["evidence"], "visible=8 expected=9");
  EXPECT_NE(proc->log().find("expected GPUs 9"), std::string::npos) << proc->log();
  // The CLI names the node, not a "GPU -1", for a finding about the node.
  const auto [hc, htext] = runCli("health --data-dir " + dir.path() + "/data");
  EXPECT_EQ(hc, 2) << htext;
  EXPECT_NE(htext.find("] gpu_count node: The node shows 8 GPUs, fewer than the 9 expected."), std::string::npos)
      << htext;
  EXPECT_EQ(htext.find("GPU -1"), std::string::npos) << htext;
  const auto [lc, ltext] = runCli("incidents list --data-dir " + dir.path() + "/data");
  EXPECT_EQ(lc, 0) << ltext;
  EXPECT_NE(ltext.find("gpu_count  node  The node shows 8 GPUs"), std::string::npos) << ltext;

  std::ofstream(config) << fast << "health:\n  expected_gpus: 9\n  gpu_count_hold_ms: soon\n";
  proc->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return proc->log().find("reload refused") != std::string::npos; }, 5s)) << proc->log();
  EXPECT_NE(proc->log().find(config + ":11: health.gpu_count_hold_ms: expected a whole number of milliseconds"),
            std::string::npos)
      << proc->log();
  EXPECT_FALSE(gpuCount(nodeFindings()).is_null()) << "the running rules stay";

  std::ofstream(config) << fast << "health:\n  expected_gpus: 9\n  disabled: [gpu_count]\n";
  proc->signal(SIGHUP);
  EXPECT_TRUE(eventually([&] { return gpuCount(nodeFindings()).is_null(); }, 10s)) << proc->log();
  proc->signal(SIGTERM);
  EXPECT_EQ(proc->wait(10s).value_or(-1), 0);
}

// At start a bad health: section stops the agent (exit 2) with the same message.
TEST(HealthAgent, BadHealthSectionFailsAtStart) {
  TempDir dir;
  const std::string bad = dir.write("bad.yaml", "health:\n  gpu_temp_c: 80\n  gpu_tmep_c: 3\n");
  AgentProcess p({"serve", "--simulate", "dgx-h100", "--config", bad}, {}, dir.path() + "/log");
  auto rc = p.wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 2);
  EXPECT_NE(p.log().find(bad + ":3: health.gpu_tmep_c: unknown key"), std::string::npos) << p.log();
}

}  // namespace
}  // namespace gw::test
