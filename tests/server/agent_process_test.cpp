// The real `gpuwarden serve` on the simulator's fault scenarios, stepped through each fault on
// the simulator's file clock (GPUWARDEN_SIM_CLOCK=file:PATH): a lost GPU, a hung NVML call, the
// driver going away and coming back; kill -9 in the middle of writing history, and SIGHUP with a
// bad configuration.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "test_util.h"

namespace gw::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct Running {
  TempDir dir;
  std::unique_ptr<AgentProcess> proc;
  int port = 0;
  std::string config;

  Running(const std::string& scenario, std::map<std::string, std::string> env,
          const std::string& config_text = kFastAgentConfig, const std::string& data_dir = "") {
    config = dir.write("agent.yaml", config_text);
    const std::string data = data_dir.empty() ? dir.path() + "/data" : data_dir;
    proc = std::make_unique<AgentProcess>(
        std::vector<std::string>{"serve", "--simulate", scenario, "--config", config, "--data-dir", data}, env,
        dir.path() + "/agent.log");
    port = proc->waitListening();
  }
  std::vector<Sample> metrics() const {
    auto r = httpGet(port, "/metrics", {}, 2000ms);
    return r.status == 200 ? parseExposition(r.body) : std::vector<Sample>{};
  }
  double value(const std::vector<Sample>& s, const std::string& name, std::map<std::string, std::string> labels) const {
    auto v = select(s, name, labels);
    return v.size() == 1 ? v[0].value : -1;
  }
};

// Waits for a state of the agent: only a failure takes this long.
constexpr auto kStateBound = 30s;
const std::vector<int> kAllGpus{0, 1, 2, 3, 4, 5, 6, 7};

// /api/v1/gpus; null when the agent did not answer within 10 s (a bound on failure).
json gpusApi(int port) {
  auto r = httpGet(port, "/api/v1/gpus", {}, 10s);
  return r.status == 200 ? json::parse(r.body, nullptr, false) : json();
}

// Whether each GPU of `which` is up with a sampling pass that ended after `after_ms` (wall ms):
// its values are fresh, read after that instant.
bool sampledAfter(int port, const std::vector<int>& which, std::int64_t after_ms) {
  const json j = gpusApi(port);
  if (!j.is_object() || !j.contains("gpus") || !j["gpus"].is_array()) return false;
  for (int g : which) {
    if (static_cast<std::size_t>(g) >= j["gpus"].size()) return false;
    const json& v = j["gpus"][g];
    if (v["state"] != "up" || !v["last_sample_ms"].is_number_integer() ||
        v["last_sample_ms"].get<std::int64_t>() <= after_ms)
      return false;
  }
  return true;
}

// The fault tests step the simulator through each fault by writing its clock file
// (GPUWARDEN_SIM_CLOCK=file:PATH) and wait for the agent's states; no step races wall time.

// Plain HTTP is said to be open to the network only when it is: on loopback the agent does not
// warn, on every interface it does.
TEST(AgentStart, PlainHttpBeyondLoopbackIsWarnedAbout) {
  // The warning would come before the control socket's line: the log is read once that is in.
  auto started = [](const Running& r) { return r.proc->log().find("control socket ") != std::string::npos; };
  Running local("dgx-h100", {});
  ASSERT_GT(local.port, 0) << local.proc->log();
  ASSERT_TRUE(eventually([&] { return started(local); }, kStateBound)) << local.proc->log();
  EXPECT_NE(local.proc->log().find("listening on 127.0.0.1:"), std::string::npos) << local.proc->log();
  EXPECT_EQ(local.proc->log().find("serving plain HTTP beyond this machine"), std::string::npos) << local.proc->log();
  std::string open_config = kFastAgentConfig;
  open_config.replace(open_config.find("127.0.0.1:0"), 11, "0.0.0.0:0");
  Running open("dgx-h100", {}, open_config);
  ASSERT_GT(open.port, 0) << open.proc->log();
  ASSERT_TRUE(eventually([&] { return started(open); }, kStateBound)) << open.proc->log();
  EXPECT_NE(open.proc->log().find("serving plain HTTP beyond this machine"), std::string::npos) << open.proc->log();
}

