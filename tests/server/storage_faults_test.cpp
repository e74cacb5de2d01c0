// The real `gpuwarden serve` when its data folder fails it.
//  - A full disk (the folder on a small tmpfs, filled to the last byte while the agent runs): logged
//    once per file with the path, named by /healthz (200: the agent still reads its GPUs), shown
//    by gpuwarden_storage_ok and the write-error counters; when space returns everything still in
//    memory is written (no gap in history), the kernel-log position catches up, and a restart
//    replays no kernel-log line (no event twice, no incident reopened).
//  - Damaged files (history.db of random bytes, truncated, with a series id of UINT32_MAX; an
//    incidents.db of random bytes): the agent starts, /metrics answers, the file is kept aside and
//    the move logged, and a fresh one is used.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../support/small_tmpfs.h"
#include "platform/sqlite.h"
#include "store/store.h"
#include "test_util.h"

namespace gw::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

double metric(int port, const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  auto r = httpGet(port, "/metrics", {}, 2000ms);
  if (r.status != 200) return -1;
  auto v = select(parseExposition(r.body), name, labels);
  return v.size() == 1 ? v[0].value : -1;
}

// Events of the kernel log with this Xid code, from the agent's event log.
int xidEvents(int port, int code) {
  auto r = httpGet(port, "/api/v1/events?since=1h", {}, 2000ms);
  if (r.status != 200) return -1;
  const json j = json::parse(r.body);
  int n = 0;
  for (const auto& e : j["events"]) n += e.value("code", 0) == code;
  return n;
}

// The kernel-log position file: its saved offset, or -1 when it is missing, empty or not JSON.
std::int64_t savedOffset(const std::string& path) {
  std::ifstream in(path);
  if (!in) return -1;
  try {
    return json::parse(in).value("offset", std::int64_t{-1});
  } catch (const std::exception&) {
    return -1;
  }
}

constexpr const char* kXid13 =
    "[ 1021.113355] NVRM: Xid (PCI:0000:3b:00): 13, pid=48211, name=python3, Graphics Exception: ESR 0x504648\n";
constexpr const char* kXid43 = "[ 1021.113401] NVRM: Xid (PCI:0000:3b:00): 43, pid=48211, name=python3, Ch 00000008\n";

