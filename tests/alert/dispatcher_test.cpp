#include "alert/dispatcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../support/temp_dir.h"
#include "platform/clock.h"
#include "test_util.h"

namespace gw::alert {
namespace {

using namespace std::chrono_literals;
using test::freePort;
using test::Receiver;

class TempDir : public testsupport::TempDir {
 public:
  TempDir() : testsupport::TempDir("gw-alert") {}
};

Alert makeAlert(int n, const std::string& rule = "GpuTemperatureHigh") {
  Alert a;
  a.id = rule + "/GPU-" + std::to_string(n);
  a.rule = rule;
  a.severity = "critical";
  a.summary = "GPU " + std::to_string(n) + " at 91 C";
  a.action = "check the fans";
  a.gpu_uuid = "GPU-" + std::to_string(n);
  a.gpu_index = n;
  a.hostname = "node1";
  a.labels = {{"cluster", "c1"}};
  a.annotations = {{"runbook", "docs/knowledge-base.md#hot-and-loud"}};
  a.starts_at_ms = 1700000000000 + n;
  return a;
}

DispatcherConfig webhookConfig(const std::string& dir, int port, int rate = 1000) {
  DispatcherConfig c;
  c.queue_path = dir + "/alerts.db";
  c.retry_initial = 20ms;
  c.retry_max = 200ms;
  SinkConfig s;
  s.type = SinkConfig::Type::webhook;
  s.name = "hook";
  s.url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  s.headers = {{"X-Token", "secret"}};
  s.timeout = 2000ms;
  s.rate_limit = rate;
  s.rate_interval = 1000ms;
  c.sinks.push_back(s);
  return c;
}

TEST(AlertJson, RoundTripsAndFormatsTimes) {
  Alert a = makeAlert(3);
  a.ends_at_ms = 1700000005000;
  auto j = toJson(a);
  EXPECT_EQ(j["status"], "resolved");
  EXPECT_EQ(j["ends_at"], "2023-11-14T22:13:25.000Z");
  auto read = alertFromJson(j);
  ASSERT_TRUE(read.ok()) << read.error();
  const Alert& b = *read;
  EXPECT_EQ(b.id, a.id);
  EXPECT_EQ(b.labels, a.labels);
  EXPECT_EQ(b.gpu_index, 3);
  EXPECT_EQ(b.ends_at_ms, a.ends_at_ms);
}

// The agent names its alerts as the Prometheus rules do (GpuEccDbe), not by the health rule
// (ecc_dbe): a label the alert brings wins over the rule's name.
TEST(AlertmanagerPayload, KeepsTheAlertnameTheAlertBrings) {
  Alert a = makeAlert(1);
  a.rule = "ecc_dbe";
  a.labels["alertname"] = "GpuEccDbe";
  EXPECT_EQ(AlertmanagerSink::payload(a, "")[0]["labels"]["alertname"], "GpuEccDbe");
  a.labels.erase("alertname");
  EXPECT_EQ(AlertmanagerSink::payload(a, "")[0]["labels"]["alertname"], "ecc_dbe");
}

TEST(AlertmanagerPayload, HasV2Shape) {
  Alert a = makeAlert(1);
  auto p = AlertmanagerSink::payload(a, "http://node1:9400/api/v1/alerts");
  ASSERT_TRUE(p.is_array());
  ASSERT_EQ(p.size(), 1u);
  const auto& o = p[0];
  EXPECT_EQ(o["labels"]["alertname"], "GpuTemperatureHigh");
  EXPECT_EQ(o["labels"]["severity"], "critical");
  EXPECT_EQ(o["labels"]["instance"], "node1");
  EXPECT_EQ(o["labels"]["gpu"], "1");
  EXPECT_EQ(o["labels"]["UUID"], "GPU-1");
  EXPECT_EQ(o["labels"]["cluster"], "c1");
  EXPECT_EQ(o["annotations"]["summary"], a.summary);
  EXPECT_EQ(o["annotations"]["description"], a.action);
  EXPECT_EQ(o["annotations"]["runbook"], "docs/knowledge-base.md#hot-and-loud");
  EXPECT_EQ(o["startsAt"], "2023-11-14T22:13:20.001Z");
  EXPECT_FALSE(o.contains("endsAt"));
  EXPECT_EQ(o["generatorURL"], "http://node1:9400/api/v1/alerts");
  a.ends_at_ms = 1700000060000;
  EXPECT_EQ(AlertmanagerSink::payload(a)[0]["endsAt"], "2023-11-14T22:14:20.000Z");
}

// The base URL is often written with a trailing slash (http://am:9093/): the sink still posts
// to /api/v2/alerts, not //api/v2/alerts, which Alertmanager does not serve.
TEST(AlertmanagerSink, ABaseUrlWithTrailingSlashesPostsToTheApiPath) {
  const int port = freePort();
  httplib::Server am;
  std::mutex mu;
  std::vector<nlohmann::json> posted;
  am.Post("/api/v2/alerts", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    posted.push_back(nlohmann::json::parse(req.body));
    res.status = 200;
  });
  ASSERT_TRUE(am.bind_to_port("127.0.0.1", port));
  std::thread server([&] { am.listen_after_bind(); });
  while (!am.is_running()) std::this_thread::sleep_for(2ms);
  SinkConfig s;
  s.type = SinkConfig::Type::alertmanager;
  s.name = "am";
  s.url = "http://127.0.0.1:" + std::to_string(port) + "//";
  s.timeout = 2000ms;
  AlertmanagerSink sink(s);
  const Delivery d = sink.deliver(makeAlert(2));
  am.stop();
  server.join();
  EXPECT_TRUE(d.ok) << d.error;
  std::lock_guard lock(mu);
  ASSERT_EQ(posted.size(), 1u);
  EXPECT_EQ(posted[0][0]["labels"]["UUID"], "GPU-2");
}

TEST(Url, Splits) {
  std::string o, p;
  ASSERT_TRUE(splitUrl("http://h:1/a/b", o, p));
  EXPECT_EQ(o, "http://h:1");
  EXPECT_EQ(p, "/a/b");
  ASSERT_TRUE(splitUrl("https://h", o, p));
  EXPECT_EQ(p, "/");
  EXPECT_FALSE(splitUrl("ftp://h/x", o, p));
  EXPECT_FALSE(splitUrl("nourl", o, p));
}

TEST(Webhook, DeliversPayloadAndHeaders) {
  TempDir dir;
  int port = freePort();
  Receiver rx;
  ASSERT_TRUE(rx.start(port));
  auto d = Dispatcher::create(webhookConfig(dir.path(), port));
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  ASSERT_TRUE((*d)->submit(makeAlert(7)).value());
  ASSERT_TRUE((*d)->flush(10s));
  auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), 1u);
  const auto& b = bodies[0];
  EXPECT_EQ(b["id"], "GpuTemperatureHigh/GPU-7");
  EXPECT_EQ(b["rule"], "GpuTemperatureHigh");
  EXPECT_EQ(b["severity"], "critical");
  EXPECT_EQ(b["summary"], "GPU 7 at 91 C");
  EXPECT_EQ(b["action"], "check the fans");
  EXPECT_EQ(b["gpu_uuid"], "GPU-7");
  EXPECT_EQ(b["gpu_index"], 7);
  EXPECT_EQ(b["hostname"], "node1");
  EXPECT_EQ(b["status"], "firing");
  EXPECT_EQ(b["labels"]["cluster"], "c1");
  EXPECT_EQ(b["starts_at_ms"], 1700000000007);
  auto h = rx.headers();
  EXPECT_EQ(h.find("X-Token")->second, "secret");
  EXPECT_EQ(h.find("Content-Type")->second, "application/json");
  auto st = (*d)->stats();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].delivered, 1);
  EXPECT_EQ(st[0].pending, 0);
}

