// The two OS seams: the filesystem root and the process runner.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include "platform/bounded_json.h"
#include "platform/fs_root.h"
#include "platform/host_name.h"
#include "platform/process_runner.h"
#include "platform/regular_file.h"
#include "../support/temp_dir.h"

namespace gw::platform {
namespace {

TEST(FsRoot, ReadsUnderTheRootOnly) {
  std::string dir = (std::filesystem::temp_directory_path() / "gw-fsroot-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::filesystem::create_directories(dir + "/proc/driver/nvidia");
  std::ofstream(dir + "/proc/driver/nvidia/version")
      << "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15\n second\n";
  std::filesystem::create_symlink("cuda-12.4", dir + "/cuda-link");
  FsRoot root(dir + "/");
  EXPECT_EQ(root.path("/proc/modules"), dir + "/proc/modules");
  auto line = root.readLine("/proc/driver/nvidia/version");
  ASSERT_TRUE(line.ok()) << line.error();
  EXPECT_EQ(*line, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15");
  EXPECT_TRUE(root.isDirectory("/proc/driver"));
  EXPECT_FALSE(root.exists("/proc/modules"));
  auto missing = root.readFile("/proc/modules");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find(dir + "/proc/modules"), std::string::npos) << "error names the path";
  auto list = root.listDir("/proc");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, std::vector<std::string>{"driver"});
  EXPECT_EQ(root.readLink("/cuda-link").value_or(""), "cuda-12.4");
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(FsRoot("/").isHostRoot());
}

// The empty root and any run of trailing slashes are the host root; under a fixture root a
// relative or empty path is joined with one slash.
TEST(FsRoot, RootAndPathJoiningEdges) {
  EXPECT_EQ(FsRoot("").root(), "/");
  EXPECT_EQ(FsRoot("/").root(), "/");
  EXPECT_TRUE(FsRoot("//").isHostRoot());
  EXPECT_EQ(FsRoot("/srv/fixture///").root(), "/srv/fixture");
  const FsRoot root("/srv/fixture");
  EXPECT_EQ(root.path("/proc/modules"), "/srv/fixture/proc/modules");
  EXPECT_EQ(root.path("proc/modules"), "/srv/fixture/proc/modules");
  EXPECT_EQ(root.path(""), "/srv/fixture/");
  EXPECT_EQ(FsRoot("/").path("/proc/modules"), "/proc/modules");
}

// readFile's documented default is 4 MiB and readLine reads at most the first 64 KiB: a longer
// file or first line is cut there, not refused.
TEST(FsRoot, ReadsAreCutAtTheirLimits) {
  testsupport::TempDir dir;
  const FsRoot root(dir.path());
  dir.write("big", std::string((4u << 20) + 1, 'x'));
  auto big = root.readFile("/big");
  ASSERT_TRUE(big.ok()) << big.error();
  EXPECT_EQ(big->size(), 4u << 20);
  auto part = root.readFile("/big", 10);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(*part, std::string(10, 'x'));
  dir.write("line", std::string((64u << 10) + 1, 'y') + "\nsecond\n");
  auto line = root.readLine("/line");
  ASSERT_TRUE(line.ok()) << line.error();
  EXPECT_EQ(line->size(), 64u << 10);
}

// A fixture tree (or a host) may hold a FIFO or a device where a file is expected: reading it
// is an error naming the path, at once, never an open(2) that waits for a writer or a read that
// waits for a terminal.
TEST(FsRoot, OnlyARegularFileIsRead) {
  testsupport::TempDir dir;
  ASSERT_EQ(::mkfifo((dir.path() + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/zero", dir.path() + "/zero");
  std::filesystem::create_directories(dir.path() + "/dir");
  const FsRoot root(dir.path());
  for (const char* name : {"/fifo", "/zero", "/dir"}) {
    auto r = root.readFile(name);
    ASSERT_FALSE(r.ok()) << name << " read as " << r->size() << " bytes";
    EXPECT_EQ(r.error(), dir.path() + name + ": not a regular file") << name;
    EXPECT_FALSE(root.readLine(name).ok()) << name;
  }
  // /proc's files are regular files of size 0: read to their end.
  auto self = FsRoot("/").readFile("/proc/self/status");
  ASSERT_TRUE(self.ok()) << self.error();
  EXPECT_NE(self->find("\nPid:\t"), std::string::npos) << *self;
}

// A file an operator names, or one of ours: refused at once if it is not a regular file, read
// whole up to its bound and refused one byte past it; a file of ours not written yet is no error.
TEST(RegularFile, IsReadWithinItsBoundOrRefusedSayingWhy) {
  testsupport::TempDir dir;
  const std::string p = dir.path();
  dir.write("exact", std::string(100, 'x'));
  dir.write("over", std::string(101, 'x'));
  ASSERT_EQ(::mkfifo((p + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_directories(p + "/dir");
  std::filesystem::create_symlink("exact", p + "/link");

  auto exact = readRegularFile(p + "/exact", 100, "the file");
  ASSERT_TRUE(exact.ok()) << exact.error();
  EXPECT_EQ(*exact, std::string(100, 'x'));
  EXPECT_EQ(readRegularFile(p + "/over", 100, "the file").error(), p + "/over: the file is 101 bytes; at most 100");
  EXPECT_EQ(readRegularFile(p + "/fifo", 100, "the file").error(), p + "/fifo: the file must be a regular file");
  EXPECT_EQ(readRegularFile(p + "/dir", 100, "the file").error(),
            p + "/dir: the file must be a regular file (this is a directory)");
  EXPECT_EQ(readRegularFile(p + "/none", 100, "the file").error(),
            p + "/none: cannot read the file: No such file or directory");

  auto none = readRegularFileIfThere(p + "/none", 100, "the file");
  ASSERT_TRUE(none.ok()) << none.error();
  EXPECT_FALSE(none->has_value());
  auto there = readRegularFileIfThere(p + "/exact", 100, "the file");
  ASSERT_TRUE(there.ok() && there->has_value());
  EXPECT_EQ(**there, std::string(100, 'x'));
  EXPECT_EQ(readRegularFileIfThere(p + "/over", 100, "the file").error(),
            p + "/over: the file is 101 bytes; at most 100");
  EXPECT_FALSE(readRegularFileIfThere(p + "/dir", 100, "the file").ok());

  // A link is followed unless refused (the jobs layer's mapping files must not point elsewhere).
  EXPECT_TRUE(RegularFile(p + "/link").ok());
  RegularFile refused(p + "/link", RegularFile::Links::kRefuse);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.openErrno(), ELOOP);
  RegularFile fifo(p + "/fifo");
  EXPECT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.openErrno(), 0);
  EXPECT_EQ(fifo.whyNot(), p + "/fifo: not a regular file");
  // readUpTo stops at its limit; what is left is read by the next call.
  RegularFile over(p + "/over");
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(over.size(), 101u);
  std::string text;
  EXPECT_EQ(over.readUpTo(60, text), 0);
  EXPECT_EQ(text.size(), 60u);
  EXPECT_EQ(over.readUpTo(1000, text), 0);
  EXPECT_EQ(text.size(), 101u);
}

// A number from outside is taken only as a whole number of the type it is read into: one step past
// either end of the range, a fraction, a string or a boolean is refused, never cast or wrapped.
TEST(BoundedJson, WholeNumbersAreReadInTheirTypesRangeOnly) {
  using nlohmann::json;
  const auto asInt = [](const char* text) { return asWholeNumber<int>(json::parse(text)); };
  EXPECT_EQ(asInt("0"), 0);
  EXPECT_EQ(asInt("-1"), -1);
  EXPECT_EQ(asInt("2147483647"), INT_MAX);
  EXPECT_EQ(asInt("-2147483648"), INT_MIN);
  for (const char* bad : {"2147483648", "-2147483649", "4294967297", "18446744073709551615", "1.0", "1e300", "\"1\"",
                          "true", "null", "[1]"})
    EXPECT_EQ(asInt(bad), std::nullopt) << bad;
  EXPECT_EQ(asWholeNumber<std::int64_t>(json::parse("9223372036854775807")), INT64_MAX);
  EXPECT_EQ(asWholeNumber<std::int64_t>(json::parse("-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(asWholeNumber<std::int64_t>(json::parse("9223372036854775808")), std::nullopt);
  EXPECT_EQ(asWholeNumber<std::int64_t>(json::parse("18446744073709551615")), std::nullopt);  // not -1
  EXPECT_EQ(asWholeNumber<std::uint64_t>(json::parse("18446744073709551615")), UINT64_MAX);
  EXPECT_EQ(asWholeNumber<std::uint64_t>(json::parse("-1")), std::nullopt);
  EXPECT_EQ(asWholeNumber<std::uint16_t>(json::parse("65535")), 65535);
  EXPECT_EQ(asWholeNumber<std::uint16_t>(json::parse("65536")), std::nullopt);

  const json doc = json::parse(R"({"gpu": 18446744073709551615, "ok": 3})");
  EXPECT_EQ(wholeNumber<int>(doc, "ok"), 3);
  EXPECT_EQ(wholeNumberOr<int>(doc, "missing", 7), 7);
  try {
    (void)wholeNumber<int>(doc, "gpu");
    ADD_FAILURE() << "2^64-1 read as an int";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "\"gpu\" is not a whole number in range");
  }
  EXPECT_THROW((void)wholeNumber<int>(doc, "missing"), json::out_of_range);
}

// The longest target Linux stores in a link (PATH_MAX - 1 = 4095 bytes) comes back whole.
TEST(FsRoot, TheLongestLinkTargetIsReadWhole) {
  testsupport::TempDir dir;
  const std::string target = "/" + std::string(4094, 'l');
  std::filesystem::create_symlink(target, dir.path() + "/link");
  auto got = FsRoot(dir.path()).readLink("/link");
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(*got, target);
}

TEST(ProcessRunner, CapturesOutputAndExitCode) {
  SystemProcessRunner r;
  auto res = r.run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(res.exit_code, 3);
  EXPECT_EQ(res.out, "out\n");
  EXPECT_EQ(res.err, "err\n");
  EXPECT_FALSE(res.timed_out);
}

TEST(ProcessRunner, MissingProgramAndTimeoutAreReported) {
  SystemProcessRunner r;
  auto missing = r.run({"/nonexistent/nvcc", "--version"});
  EXPECT_TRUE(missing.not_found);
  EXPECT_EQ(missing.exit_code, -1);
  RunOptions o;
  o.timeout = std::chrono::milliseconds(200);
  // Killed at the timeout: the program never reaches its last line, 30 s on (150 times the
  // timeout). A runner that waited for it would return with "finished" in the output.
  auto slow = r.run({"sh", "-c", "echo started; sleep 30; echo finished"}, o);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_EQ(slow.exit_code, -1);
  EXPECT_EQ(slow.out.find("finished"), std::string::npos) << slow.out;
}

// Output past max_output (1 MiB by default) is read and dropped, so a chatty program still runs
// to its end; what is kept stops within one read (8 KiB) of the cap.
TEST(ProcessRunner, OutputIsCappedAndTheRestDrained) {
  SystemProcessRunner r;
  auto res = r.run({"sh", "-c", "head -c 1200000 /dev/zero; head -c 1200000 /dev/zero >&2; exit 4"});
  EXPECT_EQ(res.exit_code, 4);
  EXPECT_GE(res.out.size(), 1u << 20);
  EXPECT_LT(res.out.size(), (1u << 20) + 8192);
  EXPECT_GE(res.err.size(), 1u << 20);
  EXPECT_LT(res.err.size(), (1u << 20) + 8192);
  RunOptions none;
  none.max_output = 0;
  auto quiet = r.run({"sh", "-c", "echo out; echo err >&2"}, none);
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
  // Waiting out the default would cost each run 10 s; the value is what callers rely on.
  EXPECT_EQ(RunOptions{}.timeout, std::chrono::seconds(10));
}

TEST(ProcessRunner, ASignalIsReportedInsteadOfAnExitCode) {
  SystemProcessRunner r;
  auto res = r.run({"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(res.signal, SIGTERM);
  EXPECT_EQ(res.exit_code, -1);
  EXPECT_FALSE(res.timed_out);
}

// Not there (ENOENT), not executable (EACCES) and a path through a file (ENOTDIR) are "not found";
// any other exec failure (E2BIG: one argument past the kernel's 128 KiB) is the shell's 127.
TEST(ProcessRunner, OnlyAMissingOrNonExecutableProgramIsNotFound) {
  testsupport::TempDir dir;
  const std::string plain = dir.write("plain", "#!/bin/sh\nexit 0\n");
  ::chmod(plain.c_str(), 0644);
  SystemProcessRunner r;
  auto denied = r.run({plain});
  EXPECT_TRUE(denied.not_found);
  EXPECT_EQ(denied.exit_code, -1);
  auto through_file = r.run({plain + "/sub"});
  EXPECT_TRUE(through_file.not_found);
  EXPECT_EQ(through_file.exit_code, -1);
  auto too_long = r.run({"sh", "-c", "exit 0", std::string(200000, 'a')});
  EXPECT_FALSE(too_long.not_found);
  EXPECT_EQ(too_long.exit_code, 127);
}

TEST(ProcessRunner, EnvironmentIsPassed) {
  SystemProcessRunner r;
  RunOptions o;
  o.env["GW_TEST_VALUE"] = "hello";
  auto res = r.run({"sh", "-c", "printf %s \"$GW_TEST_VALUE\""}, o);
  EXPECT_EQ(res.out, "hello");
}

// The name the kernel holds (the UTS node name), whole: Slurm's node name and alerts start from it.
TEST(HostName, IsTheKernelsNodeName) {
  std::ifstream in("/proc/sys/kernel/hostname");
  std::string kernel;
  ASSERT_TRUE(std::getline(in, kernel)) << "cannot read /proc/sys/kernel/hostname";
  EXPECT_FALSE(kernel.empty());
  EXPECT_EQ(hostName(), kernel);
}

}  // namespace
}  // namespace gw::platform
