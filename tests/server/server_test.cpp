// The agent in-process on the simulated DGX H100, its HTTP API exercised over real loopback
// sockets: /metrics, /api/v1/*, /healthz, and what the server does with malformed, oversized,
// slow and too many requests.
#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <zlib.h>

#include "health/incidents.h"
#include "node/control_protocol.h"
#include "node/data_dir.h"
#include "node/records.h"
#include "server/agent.h"
#include "../support/gunzip.h"
#include "cluster/fake_kubelet.h"
#include "test_util.h"

namespace gw::server {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using test::httpGet;
using testsupport::gunzip;

// A connection to the agent on 127.0.0.1, from `from` (another loopback address: a client the
// per-address limit counts apart) when given.
int rawConnect(int port, const char* from = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (from) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &local.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

std::string rawExchange(int port, const std::string& request, const char* from = nullptr) {
  int fd = rawConnect(port, from);
  if (fd < 0) return "";
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.find("\r\n\r\n") != std::string::npos && out.find("Connection: close") == std::string::npos &&
        out.size() > 200)
      break;
  }
  ::close(fd);
  return out;
}

// An agent in this process on the simulator library, configured by `config`, its data folder
// `data_dir`; not started. The scenario is the one GPUWARDEN_SIM_SCENARIO names, as the library
// reads it. Null (with the reason reported) when it cannot be made.
std::unique_ptr<Agent> simAgent(const std::string& config, const std::string& data_dir) {
  AgentOptions options;
  options.config_path = config;
  options.data_dir = data_dir;
  options.opener = [] { return nvml::Session::open({GW_SIM_LIB}); };
  auto created = Agent::create(std::move(options));
  EXPECT_TRUE(created) << created.error();
  return created ? std::move(created).value() : nullptr;
}

// The dgx-h100 simulator from its start, and a data folder a test may fill before the agent opens it.
std::string dgxDataDir(const test::TempDir& dir) {
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
  ::unsetenv("GPUWARDEN_SIM_START");
  ::unsetenv("GPUWARDEN_SIM_SPEED");
  const std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  return data;
}

// An agent started on `data`, its control socket in the test's own folder; nullptr when it failed.
std::unique_ptr<Agent> startedAgent(const test::TempDir& dir, const std::string& data) {
  auto agent = simAgent(dir.write("agent.yaml", "listen: 127.0.0.1:0\n"), data);
  if (!agent) return nullptr;
  ::setenv("GPUWARDEN_RUNTIME_DIR", dir.file("run").c_str(), 1);
  const Status st = agent->start();
  ::unsetenv("GPUWARDEN_RUNTIME_DIR");
  EXPECT_TRUE(st.ok()) << st.message();
  return st.ok() ? std::move(agent) : nullptr;
}

// The port of an agent's one listening address.
int portOf(const Agent& a) {
  const auto addrs = a.boundAddresses();
  EXPECT_EQ(addrs.size(), 1u);
  return addrs.empty() ? -1 : std::stoi(addrs[0].substr(addrs[0].rfind(':') + 1));
}

class AgentHttp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
    ::unsetenv("GPUWARDEN_SIM_START");
    ::unsetenv("GPUWARDEN_SIM_SPEED");
    started_ms_ = test::wallMsNow();
    const std::string cfg = dir_->write("agent.yaml", R"(
listen: 127.0.0.1:0
sampling:
  fast_interval: 100ms
  slow_interval: 1s
history:
  flush_interval: 500ms
metrics:
  extra_labels: {cluster: test}
http:
  read_timeout: 500ms
  idle_timeout: 1s
  max_header_bytes: 4KiB
  max_connections_per_ip: 8
)");
    agent_ = simAgent(cfg, dir_->path() + "/data").release();
    ASSERT_NE(agent_, nullptr);
    Status s = agent_->start();
    ASSERT_TRUE(s) << s.message();
    port_ = portOf(*agent_);
    ASSERT_GT(port_, 0);
    // Wait for a few sampling passes.
    ASSERT_TRUE(test::eventually(
        [] {
          auto r = httpGet(port_, "/api/v1/history?gpu=0&field=gpu_temp&since=1m");
          return r.status == 200 && json::parse(r.body)["points"].size() >= 3;
        },
        10s));
  }
  static void TearDownTestSuite() {
    delete agent_;
    agent_ = nullptr;
    delete dir_;
  }
  static inline test::TempDir* dir_ = nullptr;
  static inline Agent* agent_ = nullptr;
  static inline int port_ = 0;
  static inline std::int64_t started_ms_ = 0;  // wall ms before the agent started
};

