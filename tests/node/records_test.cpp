// Records (node/records.h): the store, what changed between two install states, and the stack part
// of an install state read with the real process runner against programs on a fixture PATH.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>

#include "../support/temp_dir.h"
#include "node/records.h"

namespace gw::node {
namespace {

using json = nlohmann::json;

TEST(Records, ChangesBetweenTwoInstallsAreNamedByTheirPath) {
  const json a = {{"driver_version", "550.54.15"},
                  {"gpus", {{"GPU-1", {{"vbios", "96.00.5E"}, {"serial", "1"}}}}},
                  {"stack", {{"lib.cudnn", "cuDNN 8.9"}}}};
  json b = a;
  b["driver_version"] = "560.28.03";
  b["gpus"]["GPU-1"]["vbios"] = "96.00.74";
  b["stack"].erase("lib.cudnn");
  b["stack"]["container_runtime.docker"] = "Docker version 24.0.7";
  const json c = installChanges(a, b);
  EXPECT_EQ(c, json::parse(R"([
    {"what": "driver_version", "before": "550.54.15", "after": "560.28.03"},
    {"what": "gpus.GPU-1.vbios", "before": "96.00.5E", "after": "96.00.74"},
    {"what": "stack.container_runtime.docker", "before": null, "after": "Docker version 24.0.7"},
    {"what": "stack.lib.cudnn", "before": "cuDNN 8.9", "after": null}])"));
  EXPECT_EQ(changesSummary(c),
            "driver_version 550.54.15 -> 560.28.03; gpus.GPU-1.vbios 96.00.5E -> 96.00.74; "
            "stack.container_runtime.docker (none) -> Docker version 24.0.7; stack.lib.cudnn cuDNN 8.9 -> (none)");
  EXPECT_TRUE(installChanges(a, a).empty());
  EXPECT_EQ(changesSummary(json::array()), "no change");
}

// The one-line summary names the first four changes and counts the rest.
TEST(Records, TheSummaryNamesFourChangesAndCountsTheRest) {
  json changes = json::array();
  for (const char* what : {"a", "b", "c", "d"}) changes.push_back({{"what", what}, {"before", "x"}, {"after", "y"}});
  EXPECT_EQ(changesSummary(changes), "a x -> y; b x -> y; c x -> y; d x -> y");
  changes.push_back({{"what", "e"}, {"before", "x"}, {"after", "y"}});
  EXPECT_EQ(changesSummary(changes), "a x -> y; b x -> y; c x -> y; d x -> y; +1 more");
}

TEST(Records, TheStoreKeepsThemNewestFirstByKind) {
  testsupport::TempDir dir("gw-records");
  auto s = RecordStore::open(dir.file("records.db"));
  ASSERT_TRUE(s) << s.error();
  for (int i = 1; i <= 3; ++i) {
    Record r;
    r.time_ms = 1000 * i;
    r.kind = i == 2 ? "setting" : "install";
    r.who = "agent";
    r.summary = "r" + std::to_string(i);
    r.state = {{"n", i}};
    ASSERT_TRUE((*s)->append(r));
  }
  auto all = (*s)->list(10);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].summary, "r3");
  auto installs = (*s)->list(10, "install");
  ASSERT_TRUE(installs);
  ASSERT_EQ(installs->size(), 2u);
  auto latest = (*s)->latest("setting");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->state, (json{{"n", 2}}));
  EXPECT_EQ((*s)->list(1)->size(), 1u);
}

// The container runtime's pieces answer --version: each one installed is in the record, the rest
// are not. The doctor's checks run too (against an empty root).
TEST(Records, TheStackNamesTheContainerRuntimeThatIsInstalled) {
  testsupport::TempDir dir("gw-records");
  const std::string bin = dir.file("bin");
  auto tool = [&](const std::string& name, const std::string& out) {
    dir.write("bin/" + name, "#!/bin/sh\necho '" + out + "'\necho 'second line'\n");
    ::chmod((bin + "/" + name).c_str(), 0755);
  };
  tool("docker", "Docker version 24.0.7, build afdd53b");
  tool("nvidia-ctk", "NVIDIA Container Toolkit CLI version 1.14.3");
  tool("containerd", "containerd " + std::string(250, 'v'));  // a version line is kept to 200 characters
  dir.write("bin/podman", "#!/bin/sh\nexit 1\n");             // there, but broken: not recorded
  ::chmod((bin + "/podman").c_str(), 0755);
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", (bin + ":/usr/bin:/bin").c_str(), 1);
  platform::SystemProcessRunner runner;
  const json stack = readStackState(platform::FsRoot(dir.file("root")), runner, "550.54.15", 12040);
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(stack.value("container_runtime.docker", ""), "Docker version 24.0.7, build afdd53b") << stack.dump(2);
  EXPECT_EQ(stack.value("container_runtime.nvidia-ctk", ""), "NVIDIA Container Toolkit CLI version 1.14.3");
  EXPECT_FALSE(stack.contains("container_runtime.podman"));
  EXPECT_EQ(stack.value("container_runtime.containerd", ""), "containerd " + std::string(189, 'v'));
  EXPECT_TRUE(stack.contains("toolkit.installed"));  // the doctor's finding, whatever it is here
}

// The doctor's part of the stack sees the process environment by its variable names: inside a
// container, the GPUs handed in by NVIDIA_VISIBLE_DEVICES are named in the record.
TEST(Records, TheStackSeesTheEnvironmentByName) {
  testsupport::TempDir dir("gw-records");
  dir.write("root/.dockerenv", "");
  const char* old = std::getenv("NVIDIA_VISIBLE_DEVICES");
  const std::string saved = old ? old : "";
  ::setenv("NVIDIA_VISIBLE_DEVICES", "all", 1);
  platform::SystemProcessRunner runner;
  const json stack = readStackState(platform::FsRoot(dir.file("root")), runner, "550.54.15", 12040);
  if (old)
    ::setenv("NVIDIA_VISIBLE_DEVICES", saved.c_str(), 1);
  else
    ::unsetenv("NVIDIA_VISIBLE_DEVICES");
  EXPECT_NE(stack.value("container.gpu_access", "").find("NVIDIA_VISIBLE_DEVICES=all"), std::string::npos)
      << stack.dump(2);
}

}  // namespace
}  // namespace gw::node
