// Against a real Prometheus Alertmanager (Debian's prometheus-alertmanager), started on loopback
// with a throwaway config and storage. Fails, with the install hint, when it is not installed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "alert/dispatcher.h"
#include "test_util.h"

namespace gw::alert {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBinary = "/usr/bin/prometheus-alertmanager";

class AlertmanagerProcess {
 public:
  AlertmanagerProcess(std::string dir, int port) : dir_(std::move(dir)), port_(port) {
    std::ofstream(dir_ + "/alertmanager.yml") << "route:\n  receiver: null-receiver\n"
                                                 "receivers:\n  - name: null-receiver\n";
  }
  ~AlertmanagerProcess() { stop(); }

  bool start() {
    std::vector<std::string> args = {kBinary,
                                     "--config.file=" + dir_ + "/alertmanager.yml",
                                     "--storage.path=" + dir_ + "/storage",
                                     "--cluster.listen-address=",
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                     "--log.level=warn"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::string log = dir_ + "/alertmanager.log";
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::setpgid(0, 0);
      ::execv(kBinary, argv.data());
      ::_exit(127);
    }
    if (pid_ < 0) return false;
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(0, 200000);
    for (auto deadline = std::chrono::steady_clock::now() + 15s; std::chrono::steady_clock::now() < deadline;) {
      auto r = c.Get("/-/ready");
      if (r && r->status == 200) return true;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string log() const {
    std::ifstream in(dir_ + "/alertmanager.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // GET /api/v2/alerts, keyed by alertname/UUID.
  std::map<std::string, nlohmann::json> alerts() const {
    std::map<std::string, nlohmann::json> out;
    httplib::Client c("127.0.0.1", port_);
    auto r = c.Get("/api/v2/alerts");
    if (!r || r->status != 200) return out;
    for (const auto& a : nlohmann::json::parse(r->body))
      out[a["labels"].value("alertname", "") + "/" + a["labels"].value("UUID", "")] = a;
    return out;
  }

 private:
  std::string dir_;
  int port_;
  pid_t pid_ = -1;
};

Alert gpuAlert(const std::string& rule, int gpu) {
  Alert a;
  a.rule = rule;
  a.id = rule + "/GPU-am-" + std::to_string(gpu);
  a.severity = "critical";
  a.summary = rule + " on GPU " + std::to_string(gpu);
  a.action = "drain the node";
  a.gpu_uuid = "GPU-am-" + std::to_string(gpu);
  a.gpu_index = gpu;
  a.hostname = "node-am";
  a.labels = {{"team", "ml-infra"}};
  a.annotations = {{"runbook", "https://example.invalid/kb#hot-and-loud"}};
  return a;
}

bool waitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  for (auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;) {
    if (pred()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return pred();
}

TEST(Alertmanager, DeliversAndSurvivesAlertmanagerRestart) {
  ASSERT_TRUE(std::filesystem::exists(kBinary))
      << kBinary << " is missing: install it with 'apt-get install -y prometheus-alertmanager'";
  std::string tmpl = (std::filesystem::temp_directory_path() / "gw-am-XXXXXX").string();
  std::string dir = ::mkdtemp(tmpl.data());
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  } cleanup{dir};
  int port = test::freePort();
  AlertmanagerProcess am(dir, port);
  ASSERT_TRUE(am.start()) << am.log();

  DispatcherConfig cfg;
  cfg.queue_path = dir + "/queue/alerts.db";
  cfg.retry_initial = 50ms;
  cfg.retry_max = 300ms;
  SinkConfig s;
  s.type = SinkConfig::Type::alertmanager;
  s.name = "am";
  s.url = "http://127.0.0.1:" + std::to_string(port);
  s.timeout = 2000ms;
  s.generator_url = "http://node-am:9400/api/v1/alerts";
  cfg.sinks.push_back(s);
  auto d = Dispatcher::create(cfg);
  ASSERT_TRUE(d.ok()) << d.error();
  (*d)->start();

  ASSERT_TRUE((*d)->submit(gpuAlert("GpuTemperatureHigh", 0)).value());
  ASSERT_TRUE((*d)->submit(gpuAlert("GpuEccDbeVolatile", 1)).value());
  ASSERT_TRUE((*d)->flush(15s)) << (*d)->stats()[0].last_error;
  ASSERT_TRUE(waitFor([&] { return am.alerts().size() >= 2; }, 10s)) << am.log();
  auto got = am.alerts();
  ASSERT_TRUE(got.count("GpuTemperatureHigh/GPU-am-0"));
  const auto& a = got["GpuTemperatureHigh/GPU-am-0"];
  EXPECT_EQ(a["labels"]["severity"], "critical");
  EXPECT_EQ(a["labels"]["instance"], "node-am");
  EXPECT_EQ(a["labels"]["gpu"], "0");
  EXPECT_EQ(a["labels"]["team"], "ml-infra");
  EXPECT_EQ(a["annotations"]["summary"], "GpuTemperatureHigh on GPU 0");
  EXPECT_EQ(a["annotations"]["description"], "drain the node");
  EXPECT_EQ(a["generatorURL"], "http://node-am:9400/api/v1/alerts");
  EXPECT_EQ(a["status"]["state"], "active");
  EXPECT_TRUE(got.count("GpuEccDbeVolatile/GPU-am-1"));

  // Alertmanager goes down; alerts raised meanwhile wait in the on-disk queue.
  am.stop();
  ASSERT_TRUE((*d)->submit(gpuAlert("GpuXidError", 2)).value());
  ASSERT_TRUE((*d)->submit(gpuAlert("GpuRowRemapFailure", 3)).value());
  EXPECT_FALSE((*d)->flush(700ms));
  EXPECT_EQ((*d)->pending(), 2);
  EXPECT_GT((*d)->stats()[0].failed_attempts, 0);

  // It comes back (alerts are in memory there, so only the queued two are expected now).
  ASSERT_TRUE(am.start()) << am.log();
  ASSERT_TRUE((*d)->flush(15s)) << (*d)->stats()[0].last_error;
  ASSERT_TRUE(waitFor(
      [&] {
        auto now = am.alerts();
        return now.count("GpuXidError/GPU-am-2") && now.count("GpuRowRemapFailure/GPU-am-3");
      },
      10s))
      << am.log();
  EXPECT_EQ(am.alerts()["GpuXidError/GPU-am-2"]["labels"]["UUID"], "GPU-am-2");
  (*d)->stop();
  am.stop();
}

}  // namespace
}  // namespace gw::alert
