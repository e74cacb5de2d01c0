// The Slurm adapter's logic (cluster/slurm.h) on the texts Slurm and the kernel really give: the
// gres.conf written for a node, `scontrol show node -o` as 22.05 prints it, the drain / resume
// decision, and a prolog's environment. The real daemons run in tests/slurm.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>

#include "../support/temp_dir.h"
#include "cluster/slurm.h"

namespace gw::cluster::slurm {
namespace {

TEST(SlurmGres, TypeFromTheModel) {
  EXPECT_EQ(gresType("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(gresType("NVIDIA H200"), "h200");
  EXPECT_EQ(gresType("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(gresType("NVIDIA L40S"), "l40s");
  EXPECT_EQ(gresType("NVIDIA GeForce RTX 4090"), "rtx4090");
  EXPECT_EQ(gresType("NVIDIA RTX A6000"), "rtxa6000");
  EXPECT_EQ(gresType("Tesla V100-SXM2-32GB"), "v100");
  EXPECT_EQ(gresType(""), "gpu");
  EXPECT_EQ(gresType("NVIDIA"), "gpu");
  // Each brand word is dropped, each family word takes the next; alone, it is the type.
  EXPECT_EQ(gresType("Quadro RTX 8000"), "rtx8000");
  EXPECT_EQ(gresType("NVIDIA GeForce GTX 1080 Ti"), "gtx1080");
  EXPECT_EQ(gresType("NVIDIA TITAN V"), "titanv");
  EXPECT_EQ(gresType("NVIDIA RTX"), "rtx");
  // Slurm takes letters, digits and '_' in a type; nothing else reaches gres.conf.
  EXPECT_EQ(gresType("NVIDIA H100_NVL (PCIe)"), "h100_nvl");
}

// Slurm's own name for the node wins over the host's; an empty variable counts as unset.
TEST(SlurmNode, NameFromTheFlagThenSlurmdThenTheShortHostName) {
  EXPECT_EQ(nodeName("given"), "given");
  ::setenv("SLURMD_NODENAME", "", 1);
  ::setenv("SLURM_NODENAME", "from-slurm", 1);
  EXPECT_EQ(nodeName(), "from-slurm");
  ::setenv("SLURMD_NODENAME", "from-slurmd", 1);
  EXPECT_EQ(nodeName(), "from-slurmd");
  ::unsetenv("SLURMD_NODENAME");
  ::unsetenv("SLURM_NODENAME");
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const std::string h = host;
  EXPECT_EQ(nodeName(), h.substr(0, h.find('.')));
}

// A two-socket host: CPUs 0-3 are cores 0-3 of socket 0 and 4-7 of socket 1, 8-15 their
// hyper-thread siblings; core ids restart at 0 on each socket, as Linux numbers them.
void writeTopology(const testsupport::TempDir& root) {
  for (unsigned cpu = 0; cpu < 16; ++cpu) {
    const unsigned core = cpu % 8;
    const std::string base = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    root.write(base + "physical_package_id", std::to_string(core / 4) + "\n");
    root.write(base + "core_id", std::to_string(core % 4) + "\n");
  }
  root.write("sys/devices/system/cpu/online", "0-15\n");  // not a cpuN entry: ignored
}

TEST(SlurmGres, LogicalCoresCountCoresNotCpus) {
  testsupport::TempDir root("gw-gres");
  writeTopology(root);
  auto cores = logicalCores(platform::FsRoot(root.path()));
  ASSERT_EQ(cores.size(), 16u);
  EXPECT_EQ(cores[0], 0u);
  EXPECT_EQ(cores[3], 3u);
  EXPECT_EQ(cores[4], 4u);  // socket 1, core 0
  EXPECT_EQ(cores[8], 0u);  // the sibling of CPU 0
  EXPECT_EQ(cores[15], 7u);
  root.write("sys/devices/system/cpu/cpu16/topology/core_id", "0\n");  // a CPU without its socket
  EXPECT_TRUE(logicalCores(platform::FsRoot(root.path())).empty());
  testsupport::TempDir empty("gw-gres");
  EXPECT_TRUE(logicalCores(platform::FsRoot(empty.path())).empty());
}

TEST(SlurmGres, OneLinePerGpuInMinorOrderWithItsCores) {
  testsupport::TempDir root("gw-gres");
  writeTopology(root);
  GresInput in;
  in.node = "gpu07";
  in.cores = logicalCores(platform::FsRoot(root.path()));
  // NVML's index order is not the minor order.
  in.gpus = {{0, "NVIDIA H100 80GB HBM3", 3, {4, 5, 6, 7, 12, 13, 14, 15}, false, {}},
             {1, "NVIDIA H100 80GB HBM3", 0, {0, 1, 2, 3, 8, 9, 10, 11}, false, {}},
             {2, "NVIDIA H100 80GB HBM3", 1, {0, 1, 2, 3, 8, 9, 10, 11}, false, {}}};
  EXPECT_EQ(renderGresConf(in),
            "# gres.conf for gpu07, written by `gpuwarden slurm gres`.\n"
            "# GPUs in device-minor order: Slurm's GPU numbers (SLURM_JOB_GPUS) follow it.\n"
            "#\n"
            "# slurm.conf needs GresTypes=gpu and, for this node:\n"
            "#   NodeName=gpu07 Gres=gpu:h100:3\n"
            "Name=gpu Type=h100 File=/dev/nvidia0 Cores=0-3\n"
            "Name=gpu Type=h100 File=/dev/nvidia1 Cores=0-3\n"
            "Name=gpu Type=h100 File=/dev/nvidia3 Cores=4-7\n");
}

TEST(SlurmGres, UnknownTopologyOrMinorIsSaidNotGuessed) {
  GresInput in;
  in.node = "n1";
  in.gpus = {{0, "NVIDIA L40S", 0, {0, 1}, false, {}}, {1, "NVIDIA L40S", -1, {2, 3}, false, {}}};
  const std::string text = renderGresConf(in);
  EXPECT_NE(text.find("# Cores= left out: the CPU topology"), std::string::npos) << text;
  EXPECT_NE(text.find("# GPU 1 left out: its device minor number is unknown"), std::string::npos) << text;
  EXPECT_NE(text.find("NodeName=n1 Gres=gpu:l40s:1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Name=gpu Type=l40s File=/dev/nvidia0\n"), std::string::npos) << text;
}

TEST(SlurmGres, MigInstancesWithTheirCapabilityDevices) {
  testsupport::TempDir root("gw-gres");
  root.write("proc/driver/nvidia-caps/mig-minors",
             "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\n"
             "gpu0/gi2/access 21\ngpu0/gi2/ci0/access 22\ngarbage\n");
  GresInput in;
  in.node = "n1";
  in.mig_minors = migMinors(platform::FsRoot(root.path()));
  EXPECT_EQ(in.mig_minors.size(), 6u);
  in.gpus = {{0, "NVIDIA A100-SXM4-80GB", 0, {}, true, {{"3g.40gb", 1, 0}, {"1g.10gb", 2, 0}}},
             {1, "NVIDIA A100-SXM4-80GB", 1, {}, false, {}}};
  const std::string text = renderGresConf(in);
  EXPECT_NE(text.find("NodeName=n1 Gres=gpu:a100:1,gpu:a100_1g.10gb:1,gpu:a100_3g.40gb:1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Name=gpu Type=a100_3g.40gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
                      "/dev/nvidia-caps/nvidia-cap13\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Name=gpu Type=a100_1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,"
                      "/dev/nvidia-caps/nvidia-cap22\n"),
            std::string::npos)
      << text;
  // Without the capability minors the MIG GPU is left out whole, and counted nowhere.
  in.mig_minors.clear();
  const std::string without = renderGresConf(in);
  EXPECT_NE(without.find("NodeName=n1 Gres=gpu:a100:1\n"), std::string::npos) << without;
  EXPECT_NE(without.find("# GPU 0 has MIG on"), std::string::npos) << without;
  EXPECT_EQ(without.find("MultipleFiles"), std::string::npos) << without;
}

// What `scontrol show node gwnode1 -o` printed on Slurm 22.05.8 (tests/slurm), cut short in the
// middle where nothing is read.
constexpr const char* kIdle =
    "NodeName=gwnode1 Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=1.43 "
    "Gres=gpu:h100:2 NodeAddr=127.0.0.1 NodeHostName=vm Port=57969 Version=22.05.8 Sockets=1 Boards=1 State=IDLE "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=gw  ExtSensorsTemp=n/s\n";
constexpr const char* kDrained =
    "NodeName=gwnode1 Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 Gres=gpu:h100:2 State=IDLE+DRAIN ThreadsPerCore=1 "
    "Partitions=gw  ExtSensorsTemp=n/s Reason=gpuwarden: GPU 3 xid: Xid 79 fell off the bus "
    "[root@2026-12-02T12:21:48]\n";

TEST(SlurmHealthcheck, ShowNodeGivesStateAndReasonWithoutTheStamp) {
  auto idle = parseShowNode(kIdle, "gwnode1");
  ASSERT_TRUE(idle) << idle.error();
  EXPECT_EQ(idle->state, "IDLE");
  EXPECT_EQ(idle->reason, "");
  EXPECT_FALSE(idle->draining());
  auto drained = parseShowNode(kDrained, "gwnode1");
  ASSERT_TRUE(drained);
  EXPECT_EQ(drained->state, "IDLE+DRAIN");
  EXPECT_EQ(drained->reason, "gpuwarden: GPU 3 xid: Xid 79 fell off the bus");
  EXPECT_TRUE(drained->drainedByUs());
  EXPECT_FALSE(parseShowNode(kIdle, "gwnode").ok());  // a name that is only a prefix
  EXPECT_FALSE(parseShowNode("Node nosuch not found\n", "nosuch").ok());
  EXPECT_FALSE(parseShowNode("NodeName=a Arch=x86_64\n", "a").ok());  // no State=
}

TEST(SlurmHealthcheck, OnlyTheUserAtTimeStampIsCutFromAReason) {
  auto n = parseShowNode("NodeName=n1 State=DRAIN Reason=bad fan [ticket 4711]", "n1");
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->state, "DRAIN");  // the last field of the line
  EXPECT_EQ(n->reason, "bad fan [ticket 4711]");
  n = parseShowNode("NodeName=n1 State=DRAIN Reason=bad fan [ticket 4711] [admin@2026-12-02T12:21:48]", "n1");
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->reason, "bad fan [ticket 4711]");
}

NodeState node(const std::string& state, const std::string& reason) { return {"n1", state, reason}; }

TEST(SlurmHealthcheck, DrainsOnCriticalResumesOnlyItsOwnDrain) {
  const auto idle = node("IDLE", "");
  const auto ours = node("IDLE+DRAIN", "gpuwarden: GPU 1 xid: Xid 48");
  const auto admin = node("MIXED+DRAIN", "bad fan, ticket 4711");
  const auto ours_draining = node("ALLOCATED+DRAIN", "gpuwarden: GPU 1 xid: Xid 48");
  // critical
  auto d = decideHealthAction(2, "GPU 1 xid: Xid 48 \"double-bit\" ECC", idle);
  EXPECT_EQ(d.action, HealthAction::Drain);
  EXPECT_EQ(d.reason, "gpuwarden: GPU 1 xid: Xid 48 double-bit ECC");
  EXPECT_EQ(decideHealthAction(2, "x", ours).action, HealthAction::None);   // idempotent
  EXPECT_EQ(decideHealthAction(2, "x", admin).action, HealthAction::None);  // the admin's reason stays
  // healthy or warning
  for (int code : {0, 1}) {
    EXPECT_EQ(decideHealthAction(code, "", ours).action, HealthAction::Resume) << code;
    EXPECT_EQ(decideHealthAction(code, "", ours_draining).action, HealthAction::Resume) << code;
    EXPECT_EQ(decideHealthAction(code, "", admin).action, HealthAction::None) << code;
    EXPECT_EQ(decideHealthAction(code, "", idle).action, HealthAction::None) << code;
  }
  // unknown: nothing, whatever the node's state
  for (const auto& n : {idle, ours, admin}) EXPECT_EQ(decideHealthAction(3, "", n).action, HealthAction::None);
  // A reason that only mentions gpuwarden later is not ours.
  EXPECT_EQ(decideHealthAction(0, "", node("DRAIN", "checked with gpuwarden: fine")).action, HealthAction::None);
}

TEST(SlurmHealthcheck, ReasonsAreCleanAndBounded) {
  EXPECT_EQ(cleanReason("a'b\"c`d$e\\f\ng"), "abcdef g");
  EXPECT_EQ(cleanReason(std::string(500, 'x')).size(), 200u);
  // Printable ASCII is 0x20 to 0x7e: both ends stay, the bytes just outside become spaces.
  EXPECT_EQ(cleanReason("\x1f !~\x7f"), "  !~ ");
}

// Answers every run with `result` and keeps what it was asked.
struct FakeRunner : platform::ProcessRunner {
  platform::RunResult result;
  std::vector<std::string> argv;
  platform::RunOptions options;
  platform::RunResult run(const std::vector<std::string>& a, const platform::RunOptions& o) override {
    argv = a;
    options = o;
    return result;
  }
};

// scontrol runs under a 15 s deadline and a 1 MiB output bound; its failure says the command and
// the first 500 bytes of what it printed, without the trailing newlines.
TEST(SlurmHealthcheck, ScontrolIsBoundedAndItsFailuresSayWhy) {
  FakeRunner r;
  r.result.exit_code = 0;
  r.result.out = kIdle;
  Scontrol s(r, "/opt/slurm/bin/scontrol");
  auto n = s.showNode("gwnode1");
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(n->state, "IDLE");
  EXPECT_EQ(r.argv, (std::vector<std::string>{"/opt/slurm/bin/scontrol", "show", "node", "gwnode1", "-o"}));
  EXPECT_EQ(r.options.timeout, std::chrono::milliseconds(15000));
  EXPECT_EQ(r.options.max_output, std::size_t{1} << 20);
  EXPECT_TRUE(s.drain("gwnode1", "gpuwarden: GPU 1 xid"));
  EXPECT_EQ(r.argv, (std::vector<std::string>{"/opt/slurm/bin/scontrol", "update", "NodeName=gwnode1", "State=DRAIN",
                                              "Reason=gpuwarden: GPU 1 xid"}));
  EXPECT_TRUE(s.resume("gwnode1"));
  EXPECT_EQ(r.argv,
            (std::vector<std::string>{"/opt/slurm/bin/scontrol", "update", "NodeName=gwnode1", "State=RESUME"}));

  const std::string cmd = "`/opt/slurm/bin/scontrol update NodeName=n9 State=RESUME` failed (exit 1)";
  r.result.exit_code = 1;
  r.result.out = "ignored while stderr says something";
  r.result.err = "slurm_update error: Invalid node name specified \n \n";
  EXPECT_EQ(s.resume("n9").message(), cmd + ": slurm_update error: Invalid node name specified");
  r.result.err = std::string(501, 'e');
  EXPECT_EQ(s.resume("n9").message(), cmd + ": " + std::string(500, 'e'));
  r.result.err = "";
  r.result.out = "from stdout\n";
  EXPECT_EQ(s.resume("n9").message(), cmd + ": from stdout");
  r.result.out = "\n";
  EXPECT_EQ(s.resume("n9").message(), cmd);
  r.result.timed_out = true;
  EXPECT_EQ(s.showNode("n9").error(),
            "`/opt/slurm/bin/scontrol show node n9 -o` did not answer within 15 s (slurmctld unreachable?)");
  r.result.not_found = true;
  EXPECT_EQ(s.showNode("n9").error(), "/opt/slurm/bin/scontrol not found (is slurm-client installed?)");
}

TEST(SlurmJobEnv, WhatSlurmdGivesAProlog) {
  std::map<std::string, std::string> env = {{"SLURM_JOB_ID", "1234"},
                                            {"SLURM_JOB_GPUS", "0,3"},
                                            {"CUDA_VISIBLE_DEVICES", "9"},
                                            {"SLURM_JOB_USER", "alice"},
                                            {"SLURM_JOB_UID", "1001"}};
  auto get = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto j = jobFromEnv(get);
  ASSERT_TRUE(j) << j.error();
  EXPECT_EQ(j->job_id, "1234");
  EXPECT_EQ(j->gpus, (std::vector<std::string>{"0", "3"}));  // SLURM_JOB_GPUS first
  EXPECT_EQ(j->user, "alice");
  EXPECT_EQ(j->uid, 1001);
  env.erase("SLURM_JOB_GPUS");
  env["CUDA_VISIBLE_DEVICES"] = "GPU-8e4397a2-893c-25e7-58d8-d0b2c955f9c4";
  ASSERT_TRUE(jobFromEnv(get));
  EXPECT_EQ(jobFromEnv(get)->gpus, (std::vector<std::string>{"GPU-8e4397a2-893c-25e7-58d8-d0b2c955f9c4"}));
  env.erase("CUDA_VISIBLE_DEVICES");
  EXPECT_TRUE(jobFromEnv(get)->gpus.empty());  // a job without GPUs
  env["SLURM_JOB_GPUS"] = "0,;rm";
  EXPECT_EQ(jobFromEnv(get).error(), "SLURM_JOB_GPUS holds ';rm', not a GPU");
  env["SLURM_JOB_GPUS"] = "0";
  env["SLURM_JOB_ID"] = "12 34";
  EXPECT_FALSE(jobFromEnv(get));
  env.erase("SLURM_JOB_ID");
  EXPECT_EQ(jobFromEnv(get).error(), "SLURM_JOB_ID is not set (run by slurmd as Prolog= / Epilog=)");
}

// jobFromEnv over a fixed environment.
Result<JobEnv> jobFrom(const std::map<std::string, std::string>& env) {
  return jobFromEnv([&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(SlurmJobEnv, GpuListBoundsAtTheirEdges) {
  // The list is read up to 16 KiB (empty items skipped); one byte more is refused unread.
  const std::string list = "0" + std::string(16 * 1024 - 1, ',');
  auto j = jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_GPUS", list}});
  ASSERT_TRUE(j) << j.error();
  EXPECT_EQ(j->gpus, std::vector<std::string>{"0"});
  EXPECT_EQ(jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_GPUS", list + ","}}).error(), "SLURM_JOB_GPUS is too long");
  // A GPU or MIG UUID is at most 96 bytes.
  for (const char* prefix : {"GPU-", "MIG-"}) {
    const std::string uuid = prefix + std::string(92, 'a');
    j = jobFrom({{"SLURM_JOB_ID", "1"}, {"CUDA_VISIBLE_DEVICES", uuid}});
    ASSERT_TRUE(j) << j.error();
    EXPECT_EQ(j->gpus, std::vector<std::string>{uuid});
    EXPECT_EQ(jobFrom({{"SLURM_JOB_ID", "1"}, {"CUDA_VISIBLE_DEVICES", uuid + "a"}}).error(),
              "CUDA_VISIBLE_DEVICES holds an over-long UUID");
  }
  // At most 64 GPUs (node::kMaxJobGpus).
  std::string gpus;
  for (int i = 0; i < 64; ++i) gpus += (i ? "," : "") + std::to_string(i);
  j = jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_GPUS", gpus}});
  ASSERT_TRUE(j) << j.error();
  EXPECT_EQ(j->gpus.size(), 64u);
  EXPECT_EQ(jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_GPUS", gpus + ",64"}}).error(),
            "SLURM_JOB_GPUS lists more than 64 GPUs");
  // An index has at most 9 digits; what is refused is quoted to 40 bytes.
  j = jobFrom({{"SLURM_JOB_ID", "1"}, {"GPU_DEVICE_ORDINAL", "123456789"}});
  ASSERT_TRUE(j) << j.error();
  EXPECT_EQ(j->gpus, std::vector<std::string>{"123456789"});
  EXPECT_EQ(jobFrom({{"SLURM_JOB_ID", "1"}, {"GPU_DEVICE_ORDINAL", "1234567890"}}).error(),
            "GPU_DEVICE_ORDINAL holds '1234567890', not a GPU");
  EXPECT_EQ(jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_GPUS", std::string(41, 'x')}}).error(),
            "SLURM_JOB_GPUS holds '" + std::string(40, 'x') + "', not a GPU");
}

TEST(SlurmJobEnv, EmptyMeansUnsetAndAnOddUserOrUidIsLeftOut) {
  // An empty SLURM_JOB_GPUS hides nothing behind it.
  auto j = jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_GPUS", ""}, {"CUDA_VISIBLE_DEVICES", "1"}});
  ASSERT_TRUE(j) << j.error();
  EXPECT_EQ(j->gpus, std::vector<std::string>{"1"});
  EXPECT_EQ(jobFrom({{"SLURM_JOB_ID", ""}}).error(), "SLURM_JOB_ID is not set (run by slurmd as Prolog= / Epilog=)");
  // A user name up to 64 bytes (node::kMaxJobUserBytes); past it, or odd, the job runs without one.
  j = jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_USER", std::string(64, 'u')}});
  ASSERT_TRUE(j) << j.error();
  EXPECT_EQ(j->user, std::string(64, 'u'));
  for (const std::string& user : {std::string(65, 'u'), std::string("a b"), std::string()}) {
    j = jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_USER", user}});
    ASSERT_TRUE(j) << j.error();
    EXPECT_EQ(j->user, "") << user;
  }
  // A uid of at most 9 digits, surrounding spaces allowed; anything else leaves it unknown (-1).
  for (const auto& [text, uid] : std::map<std::string, std::int64_t>{
           {" 1001 ", 1001}, {"999999999", 999999999}, {"1000000000", -1}, {"x", -1}, {"", -1}}) {
    j = jobFrom({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_UID", text}});
    ASSERT_TRUE(j) << j.error();
    EXPECT_EQ(j->uid, uid) << "'" << text << "'";
  }
}

// Children of this test stand for a job's leftovers: one that stops on SIGTERM, one that ignores
// it. Once killed they are zombies until reaped here, as a real leftover is until its parent
// reads it: the cleanup must count that as gone.
pid_t child(bool ignore_term) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (ignore_term) ::signal(SIGTERM, SIG_IGN);
    for (;;) ::pause();
  }
  return pid;
}

int signalOf(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status)) return 0;
  return WTERMSIG(status);
}

TEST(SlurmEpilog, LeftoversGetSigtermThenSigkillAfterTheGrace) {
  const pid_t polite = child(false), stubborn = child(true);
  ASSERT_GT(polite, 0);
  ASSERT_GT(stubborn, 0);
  // The child must have set its handler before the signal: wait until it sleeps in pause().
  for (pid_t p : {polite, stubborn})
    for (int i = 0; i < 200; ++i) {
      std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      if (text.find(") S ") != std::string::npos) break;
      ::usleep(5000);
    }
  const auto out = killLeftovers({polite, stubborn, 1, 0, -1}, std::chrono::milliseconds(300));
  EXPECT_EQ(out.killed, std::vector<int>{stubborn});
  EXPECT_TRUE(out.survivors.empty());
  EXPECT_EQ(signalOf(polite), SIGTERM);
  EXPECT_EQ(signalOf(stubborn), SIGKILL);
}

TEST(SlurmEpilog, AProcessAlreadyGoneNeedsNothing) {
  const pid_t p = child(false);
  ASSERT_GT(p, 0);
  ::kill(p, SIGKILL);
  ASSERT_EQ(signalOf(p), SIGKILL);  // reaped: the pid no longer exists
  const auto out = killLeftovers({p}, std::chrono::milliseconds(300));
  EXPECT_TRUE(out.killed.empty());
  EXPECT_TRUE(out.survivors.empty());
}

}  // namespace
}  // namespace gw::cluster::slurm
