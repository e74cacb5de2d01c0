// The Slurm adapter's logic (cluster/slurm.h) on the texts Slurm and the kernel really give: the
// gres.conf written for a node, `scontrol show node -o` as 22.05 prints it, the drain / resume
// decision, and a prolog's environment. The real daemons run in tests/slurm.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