TEST(AgentStorage, FullDiskIsShownLoggedOnceAndRecoveredWithoutLossOrReplay) {
  testsupport::SmallTmpfs disk(8 << 20);
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  TempDir dir;
  const std::string config = dir.write("agent.yaml", kFastAgentConfig);
  const std::string root = dir.path() + "/root";
  fs::create_directories(root + "/dev");
  const std::string kmsg = root + "/dev/kmsg";
  std::ofstream(kmsg) << kXid13;
  const std::string data = disk.path() + "/data";
  const std::string position = data + "/kmsg-position.json";
  const std::vector<std::string> args{"--root",   root,   "serve",      "--simulate", "dgx-h100",
                                      "--config", config, "--data-dir", data};
  auto proc = std::make_unique<AgentProcess>(args, std::map<std::string, std::string>{}, dir.path() + "/agent.log");
  const int port = proc->waitListening();
  ASSERT_GT(port, 0) << proc->log();
  ASSERT_TRUE(eventually([&] { return xidEvents(port, 13) == 1; }, 10s)) << proc->log();
  ASSERT_TRUE(eventually([&] { return savedOffset(position) == static_cast<std::int64_t>(fs::file_size(kmsg)); }, 5s));
  EXPECT_EQ(metric(port, "gpuwarden_storage_ok"), 1);
  EXPECT_EQ(httpGet(port, "/healthz").body, "ok\n");
  std::this_thread::sleep_for(1s);
  const std::int64_t before_full = static_cast<std::int64_t>(fs::file_size(kmsg));

  // The disk fills up; a new Xid arrives while it is full.
  disk.fill();
  std::ofstream(kmsg, std::ios::app) << kXid43;
  ASSERT_TRUE(eventually([&] { return xidEvents(port, 43) == 1; }, 10s)) << proc->log();
  ASSERT_TRUE(eventually([&] { return metric(port, "gpuwarden_storage_ok") == 0; }, 10s)) << proc->log();
  HttpResult hz;
  ASSERT_TRUE(eventually(
      [&] {
        hz = httpGet(port, "/healthz");
        return hz.body.find(data + "/history.db") != std::string::npos;
      },
      // SQLite keeps writing into the pages its files already hold (the WAL is reused after each
      // checkpoint) until a new chunk row needs a new page: up to a chunk's length (120 samples).
      90s))
      << hz.body;
  EXPECT_EQ(hz.status, 200);  // a full disk costs history, not the agent's readings
  const json hzj = json::parse(hz.body);
  EXPECT_EQ(hzj["status"], "degraded");
  EXPECT_NE(hzj["reason"].get<std::string>().find("disk full: cannot write " + data), std::string::npos) << hz.body;
  // Several flush intervals and kernel-log polls with the disk full.
  for (int i = 0; i < 12; ++i) {
    std::this_thread::sleep_for(250ms);
    // The position file is never left empty or in part: it holds the position from before.
    ASSERT_EQ(savedOffset(position), before_full) << "position file damaged while the disk is full";
    ASSERT_EQ(httpGet(port, "/metrics").status, 200);
  }
  EXPECT_GT(metric(port, "gpuwarden_storage_write_errors_total", {{"file", "history.db"}}), 1);
  EXPECT_GT(metric(port, "gpuwarden_storage_write_errors_total", {{"file", "kmsg-position.json"}}), 1);
  const double pending = metric(port, "gpuwarden_history_pending_bytes");
  EXPECT_GE(pending, 0);
  EXPECT_LE(pending, 32 << 20);
  {
    const std::string log = proc->log();
    EXPECT_EQ(occurrences(log, "cannot write " + data + "/history.db"), 1u) << log;
    EXPECT_EQ(occurrences(log, "cannot write " + position), 1u) << log;
  }

  // Space again: recovery is logged, /healthz is plain ok, the position catches up.
  disk.release();
  ASSERT_TRUE(eventually([&] { return httpGet(port, "/healthz").body == "ok\n"; }, 10s))
      << httpGet(port, "/healthz").body << proc->log();
  EXPECT_EQ(metric(port, "gpuwarden_storage_ok"), 1);
  EXPECT_NE(proc->log().find("storage recovered: " + data + "/history.db"), std::string::npos) << proc->log();
  ASSERT_TRUE(eventually([&] { return savedOffset(position) == static_cast<std::int64_t>(fs::file_size(kmsg)); }, 5s));
  std::this_thread::sleep_for(1500ms);  // a flush interval and more

  // History has no gap where the disk was full: what waited in memory was written.
  auto h = json::parse(httpGet(port, "/api/v1/history?gpu=0&field=gpu_temp&since=2m").body);
  const auto& pts = h["points"];
  ASSERT_GE(pts.size(), 20u) << h.dump();
  std::int64_t worst_gap = 0;
  for (std::size_t i = 1; i < pts.size(); ++i)
    worst_gap = std::max(worst_gap, pts[i][0].get<std::int64_t>() - pts[i - 1][0].get<std::int64_t>());
  EXPECT_LT(worst_gap, 1500) << h.dump();
  EXPECT_EQ(metric(port, "gpuwarden_history_dropped_samples_total"), 0);

  // A restart replays nothing of the kernel log.
  auto incidents = [&](int p) {
    auto r = httpGet(p, "/api/v1/incidents?state=all", {}, 2000ms);
    return r.status == 200 ? json::parse(r.body)["incidents"].size() : 0;
  };
  const auto incidents_before = incidents(port);
  proc->signal(SIGTERM);
  ASSERT_TRUE(proc->wait(10s).has_value());
  auto again = std::make_unique<AgentProcess>(args, std::map<std::string, std::string>{}, dir.path() + "/agent2.log");
  const int port2 = again->waitListening();
  ASSERT_GT(port2, 0) << again->log();
  std::this_thread::sleep_for(2s);  // several kernel-log polls and evaluation passes
  EXPECT_EQ(xidEvents(port2, 13), 1);
  EXPECT_EQ(xidEvents(port2, 43), 1);
  EXPECT_EQ(incidents(port2), incidents_before);
  EXPECT_EQ(again->log().find("unreadable"), std::string::npos) << again->log();
  again->signal(SIGTERM);
  EXPECT_TRUE(again->wait(10s).has_value());
}

enum class Damage { HistoryRandomBytes, HistoryTruncated, HistorySeriesIdUint32Max, IncidentsRandomBytes };

class AgentDamagedFile : public ::testing::TestWithParam<Damage> {};

