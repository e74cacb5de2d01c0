// Pod labels in the real agent: `gpuwarden serve --simulate …` with --pod-resources-socket at a
// pod-resources server written here (fake_kubelet.h); /metrics is scraped for the exact label
// sets of the GPUs each container holds, before and after the pod goes, while the kubelet is
// slow and after it is gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cluster/fake_kubelet.h"
#include "server/test_util.h"

namespace gw::test {
namespace {

using namespace std::chrono_literals;
using LabelSet = std::map<std::string, std::string>;

constexpr auto kBound = 30s;  // only a failure waits this long

struct PodAgent {
  TempDir dir;
  std::string socket = dir.path() + "/kubelet.sock";
  FakeKubelet kubelet{socket};
  std::unique_ptr<AgentProcess> proc;
  int port = 0;

  PodAgent(const std::string& scenario, const std::string& naming) {
    EXPECT_TRUE(kubelet.start());
    const std::string config = dir.write("agent.yaml", std::string(kFastAgentConfig) +
                                                           "kubernetes:\n  refresh_interval: 100ms\n"
                                                           "  timeout: 300ms\n");
    proc = std::make_unique<AgentProcess>(
        std::vector<std::string>{"serve", "--simulate", scenario, "--config", config, "--data-dir",
                                 dir.path() + "/data", "--metrics-naming", naming, "--pod-resources-socket", socket},
        std::map<std::string, std::string>{}, dir.path() + "/agent.log");
    port = proc->waitListening();
  }
  std::vector<Sample> metrics() const {
    auto r = httpGet(port, "/metrics", {}, 5000ms);
    return r.status == 200 ? parseExposition(r.body) : std::vector<Sample>{};
  }
  // Each series of `metric`, its label set by `key` label's value.
  std::map<std::string, LabelSet> byLabel(const std::string& metric, const std::string& key) const {
    std::map<std::string, LabelSet> out;
    for (const auto& s : select(metrics(), metric))
      if (s.labels.count(key)) out[s.labels.at(key)] = s.labels;
    return out;
  }
  std::size_t logCount(const std::string& needle) const {
    const std::string l = proc->log();
    std::size_t n = 0;
    for (auto p = l.find(needle); p != std::string::npos; p = l.find(needle, p + 1)) ++n;
    return n;
  }
};

// Label sets by key, one per line, for a failure's message.
std::string show(const std::map<std::string, LabelSet>& m) {
  std::string out;
  for (const auto& [k, l] : m) {
    out += "\n  " + k + ":";
    for (const auto& [name, value] : l) out += " " + name + "=" + value;
  }
  return out;
}

LabelSet with(LabelSet s, const std::string& pod, const std::string& ns, const std::string& container) {
  s["pod"] = pod;
  s["namespace"] = ns;
  s["container"] = container;
  return s;
}

TEST(PodLabelsAgent, ContainersGpusCarryTheirPodUntilItGoesAndAGoneKubeletDropsThem) {
  PodAgent a("dgx-h100", "dcgm");
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string temp = "DCGM_FI_DEV_GPU_TEMP";
  std::map<std::string, LabelSet> before;  // by gpu index
  ASSERT_TRUE(eventually([&] { return (before = a.byLabel(temp, "gpu")).size() == 8; }, kBound));
  for (const auto& [gpu, l] : before) ASSERT_EQ(l.count("pod"), 0u) << gpu;

  // A training pod holding GPUs 0 and 1; two time-sliced pods sharing GPU 2; a pod on a GPU of
  // another node (an unknown UUID) and one whose devices are indexes, which name no GPU.
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "train-0", {{"worker", "nvidia.com/gpu", {before["0"]["UUID"], before["1"]["UUID"]}}});
  addPod(r, "infer", "b", {{"srv", "nvidia.com/gpu.shared", {before["2"]["UUID"] + "::1"}}});
  addPod(r, "infer", "a", {{"srv", "nvidia.com/gpu.shared", {before["2"]["UUID"] + "::0"}}});
  addPod(r, "ml", "elsewhere", {{"w", "nvidia.com/gpu", {"GPU-00000000-dead-beef-0000-000000000000"}}});
  addPod(r, "ml", "by-index", {{"w", "nvidia.com/gpu", {"3"}}});
  a.kubelet.setPods(r);