TEST_F(AgentHttp, MetricsHaveDcgmNamesAndLabelsForEightGpus) {
  auto r = httpGet(port_, "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.headers.find("Content-Type")->second.find("text/plain; version=0.0.4"), std::string::npos);
  auto samples = test::parseExposition(r.body);
  auto temps = test::select(samples, "DCGM_FI_DEV_GPU_TEMP");
  ASSERT_EQ(temps.size(), 8u);
  std::set<std::string> gpus, uuids;
  for (const auto& s : temps) {
    for (const char* l : {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"})
      EXPECT_FALSE(s.labels.count(l) == 0 || s.labels.at(l).empty()) << l;
    EXPECT_EQ(s.labels.at("cluster"), "test");  // extra label from the config
    // "nvidia" + the minor number; scenarios/dgx-h100.yaml numbers its nodes 2,3,0,1,6,7,4,5.
    static const char* const kMinor[8] = {"2", "3", "0", "1", "6", "7", "4", "5"};
    EXPECT_EQ(s.labels.at("device"), std::string("nvidia") + kMinor[std::stoi(s.labels.at("gpu"))]);
    EXPECT_NE(s.labels.at("modelName").find("H100"), std::string::npos);
    EXPECT_GT(s.value, 15);
    EXPECT_LT(s.value, 100);
    gpus.insert(s.labels.at("gpu"));
    uuids.insert(s.labels.at("UUID"));
  }
  EXPECT_EQ(gpus.size(), 8u);
  EXPECT_EQ(uuids.size(), 8u);
  for (const char* m :
       {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"})
    EXPECT_EQ(test::select(samples, m).size(), 8u) << m;
  for (const auto& s : test::select(samples, "DCGM_FI_DEV_POWER_USAGE")) {
    EXPECT_GT(s.value, 50);
    EXPECT_LE(s.value, 750);
  }
  EXPECT_EQ(test::select(samples, "gpuwarden_gpu_state", {{"state", "up"}}).size(), 8u);
  for (const auto& s : test::select(samples, "gpuwarden_gpu_state", {{"state", "up"}})) EXPECT_EQ(s.value, 1);
  // Every GPU has a sample age (that the samples stay fresh is GpusListsEightWithInventoryAndState's).
  const auto lags = test::select(samples, "gpuwarden_sample_lag_seconds");
  EXPECT_EQ(lags.size(), 8u);
  for (const auto& s : lags) EXPECT_GE(s.value, 0);
}

TEST_F(AgentHttp, MetricsGzipAndOpenMetricsAndHead) {
  auto plain = httpGet(port_, "/metrics");
  auto gz = httpGet(port_, "/metrics", {{"Accept-Encoding", "gzip"}});
  ASSERT_EQ(gz.status, 200);
  EXPECT_EQ(gz.headers.find("Content-Encoding")->second, "gzip");
  std::string text = gunzip(gz.body);
  ASSERT_FALSE(text.empty());
  EXPECT_LT(gz.body.size() * 3, text.size());
  EXPECT_EQ(test::select(test::parseExposition(text), "DCGM_FI_DEV_GPU_TEMP").size(), 8u);
  // Brotli is never chosen: only gzip is offered for /metrics.
  auto br = httpGet(port_, "/metrics", {{"Accept-Encoding", "br"}});
  EXPECT_EQ(br.headers.count("Content-Encoding"), 0u);
  // The body depends on both request headers: a cache between the scraper and the agent must not
  // hand a gzip page (or an OpenMetrics one) to a scraper that did not ask for it.
  for (const auto* r : {&plain, &gz}) {
    ASSERT_EQ(r->headers.count("Vary"), 1u);
    EXPECT_EQ(r->headers.find("Vary")->second, "Accept, Accept-Encoding");
  }

  // The dcgm naming stays on text 0.0.4 whenever the scraper takes it (as Prometheus does), so
  // dcgm-exporter's counter names are stored as they are; OpenMetrics only for a scraper that
  // takes nothing else.
  auto prom = httpGet(port_, "/metrics",
                      {{"Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"}});
  ASSERT_EQ(prom.status, 200);
  EXPECT_NE(prom.headers.find("Content-Type")->second.find("text/plain; version=0.0.4"), std::string::npos);
  auto om = httpGet(port_, "/metrics", {{"Accept", "application/openmetrics-text;version=1.0.0"}});
  ASSERT_EQ(om.status, 200);
  EXPECT_NE(om.headers.find("Content-Type")->second.find("application/openmetrics-text"), std::string::npos);
  EXPECT_TRUE(om.body.ends_with("# EOF\n"));

  httplib::Client cli("127.0.0.1", port_);
  auto head = cli.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

TEST_F(AgentHttp, GpusListsEightWithInventoryAndState) {
  ASSERT_TRUE(test::eventually(
      [] {
        auto r = httpGet(port_, "/api/v1/gpus");
        return r.status == 200 && !json::parse(r.body)["gpus"][0]["inventory"].is_null();
      },
      5s));
  auto j = json::parse(httpGet(port_, "/api/v1/gpus").body);
  EXPECT_EQ(j["count"], 8);
  ASSERT_EQ(j["gpus"].size(), 8u);
  EXPECT_EQ(j["driver_version"], "550.54.15");
  EXPECT_TRUE(j["driver_up"].get<bool>());
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& g = j["gpus"][i];
    EXPECT_EQ(g["index"], i);
    EXPECT_EQ(g["state"], "up");
    EXPECT_TRUE(g["uuid"].get<std::string>().starts_with("GPU-"));
    EXPECT_EQ(g["inventory"]["architecture"], "Hopper");
    EXPECT_GT(g["inventory"]["memory_total_mib"].get<double>(), 80000);
    EXPECT_GT(g["last_sample_ms"].get<std::int64_t>(), 0);
    EXPECT_GE(g["sample_lag_seconds"].get<double>(), 0);
  }
  // Fresh: every GPU completes a sampling pass after this read (its sample time moves past now).
  const std::int64_t now = test::wallMsNow();
  EXPECT_TRUE(test::eventually(
      [&] {
        auto r = httpGet(port_, "/api/v1/gpus");
        if (r.status != 200) return false;
        auto later = json::parse(r.body)["gpus"];
        return later.size() == 8u && std::all_of(later.begin(), later.end(), [&](const json& g) {
                 return g["state"] == "up" && g["last_sample_ms"].get<std::int64_t>() > now;
               });
      },
      30s));
}

TEST_F(AgentHttp, LatestByIndexAndUuid) {
  auto byIndex = httpGet(port_, "/api/v1/gpus/2/latest");
  ASSERT_EQ(byIndex.status, 200) << byIndex.body;
  auto j = json::parse(byIndex.body);
  const std::string uuid = j["gpu"]["uuid"];
  std::map<std::string, json> f;
  for (const auto& x : j["fields"]) f[x["key"]] = x;
  ASSERT_TRUE(f.count("gpu_temp"));
  EXPECT_EQ(f["gpu_temp"]["unit"], "C");
  EXPECT_GT(f["gpu_temp"]["value"].get<double>(), 15);
  EXPECT_LT(f["gpu_temp"]["value"].get<double>(), 100);
  // A healthy GPU that is up: its values are current, not the last ones kept from before a stall.
  EXPECT_FALSE(f["gpu_temp"]["stale"].get<bool>());
  // The time of the sample in wall milliseconds since the epoch: after the agent started, not in the
  // future (the second of slack is for the simulator's coarse clock; seconds or microseconds would
  // be off by a factor of 1000), and a later read has a later one.
  const std::int64_t stamp = f["gpu_temp"]["timestamp_ms"].get<std::int64_t>();
  EXPECT_GE(stamp, started_ms_ - 1000);
  EXPECT_LE(stamp, test::wallMsNow() + 1000);
  EXPECT_TRUE(test::eventually(
      [&] {
        auto r = httpGet(port_, "/api/v1/gpus/2/latest");
        if (r.status != 200) return false;
        const json later = json::parse(r.body);
        for (const auto& x : later["fields"])
          if (x["key"] == "gpu_temp") return x["timestamp_ms"].get<std::int64_t>() > stamp;
        return false;
      },
      30s));
  ASSERT_TRUE(f.count("power_usage") || f.count("power_draw")) << byIndex.body.substr(0, 500);
  for (const auto& [k, x] : f) {
    EXPECT_TRUE(x.contains("unit")) << k;
    EXPECT_TRUE(x["value"].is_number()) << k;
  }
  auto byUuid = httpGet(port_, "/api/v1/gpus/" + uuid + "/latest");
  ASSERT_EQ(byUuid.status, 200);
  EXPECT_EQ(json::parse(byUuid.body)["gpu"]["index"], 2);

  auto missing = httpGet(port_, "/api/v1/gpus/42/latest");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body)["field"], "id");
}

TEST_F(AgentHttp, HistoryReturnsPoints) {
  auto r = httpGet(port_, "/api/v1/history?gpu=0&field=temperature.gpu&since=5m");
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = json::parse(r.body);
  EXPECT_EQ(j["field"]["key"], "gpu_temp");
  ASSERT_GE(j["points"].size(), 3u);
  std::int64_t prev = 0;
  for (const auto& p : j["points"]) {
    EXPECT_GT(p[0].get<std::int64_t>(), prev);
    prev = p[0];
    EXPECT_GT(p[1].get<double>(), 15);
    EXPECT_LT(p[1].get<double>(), 100);
  }
  // Stepped, by UUID, with RFC3339 and unix-second bounds.
  const std::string uuid = j["gpu"]["uuid"];
  const auto now_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto s = httpGet(port_, "/api/v1/history?gpu=" + uuid + "&field=DCGM_FI_DEV_POWER_USAGE&since=" +
                              std::to_string(now_s - 600) + "&until=now&step=1s&agg=max");
  ASSERT_EQ(s.status, 200) << s.body;
  auto js = json::parse(s.body);
  EXPECT_EQ(js["step_ms"], 1000);
  EXPECT_EQ(js["agg"], "max");
  ASSERT_GE(js["points"].size(), 1u);
  for (const auto& p : js["points"]) EXPECT_EQ(p[0].get<std::int64_t>() % 1000, 0);
}

TEST_F(AgentHttp, BadRequestsGetJsonErrorsNamingTheField) {
  struct Case {
    std::string path;
    int status;
    std::string field;
  };
  for (const auto& c : std::vector<Case>{
           {"/api/v1/history?field=gpu_temp", 400, "gpu"},
           {"/api/v1/history?gpu=0", 400, "field"},
           {"/api/v1/history?gpu=0&field=nope", 400, "field"},
           {"/api/v1/history?gpu=0&field=name", 400, "field"},
           {"/api/v1/history?gpu=0&field=gpu_temp&since=yesterday", 400, "since"},
           {"/api/v1/history?gpu=0&field=gpu_temp&until=2024-13-01T00:00:00Z", 400, "until"},
           {"/api/v1/history?gpu=0&field=gpu_temp&since=1m&until=2h", 400, "since"},
           {"/api/v1/history?gpu=0&field=gpu_temp&step=often", 400, "step"},
           {"/api/v1/history?gpu=0&field=gpu_temp&since=30d&step=1ms", 400, "step"},
           {"/api/v1/history?gpu=0&field=gpu_temp&agg=median", 400, "agg"},
           {"/api/v1/history?gpu=0&field=gpu_temp&colour=red", 400, "colour"},
           {"/api/v1/history?gpu=0&gpu=1&field=gpu_temp", 400, "gpu"},
           {"/api/v1/history?gpu=99&field=gpu_temp", 404, "gpu"},
           {"/api/v1/gpus?verbose=1", 400, "verbose"},
       }) {
    auto r = httpGet(port_, c.path);
    EXPECT_EQ(r.status, c.status) << c.path << " -> " << r.body;
    ASSERT_NE(r.headers.find("Content-Type"), r.headers.end()) << c.path;
    EXPECT_EQ(r.headers.find("Content-Type")->second, "application/json") << c.path;
    auto j = json::parse(r.body);
    EXPECT_FALSE(j["error"].get<std::string>().empty()) << c.path;
    EXPECT_EQ(j["field"], c.field) << c.path << " -> " << r.body;
  }
  auto nf = httpGet(port_, "/api/v2/everything");
  EXPECT_EQ(nf.status, 404);
  EXPECT_NE(json::parse(nf.body)["error"].get<std::string>().find("/api/v2/everything"), std::string::npos);

  httplib::Client cli("127.0.0.1", port_);
  std::vector<httplib::Result> results;
  results.push_back(cli.Post("/metrics", "x", "text/plain"));
  results.push_back(cli.Delete("/api/v1/gpus"));
  results.push_back(cli.Put("/healthz", "", "text/plain"));
  for (auto& r : results) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 405);
    EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD");
    EXPECT_FALSE(json::parse(r->body)["error"].get<std::string>().empty());
  }
  auto body =
      rawExchange(port_, "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n");
  EXPECT_NE(body.find(" 413 "), std::string::npos) << body;
  auto garbage = rawExchange(port_, "HELLO\r\n\r\n");
  EXPECT_EQ(garbage.find(" 200 "), std::string::npos) << garbage;
}

TEST_F(AgentHttp, HealthzOk) {
  auto r = httpGet(port_, "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
}

TEST_F(AgentHttp, HugeHeadersAreRefusedAndServerGoesOn) {
  // Over max_header_bytes (4 KiB): 431 (libmicrohttpd's own answer: the head never parsed).
  auto big = httpGet(port_, "/healthz", {{"X-Big", std::string(6000, 'a')}});
  EXPECT_EQ(big.status, 431) << big.body;
  // Within it: served.
  EXPECT_EQ(httpGet(port_, "/healthz", {{"X-Big", std::string(3000, 'a')}}).status, 200);
  // Far over: the connection is cut, nothing is served.
  std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 200; ++i) req += "X-Filler-" + std::to_string(i) + ": " + std::string(1000, 'b') + "\r\n";
  req += "\r\n";
  auto resp = rawExchange(port_, req);
  EXPECT_EQ(resp.find(" 200 "), std::string::npos) << resp.substr(0, 200);
  EXPECT_EQ(httpGet(port_, "/healthz").status, 200);
}

TEST_F(AgentHttp, SlowClientIsCutOffWhileOthersAreServed) {
  int fd = rawConnect(port_);
  ASSERT_GE(fd, 0);
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: slow\r\nX-Slow: ";
  std::atomic<bool> closed{false};
  std::atomic<int> trickled{0};
  std::thread trickle([&] {
    // One byte every 100 ms for 10 s: each read is quick, the whole head never arrives.
    for (std::size_t i = 0; i < 100 && !closed; ++i) {
      if (::send(fd, &req[i % req.size()], 1, MSG_NOSIGNAL) < 0) break;
      ++trickled;
      std::this_thread::sleep_for(100ms);
    }
  });
  // Others are served meanwhile.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(httpGet(port_, "/metrics").status, 200);
  // The server cuts the slow client off at read_timeout (500 ms for the whole head): the server
  // closes the connection (end of stream or reset), with nothing served. A server that waited for
  // the head would leave this read to end at the socket's own 5 s receive timeout (EAGAIN), 10x
  // the head deadline, half the 10 s trickle.
  char buf[512];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  const int err = errno;
  closed = true;
  EXPECT_TRUE(n == 0 || (n < 0 && err == ECONNRESET))
      << "recv " << n << ": " << std::strerror(err) << " after " << trickled << " bytes trickled";
  trickle.join();
  ::close(fd);
}

// Each request limit at its value and one step over (docs/config.md "http").
TEST_F(AgentHttp, BodyLimitAtItsValueAndOneByteOver) {
  const HttpLimits defaults;
  ASSERT_EQ(defaults.max_body_bytes, 4096u);
  for (std::size_t n : {defaults.max_body_bytes - 1, defaults.max_body_bytes, defaults.max_body_bytes + 1}) {
    const std::string resp = rawExchange(port_,
                                         "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                         "Content-Length: " +
                                             std::to_string(n) + "\r\n\r\n" + std::string(n, 'b'));
    const bool over = n > defaults.max_body_bytes;
    EXPECT_NE(resp.find(over ? " 413 " : " 200 "), std::string::npos) << n << " bytes: " << resp.substr(0, 120);
  }
}

// The connection's last allowed request is answered with "Connection: close" and the server
// closes it; the one before keeps it open.
TEST_F(AgentHttp, RequestsPerConnectionLimitAtItsValue) {
  const unsigned limit = HttpLimits{}.max_requests_per_connection;
  ASSERT_EQ(limit, 1000u);
  const int fd = rawConnect(port_);
  ASSERT_GE(fd, 0);
  const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  std::string pending;
  auto nextResponse = [&]() -> std::string {
    char buf[4096];
    for (;;) {
      const auto head = pending.find("\r\n\r\n");
      if (head != std::string::npos) {
        const auto cl = pending.find("Content-Length: ");
        const std::size_t len = cl < head ? std::stoul(pending.substr(cl + 16)) : 0;
        if (pending.size() >= head + 4 + len) {
          std::string one = pending.substr(0, head + 4 + len);
          pending.erase(0, head + 4 + len);
          return one;
        }
      }
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return "";
      pending.append(buf, static_cast<std::size_t>(n));
    }
  };
  for (unsigned i = 1; i <= limit; ++i) {
    ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size())) << i;
    const std::string r = nextResponse();
    ASSERT_NE(r.find(" 200 "), std::string::npos) << "request " << i << ": " << r;
    const bool closing = r.find("Connection: close") != std::string::npos;
    ASSERT_EQ(closing, i == limit) << "request " << i << " of " << limit;
  }
  char b;
  EXPECT_EQ(::recv(fd, &b, 1, 0), 0) << "closed after the last allowed request";
  ::close(fd);
}