std::string randomBytes(std::size_t n) {
  std::mt19937 rng(7);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST_P(AgentDamagedFile, AgentStartsKeepsItAsideAndMetricsAnswer) {
  TempDir dir;
  const std::string config = dir.write("agent.yaml", kFastAgentConfig);
  const std::string data = dir.path() + "/data";
  fs::create_directories(data);
  const bool history = GetParam() != Damage::IncidentsRandomBytes;
  const std::string file = data + (history ? "/history.db" : "/incidents.db");
  switch (GetParam()) {
    case Damage::HistoryRandomBytes:
    case Damage::IncidentsRandomBytes:
      std::ofstream(file, std::ios::binary) << randomBytes(32 << 10);
      break;
    case Damage::HistoryTruncated: {
      store::StoreOptions o;
      o.path = file;
      o.background = false;
      o.chunk_samples = 10;
      {
        auto s = store::Store::open(o);
        ASSERT_TRUE(s.ok()) << s.error();
        for (int g = 0; g < 20; ++g) {
          auto id = (*s)->series("GPU-" + std::to_string(g), "gpu_temp");
          for (int i = 1; i <= 2000; ++i) (*s)->append(*id, i * 1000, i * 0.37 + g);
        }
        ASSERT_TRUE((*s)->flush().ok());
      }
      fs::resize_file(file, fs::file_size(file) / 2);
      break;
    }
    case Damage::HistorySeriesIdUint32Max: {
      store::StoreOptions o;
      o.path = file;
      o.background = false;
      {
        auto s = store::Store::open(o);
        ASSERT_TRUE(s.ok()) << s.error();
        ASSERT_TRUE((*s)->series("GPU-a", "gpu_temp").ok());
      }
      auto db = platform::Database::open(file, "test");
      ASSERT_TRUE(db.ok());
      ASSERT_TRUE((*db)
                      ->exec("INSERT INTO series (id, gpu_uuid, field, rolled_until) "
                             "VALUES (4294967295, 'GPU-b', 'gpu_temp', 0)")
                      .ok());
      break;
    }
  }
  AgentProcess proc({"serve", "--simulate", "dgx-h100", "--config", config, "--data-dir", data}, {},
                    dir.path() + "/agent.log");
  const int port = proc.waitListening();
  ASSERT_GT(port, 0) << proc.log();
  const std::string name = fs::path(file).filename().string();
  ASSERT_TRUE(eventually(
      [&] {
        return metric(port, "gpuwarden_storage_damaged_files_total", {{"file", name}}) == 1;
      },
      10s))
      << httpGet(port, "/metrics").body;
  EXPECT_EQ(httpGet(port, "/healthz").status, 200);
  const std::string log = proc.log();
  EXPECT_NE(log.find(" '" + file + "' is damaged"), std::string::npos) << log;
  std::string aside;
  for (const auto& e : fs::directory_iterator(data))
    if (e.path().filename().string().rfind(name + ".damaged-", 0) == 0 &&
        e.path().string().find("-wal") == std::string::npos && e.path().string().find("-shm") == std::string::npos)
      aside = e.path().string();
  ASSERT_FALSE(aside.empty()) << "the damaged file was not kept";
  EXPECT_NE(log.find("moved aside to " + aside), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(file));  // a fresh one
  if (history) {
    // The fresh history store records.
    ASSERT_TRUE(eventually(
        [&] {
          auto r = httpGet(port, "/api/v1/history?gpu=0&field=gpu_temp&since=1m");
          return r.status == 200 && json::parse(r.body)["points"].size() >= 3;
        },
        10s))
        << proc.log();
  } else {
    EXPECT_EQ(httpGet(port, "/api/v1/incidents?state=all").status, 200);
  }
  proc.signal(SIGTERM);
  auto rc = proc.wait(10s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0);
}

INSTANTIATE_TEST_SUITE_P(Files, AgentDamagedFile,
                         ::testing::Values(Damage::HistoryRandomBytes, Damage::HistoryTruncated,
                                           Damage::HistorySeriesIdUint32Max, Damage::IncidentsRandomBytes),
                         [](const auto& p) {
                           switch (p.param) {
                             case Damage::HistoryRandomBytes:
                               return std::string("HistoryRandomBytes");
                             case Damage::HistoryTruncated:
                               return std::string("HistoryTruncated");
                             case Damage::HistorySeriesIdUint32Max:
                               return std::string("HistorySeriesIdUint32Max");
                             case Damage::IncidentsRandomBytes:
                               return std::string("IncidentsRandomBytes");
                           }
                           return std::string();
                         });

}  // namespace
}  // namespace gw::test
