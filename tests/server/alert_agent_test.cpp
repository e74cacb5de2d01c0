// Agent integration: alerts from incidents to a webhook (the real `gpuwarden serve` on
// fault-xid-79), the alerts: section of the configuration, no process checks against the host's
// /proc on a simulated fleet, and `gpuwarden diag` reports kept in the data directory and served
// at /api/v1/diag.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "node/data_dir.h"
#include "server/config.h"
#include "test_util.h"

namespace gw::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// ---- configuration -------------------------------------------------------------------------

TEST(AlertConfig, ValidSection) {
  auto c = server::parseConfig(R"(
alerts:
  min_severity: critical
  sinks:
    - type: webhook
      url: http://127.0.0.1:8080/hook
      headers: {Authorization: "Bearer x"}
      timeout: 2s
      rate_limit: 10
      rate_interval: 1m
    - type: alertmanager
      name: am
      url: http://am.example:9093
    - type: command
      command: ["/usr/local/bin/page", "--gpu"]
)",
                               "agent.yaml");
  ASSERT_TRUE(c) << c.error();
  const auto& a = c->alerts;
  ASSERT_EQ(a.sinks.size(), 3u);
  EXPECT_EQ(a.min_severity, "critical");
  EXPECT_EQ(a.sinks[0].type, alert::SinkConfig::Type::webhook);
  EXPECT_EQ(a.sinks[0].name, "webhook");
  EXPECT_EQ(a.sinks[0].headers.at("Authorization"), "Bearer x");
  EXPECT_EQ(a.sinks[0].timeout, std::chrono::milliseconds(2000));
  EXPECT_EQ(a.sinks[0].rate_limit, 10);
  EXPECT_EQ(a.sinks[1].name, "am");
  EXPECT_EQ(a.sinks[2].command.size(), 2u);
  // An Alertmanager sink without repeat_interval: 1m (under its 5 m resolve_timeout).
  EXPECT_EQ(a.effectiveRepeatInterval(), std::chrono::milliseconds(60000));

  auto d = server::parseConfig("alerts:\n  sinks:\n    - {type: webhook, url: 'http://x/h'}\n", "a.yaml");
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->alerts.effectiveRepeatInterval(), std::chrono::milliseconds(4 * 3600 * 1000));
  EXPECT_EQ(d->alerts.min_severity, "warning");
  auto e = server::parseConfig("alerts:\n  repeat_interval: 10m\n  sinks: []\n", "a.yaml");
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(e->alerts.effectiveRepeatInterval(), std::chrono::milliseconds(600000));
  EXPECT_TRUE(server::parseConfig("", "a.yaml")->alerts.sinks.empty());
}

// runbook_url must stand on its own in Alertmanager, Grafana or a chat message: an absolute URL, to
// which the agent adds "#<entry>".
TEST(AlertConfig, RunbookBaseIsAnAbsoluteUrlWithoutAFragment) {
  EXPECT_EQ(server::parseConfig("", "a.yaml")->alerts.runbook_base, alert::kDefaultRunbookBase);
  for (const char* good : {"https://wiki.example.com/gpu/kb.html", "http://10.0.0.1:8080/kb", "file:///opt/kb.md"}) {
    auto c = server::parseConfig(std::string("alerts:\n  runbook_base: ") + good + "\n", "a.yaml");
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(c->alerts.runbook_base, good);
  }
  for (const char* bad :
       {"docs/knowledge-base.md", "https://wiki.example.com/kb#gpu", "ftp://x/kb", "file://kb.md", "'https://x/a b'"}) {
    auto c = server::parseConfig(std::string("alerts:\n  runbook_base: ") + bad + "\n", "a.yaml");
    ASSERT_FALSE(c) << bad;
    EXPECT_NE(c.error().find("a.yaml:2: alerts.runbook_base: expected an absolute URL"), std::string::npos)
        << c.error();
  }
}