// Whether the server still holds `fd` open: no end of stream, no reset, nothing to read.
bool stillOpen(int fd) {
  char b;
  const ssize_t n = ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// Holds `held` silent connections and asks once more on another, all from a loopback address
// used by nothing else (so no connection the server has not yet seen closed counts against it).
// Inconclusive (nullopt) unless every held connection is still open after the answer: the server
// cuts silent ones at read_timeout (500 ms here), and one it cut or refused did not count against
// the limit during the ask. A slow machine retries instead of failing.
std::optional<std::string> askWhileHolding(int port, int held) {
  static int asks = 0;
  const std::string from = "127.0.3." + std::to_string(1 + asks++ % 250);
  std::vector<int> fds;
  for (int i = 0; i < held; ++i) fds.push_back(rawConnect(port, from.c_str()));
  std::string answer = rawExchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", from.c_str());
  // libmicrohttpd's threads accept side by side: the ask may be counted before a held connection
  // that came first, which is then the one refused, and its close may still be on its way. A
  // held connection closed within a moment of the answer makes the ask inconclusive too.
  std::vector<pollfd> pfds;
  for (int fd : fds)
    if (fd >= 0) pfds.push_back({fd, POLLIN | POLLRDHUP, 0});
  const bool one_closed = !pfds.empty() && ::poll(pfds.data(), pfds.size(), 150) > 0;
  const bool conclusive =
      !one_closed && std::all_of(fds.begin(), fds.end(), [](int fd) { return fd >= 0 && stillOpen(fd); });
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  if (!conclusive) return std::nullopt;
  return answer;
}

// The per-address limit (8) at its value: with 7 held the 8th is served, with 8 held the 9th is
// closed at once without an answer. Held connections that send nothing are closed after
// read_timeout, and then the address is served again.
TEST_F(AgentHttp, ConnectionsOverThePerAddressLimitAreClosed) {
  for (int held : {7, 8}) {
    std::optional<std::string> answer;
    for (int attempt = 0; attempt < 10 && !answer; ++attempt) {
      answer = askWhileHolding(port_, held);
      // the held connections' slots are given back when the server sees them closed
      // (a bound on failure only: a sanitizer build beside other test runs has needed more than 3 s)
      ASSERT_TRUE(test::eventually([] { return httpGet(port_, "/healthz").status == 200; }, 30s));
    }
    ASSERT_TRUE(answer.has_value()) << "never conclusive in 10 attempts";
    if (held < 8) {
      EXPECT_NE(answer->find(" 200 "), std::string::npos) << held << " held: " << *answer;
    } else {
      EXPECT_EQ(*answer, "") << held << " held";
    }
  }
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(rawConnect(port_));
  char buf[64];
  for (int fd : idle) EXPECT_LE(::recv(fd, buf, sizeof buf, 0), 0);
  for (int fd : idle) ::close(fd);
  EXPECT_TRUE(test::eventually([] { return httpGet(port_, "/healthz").status == 200; }, 30s));
}

// The dashboard page is served with the headers that keep a browser from guessing its type, from
// showing it inside another site's frame, and from sending the node's address on to a link.
TEST_F(AgentHttp, TheDashboardPageForbidsSniffingFramingAndReferrers) {
  const httplib::Headers browser = {
      {"Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"}};
  for (const char* path : {"/", "/ui/app.js"}) {
    auto r = httpGet(port_, path, browser);
    ASSERT_EQ(r.status, 200) << path;
    for (const auto& [name, value] : {std::pair<const char*, const char*>{"X-Content-Type-Options", "nosniff"},
                                      {"Referrer-Policy", "no-referrer"},
                                      {"X-Frame-Options", "DENY"}}) {
      ASSERT_EQ(r.headers.count(name), 1u) << path << " " << name;
      EXPECT_EQ(r.headers.find(name)->second, value) << path << " " << name;
    }
  }
}

TEST_F(AgentHttp, IndexListsEndpoints) {
  auto r = httpGet(port_, "/api/v1");
  ASSERT_EQ(r.status, 200);
  EXPECT_GE(json::parse(r.body)["endpoints"].size(), 5u);
}

// A /metrics page cut where the per-scrape tail starts (its first family).
std::pair<std::string, std::string> splitAtScrapePart(const std::string& body) {
  const std::size_t at = body.find("# HELP gpuwarden_sample_lag_seconds");
  EXPECT_NE(at, std::string::npos) << body.substr(0, 300);
  return {body.substr(0, std::min(at, body.size())), body.substr(std::min(at, body.size()))};
}

// The cached page is replaced when the GPUs are sampled again (here every 100 ms).
TEST_F(AgentHttp, MetricsPageFollowsTheSamples) {
  const std::string a = httpGet(port_, "/metrics").body;
  EXPECT_TRUE(test::eventually(
      [&] { return splitAtScrapePart(httpGet(port_, "/metrics").body).first != splitAtScrapePart(a).first; }, 30s));
}

// The control socket is the last thing start() opens, after the data folder's lock and the HTTP
// port: a start that fails there gives both back at once (a retry, or another agent on the folder,
// must not wait for this object to go), not when the Agent is destroyed.
TEST(AgentStart, AFailedControlSocketGivesBackTheDataFolderAndThePort) {
  test::TempDir dir;
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
  ::unsetenv("GPUWARDEN_SIM_START");
  ::unsetenv("GPUWARDEN_SIM_SPEED");
  auto agent = simAgent(dir.write("agent.yaml", "listen: 127.0.0.1:0\n"), dir.path() + "/data");
  ASSERT_NE(agent, nullptr);
  // A file where the runtime folder should be: the socket's folder cannot be made.
  const std::string runtime = dir.write("run", "not a folder\n");
  ::setenv("GPUWARDEN_RUNTIME_DIR", runtime.c_str(), 1);
  const Status st = agent->start();
  ::unsetenv("GPUWARDEN_RUNTIME_DIR");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().rfind("control socket: ", 0), 0u) << st.message();
  EXPECT_TRUE(agent->boundAddresses().empty());
  auto lock = node::DataDirLock::acquire(node::DataDir(dir.path() + "/data"), 0ms);
  EXPECT_TRUE(lock.ok()) << lock.error();
}