TEST(AgentFaults, LostGpuIsMarkedAndTheOthersStayFresh) {
  TempDir clock_dir;
  SimClockFile clock(clock_dir.file("sim-time"), 5);  // GPU 3 falls off the bus at t=20 s
  Running a("fault-gpu-lost", {{"GPUWARDEN_SIM_CLOCK", clock.env()}});
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_TRUE(eventually([&] { return sampledAfter(a.port, kAllGpus, 0); }, kStateBound)) << a.proc->log();
  clock.set(25);
  ASSERT_TRUE(eventually(
      [&] {
        return a.value(a.metrics(), "gpuwarden_gpu_state", {{"gpu", "3"}, {"state", "lost"}}) == 1;
      },
      kStateBound))
      << a.proc->log();
  // The other seven stay fresh: each completes a sampling pass after GPU 3 was seen lost.
  const std::int64_t lost_seen = wallMsNow();
  ASSERT_TRUE(eventually(
      [&] {
        return sampledAfter(a.port, {0, 1, 2, 4, 5, 6, 7}, lost_seen);
      },
      kStateBound))
      << gpusApi(a.port).dump(2) << "\n"
      << a.proc->log();
  auto m = a.metrics();
  EXPECT_EQ(a.value(m, "gpuwarden_gpu_up", {{"gpu", "3"}}), 0);
  EXPECT_EQ(a.value(m, "gpuwarden_gpu_state", {{"gpu", "3"}, {"state", "up"}}), 0);
  // GPU 3's values are no longer served; the other seven are.
  EXPECT_TRUE(select(m, "DCGM_FI_DEV_GPU_TEMP", {{"gpu", "3"}}).empty());
  EXPECT_EQ(select(m, "DCGM_FI_DEV_GPU_TEMP").size(), 7u);
  for (int g : {0, 1, 2, 4, 5, 6, 7})
    EXPECT_EQ(a.value(m, "gpuwarden_gpu_state", {{"gpu", std::to_string(g)}, {"state", "up"}}), 1) << g;
  EXPECT_EQ(gpusApi(a.port)["gpus"][3]["state"], "lost");
  EXPECT_EQ(httpGet(a.port, "/healthz").status, 200);  // one lost GPU is not an unhealthy agent
  EXPECT_NE(a.proc->log().find("-> lost"), std::string::npos);
}

// Moves the clock into fault-hang's window (from t=10 s every NVML call on GPU 5 blocks for 30 s of
// wall time, and the clock stays there, so GPU 5 stays hung) and waits until GPU 5 is stalled.
void hangGpu5(const SimClockFile& clock, const Running& a) {
  clock.set(12);
  ASSERT_TRUE(eventually(
      [&] {
        return a.value(a.metrics(), "gpuwarden_gpu_state", {{"gpu", "5"}, {"state", "stalled"}}) == 1;
      },
      kStateBound))
      << a.proc->log();
}

TEST(AgentFaults, HungCallNeverSlowsTheScrape) {
  TempDir clock_dir;
  SimClockFile clock(clock_dir.file("sim-time"), 5);
  Running a("fault-hang", {{"GPUWARDEN_SIM_CLOCK", clock.env()}});
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_TRUE(eventually([&] { return sampledAfter(a.port, kAllGpus, 0); }, kStateBound)) << a.proc->log();
  ASSERT_NO_FATAL_FAILURE(hangGpu5(clock, a));
  // While GPU 5's calls hang, the scrape and the API answer. The client's 10 s timeout bounds a
  // failure (a scrape that waited on the hung call would take up to its 30 s); it is no latency
  // target: bench/agent/latency.sh measures the latency.
  for (int i = 0; i < 3; ++i) {
    auto r = httpGet(a.port, "/metrics", {}, 10s);
    ASSERT_EQ(r.status, 200) << "scrape " << i;
    auto m = parseExposition(r.body);
    EXPECT_EQ(a.value(m, "gpuwarden_gpu_state", {{"gpu", "5"}, {"state", "stalled"}}), 1);
    EXPECT_EQ(select(m, "DCGM_FI_DEV_GPU_TEMP").size(), 7u);
  }
  auto api = httpGet(a.port, "/api/v1/gpus", {}, 10s);
  ASSERT_EQ(api.status, 200);
  EXPECT_EQ(json::parse(api.body)["gpus"][5]["state"], "stalled");
  // The other seven keep fresh values: each completes a sampling pass after GPU 5 was seen stalled.
  const std::int64_t stalled_seen = wallMsNow();
  EXPECT_TRUE(eventually(
      [&] {
        return sampledAfter(a.port, {0, 1, 2, 3, 4, 6, 7}, stalled_seen);
      },
      kStateBound))
      << gpusApi(a.port).dump(2) << "\n"
      << a.proc->log();
  EXPECT_EQ(gpusApi(a.port)["gpus"][5]["state"], "stalled");
}

// Stopping does not wait for a hung call. The bound comes from the fault, not from a latency
// target: every hung call began after the test moved the clock into the hang and lasts 30 s, so a
// stop that waited for one could not end before `hang_from` + 30 s; the agent's own stop takes
// about a second (bench/agent/latency.sh measures it).
TEST(AgentFaults, StopDoesNotWaitForAHungCall) {
  TempDir clock_dir;
  SimClockFile clock(clock_dir.file("sim-time"), 5);
  Running a("fault-hang", {{"GPUWARDEN_SIM_CLOCK", clock.env()}});
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_TRUE(eventually([&] { return sampledAfter(a.port, kAllGpus, 0); }, kStateBound)) << a.proc->log();
  const auto hang_from = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(hangGpu5(clock, a));
  a.proc->signal(SIGTERM);
  const auto before_the_hang_ends =
      std::chrono::duration_cast<std::chrono::milliseconds>(hang_from + 29s - std::chrono::steady_clock::now());
  auto rc = a.proc->wait(before_the_hang_ends);
  ASSERT_TRUE(rc.has_value()) << "still running when the first hung call could end\n" << a.proc->log();
  EXPECT_EQ(*rc, 0) << a.proc->log();
}

