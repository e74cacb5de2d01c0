// node::runtimeDir(): the folder of control sockets for a user that is not root, from the
// environment the CLI and the agent are started with.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "../support/temp_dir.h"
#include "node/control_protocol.h"
#include "node/data_dir.h"

namespace gw::node {
namespace {

struct Answer {
  bool exited_ok = false;
  std::string dir;
  uid_t uid = 0;
};

// runtimeDir() as a user that is not root sees it, with XDG_RUNTIME_DIR set to xdg (unset when
// null). Root is answered /run/gpuwarden before the variable is read, and CI runs as root: the call
// is made in a child that first drops to nobody (65534).
Answer runtimeDirAsUser(const char* xdg) {
  Answer a;
  a.uid = ::geteuid() == 0 ? uid_t{65534} : ::geteuid();
  int fds[2];
  if (::pipe(fds) != 0) return a;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return a;
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
    ::unsetenv("GPUWARDEN_RUNTIME_DIR");
    if (xdg)
      ::setenv("XDG_RUNTIME_DIR", xdg, 1);
    else
      ::unsetenv("XDG_RUNTIME_DIR");
    const std::string dir = runtimeDir();
    const bool written = ::write(fds[1], dir.data(), dir.size()) == static_cast<ssize_t>(dir.size());
    ::_exit(written ? 0 : 3);
  }
  ::close(fds[1]);
  char buf[256];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) a.dir.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  a.exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return a;
}

TEST(RuntimeDir, AUsersXdgRuntimeDirWhenSetElseTheirOwnFolderInTmp) {
  const Answer set = runtimeDirAsUser("/run/user/1000");
  ASSERT_TRUE(set.exited_ok);
  EXPECT_EQ(set.dir, "/run/user/1000/gpuwarden");
  // Set but empty (some login managers leave it so) is no folder: the sockets must not land in
  // "/gpuwarden". Unset must not be read at all.
  for (const char* xdg : {"", static_cast<const char*>(nullptr)}) {
    const Answer a = runtimeDirAsUser(xdg);
    const char* what = xdg ? "empty" : "unset";
    ASSERT_TRUE(a.exited_ok) << what;
    EXPECT_EQ(a.dir, "/tmp/gpuwarden-" + std::to_string(a.uid)) << what;
  }
}

// No file at the socket's path means no agent (the CLI then acts alone); a plain file there is
// refused before anything connects to it.
TEST(ControlCall, NoFileIsNotReachedAndAPlainFileIsRefused) {
  testsupport::TempDir dir("gw-control");
  const control::Reply none = control::call(dir.file("agent.sock"), nlohmann::json{{"op", "ping"}});
  EXPECT_FALSE(none.reached);
  EXPECT_EQ(none.error, "");
  const std::string plain_path = dir.write("plain.sock", "x");
  const control::Reply plain = control::call(plain_path, nlohmann::json{{"op", "ping"}});
  EXPECT_TRUE(plain.reached);
  EXPECT_EQ(plain.error, "refusing the control socket " + plain_path + ": it is not a socket");
}

// The diag report list shows each report's time read back from its file name, so every field of
// the compact stamp must land in its place of the RFC 3339 form.
TEST(DiagReportName, ParsedIntoItsTimeAndLevel) {
  const auto r = DataDir::parseDiagReportName("20260102T030405Z-r2.json");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->time, "2026-01-02T03:04:05Z");
  EXPECT_EQ(r->level, 2);
  EXPECT_FALSE(DataDir::parseDiagReportName("20260102T030405Z-r4.json").has_value());
}

// Two reports of one level in the same second keep both: the second is "-2", which the listing reads.
TEST(DiagReportName, ASecondReportInTheSameSecondIsNumberedTwo) {
  testsupport::TempDir dir("gw-diag-names");
  const DataDir d(dir.path());
  constexpr std::int64_t kWall = 1767323045000;  // 2026-01-02T03:04:05Z
  auto first = d.storeDiagReport("{}", 1, kWall);
  auto second = d.storeDiagReport("{}", 1, kWall + 500);
  auto third = d.storeDiagReport("{}", 1, kWall);
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(*first, "20260102T030405Z-r1.json");
  EXPECT_EQ(*second, "20260102T030405Z-r1-2.json");
  EXPECT_EQ(*third, "20260102T030405Z-r1-3.json");
  const auto parsed = DataDir::parseDiagReportName(*second);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->time, "2026-01-02T03:04:05Z");
  EXPECT_EQ(parsed->level, 1);
}