// records.list without a limit answers the newest 100 records (docs/api.md), like job.list: a node
// with a long history of settings answers a page, and a limit asks for more.
TEST(AgentControl, RecordsListIsTheNewestHundredUnlessALimitSaysOtherwise) {
  test::TempDir dir;
  const std::string data = dgxDataDir(dir);
  {
    auto rs = node::RecordStore::open(node::DataDir(data).recordsDb());
    ASSERT_TRUE(rs) << rs.error();
    for (int i = 0; i < 101; ++i) {
      node::Record r;
      r.time_ms = 1'700'000'000'000 + i;
      r.kind = "setting";
      r.who = "uid 0 (root) pid 1";
      r.summary = "setting " + std::to_string(i);
      auto id = (*rs)->append(r);
      ASSERT_TRUE(id) << id.error();
    }
  }
  auto agent = startedAgent(dir, data);
  ASSERT_NE(agent, nullptr);
  const std::string sock = agent->controlSocketPath();
  ASSERT_FALSE(sock.empty());
  auto list = [&](const json& args) {
    auto r = node::control::call(sock, json{{"op", "records.list"}, {"args", args}});
    EXPECT_TRUE(r.reached && r.error.empty()) << r.error;
    return r.body;
  };
  const json page = list(json::object());
  ASSERT_TRUE(page.value("ok", false)) << page.dump();
  EXPECT_EQ(page["result"]["records"].size(), 100u);
  const json more = list(json{{"limit", 101}});
  ASSERT_TRUE(more.value("ok", false)) << more.dump();
  EXPECT_EQ(more["result"]["records"].size(), 101u);
  // The limit's bounds, 1 and 10000, are taken; one step beyond either is refused in so many words.
  for (const std::uint64_t ok : {1u, 10000u}) {
    const json edge = list(json{{"limit", ok}});
    ASSERT_TRUE(edge.value("ok", false)) << ok << ": " << edge.dump();
    if (ok == 1) {
      EXPECT_EQ(edge["result"]["records"].size(), 1u);
    } else {
      EXPECT_GE(edge["result"]["records"].size(), 101u);
    }
  }
  for (const std::uint64_t bad : {0u, 10001u}) {
    const json refused = list(json{{"limit", bad}});
    EXPECT_FALSE(refused.value("ok", true)) << bad;
    EXPECT_EQ(refused.value("error", ""), "args.limit must be an integer from 1 to 10000") << refused.dump();
  }
}