TEST(AgentFaults, DriverReloadIsSurvived) {
  TempDir clock_dir;
  SimClockFile clock(clock_dir.file("sim-time"), 5);  // the driver is away from t=10 s to t=20 s
  Running a("fault-driver-reload", {{"GPUWARDEN_SIM_CLOCK", clock.env()}});
  ASSERT_GT(a.port, 0) << a.proc->log();
  std::set<std::string> before;
  ASSERT_TRUE(eventually(
      [&] {
        before.clear();
        for (const auto& s : select(a.metrics(), "DCGM_FI_DEV_GPU_TEMP")) before.insert(s.labels.at("UUID"));
        return before.size() == 8u;
      },
      kStateBound))
      << a.proc->log();
  // The driver goes away: /healthz says so (503 with a reason), /metrics still answers.
  clock.set(12);
  ASSERT_TRUE(eventually([&] { return httpGet(a.port, "/healthz").status == 503; }, kStateBound)) << a.proc->log();
  auto h = httpGet(a.port, "/healthz");
  EXPECT_EQ(h.status, 503);
  EXPECT_FALSE(json::parse(h.body)["reason"].get<std::string>().empty());
  // dcgm-exporter's path, which its Helm chart probes, answers the same.
  auto h2 = httpGet(a.port, "/health");
  EXPECT_EQ(h2.status, 503);
  EXPECT_FALSE(json::parse(h2.body)["reason"].get<std::string>().empty());
  auto during = httpGet(a.port, "/metrics");
  EXPECT_EQ(during.status, 200);
  EXPECT_EQ(a.value(parseExposition(during.body), "gpuwarden_driver_up", {}), 0);
  // It comes back: re-initialised, same UUIDs, fresh values (sampled after the driver returned).
  const std::int64_t back_at = wallMsNow();
  clock.set(25);
  ASSERT_TRUE(eventually(
      [&] {
        auto m = a.metrics();
        const auto up = select(m, "gpuwarden_gpu_state", {{"state", "up"}});
        return a.value(m, "gpuwarden_nvml_reinits_total", {}) >= 1 && up.size() == 8 &&
               std::all_of(up.begin(), up.end(), [](const Sample& s) { return s.value == 1; });
      },
      kStateBound))
      << a.proc->log();
  ASSERT_TRUE(eventually([&] { return sampledAfter(a.port, kAllGpus, back_at); }, kStateBound))
      << gpusApi(a.port).dump(2) << "\n"
      << a.proc->log();
  auto m = a.metrics();
  std::set<std::string> after;
  for (const auto& s : select(m, "DCGM_FI_DEV_GPU_TEMP")) after.insert(s.labels.at("UUID"));
  EXPECT_EQ(after, before);
  EXPECT_GE(a.value(m, "gpuwarden_nvml_reinits_total", {}), 1);
  EXPECT_EQ(a.value(m, "gpuwarden_driver_up", {}), 1);
  EXPECT_EQ(httpGet(a.port, "/healthz").status, 200);
}