TEST(AlertConfig, UnknownKeyIsAnErrorWithLine) {
  auto c = server::parseConfig("alerts:\n  sinks:\n    - type: webhook\n      url: http://x/h\n      retries: 3\n",
                               "a.yaml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("a.yaml:5: alerts.sinks[0].retries: unknown key"), std::string::npos) << c.error();
  auto d = server::parseConfig("alerts:\n  repeat: 1m\n", "a.yaml");
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().find("a.yaml:2: alerts.repeat: unknown key"), std::string::npos) << d.error();
}

TEST(AlertConfig, BadValues) {
  auto t = server::parseConfig("alerts:\n  sinks:\n    - type: pager\n      url: http://x/h\n", "a.yaml");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().find("a.yaml:3: alerts.sinks[0].type: expected webhook, alertmanager or command"),
            std::string::npos)
      << t.error();
  auto u = server::parseConfig("alerts:\n  sinks:\n    - type: webhook\n      url: ftp://x/h\n", "a.yaml");
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().find("a.yaml:4: alerts.sinks[0].url"), std::string::npos) << u.error();
  auto m = server::parseConfig("alerts:\n  sinks:\n    - type: webhook\n", "a.yaml");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().find("alerts.sinks[0].url: required"), std::string::npos) << m.error();
  auto cmd = server::parseConfig("alerts:\n  sinks:\n    - type: command\n      command: /bin/true\n", "a.yaml");
  ASSERT_FALSE(cmd);
  EXPECT_NE(cmd.error().find("a.yaml:4: alerts.sinks[0].command"), std::string::npos) << cmd.error();
  auto sev = server::parseConfig("alerts:\n  min_severity: loud\n", "a.yaml");
  ASSERT_FALSE(sev);
  EXPECT_NE(sev.error().find("a.yaml:2: alerts.min_severity"), std::string::npos) << sev.error();
  auto dup = server::parseConfig(
      "alerts:\n  sinks:\n    - {type: webhook, url: 'http://a/h'}\n    - {type: webhook, url: 'http://b/h'}\n",
      "a.yaml");
  ASSERT_FALSE(dup);
  EXPECT_NE(dup.error().find("used twice"), std::string::npos) << dup.error();
  auto seq = server::parseConfig("alerts:\n  sinks: {type: webhook}\n", "a.yaml");
  ASSERT_FALSE(seq);
  EXPECT_NE(seq.error().find("a.yaml:2: alerts.sinks: expected a list"), std::string::npos) << seq.error();
}

// ---- alerts from the running agent ---------------------------------------------------------