// Every incident page at its documented size (docs/api.md): /api/v1/incidents?state=all answers the
// newest 100 unless a limit from 1 to 10000 says otherwise; the control socket's `incidents list
// --all` the newest 1000.
TEST(AgentControl, IncidentPagesAtTheirDocumentedSizes) {
  test::TempDir dir;
  const std::string data = dgxDataDir(dir);
  {
    auto store = health::IncidentStore::open(node::DataDir(data).incidentsDb());
    ASSERT_TRUE(store) << store.error();
    std::vector<health::Finding> findings;
    for (int i = 0; i < 1001; ++i) {
      health::Finding f;
      f.rule = "thermal_slowdown";
      f.gpu_index = 0;
      f.gpu_uuid = "GPU-old";
      f.summary = "finding " + std::to_string(i);
      f.key = "thermal_slowdown|GPU-old|" + std::to_string(i);
      f.sticky = true;  // stays open whatever the agent sees
      findings.push_back(f);
    }
    auto opened = (*store)->apply(findings, 1'700'000'000'000);
    ASSERT_TRUE(opened) << opened.error();
    ASSERT_EQ(opened->size(), 1001u);
  }
  auto agent = startedAgent(dir, data);
  ASSERT_NE(agent, nullptr);
  const int port = portOf(*agent);
  auto count = [&](const std::string& query) {
    auto r = httpGet(port, "/api/v1/incidents" + query);
    EXPECT_EQ(r.status, 200) << query << ": " << r.body;
    const json j = json::parse(r.body, nullptr, false);
    return j.is_object() ? j["incidents"].size() : 0u;
  };
  EXPECT_EQ(count("?state=all"), 100u);
  EXPECT_EQ(count("?state=all&limit=101"), 101u);
  EXPECT_EQ(count("?state=all&limit=1"), 1u);
  EXPECT_EQ(count("?state=all&limit=10000"), 1001u);
  for (const char* bad : {"0", "10001"})
    EXPECT_EQ(httpGet(port, std::string("/api/v1/incidents?state=all&limit=") + bad).status, 400) << bad;
  auto all = node::control::call(agent->controlSocketPath(), json{{"op", "incidents.list"}, {"args", {{"all", true}}}});
  ASSERT_TRUE(all.reached && all.error.empty()) << all.error;
  EXPECT_EQ(all.body["result"]["incidents"].size(), 1000u);
}