// An alert raised without a start (starts_at_ms 0) or a host is given them at submit: the time it
// was submitted and the configured hostname, so that a receiver never reads 1970 or no host.
TEST(Webhook, AnAlertWithoutStartOrHostIsStampedAtSubmit) {
  TempDir dir;
  int port = freePort();
  Receiver rx;
  ASSERT_TRUE(rx.start(port));
  DispatcherConfig cfg = webhookConfig(dir.path(), port);
  cfg.hostname = "node9";
  auto d = Dispatcher::create(cfg);
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  Alert a = makeAlert(4);
  a.starts_at_ms = 0;
  a.hostname.clear();
  const int64_t before = platform::wallMs();
  ASSERT_TRUE((*d)->submit(a).value());
  const int64_t after = platform::wallMs();
  ASSERT_TRUE((*d)->flush(10s));
  auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), 1u);
  const int64_t starts = bodies[0]["starts_at_ms"].get<int64_t>();
  EXPECT_GE(starts, before);
  EXPECT_LE(starts, after);
  EXPECT_EQ(bodies[0]["hostname"], "node9");
}

TEST(Webhook, SinkDownQueuesThenDeliversAllInOrder) {
  TempDir dir;
  int port = freePort();  // nothing listens yet
  auto d = Dispatcher::create(webhookConfig(dir.path(), port));
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  // 20 alerts over 5 ids, each id firing then resolved alternately: order per id matters.
  std::vector<std::pair<std::string, std::string>> sent;
  for (int round = 0; round < 4; ++round)
    for (int g = 0; g < 5; ++g) {
      Alert a = makeAlert(g);
      if (round % 2 == 1) a.ends_at_ms = a.starts_at_ms + 1000 * (round + 1);
      ASSERT_TRUE((*d)->submit(a).value());
      sent.emplace_back(a.id, a.status());
    }
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ((*d)->pending(), 20);
  EXPECT_GT((*d)->stats()[0].failed_attempts, 0);
  Receiver rx;
  ASSERT_TRUE(rx.start(port));
  ASSERT_TRUE((*d)->flush(20s));
  auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), sent.size());  // none lost, no duplicates
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(bodies[i]["id"], sent[i].first) << i;
    EXPECT_EQ(bodies[i]["status"], sent[i].second) << i;
  }
}