class Webhook {
 public:
  Webhook() {
    srv_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard l(mu_);
      try {
        received_.push_back(json::parse(req.body));
      } catch (const std::exception&) {
        received_.push_back(req.body);
      }
      res.status = 200;
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~Webhook() {
    srv_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::vector<json> received() const {
    std::lock_guard l(mu_);
    return received_;
  }

 private:
  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<json> received_;
};

TEST(AlertAgent, Xid79AlertReachesTheWebhook) {
  Webhook hook;
  ASSERT_GT(hook.port(), 0);
  TempDir dir;
  const std::string config = dir.write("agent.yaml", std::string(kFastAgentConfig) + R"(alerts:
  runbook_base: https://runbooks.example.org/gpu/kb.html
  sinks:
    - type: webhook
      name: test
      url: http://127.0.0.1:)" + std::to_string(hook.port()) +
                                                         R"(/hook
      timeout: 2s
)");
  const std::string data = dir.path() + "/data";
  auto proc = std::make_unique<AgentProcess>(
      std::vector<std::string>{"--simulate", "fault-xid-79", "serve", "--config", config, "--data-dir", data},
      std::map<std::string, std::string>{{"GPUWARDEN_SIM_START", "27"}}, dir.path() + "/agent.log");
  ASSERT_GT(proc->waitListening(), 0) << proc->log();

  json found;
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& a : hook.received()) {
          if (!a.is_object() || a.value("gpu_index", -1) != 3) continue;
          const std::string rule = a.value("rule", "");
          if (rule == "gpu_lost" || rule == "xid") {
            found = a;
            return true;
          }
        }
        return false;
      },
      20s))
      << proc->log();
  EXPECT_EQ(found["severity"], "fatal") << found.dump(2);
  EXPECT_EQ(found["status"], "firing") << found.dump(2);
  EXPECT_FALSE(found.value("action", "").empty()) << found.dump(2);
  // The names and labels Prometheus gives the same condition (deploy/prometheus), so Alertmanager
  // takes the two routes for one alert.
  const bool xid = found["rule"] == "xid";
  EXPECT_EQ(found["labels"]["alertname"], xid ? "GpuXid" : "GpuLost") << found.dump(2);
  EXPECT_EQ(found["labels"]["component"], "gpu") << found.dump(2);
  EXPECT_EQ(found["labels"]["gpu"], "3") << found.dump(2);
  EXPECT_EQ(found["labels"]["severity"], "fatal") << found.dump(2);
  EXPECT_EQ(found["labels"]["UUID"], found["gpu_uuid"]) << found.dump(2);
  EXPECT_EQ(found["labels"].value("code", ""), xid ? "79" : "") << found.dump(2);
  EXPECT_EQ(found["id"],
            found["rule"].get<std::string>() + "/" + found["gpu_uuid"].get<std::string>() + (xid ? "/79" : ""));
  EXPECT_EQ(found["annotations"]["action"], found["action"]) << found.dump(2);
  EXPECT_EQ(found["annotations"]["kb_id"], "xid79-fell-off-bus") << found.dump(2);
  EXPECT_EQ(found["annotations"]["runbook_url"], "https://runbooks.example.org/gpu/kb.html#xid79-fell-off-bus")
      << found.dump(2);
  // The healthy GPUs raise nothing (no zombie_process from the simulator's pids).
  for (const auto& a : hook.received()) EXPECT_EQ(a.value("gpu_index", -1), 3) << a.dump(2);

  proc->signal(SIGTERM);
  auto rc = proc->wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0);
  EXPECT_TRUE(std::filesystem::exists(data + "/alerts.db"));
}

// A healthy simulated fleet against the host's /proc: no process checks, said once in the log.
TEST(AlertAgent, SimulatorOnHostRootSkipsProcessChecks) {
  TempDir dir;
  const std::string config =
      dir.write("agent.yaml", "listen: 127.0.0.1:0\nsampling:\n  fast_interval: 200ms\n  slow_interval: 1s\n");
  auto proc = std::make_unique<AgentProcess>(std::vector<std::string>{"--simulate", "dgx-h100", "serve", "--config",
                                                                      config, "--data-dir", dir.path() + "/data"},
                                             std::map<std::string, std::string>{}, dir.path() + "/agent.log");
  const int port = proc->waitListening();
  ASSERT_GT(port, 0) << proc->log();
  ASSERT_TRUE(
      eventually([&] { return proc->log().find("process checks (zombie_process) off") != std::string::npos; }, 10s))
      << proc->log();
  std::this_thread::sleep_for(2s);
  auto r = httpGet(port, "/api/v1/incidents?state=all");
  ASSERT_EQ(r.status, 200);
  const json incidents = json::parse(r.body);  // keep the document alive while iterating it
  for (const auto& i : incidents["incidents"]) EXPECT_NE(i["rule"], "zombie_process") << i.dump(2);
  const std::string log = proc->log();
  EXPECT_EQ(log.find("process checks (zombie_process) off"), log.rfind("process checks (zombie_process) off"));
  proc->signal(SIGTERM);
  EXPECT_TRUE(proc->wait(10s).has_value());
}

// ---- diag reports kept with the agent ------------------------------------------------------

