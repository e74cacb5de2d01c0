// End to end: the doctor, the CUDA toolkit commands, `xid scan` and `explain`, run as the real
// binary against fixture machine trees (--root) and saved kernel logs.
#include <gtest/gtest.h>

#include <map>

#include <set>
#include <sstream>
#include <string>

#include "../doctor/fixture.h"
#include "gw_run.h"

namespace gw::test {
namespace {

using doctor::testing::Machine;

bool has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// The environment a fixture machine runs with: its PATH points into the fixture tree.
std::map<std::string, std::string> fixtureEnv(const Machine& m) {
  auto env = m.env;
  env["NO_COLOR"] = "1";
  return env;
}

TEST(StackDoctor, NouveauLoadedFailsInTheKernelDriverLayer) {
  auto m = Machine::healthy();
  m->modules("nouveau drm_kms_helper drm");
  m->fx.remove("/etc/modprobe.d/blacklist-nouveau.conf");
  m->fx.remove("/proc/driver/nvidia");
  m->pciGpu("0000:3b:00.0", "nouveau");
  m->pciGpu("0000:86:00.0", "nouveau");
  auto r = runGw({"--root", m->fx.dir(), "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "doctor"}, fixtureEnv(*m));
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_TRUE(has(r.out, "Kernel driver")) << describe(r);
  EXPECT_TRUE(has(r.out, "nouveau")) << describe(r);
}

TEST(StackDoctor, SimulatedDriverMatchingTheModuleButMoreGpusThanDeviceNodes) {
  // The fixture machine has 2 GPUs' device nodes; the simulated driver reports 8 H100s at the
  // module's version 550.54.15. Versions agree; the missing /dev/nvidiaN nodes are the one failure.
  auto m = Machine::healthy();
  m->env["LANG"] = "C";  // ASCII verdicts
  auto r = runGw({"--root", m->fx.dir(), "--simulate", "dgx-h100", "--json", "doctor"}, fixtureEnv(*m));
  EXPECT_EQ(r.code, 2) << describe(r);
  auto j = r.json();
  std::map<std::string, std::string> verdicts;
  for (const auto& c : j["checks"]) verdicts[c["id"].get<std::string>()] = c["verdict"].get<std::string>();
  EXPECT_EQ(verdicts["kernel.version_match"], "pass") << r.out;
  EXPECT_EQ(verdicts["cuda_driver.nvml"], "pass") << r.out;
  EXPECT_EQ(verdicts["kernel.device_nodes"], "fail") << r.out;
  EXPECT_TRUE(has(r.out, "550.54.15")) << describe(r);
  EXPECT_TRUE(has(r.out, "2 of 8")) << describe(r);
  // The nodes are named by minor number (dgx-h100: GPU 0 is /dev/nvidia2), so GPUs 2 and 3, whose
  // minors 0 and 1 the fixture has, are not missing; GPU 0 and GPU 1 are.
  EXPECT_TRUE(has(r.out, "/dev/nvidia2 (GPU 0), /dev/nvidia3 (GPU 1), /dev/nvidia6 (GPU 4)")) << describe(r);
  EXPECT_FALSE(has(r.out, "(GPU 2)")) << describe(r);
}

TEST(StackDoctor, NoNvmlLibraryWithGpusOnThePciBusNamesTheCudaDriverLayer) {
  auto m = Machine::healthy();
  m->fx.remove("/proc/driver/nvidia");
  m->fx.remove("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
  auto r = runGw({"--root", m->fx.dir(), "--nvml-lib", "/nonexistent", "doctor"}, fixtureEnv(*m));
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_TRUE(has(r.out, "NVIDIA GPUs on the PCI bus: 2")) << describe(r);
  EXPECT_TRUE(has(r.out, "libnvidia-ml.so.1 not loaded")) << describe(r);
  EXPECT_TRUE(has(r.out, "Lowest failing layer: CUDA driver")) << describe(r);
}

TEST(StackDoctor, JsonHasLayersAndSummary) {
  auto m = Machine::healthy();
  auto r = runGw({"--root", m->fx.dir(), "--nvml-lib", "/nonexistent", "--json", "doctor"}, fixtureEnv(*m));
  EXPECT_EQ(r.code, 2) << describe(r);
  auto j = r.json();
  ASSERT_TRUE(j["checks"].is_array()) << r.out;
  ASSERT_FALSE(j["checks"].empty());
  std::set<std::string> layers;
  for (const auto& c : j["checks"]) layers.insert(c["layer"].get<std::string>());
  EXPECT_TRUE(layers.count("hardware")) << r.out;
  EXPECT_TRUE(layers.count("kernel-driver")) << r.out;
  EXPECT_EQ(j["summary"]["exit_code"], 2);
}

std::unique_ptr<Machine> twoToolkits() {
  auto m = Machine::healthy();
  m->addToolkit("12.4.131");
  m->fx.symlink("cuda-12.4", "/usr/local/cuda");
  return m;
}

TEST(StackCuda, ListShowsBothToolkits) {
  auto m = twoToolkits();
  auto r = runGw({"--root", m->fx.dir(), "--nvml-lib", "/nonexistent", "cuda", "list"}, fixtureEnv(*m));
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(has(r.out, "/usr/local/cuda-12.1")) << describe(r);
  EXPECT_TRUE(has(r.out, "/usr/local/cuda-12.4")) << describe(r);
  auto rj = runGw({"--root", m->fx.dir(), "--nvml-lib", "/nonexistent", "--json", "cuda", "list"}, fixtureEnv(*m));
  ASSERT_EQ(rj.code, 0) << describe(rj);
  auto j = rj.json();
  ASSERT_EQ(j["toolkits"].size(), 2u) << rj.out;
  EXPECT_EQ(j["toolkits"][0]["version"], "12.1");
  EXPECT_EQ(j["toolkits"][1]["version"], "12.4");
  EXPECT_EQ(j["toolkits"][1]["is_default"], true);
}

TEST(StackCuda, EnvPrintsShellLines) {
  auto m = twoToolkits();
  auto r = runGw({"--root", m->fx.dir(), "cuda", "env", "12.1"}, fixtureEnv(*m));
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(has(r.out, "export PATH=/usr/local/cuda-12.1/bin:")) << describe(r);
  EXPECT_TRUE(has(r.out, "CUDA_HOME=/usr/local/cuda-12.1")) << describe(r);
}

TEST(StackCuda, EnvUnknownVersionListsInstalledOnes) {
  auto m = twoToolkits();
  auto r = runGw({"--root", m->fx.dir(), "cuda", "env", "99.9"}, fixtureEnv(*m));
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_TRUE(r.out.empty()) << describe(r);
  EXPECT_TRUE(has(r.err, "12.1") && has(r.err, "12.4")) << describe(r);
}

const std::string kSample = std::string(GW_SOURCE_DIR) + "/tests/events/fixtures/dmesg-sample.txt";

TEST(StackXid, ScanFindsFallenOffTheBus) {
  auto r = runGw({"xid", "scan", kSample});
  EXPECT_EQ(r.code, 1) << describe(r);
  EXPECT_TRUE(has(r.out, "Xid 79")) << describe(r);
  EXPECT_TRUE(has(r.out, "fallen off the bus") || has(r.out, "FALLEN_OFF")) << describe(r);
  EXPECT_TRUE(has(r.out, "Summary")) << describe(r);
  EXPECT_TRUE(has(r.out, "0000:3B:00.0") || has(r.out, "00000000:3B:00.0")) << describe(r);
}

TEST(StackXid, ScanJson) {
  auto r = runGw({"--json", "xid", "scan", kSample});
  EXPECT_EQ(r.code, 1) << describe(r);
  auto j = r.json();
  bool found79 = false;
  for (const auto& e : j["events"])
    if (e["code"] == 79) found79 = true;
  EXPECT_TRUE(found79) << r.out;
  EXPECT_EQ(j["needs_action"], true);
}

TEST(StackXid, ApplicationXidOnlyExitsZeroAndCountsMalformedLines) {
  TempDir dir;
  auto path = dir.write("app.log",
                        "[ 10.000001] NVRM: Xid (PCI:0000:3b:00): 13, pid=48211, name=python3, Graphics Exception\n"
                        "[ 11.000001] some unrelated line\n");
  auto r = runGw({"xid", "scan", path});
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(has(r.out, "Xid 13")) << describe(r);
  // Standard input, through the shell.
  platform::SystemProcessRunner runner;
  platform::RunOptions o;
  o.timeout = std::chrono::milliseconds(60000);
  auto s = runner.run({"/bin/sh", "-c", std::string("\"") + GW_BINARY + "\" xid scan - < \"" + path + "\""}, o);
  EXPECT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_TRUE(has(s.out, "Xid 13")) << s.out << s.err;
}

// A 1 MB line: cut at 16 KiB, and the lines after it are still read; the streamed JSON is one
// valid document (also with no events at all).
TEST(StackXid, LongLineIsCutAndTheScanGoesOn) {
  TempDir dir;
  auto path = dir.write("long.log",
                        "[ 10.000001] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, Graphics Exception\n"
                        "[ 11.000001] NVRM: Xid (PCI:0000:3b:00): 31, pid=2, name=b, " +
                            std::string(1 << 20, 'A') +
                            "\n[ 12.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=3, name=c, GPU has "
                            "fallen off the bus.\n");
  auto r = runGw({"--json", "xid", "scan", path});
  EXPECT_EQ(r.code, 1) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["events"].size(), 3u) << r.out.substr(0, 2000);
  EXPECT_EQ(j["events"][1]["code"], 31);
  EXPECT_LE(j["events"][1]["raw"].get<std::string>().size(), 16u * 1024 + 64);
  EXPECT_NE(j["events"][1]["raw"].get<std::string>().find("line truncated"), std::string::npos);
  EXPECT_EQ(j["events"][2]["code"], 79);
  EXPECT_EQ(j["truncated_lines"], 1);
  EXPECT_EQ(j["lines"], 3);
  auto text = runGw({"xid", "scan", path});
  EXPECT_TRUE(has(text.out, "1 line longer than 16384 bytes cut")) << describe(text);

  auto empty = runGw({"--json", "xid", "scan", dir.write("empty.log", "")});
  EXPECT_EQ(empty.code, 0) << describe(empty);
  auto e = empty.json();
  EXPECT_TRUE(e["events"].is_array() && e["events"].empty()) << empty.out;
  EXPECT_EQ(e["lines"], 0);
}

// `events --since T` without an agent keeps a kernel-log event stamped exactly T and drops it from
// one millisecond later: the window's start is inclusive (docs/cli.md, "since").
TEST(StackEvents, TheSinceTimeIsInclusiveToTheMillisecond) {
  TempDir dir;
  // A syslog line carries its wall-clock time: 2026-12-01T10:00:00Z is unix 1796119200.
  dir.write("root/dev/kmsg",
            "2026-12-01T10:00:00.000000+00:00 gpu01 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, "
            "Graphics Exception\n");
  const std::map<std::string, std::string> env{{"GPUWARDEN_RUNTIME_DIR", dir.path() + "/run"}};
  auto at = runGw(
      {"--json", "events", "--root", dir.path() + "/root", "--data-dir", dir.path() + "/data", "--since", "1796119200"},
      env);
  ASSERT_EQ(at.code, 0) << describe(at);
  const auto events = at.json()["events"];
  ASSERT_EQ(events.size(), 1u) << at.out;
  EXPECT_EQ(events[0]["ts_ms"], 1796119200000LL);
  EXPECT_EQ(events[0]["code"], 13);
  auto after = runGw({"--json", "events", "--root", dir.path() + "/root", "--data-dir", dir.path() + "/data", "--since",
                      "1796119200.001"},
                     env);
  ASSERT_EQ(after.code, 0) << describe(after);
  EXPECT_TRUE(after.json()["events"].empty()) << after.out;
}

TEST(StackXid, UnreadableFileExits2) {
  auto r = runGw({"xid", "scan", "/nonexistent/kern.log"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_TRUE(has(r.err, "/nonexistent/kern.log")) << describe(r);
}

TEST(StackExplain, Xid79) {
  auto r = runGw({"explain", "xid", "79"});
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(has(r.out, "Xid 79")) << describe(r);
  EXPECT_TRUE(has(r.out, "Action")) << describe(r);
}

TEST(StackExplain, Xid13IsTheApplicationsFault) {
  auto r = runGw({"explain", "xid", "13"});
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(has(r.out, "does not mark the GPU bad")) << describe(r);
}

TEST(StackExplain, Symptoms) {
  auto r = runGw({"explain", "No devices were found"});
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(has(r.out, "No devices were found")) << describe(r);
  EXPECT_TRUE(has(r.out, "Actions")) << describe(r);
  auto oom = runGw({"--json", "explain", "CUDA out of memory"});
  EXPECT_EQ(oom.code, 0) << describe(oom);
  EXPECT_FALSE(oom.json()["matches"].empty()) << oom.out;
}

TEST(StackExplain, UnknownSymptomAndXidExit2) {
  auto r = runGw({"explain", "the coffee machine is broken"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_TRUE(has(r.err, "no-devices")) << "lists what is known: " << describe(r);
  auto x = runGw({"explain", "xid", "99999"});
  EXPECT_EQ(x.code, 2) << describe(x);
  EXPECT_TRUE(has(x.err, "79")) << describe(x);
}

}  // namespace
}  // namespace gw::test
