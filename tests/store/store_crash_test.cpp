// kill -9 in the middle of writing: the database must be intact and hold everything that was
// flushed before the kill.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "store/store.h"
#include "store_test_util.h"

namespace gw::store {
namespace {

using testing::TempDir;
using testing::testOptions;

constexpr int kSeries = 8;
double valueAt(int series, int64_t i) { return std::sin(static_cast<double>(i) * 0.01) * 100 + series; }

struct Report {
  int64_t last_ts;  // every sample up to here is flushed (explicit mode) or appended (background)
  int64_t when_ns;  // steady clock when it was true
};

int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Child: append to every series forever, report progress through the pipe; never returns.
[[noreturn]] void writer(const StoreOptions& opt, int fd, bool explicit_flush) {
  auto store = Store::open(opt);
  if (!store) _exit(2);
  std::vector<SeriesId> ids;
  for (int s = 0; s < kSeries; ++s) ids.push_back((*store)->series("GPU-crash", "f" + std::to_string(s)).value());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int64_t i = 1; std::chrono::steady_clock::now() < deadline; ++i) {
    for (int s = 0; s < kSeries; ++s) (*store)->append(ids[s], i * 10, valueAt(s, i));
    if (explicit_flush && i % 97 == 0) {
      if (!(*store)->flush().ok()) _exit(3);
      Report r{i * 10, steadyNs()};
      if (write(fd, &r, sizeof r) != sizeof r) _exit(4);
    } else if (!explicit_flush && i % 20 == 0) {
      Report r{i * 10, steadyNs()};
      if (write(fd, &r, sizeof r) != sizeof r) _exit(4);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  _exit(5);  // the parent should have killed us long before
}

// Forks the writer, kills it with SIGKILL after `run_for`, returns its reports.
std::vector<Report> runAndKill(const StoreOptions& opt, bool explicit_flush, std::chrono::milliseconds run_for,
                               int64_t& killed_ns) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    writer(opt, fds[1], explicit_flush);
  }
  close(fds[1]);
  std::this_thread::sleep_for(run_for);
  killed_ns = steadyNs();
  EXPECT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child exited with " << status;
  std::vector<Report> reports;
  Report r;
  while (read(fds[0], &r, sizeof r) == sizeof r) reports.push_back(r);
  close(fds[0]);
  return reports;
}

std::string integrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  std::string result = "open failed";
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      result = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return result;
}

// Every sample 1..last_ts/10 of every series is present with its exact value.
void expectPrefixIntact(const std::string& path, int64_t last_ts) {
  auto store = Store::open(testOptions(path));
  ASSERT_TRUE(store.ok()) << store.error();
  for (int s = 0; s < kSeries; ++s) {
    const SeriesId id = (*store)->series("GPU-crash", "f" + std::to_string(s)).value();
    auto points = (*store)->query(id, 0, last_ts);
    ASSERT_TRUE(points.ok()) << points.error();
    ASSERT_EQ(points->size(), static_cast<size_t>(last_ts / 10)) << "series " << s;
    for (size_t k = 0; k < points->size(); ++k) {
      ASSERT_EQ((*points)[k].ts_ms, static_cast<int64_t>(k + 1) * 10);
      ASSERT_EQ((*points)[k].value, valueAt(s, static_cast<int64_t>(k + 1)));
    }
    // And the store keeps working after recovery.
    EXPECT_TRUE((*store)->append(id, 1'000'000'000, 1.0));
  }
  EXPECT_TRUE((*store)->flush().ok());
}

TEST(StoreCrash, KillNineKeepsEverythingFlushed) {
  TempDir dir;
  auto opt = testOptions(dir.file("crash.db"));
  opt.chunk_samples = 64;  // several sealed chunks per series within the run
  int64_t killed_ns = 0;
  auto reports = runAndKill(opt, /*explicit_flush=*/true, std::chrono::milliseconds(400), killed_ns);
  ASSERT_GE(reports.size(), 3u) << "the writer made too little progress to test anything";
  EXPECT_EQ(integrityCheck(opt.path), "ok");
  expectPrefixIntact(opt.path, reports.back().last_ts);
}

TEST(StoreCrash, KillNineWithBackgroundFlusherLosesAtMostOneInterval) {
  TempDir dir;
  auto opt = testOptions(dir.file("crash.db"));
  opt.background = true;
  opt.flush_interval = std::chrono::milliseconds(100);
  int64_t killed_ns = 0;
  auto reports = runAndKill(opt, /*explicit_flush=*/false, std::chrono::milliseconds(2500), killed_ns);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(integrityCheck(opt.path), "ok");
  // Samples appended more than one interval before the kill must have survived. The slack is for
  // the flush itself and for a flusher thread the scheduler holds back: a sanitizer build under
  // ctest -j2 on two busy CPUs was seen to lose 150 ms more than the interval. A second against a
  // 2.5 s run still fails if the background flusher does not run.
  const int64_t slack_ns = 1'000'000'000;
  const int64_t safe_before = killed_ns - std::chrono::nanoseconds(opt.flush_interval).count() - slack_ns;
  int64_t last_safe = 0;
  for (const Report& r : reports)
    if (r.when_ns < safe_before) last_safe = r.last_ts;
  ASSERT_GT(last_safe, 0);
  expectPrefixIntact(opt.path, last_safe);
}

}  // namespace
}  // namespace gw::store