TEST(Webhook, RestartDeliversWhatThePreviousRunLeft) {
  TempDir dir;
  int port = freePort();
  {
    auto d = Dispatcher::create(webhookConfig(dir.path(), port));
    ASSERT_TRUE(d.ok()) << d.error();
    (*d)->start();
    for (int i = 0; i < 10; ++i) ASSERT_TRUE((*d)->submit(makeAlert(i)).value());
    std::this_thread::sleep_for(100ms);
    (*d)->stop();
    EXPECT_EQ((*d)->pending(), 10);
  }  // the process "exits"; the queue stays in dir
  Receiver rx;
  ASSERT_TRUE(rx.start(port));
  auto d = Dispatcher::create(webhookConfig(dir.path(), port));
  ASSERT_TRUE(d.ok()) << d.error();
  // Dedupe state survives too: the same alerts are not queued a second time.
  EXPECT_FALSE((*d)->submit(makeAlert(3)).value());
  (*d)->start();
  ASSERT_TRUE((*d)->flush(20s));
  auto bodies = rx.bodies();
  ASSERT_EQ(bodies.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bodies[i]["gpu_index"], i);
}

TEST(Webhook, RateLimitSpreadsABurstAndDropsNothing) {
  TempDir dir;
  int port = freePort();
  Receiver rx;
  ASSERT_TRUE(rx.start(port));
  const int kRate = 20;  // per 1 s interval
  auto d = Dispatcher::create(webhookConfig(dir.path(), port, kRate));
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE((*d)->submit(makeAlert(i)).value());
  ASSERT_TRUE((*d)->flush(20s));
  auto elapsed = std::chrono::steady_clock::now() - t0;
  auto times = rx.times();
  ASSERT_EQ(times.size(), 50u);
  EXPECT_GE(elapsed, 2000ms - 50ms);  // 50 at 20/s needs two full windows after the first
  // No window of one interval holds more than kRate deliveries. Times are taken at the receiver,
  // so allow for request latency on a busy machine; the limiter itself is exact.
  for (std::size_t i = 0; i + kRate < times.size(); ++i) EXPECT_GE(times[i + kRate] - times[i], 1000ms - 150ms) << i;
  auto bodies = rx.bodies();
  std::set<int> seen;
  for (const auto& b : bodies) seen.insert(b["gpu_index"].get<int>());
  EXPECT_EQ(seen.size(), 50u);
}

TEST(Dedupe, SameStateNotResentWithinRepeatInterval) {
  TempDir dir;
  int port = freePort();
  Receiver rx;
  ASSERT_TRUE(rx.start(port));
  auto cfg = webhookConfig(dir.path(), port);
  cfg.repeat_interval = 400ms;
  auto d = Dispatcher::create(cfg);
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  Alert a = makeAlert(1);
  EXPECT_TRUE((*d)->submit(a).value());
  EXPECT_FALSE((*d)->submit(a).value());  // same id, still firing
  Alert other = makeAlert(2);
  EXPECT_TRUE((*d)->submit(other).value());  // another id
  Alert resolved = a;
  resolved.ends_at_ms = a.starts_at_ms + 5000;
  EXPECT_TRUE((*d)->submit(resolved).value());   // state changed
  EXPECT_FALSE((*d)->submit(resolved).value());  // and not again
  EXPECT_TRUE((*d)->submit(a).value());          // fires again
  std::this_thread::sleep_for(450ms);
  EXPECT_TRUE((*d)->submit(a).value());  // repeat interval passed
  ASSERT_TRUE((*d)->flush(10s));
  EXPECT_EQ(rx.bodies().size(), 5u);
}