// A GPU that fell off the bus keeps its last values (stale), but it no longer answers: it is never
// marked idle while its peers are busy, nor counted as their peer. Here GPU 5's worker stops at
// t=30 s (fault-straggler) and the GPU falls off the bus at 35 s, idle while seven GPUs train.
TEST(AgentLatest, ALostGpuIsNeverMarkedIdleWhilePeersBusy) {
  test::TempDir dir;
  const std::string scenario = dir.write("lost-straggler.yaml", "base: " GW_SOURCE_DIR
                                                                "/scenarios/fault-straggler.yaml\n"
                                                                "faults:\n  - {type: fall_off_bus, gpu: 5, at: 35}\n");
  ::setenv("GPUWARDEN_SIM_SCENARIO", scenario.c_str(), 1);
  ::setenv("GPUWARDEN_SIM_START", "31", 1);
  ::unsetenv("GPUWARDEN_SIM_SPEED");
  ::unsetenv("GPUWARDEN_SIM_CLOCK");
  auto agent =
      simAgent(dir.write("agent.yaml", "listen: 127.0.0.1:0\nsampling: {fast_interval: 100ms, slow_interval: 1s}\n"),
               dir.path() + "/data");
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(agent->start());
  const int port = portOf(*agent);
  ASSERT_GT(port, 0);
  json latest;
  ASSERT_TRUE(test::eventually(
      [&] {
        auto r = httpGet(port, "/api/v1/latest");
        if (r.status != 200) return false;
        latest = json::parse(r.body);
        return latest["gpus"].size() == 8u && latest["gpus"][5]["gpu"]["state"] == "lost";
      },
      20s))
      << latest.dump(2);
  for (std::size_t g = 0; g < 8; ++g) EXPECT_EQ(latest["gpus"][g]["idle_while_peers_busy"], json(false)) << g;
  agent.reset();  // NVML may be opened again by the sampler: the start time holds until it stops
  ::unsetenv("GPUWARDEN_SIM_START");
}