TEST(AgentFaults, KillNineKeepsFlushedHistory) {
  TempDir data;
  std::int64_t last_before_kill = 0;
  std::string uuid;
  {
    Running a("dgx-h100", {}, kFastAgentConfig, data.path());
    ASSERT_GT(a.port, 0) << a.proc->log();
    json j;
    ASSERT_TRUE(eventually(
        [&] {
          auto r = httpGet(a.port, "/api/v1/history?gpu=0&field=gpu_temp&since=1m");
          j = r.status == 200 ? json::parse(r.body, nullptr, false) : json();
          return j.is_object() && j["points"].is_array() && j["points"].size() >= 5u;
        },
        kStateBound))
        << a.proc->log();
    last_before_kill = j["points"].back()[0];
    uuid = j["gpu"]["uuid"];
    std::this_thread::sleep_for(1200ms);  // > flush_interval: what we saw is on disk now
    a.proc->signal(SIGKILL);
    ASSERT_TRUE(a.proc->wait(5s).has_value());
  }
  const std::string db = data.path() + "/history.db";
  // The database is intact after kill -9.
  FILE* p = ::popen(("sqlite3 '" + db + "' 'PRAGMA integrity_check' 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256] = {0};
  std::string integrity;
  while (fgets(buf, sizeof buf, p)) integrity += buf;
  ::pclose(p);
  EXPECT_EQ(integrity, "ok\n");
  // A new agent on the same data dir has the history from before the kill.
  Running b("dgx-h100", {}, kFastAgentConfig, data.path());
  ASSERT_GT(b.port, 0) << b.proc->log();
  auto j = json::parse(httpGet(b.port, "/api/v1/history?gpu=" + uuid + "&field=gpu_temp&since=2m").body);
  std::int64_t max_old = 0;
  std::size_t old_points = 0;
  for (const auto& pt : j["points"]) {
    if (pt[0].get<std::int64_t>() <= last_before_kill) {
      ++old_points;
      max_old = std::max<std::int64_t>(max_old, pt[0]);
    }
  }
  EXPECT_GE(old_points, 5u);
  EXPECT_EQ(max_old, last_before_kill);
}

// An existing dcgm-exporter setup carried over: its counters file (serve -f) picks the fields, the
// node's name comes from NODE_NAME, /health answers.
TEST(AgentCli, ADcgmExporterCountersFileAndNodeName) {
  TempDir d;
  const std::string csv = d.write("default-counters.csv",
                                  "# DCGM FIELD, Prometheus metric type, help message\n"
                                  "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n"
                                  "DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).\n"
                                  "DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU License status\n");
  const std::string config = d.write("agent.yaml", kFastAgentConfig);
  AgentProcess p({"serve", "--simulate", "dgx-h100", "--config", config, "--data-dir", d.path() + "/data", "-f", csv},
                 {{"NODE_NAME", "k8s-gpu-7"}}, d.path() + "/agent.log");
  const int port = p.waitListening();
  ASSERT_GT(port, 0) << p.log();
  EXPECT_EQ(httpGet(port, "/health").status, 200);
  std::vector<Sample> m;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = httpGet(port, "/metrics", {}, 2000ms);
        m = r.status == 200 ? parseExposition(r.body) : std::vector<Sample>{};
        return select(m, "DCGM_FI_DEV_POWER_USAGE").size() == 8u;
      },
      kStateBound))
      << p.log();
  std::set<std::string> names;
  for (const auto& s : m)
    if (s.name.rfind("DCGM_FI_", 0) == 0) names.insert(s.name);
  // The two fields of the file (the Xid gauge is the health service's, always there).
  EXPECT_EQ(names,
            (std::set<std::string>{"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_XID_ERRORS"}));
  for (const auto& s : select(m, "DCGM_FI_DEV_GPU_TEMP")) {
    EXPECT_EQ(s.labels.at("Hostname"), "k8s-gpu-7");
    EXPECT_EQ(s.labels.count("DCGM_FI_DRIVER_VERSION"), 0u);  // the file has no DCGM_FI_DRIVER_VERSION line
  }
  EXPECT_NE(p.log().find("counters file: 1 field(s) gpuwarden does not collect, left out: " + csv +
                         ":4 DCGM_FI_DEV_VGPU_LICENSE_STATUS"),
            std::string::npos)
      << p.log();
}

TEST(AgentSignals, SighupWithBadConfigKeepsTheOld) {
  Running a("dgx-h100", {}, std::string(kFastAgentConfig) + "metrics:\n  naming: dcgm\n");
  ASSERT_GT(a.port, 0) << a.proc->log();
  // The port opens before the first sampling pass has published anything.
  ASSERT_TRUE(eventually([&] { return !select(a.metrics(), "DCGM_FI_DEV_GPU_TEMP").empty(); }, 10s)) << a.proc->log();
  // A bad file: refused, logged with file:line: field, old config still serving.
  std::ofstream(a.config) << "listen: 127.0.0.1:0\nmetrics:\n  naming: fancy\n";
  a.proc->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return a.proc->log().find("reload refused") != std::string::npos; }, 5s))
      << a.proc->log();
  EXPECT_NE(a.proc->log().find(a.config + ":3: metrics.naming:"), std::string::npos) << a.proc->log();
  EXPECT_FALSE(select(a.metrics(), "DCGM_FI_DEV_GPU_TEMP").empty());
  EXPECT_EQ(httpGet(a.port, "/healthz").status, 200);
  // A good file: applied without a restart (native names now).
  std::ofstream(a.config) << kFastAgentConfig << "metrics:\n  naming: native\n";
  a.proc->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return !select(a.metrics(), "gpuwarden_gpu_temperature_celsius").empty(); }, 5s))
      << a.proc->log();
  EXPECT_TRUE(select(a.metrics(), "DCGM_FI_DEV_GPU_TEMP").empty());
  // SIGTERM: clean exit 0 with the store flushed.
  a.proc->signal(SIGTERM);
  auto rc = a.proc->wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0);
  EXPECT_NE(a.proc->log().find("stopped"), std::string::npos);
}