// docs/alerts.md: a transport error, 408, 429 or 5xx is retried; any other 4xx is a permanent
// rejection. Each status at and next to the ones that retry. Only a 2xx counts as delivered: a 3xx
// (the receiver moved, or asks for a choice) is not, or the alert would be silently dropped.
// A webhook sink posting to the test's receiver on `port`.
SinkConfig webhookTo(int port) {
  SinkConfig c;
  c.type = SinkConfig::Type::webhook;
  c.url = "http://127.0.0.1:" + std::to_string(port) + "/hook";
  return c;
}

TEST(Webhook, WhichStatusesAreRetried) {
  const std::vector<std::pair<int, bool>> cases = {{400, false}, {407, false}, {408, true},  {409, false}, {428, false},
                                                   {429, true},  {430, false}, {499, false}, {500, true},  {503, true},
                                                   {200, true},  {204, true},  {299, true},  {300, false}};
  for (const auto& [status, retry] : cases) {
    SCOPED_TRACE(status);
    const int port = freePort();
    Receiver rx(status);
    ASSERT_TRUE(rx.start(port));
    WebhookSink sink(webhookTo(port));
    const Delivery d = sink.deliver(makeAlert(1));
    EXPECT_EQ(d.ok, status == 200 || status == 204 || status == 299);
    EXPECT_EQ(d.retryable, retry);
  }
}

// A delivery error carries the first 200 bytes of what the receiver or the command said.
TEST(Webhook, AnErrorKeepsTheFirst200BytesOfTheReply) {
  const int port = freePort();
  Receiver rx(400, std::string(200, 'a') + std::string(100, 'b'));
  ASSERT_TRUE(rx.start(port));
  const SinkConfig c = webhookTo(port);
  WebhookSink sink(c);
  const Delivery d = sink.deliver(makeAlert(1));
  EXPECT_EQ(d.error, "POST " + c.url + ": HTTP 400 " + std::string(200, 'a'));

  TempDir dir;
  const std::string script = dir.path() + "/hook.sh";
  std::ofstream(script) << "#!/bin/sh\nprintf '%0200d%0100d' 0 0 | tr 0 c >&2\nexit 3\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  SinkConfig s;
  s.type = SinkConfig::Type::command;
  s.command = {script};
  CommandSink command(s, dir.path());
  const Delivery e = command.deliver(makeAlert(1));
  EXPECT_EQ(e.error, script + ": exit 3: " + std::string(200, 'c'));
}

TEST(Webhook, PermanentRejectionDoesNotBlockTheQueue) {
  TempDir dir;
  int port = freePort();
  Receiver rx(400);
  ASSERT_TRUE(rx.start(port));
  auto d = Dispatcher::create(webhookConfig(dir.path(), port));
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  ASSERT_TRUE((*d)->submit(makeAlert(1)).value());
  ASSERT_TRUE((*d)->submit(makeAlert(2)).value());
  ASSERT_TRUE((*d)->flush(10s));
  EXPECT_EQ(rx.bodies().size(), 2u);
  EXPECT_EQ((*d)->stats()[0].rejected, 2);
}