  std::map<std::string, LabelSet> want = before;
  want["0"] = with(before["0"], "train-0", "ml", "worker");
  want["1"] = with(before["1"], "train-0", "ml", "worker");
  want["2"] = with(before["2"], "a,b", "infer,infer", "srv,srv");
  std::map<std::string, LabelSet> got;
  ASSERT_TRUE(eventually([&] { return (got = a.byLabel(temp, "gpu")) == want; }, kBound))
      << "GPU 0 has " << got["0"].size() << " labels, pod=" << got["0"]["pod"] << "\n"
      << a.proc->log();
  // Every GPU series has them, not only one metric.
  for (const auto& s : a.metrics()) {
    if (!s.name.starts_with("DCGM_FI_DEV") || !s.labels.count("UUID") || s.labels.at("UUID") != before["0"]["UUID"])
      continue;
    EXPECT_EQ(s.labels.count("pod") ? s.labels.at("pod") : "", "train-0") << s.name;
  }
  EXPECT_EQ(a.logCount("kubelet pod-resources at " + a.socket +
                       " answers: 0 pods, 0 GPUs held by 0 containers; GetAllocatableResources not served"),
            1u)
      << a.proc->log();
  EXPECT_EQ(a.logCount("kubelet pod-resources: 1 NVIDIA device ids are not UUIDs and label nothing"), 1u)
      << a.proc->log();

  // The training pod goes: its GPUs lose the labels, the shared GPU keeps its own.
  v1::ListPodResourcesResponse r2;
  addPod(r2, "infer", "a", {{"srv", "nvidia.com/gpu.shared", {before["2"]["UUID"] + "::0"}}});
  a.kubelet.setPods(r2);
  want = before;
  want["2"] = with(before["2"], "a", "infer", "srv");
  ASSERT_TRUE(eventually([&] { return (got = a.byLabel(temp, "gpu")) == want; }, kBound)) << a.proc->log();

  // A slow kubelet (past the 300 ms deadline) drops the labels and is reported once, however
  // many refreshes miss it.
  const int calls = a.kubelet.listCalls();
  a.kubelet.setDelay(3000ms);
  ASSERT_TRUE(eventually([&] { return a.byLabel(temp, "gpu") == before; }, kBound)) << a.proc->log();
  ASSERT_TRUE(eventually([&] { return a.kubelet.listCalls() >= calls + 4; }, kBound));
  EXPECT_EQ(a.logCount("List: no answer within the deadline; pod labels dropped until it answers (reported once)"), 1u)
      << a.proc->log();

  // Back, then gone: the labels return, then leave with the kubelet, reported once more.
  a.kubelet.setDelay(0ms);
  ASSERT_TRUE(eventually([&] { return a.byLabel(temp, "gpu") == want; }, kBound)) << a.proc->log();
  const std::size_t warnings = a.logCount("pod labels dropped until it answers");
  a.kubelet.stop();
  ASSERT_TRUE(eventually([&] { return a.byLabel(temp, "gpu") == before; }, kBound)) << a.proc->log();
  std::this_thread::sleep_for(1s);  // ten refresh periods with the kubelet gone
  EXPECT_EQ(a.logCount("pod labels dropped until it answers"), warnings + 1) << a.proc->log();
}

TEST(PodLabelsAgent, MigDevicesAreLabelledByTheirMigUuid) {
  PodAgent a(std::string(GW_SOURCE_DIR) + "/scenarios/mig-a100.yaml", "native");
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string used = "gpuwarden_gpu_memory_used_bytes";  // a MIG device has its own
  std::map<std::string, LabelSet> before;                      // by uuid
  // Every device's series, not only the MIG ones: each GPU is sampled on its own thread, and a
  // page taken before GPU 1's first sample would make a "before" that no later page equals.
  ASSERT_TRUE(eventually(
      [&] {
        before = a.byLabel(used, "uuid");
        return before.size() == 6 && std::count_if(before.begin(), before.end(),
                                                   [](const auto& kv) { return kv.first.starts_with("MIG-"); }) == 4;
      },
      kBound))
      << a.proc->log();
  std::vector<std::string> migs;
  for (const auto& [uuid, l] : before)
    if (uuid.starts_with("MIG-")) migs.push_back(uuid);
  // Mixed strategy: each MIG slice is its own resource, named by its profile.
  v1::ListPodResourcesResponse r;
  const std::string profile0 = before[migs[0]]["mig_profile"], profile1 = before[migs[1]]["mig_profile"];
  addPod(r, "ml", "small", {{"c", "nvidia.com/mig-" + profile0, {migs[0]}}});
  addPod(r, "ml", "other", {{"c", "nvidia.com/mig-" + profile1, {migs[1]}}});
  a.kubelet.setPods(r);
  std::map<std::string, LabelSet> want = before;
  want[migs[0]] = with(before[migs[0]], "small", "ml", "c");
  want[migs[1]] = with(before[migs[1]], "other", "ml", "c");
  std::map<std::string, LabelSet> got;
  ASSERT_TRUE(eventually([&] { return (got = a.byLabel(used, "uuid")) == want; }, kBound))
      << "got " << show(got) << "\nwant " << show(want) << "\n"
      << a.proc->log();
  a.kubelet.setPods({});
  ASSERT_TRUE(eventually([&] { return a.byLabel(used, "uuid") == before; }, kBound)) << a.proc->log();
}

}  // namespace
}  // namespace gw::test