TEST(AgentCli, BadConfigAndBusyPortFailAtStart) {
  TempDir d;
  const std::string bad = d.write("bad.yaml", "sampling:\n  fast_interval: soon\n");
  AgentProcess p({"serve", "--simulate", "dgx-h100", "--config", bad}, {}, d.path() + "/log");
  auto rc = p.wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 2);
  EXPECT_NE(p.log().find(bad + ":2: sampling.fast_interval:"), std::string::npos) << p.log();

  Running a("dgx-h100", {});
  ASSERT_GT(a.port, 0);
  AgentProcess q({"serve", "--simulate", "dgx-h100", "--listen", "127.0.0.1:" + std::to_string(a.port), "--data-dir",
                  d.path() + "/data2"},
                 {}, d.path() + "/log2");
  auto rc2 = q.wait(10s);
  ASSERT_TRUE(rc2.has_value());
  EXPECT_EQ(*rc2, 1);
  EXPECT_NE(q.log().find("cannot listen on"), std::string::npos) << q.log();
}

// A directory (or FIFO) given as --config used to read as an empty file: all defaults, and a SIGHUP
// then reset a running agent's intervals. Refused at start and on reload.
TEST(AgentCli, ConfigThatIsNotAFileIsRefused) {
  TempDir d;
  std::filesystem::create_directories(d.path() + "/conf.d");
  AgentProcess p(
      {"serve", "--simulate", "dgx-h100", "--config", d.path() + "/conf.d", "--data-dir", d.path() + "/data"}, {},
      d.path() + "/log");
  auto rc = p.wait(10s);
  ASSERT_TRUE(rc.has_value()) << p.log();
  EXPECT_EQ(*rc, 2) << p.log();
  EXPECT_NE(p.log().find("must be a regular file"), std::string::npos) << p.log();

  Running a("dgx-h100", {}, std::string(kFastAgentConfig) + "metrics:\n  naming: native\n");
  ASSERT_GT(a.port, 0) << a.proc->log();
  std::filesystem::remove(a.config);
  std::filesystem::create_directories(a.config);  // the file replaced by a directory
  a.proc->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return a.proc->log().find("reload refused") != std::string::npos; }, 5s))
      << a.proc->log();
  EXPECT_NE(a.proc->log().find("must be a regular file"), std::string::npos) << a.proc->log();
  // Still native (waited for: the first sampling pass may not have published yet).
  EXPECT_TRUE(eventually([&] { return !select(a.metrics(), "gpuwarden_gpu_temperature_celsius").empty(); }, 10s));
}

// Folders 0750 and files 0640 in the data folder, whatever umask the agent is started with.
// http.threads is the size of libmicrohttpd's pool: 1 is its single polling thread, and every
// larger value that many workers, 2 included (the smallest pool, where an off-by-one would leave
// one thread for every connection). libmicrohttpd names its threads.
TEST(AgentHttp, ThreadsIsTheSizeOfTheServersPool) {
  auto mhdThreads = [](pid_t pid) {
    std::map<std::string, int> n;
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
      std::string comm;
      std::getline(std::ifstream(t.path() / "comm"), comm);
      if (comm.starts_with("MHD-")) ++n[comm];
    }
    return n;
  };
  for (unsigned threads : {1u, 2u, 3u}) {
    TempDir d;
    const std::string config =
        d.write("agent.yaml", std::string(kFastAgentConfig) + "http:\n  threads: " + std::to_string(threads) + "\n");
    AgentProcess p({"serve", "--simulate", "dgx-h100", "--config", config, "--data-dir", d.path() + "/data"}, {},
                   d.path() + "/agent.log");
    ASSERT_GT(p.waitListening(), 0) << p.log();
    const auto want = threads == 1 ? std::map<std::string, int>{{"MHD-single", 1}}
                                   : std::map<std::string, int>{{"MHD-worker", static_cast<int>(threads)}};
    // Each thread names itself once it runs, which may be just after the agent says it listens:
    // wait for the names (a wrong count still fails, after the bound).
    eventually([&] { return mhdThreads(p.pid()) == want; }, 10s);
    EXPECT_EQ(mhdThreads(p.pid()), want) << "threads: " << threads;
  }
}

TEST(AgentFiles, DataFolderModesHoldUnderUmask000) {
  TempDir d;
  const std::string root = d.path() + "/root";
  std::filesystem::create_directories(root + "/dev");
  std::ofstream(root + "/dev/kmsg")
      << "4,100,5000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=77, name=train, Graphics Exception\n";
  const std::string config = d.write("agent.yaml", kFastAgentConfig);
  const std::string data = d.path() + "/data";
  const mode_t old = ::umask(0);  // the agent inherits it, as from a shell's `umask 000`
  AgentProcess p({"--root", root, "serve", "--simulate", "dgx-h100", "--config", config, "--data-dir", data}, {},
                 d.path() + "/agent.log");
  ::umask(old);
  ASSERT_GT(p.waitListening(), 0) << p.log();
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(data + "/events.jsonl"); }, 10s)) << p.log();
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(data + "/history.db-wal"); }, 10s)) << p.log();
  auto mode = [](const std::filesystem::path& f) {
    struct stat st {};
    return ::lstat(f.c_str(), &st) == 0 ? (st.st_mode & 07777) : 07777;
  };
  std::set<std::string> seen;
  auto check = [&](const char* when) {
    EXPECT_EQ(mode(data), 0750u) << when;
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(data, ec)) {
      const std::string name = e.path().lexically_relative(data).string();
      seen.insert(name);
      EXPECT_EQ(mode(e.path()), e.is_directory() ? 0750u : 0640u) << name << " " << when;
    }
  };
  check("while running");  // the -wal and -shm files exist only now
  p.signal(SIGTERM);
  auto rc = p.wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0) << p.log();
  check("after a clean stop");
  for (const char* f : {".lock", "events.jsonl", "xid-counters.json", "kmsg-position.json", "history.db",
                        "history.db-wal", "incidents.db"})
    EXPECT_TRUE(seen.count(f)) << f << " was not created";
}