// Between two sampling passes every scrape is served from one rendered page: the sampled part
// is byte for byte the same while the per-scrape tail (sample ages, scrape count) moves, in
// plain text, gzip and OpenMetrics alike.
TEST(MetricsPage, ScrapesBetweenTwoSamplesShareThePageAndOnlyTheTailMoves) {
  test::TempDir dir;
  ::setenv("GPUWARDEN_SIM_SCENARIO", GW_SOURCE_DIR "/scenarios/dgx-h100.yaml", 1);
  ::unsetenv("GPUWARDEN_SIM_START");
  ::unsetenv("GPUWARDEN_SIM_SPEED");
  auto agent =
      simAgent(dir.write("agent.yaml", "listen: 127.0.0.1:0\nsampling: {fast_interval: 30s, slow_interval: 60s}\n"),
               dir.path() + "/data");
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(agent->start());
  const int port = portOf(*agent);
  ASSERT_GT(port, 0);
  int waiting_scrapes = 0;  // these count too
  ASSERT_TRUE(test::eventually(
      [&] {
        ++waiting_scrapes;
        return test::select(test::parseExposition(httpGet(port, "/metrics").body), "DCGM_FI_DEV_GPU_TEMP").size() == 8;
      },
      10s));

  auto split = splitAtScrapePart;
  // (A line search: the full exposition parser takes ~1 s per page under the sanitizers.)
  auto scrapes = [](const std::string& body) {
    const std::string name = "\ngpuwarden_scrapes_total ";
    const std::size_t at = body.find(name);
    return at == std::string::npos ? -1.0 : std::stod(body.substr(at + name.size(), 20));
  };
  const std::string a = httpGet(port, "/metrics").body;
  std::this_thread::sleep_for(20ms);
  const std::string b = httpGet(port, "/metrics").body;
  const auto gz = httpGet(port, "/metrics", {{"Accept-Encoding", "gzip"}});
  EXPECT_EQ(gz.headers.find("Content-Encoding")->second, "gzip");
  const std::string c = gunzip(gz.body);
  EXPECT_EQ(split(a).first, split(b).first);
  EXPECT_EQ(split(c).first, split(a).first);
  EXPECT_NE(split(a).second, split(b).second);
  EXPECT_EQ(scrapes(a), waiting_scrapes + 1.0) << "a scrape counts itself";
  EXPECT_EQ(scrapes(b), scrapes(a) + 1);
  EXPECT_EQ(scrapes(c), scrapes(a) + 2);
  EXPECT_NE(split(a).first.find("gpuwarden_gpu_health{"), std::string::npos);  // health series are in the page

  const std::string om_accept = "application/openmetrics-text;version=1.0.0";
  const std::string om1 = httpGet(port, "/metrics", {{"Accept", om_accept}}).body;
  const auto om2gz = httpGet(port, "/metrics", {{"Accept", om_accept}, {"Accept-Encoding", "gzip"}});
  const std::string om2 = gunzip(om2gz.body);
  for (const std::string* om : {&om1, &om2}) {
    EXPECT_TRUE(om->ends_with("# EOF\n"));
    EXPECT_EQ(om->find("# EOF"), om->size() - 6) << "one # EOF, at the end";
    EXPECT_LT(om->find("gpuwarden_gpu_health{"), om->find("# EOF"));
  }
  EXPECT_EQ(split(om1).first, split(om2).first);
  EXPECT_EQ(scrapes(om2), scrapes(om1) + 1);
  agent->stop();
}

// The diag list takes no parameters: an unknown one is refused like on every other route, and
// without one the (still empty) list is served.
TEST_F(AgentHttp, DiagListTakesNoParameters) {
  auto r = httpGet(port_, "/api/v1/diag");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j["count"], 0) << r.body;
  EXPECT_EQ(j["reports"], json::array()) << r.body;
  EXPECT_EQ(httpGet(port_, "/api/v1/diag?since=1h").status, 400);
}

// The service manager's end of $NOTIFY_SOCKET: a datagram socket the agent's notifications queue on.
struct NotifySocket {
  std::string path, error;
  int fd = -1;
  explicit NotifySocket(std::string p) : path(std::move(p)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) {
      error = "path too long: " + path;
      return;
    }
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) error = std::strerror(errno);
  }
  ~NotifySocket() {
    if (fd >= 0) ::close(fd);
  }
  // What has arrived so far, each notification followed by '|'.
  std::string drain() {
    std::string said;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0;)
      said.append(buf, static_cast<std::size_t>(n)) += '|';
    return said;
  }
};

// Under systemd (Type=notify) the agent says STOPPING=1 on SIGTERM, so that `systemctl status`
// shows it deactivating instead of a service that died. The notifications arrive on a datagram
// socket named by $NOTIFY_SOCKET; they are all queued there once the process has exited.
TEST(AgentService, SigtermSaysStoppingToTheServiceManager) {
  test::TempDir dir;
  NotifySocket notify(dir.file("notify"));
  ASSERT_TRUE(notify.error.empty()) << notify.error;
  const std::string& path = notify.path;
  const std::string config = dir.write("agent.yaml", test::kFastAgentConfig);
  test::AgentProcess proc({"serve", "--simulate", "dgx-h100", "--config", config, "--data-dir", dir.path() + "/data"},
                          {{"NOTIFY_SOCKET", path}}, dir.path() + "/agent.log");
  ASSERT_GT(proc.waitListening(), 0) << proc.log();
  proc.signal(SIGTERM);
  const auto rc = proc.wait(30s);  // a bound on failure only
  ASSERT_TRUE(rc.has_value()) << proc.log();
  EXPECT_EQ(*rc, 0) << proc.log();
  const std::string said = notify.drain();
  EXPECT_NE(said.find("READY=1"), std::string::npos) << said;
  EXPECT_NE(said.find("STOPPING=1"), std::string::npos) << said;
}

// On SIGHUP the agent says RELOADING=1 and then READY=1 again (the unit is Type=notify):
// `systemctl status` shows the unit reloading meanwhile, and without the second READY=1 systemd
// would take the agent as still reloading.
TEST(AgentService, SighupSaysReloadingThenReadyAgain) {
  test::TempDir dir;
  NotifySocket notify(dir.file("notify"));
  ASSERT_TRUE(notify.error.empty()) << notify.error;
  const std::string& path = notify.path;
  const std::string config = dir.write("agent.yaml", test::kFastAgentConfig);
  test::AgentProcess proc({"serve", "--simulate", "dgx-h100", "--config", config, "--data-dir", dir.path() + "/data"},
                          {{"NOTIFY_SOCKET", path}}, dir.path() + "/agent.log");
  ASSERT_GT(proc.waitListening(), 0) << proc.log();
  std::string said;
  auto hear = [&] { said += notify.drain(); };
  ASSERT_TRUE(test::eventually(
      [&] {
        hear();
        return said.find("READY=1") != std::string::npos;
      },
      30s))
      << said;
  said.clear();
  proc.signal(SIGHUP);
  const bool again = test::eventually(
      [&] {
        hear();
        const auto r = said.find("RELOADING=1");
        return r != std::string::npos && said.find("READY=1", r) != std::string::npos;
      },
      30s);
  proc.signal(SIGTERM);
  const auto rc = proc.wait(30s);  // a bound on failure only
  EXPECT_TRUE(again) << said << proc.log();
  ASSERT_TRUE(rc.has_value()) << proc.log();
  EXPECT_EQ(*rc, 0) << proc.log();
}