TEST(CommandSink, RunsProgramWithEnvAndFile) {
  TempDir dir;
  std::string out = dir.path() + "/out.txt";
  std::string script = dir.path() + "/hook.sh";
  {
    std::ofstream s(script);
    s << "#!/bin/sh\n"
         "{ echo \"id=$GPUWARDEN_ALERT_ID\"; echo \"rule=$GPUWARDEN_ALERT_RULE\";\n"
         "  echo \"severity=$GPUWARDEN_ALERT_SEVERITY\"; echo \"status=$GPUWARDEN_ALERT_STATUS\";\n"
         "  echo \"gpu=$GPUWARDEN_ALERT_GPU_INDEX\"; echo \"uuid=$GPUWARDEN_ALERT_GPU_UUID\";\n"
         "  echo \"json=$GPUWARDEN_ALERT_JSON\"; printf 'file='; cat \"$GPUWARDEN_ALERT_FILE\"; echo;\n"
         "} >> \"$OUT_FILE\"\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  ::setenv("OUT_FILE", out.c_str(), 1);
  DispatcherConfig c;
  c.queue_path = dir.path() + "/data/alerts.db";
  c.retry_initial = 20ms;
  SinkConfig s;
  s.type = SinkConfig::Type::command;
  s.name = "cmd";
  s.command = {script};
  s.timeout = 5000ms;
  c.sinks.push_back(s);
  auto d = Dispatcher::create(c);
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  ASSERT_TRUE((*d)->submit(makeAlert(4)).value());
  ASSERT_TRUE((*d)->flush(10s));
  (*d)->stop();
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  EXPECT_NE(text.find("id=GpuTemperatureHigh/GPU-4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rule=GpuTemperatureHigh\n"), std::string::npos);
  EXPECT_NE(text.find("severity=critical\n"), std::string::npos);
  EXPECT_NE(text.find("status=firing\n"), std::string::npos);
  EXPECT_NE(text.find("gpu=4\n"), std::string::npos);
  EXPECT_NE(text.find("uuid=GPU-4\n"), std::string::npos);
  auto json_line = text.substr(text.find("json=") + 5);
  json_line = json_line.substr(0, json_line.find('\n'));
  EXPECT_EQ(nlohmann::json::parse(json_line)["summary"], "GPU 4 at 91 C");
  auto file_line = text.substr(text.find("file=") + 5);
  file_line = file_line.substr(0, file_line.find('\n'));
  EXPECT_EQ(nlohmann::json::parse(file_line)["gpu_uuid"], "GPU-4");
  // The temporary file is removed after the run.
  int left = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() + "/data"))
    if (e.path().filename().string().rfind("alert-", 0) == 0) ++left;
  EXPECT_EQ(left, 0);
}

TEST(CommandSink, FailingCommandIsRetriedUntilItSucceeds) {
  TempDir dir;
  std::string flag = dir.path() + "/ok";
  std::string script = dir.path() + "/hook.sh";
  {
    std::ofstream s(script);
    s << "#!/bin/sh\n[ -e '" << flag << "' ] || exit 3\necho done >> '" << flag << "'\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  DispatcherConfig c;
  c.queue_path = dir.path() + "/data/alerts.db";
  c.retry_initial = 20ms;
  c.retry_max = 100ms;
  SinkConfig s;
  s.type = SinkConfig::Type::command;
  s.command = {script};
  c.sinks.push_back(s);
  auto d = Dispatcher::create(c);
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();
  ASSERT_TRUE((*d)->submit(makeAlert(1)).value());
  EXPECT_FALSE((*d)->flush(300ms));
  EXPECT_GT((*d)->stats()[0].failed_attempts, 0);
  EXPECT_NE((*d)->stats()[0].last_error.find("exit 3"), std::string::npos);
  std::ofstream(flag) << "";
  ASSERT_TRUE((*d)->flush(10s));
  EXPECT_EQ((*d)->stats()[0].delivered, 1);
}

// docs/alerts.md: 500 ms doubling up to 5 min, each delay scaled by a factor in [0.8, 1.2].
TEST(RetryDelay, TheDefaultsDoubleFromHalfASecondToFiveMinutesWithinTwentyPercent) {
  const DispatcherConfig c;
  EXPECT_EQ(retryDelay(c, 1, 0.5), 500ms);
  EXPECT_EQ(retryDelay(c, 1, 0.0), 400ms);
  EXPECT_EQ(retryDelay(c, 1, 1.0), 600ms);
  EXPECT_EQ(retryDelay(c, 2, 0.5), 1000ms);
  EXPECT_EQ(retryDelay(c, 3, 0.0), 1600ms);
  EXPECT_EQ(retryDelay(c, 10, 0.5), 256000ms);  // 500 ms * 2^9
  EXPECT_EQ(retryDelay(c, 11, 0.5), 300000ms);  // capped
  EXPECT_EQ(retryDelay(c, 1000, 0.5), 300000ms);
  EXPECT_EQ(retryDelay(c, 1000, 1.0), 360000ms);
  EXPECT_EQ(retryDelay(c, 1000, 0.0), 240000ms);
}

TEST(RetryDelay, JitterIsClampedToZeroAndOne) {
  DispatcherConfig c;
  c.retry_jitter = 1.5;  // as 1: never a negative wait
  EXPECT_EQ(retryDelay(c, 1, 0.0), 0ms);
  EXPECT_EQ(retryDelay(c, 1, 1.0), 1000ms);
  c.retry_jitter = -0.5;  // as 0
  EXPECT_EQ(retryDelay(c, 1, 0.0), 500ms);
  EXPECT_EQ(retryDelay(c, 1, 1.0), 500ms);
  c.retry_jitter = 0.2;
  EXPECT_EQ(retryDelay(c, 1, 7.0), 600ms);  // a draw past 1 counts as 1
}

}  // namespace
}  // namespace gw::alert