// A command that changes the folder while no agent runs (under the folder's lock) keeps the same
// modes under umask 000: the lock sets the umask, not only the agent's start. The incidents are
// those a stopped agent left (the golden database: the two open incidents of one GPU are resolved here).
TEST(AgentFiles, ACliWritingWithoutAnAgentKeepsTheModesUnderUmask000) {
  TempDir d;
  const std::string data = d.path() + "/data";
  std::filesystem::create_directories(data);
  ::chmod(data.c_str(), 0750);
  std::filesystem::copy_file(std::string(GW_SOURCE_DIR) + "/tests/golden/incidents-v1.db", data + "/incidents.db");
  ::chmod((data + "/incidents.db").c_str(), 0640);
  const mode_t old = ::umask(0);
  auto [rc, out] = runShell("GPUWARDEN_RUNTIME_DIR=" + d.path() + "/run " + std::string(GW_BINARY) +
                            " incidents set-healthy GPU-0a0a0a0a-0000-4000-8000-000000000001 --data-dir " + data);
  ::umask(old);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("2 incident(s) of GPU-0a0a0a0a-0000-4000-8000-000000000001 resolved"), std::string::npos) << out;
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(data)) {
    struct stat st {};
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u) << e.path();
    ++files;
  }
  EXPECT_GE(files, 2u);  // .lock and incidents.db at least
}

// $GPUWARDEN_DATA_DIR moves the agent's data folder when no --data-dir or file names one, and
// every command that asks an agent looks for it there: one variable, one folder, for all of them.
TEST(AgentFiles, GpuwardenDataDirMovesTheAgentAndTheCommandsThatAskIt) {
  TempDir d;
  const std::string data = d.path() + "/data", run = d.path() + "/run";
  AgentProcess a({"serve", "--simulate", "dgx-h100", "--listen", "127.0.0.1:0"},
                 {{"GPUWARDEN_DATA_DIR", data}, {"GPUWARDEN_RUNTIME_DIR", run}}, d.path() + "/agent.log");
  ASSERT_GT(a.waitListening(), 0) << a.log();
  EXPECT_NE(a.log().find("data dir " + data + ","), std::string::npos) << a.log();
  EXPECT_TRUE(std::filesystem::exists(data + "/.lock"));
  const std::string env = "GPUWARDEN_DATA_DIR=" + data + " GPUWARDEN_RUNTIME_DIR=" + run + " ";
  auto [rc, out] = runShell(env + GW_BINARY + " events --json");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(json::parse(out)["source"], "agent " + data) << out;
  const std::string health = runShell(env + GW_BINARY + " health").second;  // its verdict may still be unknown
  EXPECT_NE(health.find("[agent " + data + "]"), std::string::npos) << health;
  // --help names the variable beside the built-in folder.
  auto [h, help] = runShell(std::string(GW_BINARY) + " events --help");
  EXPECT_EQ(h, 0) << help;
  EXPECT_NE(help.find("(default $GPUWARDEN_DATA_DIR or /var/lib/gpuwarden)"), std::string::npos) << help;
}

