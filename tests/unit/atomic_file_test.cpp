// Whole-file replacement: the new bytes or the old ones, never a mix, and errors that say where.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/temp_dir.h"
#include "platform/atomic_file.h"

namespace gw::platform {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, CreatesAndReplacesWithNoTemporaryLeftBehind) {
  testsupport::TempDir dir;
  const std::string path = dir.file("position.json");
  ASSERT_TRUE(writeFileAtomic(path, "{\"seq\":1}\n").ok());
  EXPECT_EQ(slurp(path), "{\"seq\":1}\n");
  std::string big(1 << 20, 'x');
  ASSERT_TRUE(writeFileAtomic(path, big).ok());
  EXPECT_EQ(slurp(path), big);
  ASSERT_TRUE(writeFileAtomic(path, "").ok());
  EXPECT_EQ(slurp(path), "");
  EXPECT_EQ(entries(dir.path()), 1u) << "only the file itself";
}

TEST(AtomicFile, UsesTheModeUnderTheUmask) {
  testsupport::TempDir dir;
  const std::string path = dir.file("secret.json");
  const mode_t old = ::umask(022);
  Status s = writeFileAtomic(path, "x", 0600);
  Status t = writeFileAtomic(dir.file("public.json"), "x", 0666);
  ::umask(old);
  ASSERT_TRUE(s.ok() && t.ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir.file("public.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicFile, AMissingFolderIsReportedWithThePathAndTheReason) {
  testsupport::TempDir dir;
  const std::string path = dir.file("no/such/folder/state.json");
  Status s = writeFileAtomic(path, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(std::strerror(ENOENT)), std::string::npos) << s.message();
  EXPECT_EQ(s.errnoCode(), ENOENT);
}

TEST(AtomicFile, AFailedRenameLeavesTheOldFileAndNoTemporary) {
  testsupport::TempDir dir;
  // A folder where the file should go: the rename fails after the data was written.
  const std::string path = dir.file("report.json");
  std::filesystem::create_directories(path + "/inside");
  Status s = writeFileAtomic(path, "new");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("rename"), std::string::npos) << s.message();
  EXPECT_TRUE(std::filesystem::is_directory(path + "/inside"));
  EXPECT_EQ(entries(dir.path()), 1u) << "the temporary file was removed";
}

// Root writes into read-only folders, so as root the refused write runs in a child that has
// dropped to nobody: the test runs whoever runs the suite, never skipped.
TEST(AtomicFile, AReadOnlyFolderIsReported) {
  testsupport::TempDir dir;
  const std::string ro = dir.file("ro");
  std::filesystem::create_directories(ro);
  ASSERT_TRUE(writeFileAtomic(ro + "/state.json", "old").ok());
  ::chmod(dir.path().c_str(), 0755);  // nobody must reach the folder to be refused in it
  ::chmod(ro.c_str(), 0555);
  auto refusedWrite = [&]() -> int {
    Status s = writeFileAtomic(ro + "/state.json", "new");
    if (s.ok()) return 10;
    if (s.errnoCode() != EACCES) return 11;
    if (s.message().find(ro + "/state.json") == std::string::npos) return 12;
    return 0;
  };
  int code = 0;
  if (::geteuid() != 0) {
    code = refusedWrite();
  } else {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(13);
      ::_exit(refusedWrite());
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    code = WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
  }
  ::chmod(ro.c_str(), 0755);
  EXPECT_EQ(code, 0) << "10: written, 11: not EACCES, 12: path not named, 13: could not drop to nobody";
  EXPECT_EQ(slurp(ro + "/state.json"), "old");
}

// A crashed run leaves its temporary behind; the next run with the same pid (pid 1 in a
// container, every time) must not fail on it. The leftover is left alone (it is not this
// process's), the next names are tried, up to kTemporaryNameTries (64) names a write.
TEST(AtomicFile, ALeftoverTemporaryOfTheSamePidIsSteppedOver) {
  testsupport::TempDir dir;
  const std::string path = dir.file("state.json");
  ASSERT_TRUE(writeFileAtomic(path, "old").ok());
  // The number the next write's temporary takes, read off a write that cannot create its own.
  const auto nextNumber = [&] {
    const Status st = writeFileAtomic(dir.file("missing/x"), "");
    const std::string m = st.message();
    const std::string pid = ".tmp." + std::to_string(::getpid()) + ".";
    const auto at = m.find(pid);
    EXPECT_NE(at, std::string::npos) << m;
    return at == std::string::npos ? 0ul : std::stoul(m.substr(at + pid.size())) + 1;
  };
  const auto leave = [&](unsigned long from, int count) {
    for (int i = 0; i < count; ++i)
      std::ofstream(dir.file(".state.json.tmp." + std::to_string(::getpid()) + "." + std::to_string(from + i)))
          << "crashed";
  };
  leave(nextNumber(), 63);
  ASSERT_TRUE(writeFileAtomic(path, "new").ok());
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(entries(dir.path()), 64u) << "the leftovers are not this process's to remove";

  leave(nextNumber(), 64);
  const Status st = writeFileAtomic(path, "newer");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot create"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(std::strerror(EEXIST)), std::string::npos) << st.message();
  EXPECT_EQ(slurp(path), "new");
}

}  // namespace
}  // namespace gw::platform