TEST(DiagStore, ReportIsStoredAndServed) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  // A report stored before reports recorded their stack (gpuwarden 0.1.0 at b4669e0): still listed.
  std::filesystem::create_directories(data + "/diag");
  std::filesystem::copy_file(std::string(GW_TEST_SOURCE_DIR) + "/tests/diag/fixtures/report-before-stack.json",
                             data + "/diag/20200101T000000Z-r1.json");
  auto d = runCli("--simulate dgx-h100 diag -r 1 --data-dir " + data);
  ASSERT_EQ(d.first, 4) << d.second;  // no GPU test can run on the simulator: incomplete
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(data + "/diag"))
    if (e.path().filename() != "20200101T000000Z-r1.json") files.push_back(e.path().filename().string());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::regex_match(files[0], std::regex(R"(\d{8}T\d{6}Z-r1\.json)"))) << files[0];
  const json stored = json::parse(readFile(data + "/diag/" + files[0]));
  EXPECT_EQ(stored["level"], 1);

  // Not writable (missing): a note, no failure.
  auto miss = runCli("--simulate dgx-h100 diag -r 1 --data-dir " + dir.path() + "/nope");
  EXPECT_EQ(miss.first, d.first) << miss.second;
  EXPECT_NE(miss.second.find("note: report not stored"), std::string::npos) << miss.second;

  const std::string config = dir.write("agent.yaml", "listen: 127.0.0.1:0\n");
  auto proc = std::make_unique<AgentProcess>(
      std::vector<std::string>{"--simulate", "dgx-h100", "serve", "--config", config, "--data-dir", data},
      std::map<std::string, std::string>{}, dir.path() + "/agent.log");
  const int port = proc->waitListening();
  ASSERT_GT(port, 0) << proc->log();
  auto list = httpGet(port, "/api/v1/diag");
  ASSERT_EQ(list.status, 200) << list.body;
  const json lj = json::parse(list.body);
  ASSERT_EQ(lj["reports"].size(), 2u) << list.body;
  EXPECT_EQ(lj["reports"][0]["name"], files[0]);
  EXPECT_EQ(lj["reports"][0]["level"], 1);
  EXPECT_EQ(lj["reports"][0]["overall"], "incomplete");
  EXPECT_EQ(lj["reports"][0]["overall"], stored["overall"]);
  EXPECT_EQ(lj["reports"][0]["driver_version"], stored["stack"]["driver_version"]);
  EXPECT_TRUE(lj["reports"][0]["driver_version"].is_string()) << list.body;
  EXPECT_EQ(lj["reports"][0]["gpuwarden_version"], stored["stack"]["gpuwarden_version"]);
  EXPECT_TRUE(lj["reports"][0]["time"].get<std::string>().ends_with("Z"));
  // The old report: its verdict as stored, null for the stack it did not record, no error.
  EXPECT_EQ(lj["reports"][1]["name"], "20200101T000000Z-r1.json");
  EXPECT_EQ(lj["reports"][1]["overall"], "warn") << list.body;
  EXPECT_TRUE(lj["reports"][1]["driver_version"].is_null()) << list.body;
  EXPECT_TRUE(lj["reports"][1]["gpuwarden_version"].is_null()) << list.body;
  EXPECT_FALSE(lj["reports"][1].contains("error")) << list.body;
  EXPECT_EQ(httpGet(port, "/api/v1/diag/20200101T000000Z-r1.json").status, 200);
  auto one = httpGet(port, "/api/v1/diag/" + files[0]);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(json::parse(one.body), stored);
  EXPECT_EQ(httpGet(port, "/api/v1/diag/20200101T000001Z-r1.json").status, 404);
  EXPECT_EQ(httpGet(port, "/api/v1/diag/..%2Fincidents.db").status, 404);

  // With the agent running, the report goes through it (the owner of the folder) and shows at once.
  auto d2 = runCli("--simulate dgx-h100 diag -r 1 --data-dir " + data);
  ASSERT_EQ(d2.first, 4) << d2.second;
  EXPECT_NE(proc->log().find("diag report "), std::string::npos) << proc->log();
  EXPECT_NE(proc->log().find(" stored for uid "), std::string::npos) << proc->log();
  auto list2 = json::parse(httpGet(port, "/api/v1/diag").body);
  EXPECT_EQ(list2["reports"].size(), 3u) << list2.dump(2);
  proc->signal(SIGTERM);
  EXPECT_TRUE(proc->wait(10s).has_value());
}