// A FIFO as the kernel log: the agent reads it as a stream and the Xid lands in the event log.
TEST(AgentFiles, FifoKernelLogIsRead) {
  TempDir d;
  const std::string root = d.path() + "/root";
  std::filesystem::create_directories(root + "/dev");
  const std::string fifo = root + "/dev/kmsg";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string config = d.write("agent.yaml", kFastAgentConfig);
  const std::string data = d.path() + "/data";
  AgentProcess p({"--root", root, "serve", "--simulate", "dgx-h100", "--config", config, "--data-dir", data}, {},
                 d.path() + "/agent.log");
  ASSERT_GT(p.waitListening(), 0) << p.log();
  int fd = -1;  // ENXIO until the agent has the FIFO open for reading
  ASSERT_TRUE(eventually([&] { return (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; }, 10s))
      << p.log();
  const std::string lines =
      "6,1,1000,-;usb 1-1: new device\n4,2,2000,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=77, name=train, MMU Fault\n";
  ASSERT_EQ(::write(fd, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  ::close(fd);
  ASSERT_TRUE(
      eventually([&] { return readFile(data + "/events.jsonl").find("\"code\":31") != std::string::npos; }, 10s))
      << p.log();
  p.signal(SIGTERM);
  auto rc = p.wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0) << p.log();
}

// Without a driver NVML never opens, yet an Xid in the kernel log is still recorded; no GPU can
// be told from its bus id, so the event names none: index -1, the "unknown" of every event reader.
TEST(AgentFiles, AKernelLogXidWithoutNvmlNamesNoGpu) {
  TempDir d;
  const std::string root = d.path() + "/root";
  std::filesystem::create_directories(root + "/dev");
  std::ofstream(root + "/dev/kmsg") << "4,2,2000,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=77, name=train, MMU Fault\n";
  const std::string config = d.write("agent.yaml", kFastAgentConfig);
  const std::string data = d.path() + "/data";
  AgentProcess p({"--root", root, "serve", "--simulate", "no-driver", "--config", config, "--data-dir", data}, {},
                 d.path() + "/agent.log");
  ASSERT_GT(p.waitListening(), 0) << p.log();
  json event;
  ASSERT_TRUE(eventually(
      [&] {
        std::istringstream lines(readFile(data + "/events.jsonl"));
        for (std::string l; std::getline(lines, l);) {
          const json j = json::parse(l, nullptr, false);
          if (j.is_object() && j.value("code", 0) == 31) event = j;
        }
        return !event.is_null();
      },
      10s))
      << p.log();
  EXPECT_EQ(event["gpu"], -1) << event.dump();
  EXPECT_EQ(event["uuid"], "") << event.dump();
  p.signal(SIGTERM);
  auto rc = p.wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0) << p.log();
}

// An Ampere node (mig-a100): NVML's GPM profiling is Hopper and newer, so there are no
// DCGM_FI_PROF_* series, no error, and the agent says so once per GPU however many passes it makes
// (GPU0's four MIG devices included), not every tick.
TEST(AgentProfiling, PreHopperGpusHaveNoProfilingMetricsAndSaySoOnce) {
  Running a("mig-a100", {});
  ASSERT_GT(a.port, 0) << a.proc->log();
  // Ten passes of both GPUs (and of GPU0's MIG devices: the same worker samples them).
  ASSERT_TRUE(eventually(
      [&] {
        const json j = gpusApi(a.port);
        if (!j.is_object() || !j["gpus"].is_array() || j["gpus"].size() != 2) return false;
        for (const auto& g : j["gpus"])
          if (!g["samples"].is_number_unsigned() || g["samples"].get<unsigned>() < 10) return false;
        return true;
      },
      kStateBound))
      << a.proc->log();
  const auto metrics = a.metrics();
  ASSERT_FALSE(metrics.empty());
  for (const auto& s : metrics) EXPECT_EQ(s.name.rfind("DCGM_FI_PROF_", 0), std::string::npos) << s.name;
  EXPECT_GT(a.value(metrics, "DCGM_FI_DEV_GPU_TEMP", {{"gpu", "1"}}), 0);  // the rest is sampled
  const std::string log = a.proc->log();
  EXPECT_EQ(occurrences(log, "no profiling metrics"), 2u) << log;
  // Said as information: a GPU without GPM is not a fault.
  EXPECT_NE(log.find("gpuwarden info: GPU 0 (GPU-"), std::string::npos) << log;
  EXPECT_NE(log.find("gpuwarden info: GPU 1 (GPU-"), std::string::npos) << log;
  EXPECT_NE(log.find("does not support GPM"), std::string::npos) << log;
}

// NVML allocates the first of a GPU's two GPM samples and refuses the second (out of memory): the
// GPU goes on without profiling metrics, says why once, and its other fields are sampled.
TEST(AgentProfiling, ASecondGpmSampleRefusedLeavesTheGpuWithoutProfilingMetrics) {
  TempDir d;
  const std::string scenario = d.write("gpm-alloc.yaml", R"(
count: 1
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: call_error, call: nvmlGpmSampleAlloc, error: 20, after_calls: 1}
)");
  Running a(scenario, {});
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_TRUE(eventually(
      [&] {
        const json j = gpusApi(a.port);
        return j.is_object() && j["gpus"].is_array() && j["gpus"].size() == 1 &&
               j["gpus"][0]["samples"].is_number_unsigned() && j["gpus"][0]["samples"].get<unsigned>() >= 10;
      },
      kStateBound))
      << a.proc->log();
  const auto metrics = a.metrics();
  ASSERT_FALSE(metrics.empty());
  for (const auto& s : metrics) EXPECT_EQ(s.name.rfind("DCGM_FI_PROF_", 0), std::string::npos) << s.name;
  EXPECT_GT(a.value(metrics, "DCGM_FI_DEV_GPU_TEMP", {{"gpu", "0"}}), 0);
  const std::string log = a.proc->log();
  EXPECT_EQ(occurrences(log, "no profiling metrics"), 1u) << log;
  EXPECT_NE(log.find("no profiling metrics (DCGM_FI_PROF_*): nvmlGpmSampleAlloc"), std::string::npos) << log;
}