// The operator's "every address of both families": `listen: ["0.0.0.0:P", "[::]:P"]`. Linux makes
// an IPv6 wildcard socket dual-stack unless told otherwise, and a dual-stack [::]:P collides with
// 0.0.0.0:P (EADDRINUSE); the agent's IPv6 listeners are IPv6-only, so both bind and each family
// is served by its own. A kernel without IPv6 is the one allowed skip (tests/allowed_skips.txt).
TEST(AgentListen, BothFamiliesOnOnePortEachBind) {
  const int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (probe < 0 && errno == EAFNOSUPPORT) GTEST_SKIP() << "this kernel has no IPv6";
  ASSERT_GE(probe, 0) << std::strerror(errno);
  // A port free in both families: a dual-stack wildcard bind on port 0 holds it in both.
  sockaddr_in6 any6{};
  any6.sin6_family = AF_INET6;
  any6.sin6_addr = in6addr_any;
  ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&any6), sizeof any6), 0) << std::strerror(errno);
  socklen_t len = sizeof any6;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&any6), &len);
  const int port = ntohs(any6.sin6_port);
  ::close(probe);

  test::TempDir dir;
  const std::string p = std::to_string(port);
  auto agent =
      simAgent(dir.write("agent.yaml", "listen: [\"0.0.0.0:" + p + "\", \"[::]:" + p + "\"]\n"), dgxDataDir(dir));
  ASSERT_TRUE(agent);
  ::setenv("GPUWARDEN_RUNTIME_DIR", dir.file("run").c_str(), 1);
  const Status st = agent->start();
  ::unsetenv("GPUWARDEN_RUNTIME_DIR");
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(agent->boundAddresses(), (std::vector<std::string>{"0.0.0.0:" + p, "[::]:" + p}));

  // Each family answers; over IPv6 on [::1], which only the IPv6 listener can take.
  EXPECT_EQ(httpGet(port, "/healthz").status, 200);
  const int fd6 = ::socket(AF_INET6, SOCK_STREAM, 0);
  ASSERT_GE(fd6, 0);
  timeval tv{5, 0};
  ::setsockopt(fd6, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in6 lo6{};
  lo6.sin6_family = AF_INET6;
  lo6.sin6_addr = in6addr_loopback;
  lo6.sin6_port = htons(static_cast<uint16_t>(port));
  ASSERT_EQ(::connect(fd6, reinterpret_cast<sockaddr*>(&lo6), sizeof lo6), 0) << std::strerror(errno);
  const std::string req = "GET /healthz HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd6, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  std::string reply;
  char buf[1024];
  for (ssize_t n; (n = ::recv(fd6, buf, sizeof buf, 0)) > 0;) reply.append(buf, static_cast<size_t>(n));
  ::close(fd6);
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 200")) << reply;
  agent->stop();
}

// stop() ends the kubelet watcher before the monitor it publishes into: a watcher left running
// would keep asking the kubelet and write pod labels into a freed monitor.
TEST(AgentStop, ThePodResourcesWatcherStopsWithTheAgent) {
  test::TempDir dir;
  const std::string data = dgxDataDir(dir);
  const std::string socket = dir.path() + "/kubelet.sock";
  test::FakeKubelet kubelet(socket);
  ASSERT_TRUE(kubelet.start());
  auto agent = simAgent(dir.write("agent.yaml", "listen: 127.0.0.1:0\nkubernetes:\n  pod_resources_socket: " + socket +
                                                    "\n  refresh_interval: 100ms\n  timeout: 300ms\n"),
                        data);
  ASSERT_TRUE(agent);
  ::setenv("GPUWARDEN_RUNTIME_DIR", dir.file("run").c_str(), 1);
  const Status st = agent->start();
  ::unsetenv("GPUWARDEN_RUNTIME_DIR");
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(test::eventually([&] { return kubelet.listCalls() >= 2; }, 10s));
  agent->stop();
  const int calls = kubelet.listCalls();
  std::this_thread::sleep_for(1s);  // ten refresh periods
  EXPECT_EQ(kubelet.listCalls(), calls);
}

// http.idle_timeout is handed to libmicrohttpd in whole seconds, rounded up: 2500ms is 3 s, so a
// connection quiet for 1.5 s is still served (rounded down, or cut by a second, it would be 1-2 s
// and closed). libmicrohttpd keeps wall time, so this waits on it; only a run slower than the
// machine can be (1.5 s late) could fail it. The connection is then closed within its 3 s.
TEST(AgentHttpLimits, IdleTimeoutIsRoundedUpToWholeSeconds) {
  test::TempDir dir;
  const std::string data = dgxDataDir(dir);
  auto agent = simAgent(dir.write("agent.yaml", "listen: 127.0.0.1:0\nhttp:\n  idle_timeout: 2500ms\n"), data);
  ASSERT_TRUE(agent);
  ::setenv("GPUWARDEN_RUNTIME_DIR", dir.file("run").c_str(), 1);
  const Status st = agent->start();
  ::unsetenv("GPUWARDEN_RUNTIME_DIR");
  ASSERT_TRUE(st.ok()) << st.message();
  const int port = portOf(*agent);
  const int fd = rawConnect(port);
  ASSERT_GE(fd, 0);
  std::this_thread::sleep_for(1500ms);
  const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  char buf[512];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  ASSERT_GT(n, 0) << "closed before its idle timeout";
  EXPECT_TRUE(std::string(buf, static_cast<size_t>(n)).starts_with("HTTP/1.1 200")) << std::string(buf, n);
  // Quiet again: closed by the server (recv sees the end) well inside rawConnect's 5 s receive wait.
  ssize_t last = 0;
  while ((last = ::recv(fd, buf, sizeof buf, 0)) > 0) {
  }
  EXPECT_EQ(last, 0) << "not closed by the server within 5 s: " << std::strerror(errno);
  ::close(fd);
  agent->stop();
}

}  // namespace
}  // namespace gw::server