// A report is stored up to kMaxDiagReportBytes (what the agent reads back), refused past it.
TEST(DiagReportName, AReportIsStoredUpToItsBound) {
  testsupport::TempDir dir("gw-diag-names");
  const DataDir d(dir.path());
  EXPECT_EQ(DataDir::kMaxDiagReportBytes, 4u << 20);
  const std::string at = "{\"x\":\"" + std::string(DataDir::kMaxDiagReportBytes - 8, 'a') + "\"}";
  ASSERT_EQ(at.size(), DataDir::kMaxDiagReportBytes);
  auto stored = d.storeDiagReport(at, 1, 1767323045000);
  ASSERT_TRUE(stored) << stored.error();
  EXPECT_EQ(std::filesystem::file_size(d.diagReports() + "/" + *stored), at.size());
  auto refused = d.storeDiagReport(at + " ", 1, 1767323046000);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "the report is 4194305 bytes; at most 4194304 are stored");
  EXPECT_FALSE(std::filesystem::exists(d.diagReports() + "/20260102T030406Z-r1.json"));
}

// At most 999 reports of one level a second are kept apart (-2 .. -999); past them the 999th is
// replaced rather than the folder searched without end.
TEST(DiagReportName, The999thReportOfASecondIsTheLastNumbered) {
  testsupport::TempDir dir("gw-diag-names");
  const DataDir d(dir.path());
  constexpr std::int64_t kWall = 1767323045000;  // 2026-01-02T03:04:05Z
  std::filesystem::create_directories(d.diagReports());
  std::ofstream(d.diagReports() + "/20260102T030405Z-r2.json") << "{}";
  for (int n = 2; n <= 998; ++n)
    std::ofstream(d.diagReports() + "/20260102T030405Z-r2-" + std::to_string(n) + ".json") << "{}";
  auto last = d.storeDiagReport("{\"n\":999}", 2, kWall);
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, "20260102T030405Z-r2-999.json");
  auto past = d.storeDiagReport("{\"n\":1000}", 2, kWall);
  ASSERT_TRUE(past);
  EXPECT_EQ(*past, "20260102T030405Z-r2-999.json");
  std::ifstream in(d.diagReports() + "/" + *past);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"n\":1000}");
  EXPECT_FALSE(std::filesystem::exists(d.diagReports() + "/20260102T030405Z-r2-1000.json"));
}

// The mode (permission bits) of a path.
unsigned modeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_mode & 07777) : 0U;
}

// A file made with the default mode (0666), as SQLite makes its databases and their -wal files, in
// a data folder that create() made: under an agent started with umask 0 it still is not readable
// by every user of the node, because create() sets the process umask to 027.
TEST(DataDir, CreatingItRestrictsTheUmaskOfWhatIsWrittenThere) {
  testsupport::TempDir dir("gw-data-umask");
  const mode_t before = ::umask(0);
  const DataDir d(dir.path() + "/data");
  const Status st = d.create();
  std::ofstream(dir.path() + "/data/history.db") << "x";
  const mode_t after = ::umask(before);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(after, kDataUmask);
  EXPECT_EQ(modeOf(dir.path() + "/data"), 0750U);
  EXPECT_EQ(modeOf(dir.path() + "/data/history.db"), 0640U);
}

// A CLI that changes the folder while no agent runs takes the lock and does not call create():
// the lock sets the umask too, so the files that CLI writes are not readable by every user either.
TEST(DataDirLock, TakingItRestrictsTheUmaskOfWhatIsWrittenThere) {
  testsupport::TempDir dir("gw-lock-umask");
  const mode_t before = ::umask(0);
  auto lock = DataDirLock::acquire(DataDir(dir.path()));
  std::ofstream(dir.path() + "/incidents.db") << "x";
  const mode_t after = ::umask(before);
  ASSERT_TRUE(lock) << lock.error();
  EXPECT_EQ(after, kDataUmask);
  EXPECT_EQ(modeOf(dir.path() + "/incidents.db"), 0640U);
}

}  // namespace
}  // namespace gw::node
