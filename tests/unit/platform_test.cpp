// The two OS seams: the filesystem root and the process runner.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "platform/fs_root.h"
#include "platform/process_runner.h"

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

TEST(ProcessRunner, EnvironmentIsPassed) {
  SystemProcessRunner r;
  RunOptions o;
  o.env["GW_TEST_VALUE"] = "hello";
  auto res = r.run({"sh", "-c", "printf %s \"$GW_TEST_VALUE\""}, o);
  EXPECT_EQ(res.out, "hello");
}

}  // namespace
}  // namespace gw::platform