// NVML's event calls fail twice while the rest of NVML works (the sampler sees no outage): the
// agent warns of each outage once, and again at the second, after the events came back between.
TEST(AgentFaults, EachNvmlEventsOutageIsWarnedOfOnce) {
  TempDir clock_dir;
  SimClockFile clock(clock_dir.file("sim-time"), 5);
  TempDir d;
  const std::string scenario = d.write("events-outages.yaml", R"(
count: 2
defaults: {profile: H100-SXM5-80GB, workload: training}
faults:
  - {type: call_error, call: nvmlEventSetCreate, error: 999, at: 0, duration: 20}
  - {type: call_error, call: nvmlEventSetWait, error: 1, at: 30, duration: 30}
  - {type: call_error, call: nvmlEventSetCreate, error: 999, at: 30, duration: 30}
)");
  Running a(scenario, {{"GPUWARDEN_SIM_CLOCK", clock.env()}});
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string unavailable = "NVML events unavailable: ";
  const std::string registered = "NVML events: 2 GPUs registered";
  ASSERT_TRUE(eventually([&] { return occurrences(a.proc->log(), unavailable) == 1; }, kStateBound)) << a.proc->log();
  // Back (retried every 10 s): registered, and the warning is not repeated while it was away.
  clock.set(25);
  ASSERT_TRUE(eventually([&] { return occurrences(a.proc->log(), registered) == 1; }, kStateBound)) << a.proc->log();
  EXPECT_EQ(occurrences(a.proc->log(), unavailable), 1u) << a.proc->log();
  // Away again: the waits fail, the source is restarted and cannot be: a second warning.
  clock.set(35);
  ASSERT_TRUE(eventually([&] { return occurrences(a.proc->log(), unavailable) == 2; }, kStateBound)) << a.proc->log();
  const std::string log = a.proc->log();
  EXPECT_NE(log.find("NVML events stopped: "), std::string::npos) << log;
  EXPECT_LT(log.find("NVML events stopped: "), log.rfind(unavailable)) << log;
  EXPECT_NE(log.find("nvmlEventSetCreate"), std::string::npos) << log;
}

// One JSON shape per object: /api/v1/gpus nests under each GPU's "inventory" the very object
// `gpuwarden discovery --json` prints for it, MIG devices included.
TEST(AgentApi, GpuInventoryHasTheKeysOfDiscovery) {
  Running a("mig-a100", {});
  ASSERT_GT(a.port, 0) << a.proc->log();
  json api;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = httpGet(a.port, "/api/v1/gpus", {}, 2000ms);
        if (r.status != 200) return false;
        api = json::parse(r.body);
        for (const auto& g : api["gpus"])
          if (g["inventory"].is_null()) return false;
        return !api["gpus"].empty();
      },
      10s))
      << api.dump(2) << "\n"
      << a.proc->log();
  FILE* p = ::popen((std::string(GW_BINARY) + " --simulate mig-a100 discovery --json 2>/dev/null").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ASSERT_EQ(::pclose(p), 0) << out;
  const json disc = json::parse(out);

  auto keys = [](const json& o) {
    std::set<std::string> k;
    for (const auto& [name, v] : o.items()) k.insert(name);
    return k;
  };
  ASSERT_EQ(disc["gpus"].size(), api["gpus"].size());
  std::size_t migs = 0;
  for (std::size_t i = 0; i < disc["gpus"].size(); ++i) {
    const json& d = disc["gpus"][i];
    const json& g = api["gpus"][i];
    const json& inv = g["inventory"];
    EXPECT_EQ(keys(d), keys(inv)) << d.dump() << "\n" << inv.dump();
    for (const char* k : {"index", "uuid", "name", "pci_bus_id"}) {
      EXPECT_EQ(d[k], inv[k]) << k;
      EXPECT_EQ(d[k], g[k]) << k << ": the sampler's identity and the inventory name it the same";
    }
    ASSERT_EQ(d["mig_devices"].size(), inv["mig_devices"].size());
    ASSERT_EQ(d["mig_devices"].size(), g["mig_devices"].size());
    for (std::size_t m = 0; m < d["mig_devices"].size(); ++m) {
      EXPECT_EQ(keys(d["mig_devices"][m]), keys(inv["mig_devices"][m]));
      // The sampler's view of a MIG device uses the inventory's names for what both know.
      for (const char* k : {"uuid", "mig_profile", "gpu_instance_id", "compute_instance_id", "parent_uuid"})
        EXPECT_TRUE(g["mig_devices"][m].contains(k) && d["mig_devices"][m].contains(k)) << k;
      ++migs;
    }
  }
  EXPECT_EQ(migs, 4u);
}

}  // namespace
}  // namespace gw::test