// The folder's files are read within bounds: the newest 100 reports are listed (each listed one is
// read), a report over 4 MiB or nested deeper than the control socket allows is named unreadable in
// the list and a 500 with the reason on its own, and a name that is no file is a 404.
TEST(DiagStore, TheListAndEachReportAreReadWithinBounds) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data + "/diag");
  const std::string fixture =
      readFile(std::string(GW_TEST_SOURCE_DIR) + "/tests/diag/fixtures/report-before-stack.json");
  // 103 good reports, at 2020-01-01 00:01:00 .. 00:02:42; the two odd ones are newer than all.
  auto name = [](int second) {
    char n[64];
    std::snprintf(n, sizeof n, "20200101T00%02d%02dZ-r1.json", second / 60, second % 60);
    return std::string(n);
  };
  for (int i = 0; i < 103; ++i) {
    std::ofstream(data + "/diag/" + name(60 + i)) << fixture;
  }
  const std::string big = "20200102T000000Z-r1.json", deep = "20200103T000000Z-r1.json";
  std::string padded = fixture;
  padded.insert(padded.rfind('}'), std::string(node::DataDir::kMaxDiagReportBytes + 1 - fixture.size(), ' '));
  ASSERT_EQ(padded.size(), node::DataDir::kMaxDiagReportBytes + 1);
  std::ofstream(data + "/diag/" + big) << padded;
  std::ofstream(data + "/diag/" + deep) << "{\"x\": " + std::string(64, '[') + std::string(64, ']') + "}";
  // One byte less is a report.
  const std::string fits = "20200101T000000Z-r1.json";
  std::string fits_text = padded;
  fits_text.erase(fits_text.rfind('}') - 1, 1);
  std::ofstream(data + "/diag/" + fits) << fits_text;

  const std::string config = dir.write("agent.yaml", "listen: 127.0.0.1:0\n");
  AgentProcess proc({"--simulate", "dgx-h100", "serve", "--config", config, "--data-dir", data}, {},
                    dir.path() + "/agent.log");
  const int port = proc.waitListening();
  ASSERT_GT(port, 0) << proc.log();
  auto list = httpGet(port, "/api/v1/diag");
  ASSERT_EQ(list.status, 200) << list.body;
  const json lj = json::parse(list.body);
  EXPECT_EQ(lj["total"], 106) << lj["total"];
  EXPECT_EQ(lj["count"], 100);
  ASSERT_EQ(lj["reports"].size(), 100u);
  EXPECT_EQ(lj["reports"][0]["name"], deep);
  EXPECT_EQ(lj["reports"][0]["error"], "unreadable report: JSON nested deeper than 64") << lj["reports"][0];
  EXPECT_EQ(lj["reports"][1]["name"], big);
  EXPECT_EQ(lj["reports"][1]["error"], "unreadable report: larger than 4194304 bytes") << lj["reports"][1];
  EXPECT_TRUE(lj["reports"][1]["overall"].is_null());
  EXPECT_EQ(lj["reports"][2]["name"], name(60 + 102));
  EXPECT_EQ(lj["reports"][2]["overall"], "warn");
  EXPECT_EQ(lj["reports"][99]["name"], name(60 + 5));  // the oldest 4 and the one that fits are left out

  auto one = httpGet(port, "/api/v1/diag/" + big);
  EXPECT_EQ(one.status, 500) << one.body;
  EXPECT_NE(one.body.find("cannot be read: larger than 4194304 bytes"), std::string::npos) << one.body;
  auto fitting = httpGet(port, "/api/v1/diag/" + fits);
  ASSERT_EQ(fitting.status, 200);
  EXPECT_EQ(json::parse(fitting.body), json::parse(fixture));
  EXPECT_EQ(httpGet(port, "/api/v1/diag/" + deep).status, 500);
  std::filesystem::create_directories(data + "/diag/20200104T000000Z-r1.json");  // a folder with a report's name
  EXPECT_EQ(httpGet(port, "/api/v1/diag/20200104T000000Z-r1.json").status, 404);
  proc.signal(SIGTERM);
  EXPECT_TRUE(proc.wait(10s).has_value());
}

}  // namespace
}  // namespace gw::test
