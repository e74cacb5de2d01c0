// The pod-resources adapter (src/cluster/pod_resources.cpp): the mapping from a kubelet's List
// answer to each GPU's labels, and the watcher against a pod-resources server on a unix socket.
#include "cluster/pod_resources.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "../support/temp_dir.h"
#include "cluster/fake_kubelet.h"

namespace gw::cluster::k8s {
namespace {

using gw::test::addPod;
using gw::test::FakeKubelet;
using Labels = std::vector<std::pair<std::string, std::string>>;

const std::string kGpu0 = "GPU-9a3d5e1c-0000-4a6b-8c1e-000000000000";
const std::string kGpu1 = "GPU-9a3d5e1c-0001-4a6b-8c1e-000000000001";
const std::string kMig = "MIG-5c1a7e2b-77f3-5d3e-9a51-1c2b3d4e5f60";

Labels labels(const std::string& pod, const std::string& ns, const std::string& container) {
  return {{"container", container}, {"namespace", ns}, {"pod", pod}};
}

TEST(PodMapping, EachGpuOfAContainerGetsItsPodNamespaceAndContainer) {
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "train-0", {{"worker", "nvidia.com/gpu", {kGpu0, kGpu1}}, {"sidecar", "", {}}});
  addPod(r, "web", "infer-1", {{"server", "nvidia.com/mig-1g.10gb", {kMig}}});
  addPod(r, "kube-system", "dns", {{"coredns", "cpu-only.example/thing", {"GPU-not-ours"}}});
  const PodMapping m = mapPodResources(r, {});
  GpuLabels want{{kGpu0, labels("train-0", "ml", "worker")},
                 {kGpu1, labels("train-0", "ml", "worker")},
                 {kMig, labels("infer-1", "web", "server")}};
  EXPECT_EQ(m.labels, want);
  EXPECT_EQ(m.pods, 3u);
  EXPECT_EQ(m.containers, 2u);
  EXPECT_EQ(m.refused_count, 0u);
  EXPECT_EQ(m.not_uuids, 0u);
}

TEST(PodMapping, TimeSlicedReplicasOfOneGpuJoinTheirHoldersInOneOrder) {
  v1::ListPodResourcesResponse r;
  addPod(r, "b-team", "p2", {{"c2", "nvidia.com/gpu", {kGpu0 + "::1"}}});
  addPod(r, "a-team", "p1", {{"c1", "nvidia.com/gpu.shared", {kGpu0 + "::0"}}});
  const PodMapping m = mapPodResources(r, {});
  ASSERT_EQ(m.labels.size(), 1u);
  EXPECT_EQ(m.labels.at(kGpu0), labels("p1,p2", "a-team,b-team", "c1,c2"));
}

TEST(PodMapping, DeviceIdsThatAreNotUuidsLabelNothingAndAreCounted) {
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "by-index", {{"w", "nvidia.com/gpu", {"0", "1", "GPU-", "GPU-bad\"quote", kGpu1}}});
  const PodMapping m = mapPodResources(r, {});
  EXPECT_EQ(m.labels, (GpuLabels{{kGpu1, labels("by-index", "ml", "w")}}));
  EXPECT_EQ(m.not_uuids, 4u);
}

TEST(PodMapping, OddOrOversizeNamesAreRefusedWithTheirContainer) {
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", std::string(254, 'p'), {{"w", "nvidia.com/gpu", {kGpu0}}});
  addPod(r, "ml\"}evil", "p", {{"w", "nvidia.com/gpu", {kGpu0}}});
  addPod(r, "ml", "p", {{"line\nbreak", "nvidia.com/gpu", {kGpu0}}});
  addPod(r, "", "p", {{"w", "nvidia.com/gpu", {kGpu0}}});
  addPod(r, "ml", "fine", {{"w", "nvidia.com/gpu", {kGpu1}}});
  const PodMapping m = mapPodResources(r, {});
  EXPECT_EQ(m.labels, (GpuLabels{{kGpu1, labels("fine", "ml", "w")}}));
  EXPECT_EQ(m.refused_count, 4u);
  ASSERT_EQ(m.refused.size(), 4u);
  EXPECT_EQ(m.refused[0],
            "pod name \"" + std::string(40, 'p') + "...\": 254 bytes (at most 253); its GPUs are not labelled");
  EXPECT_EQ(m.refused[1], "namespace name \"ml?}evil\": a byte outside [A-Za-z0-9._-]; its GPUs are not labelled");
  EXPECT_EQ(m.refused[2], "container name \"line?break\": a byte outside [A-Za-z0-9._-]; its GPUs are not labelled");
  EXPECT_EQ(m.refused[3], "namespace name \"\": empty; its GPUs are not labelled");
}

TEST(PodMapping, ReadsNoMorePodsContainersOrDevicesThanItsBounds) {
  v1::ListPodResourcesResponse r;
  for (int i = 0; i < 5; ++i)
    addPod(r, "ml", "p" + std::to_string(i), {{"w", "nvidia.com/gpu", {"GPU-" + std::to_string(i)}}});
  PodResourcesLimits lim;
  lim.max_pods = 3;
  PodMapping m = mapPodResources(r, lim);
  EXPECT_EQ(m.pods, 3u);
  EXPECT_EQ(m.labels.size(), 3u);
  ASSERT_EQ(m.refused.size(), 1u);
  EXPECT_EQ(m.refused[0], "more than 3 pods; the rest is not read");

  lim = {};
  lim.max_devices = 2;
  m = mapPodResources(r, lim);
  EXPECT_EQ(m.labels.size(), 2u);
  EXPECT_EQ(m.refused, std::vector<std::string>{"more than 2 NVIDIA device ids; the rest is not read"});
}

TEST(PodMapping, ExactlyAtEachBoundNothingIsCut) {
  v1::ListPodResourcesResponse r;
  for (int i = 0; i < 2; ++i)
    addPod(r, "ml", "p" + std::to_string(i), {{"w", "nvidia.com/gpu", {"GPU-" + std::to_string(i)}}});
  PodResourcesLimits lim;
  lim.max_pods = 2;
  lim.max_containers = 2;
  lim.max_devices = 2;
  const PodMapping m = mapPodResources(r, lim);
  EXPECT_EQ(m.labels.size(), 2u);
  EXPECT_EQ(m.refused_count, 0u);
  EXPECT_TRUE(m.refused.empty()) << m.refused[0];
}

TEST(PodMapping, TooManyContainersStopTheReadingThere) {
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "p0",
         {{"a", "nvidia.com/gpu", {"GPU-0"}}, {"b", "nvidia.com/gpu", {"GPU-1"}}, {"c", "nvidia.com/gpu", {"GPU-2"}}});
  addPod(r, "ml", "p1", {{"d", "nvidia.com/gpu", {"GPU-3"}}});
  PodResourcesLimits lim;
  lim.max_containers = 2;
  const PodMapping m = mapPodResources(r, lim);
  EXPECT_EQ(m.labels, (GpuLabels{{"GPU-0", labels("p0", "ml", "a")}, {"GPU-1", labels("p0", "ml", "b")}}));
  EXPECT_EQ(m.pods, 1u);
  EXPECT_EQ(m.refused, std::vector<std::string>{"more than 2 containers; the rest is not read"});
}

// The documented defaults, each one past: 2048 pods, 8192 containers, 8192 device ids.
TEST(PodMapping, DefaultBoundsCutOnePast) {
  v1::ListPodResourcesResponse r;
  for (int i = 0; i < 2049; ++i) addPod(r, "ml", "p" + std::to_string(i), {{"w", "", {}}});
  PodMapping m = mapPodResources(r, {});
  EXPECT_EQ(m.pods, 2048u);
  EXPECT_EQ(m.refused, std::vector<std::string>{"more than 2048 pods; the rest is not read"});

  r.Clear();
  std::vector<gw::test::FakeContainer> many(8193, {"w", "", {}});
  addPod(r, "ml", "big", many);
  m = mapPodResources(r, {});
  EXPECT_EQ(m.refused, std::vector<std::string>{"more than 8192 containers; the rest is not read"});

  r.Clear();
  std::vector<std::string> ids(8193, "0");
  addPod(r, "ml", "big", {{"w", "nvidia.com/gpu", ids}});
  m = mapPodResources(r, {});
  EXPECT_EQ(m.not_uuids, 8192u);
  EXPECT_EQ(m.refused, std::vector<std::string>{"more than 8192 NVIDIA device ids; the rest is not read"});
}

TEST(PodMapping, RefusalsKeepFourLinesAndCountAll) {
  v1::ListPodResourcesResponse r;
  for (int i = 0; i < 5; ++i) addPod(r, "ml", "bad name " + std::to_string(i), {{"w", "nvidia.com/gpu", {kGpu0}}});
  const PodMapping m = mapPodResources(r, {});
  EXPECT_EQ(m.refused_count, 5u);
  ASSERT_EQ(m.refused.size(), 4u);
  EXPECT_EQ(m.refused[3], "pod name \"bad name 3\": a byte outside [A-Za-z0-9._-]; its GPUs are not labelled");
}

TEST(PodMapping, NamesAndDeviceIdsAtTheirLengthBounds) {
  // A name of 253 bytes (max_name_bytes) is labelled; 254 is refused (OddOrOversizeNames...).
  const std::string pod(253, 'p');
  // A device id of 128 bytes (max_device_id_bytes) names a GPU, 129 do not; "GPU-" needs one
  // more byte; a MIG UUID of an old driver has slashes.
  const std::string id128 = "GPU-" + std::string(124, 'a');
  const std::string old_mig = "MIG-GPU-9a3d5e1c-0000-4a6b-8c1e-000000000000/1/0";
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", pod, {{"w", "nvidia.com/gpu", {id128, id128 + "a", "GPU-a", old_mig}}});
  const PodMapping m = mapPodResources(r, {});
  EXPECT_EQ(m.refused_count, 0u);
  EXPECT_EQ(m.labels, (GpuLabels{{id128, labels(pod, "ml", "w")},
                                 {"GPU-a", labels(pod, "ml", "w")},
                                 {old_mig, labels(pod, "ml", "w")}}));
  EXPECT_EQ(m.not_uuids, 1u);
}

TEST(PodMapping, AllocatableCountsNvidiaDevicesByResource) {
  v1::AllocatableResourcesResponse a;
  auto* d = a.add_devices();
  d->set_resource_name("nvidia.com/gpu");
  d->add_device_ids(kGpu0);
  d->add_device_ids(kGpu1);
  d = a.add_devices();
  d->set_resource_name("example.com/fpga");
  d->add_device_ids("f0");
  EXPECT_EQ(allocatableNvidiaDevices(a, {}), (std::map<std::string, std::size_t>{{"nvidia.com/gpu", 2}}));
  // A resource with no name, or an odd one, is not counted; the rest up to max_devices over all.
  for (const char* name : {"nvidia.com/", "nvidia.com/bad name", "nvidia.com/mig-1g.10gb"}) {
    d = a.add_devices();
    d->set_resource_name(name);
    d->add_device_ids(kMig);
    d->add_device_ids(kMig + "x");
  }
  PodResourcesLimits lim;
  lim.max_devices = 3;
  EXPECT_EQ(allocatableNvidiaDevices(a, lim),
            (std::map<std::string, std::size_t>{{"nvidia.com/gpu", 2}, {"nvidia.com/mig-1g.10gb", 1}}));
}

// The watcher against a server on a unix socket: what it publishes and what it logs.
struct Watched {
  testsupport::TempDir dir{"gw-pods-test"};
  std::string socket = dir.path() + "/kubelet.sock";
  FakeKubelet kubelet{socket};
  std::vector<GpuLabels> published;
  std::vector<std::string> lines;
  std::unique_ptr<PodResourcesWatcher> w;

  explicit Watched(std::chrono::milliseconds timeout = std::chrono::milliseconds(2000),
                   std::size_t max_message_bytes = PodResourcesLimits{}.max_message_bytes) {
    PodResourcesOptions o;
    o.socket = socket;
    o.timeout = timeout;
    o.limits.max_message_bytes = max_message_bytes;
    o.publish = [this](GpuLabels l) { published.push_back(std::move(l)); };
    o.log = [this](const std::string& level, const std::string& m) { lines.push_back(level + ": " + m); };
    w = PodResourcesWatcher::manual(std::move(o));
  }
};

TEST(PodWatcher, PodsComeAndGoAndAGoneKubeletIsReportedOnce) {
  Watched t;
  // No server yet: nothing to label, one warning.
  EXPECT_FALSE(t.w->refresh());
  EXPECT_FALSE(t.w->refresh());
  ASSERT_EQ(t.lines.size(), 1u);
  EXPECT_EQ(t.lines[0], "warning: kubelet pod-resources at " + t.socket +
                            ": no such socket; pod labels dropped until it answers (reported once)");
  EXPECT_EQ(t.published, (std::vector<GpuLabels>{{}, {}}));

  ASSERT_TRUE(t.kubelet.start());
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "train-0", {{"worker", "nvidia.com/gpu", {kGpu0}}});
  t.kubelet.setPods(r);
  ASSERT_TRUE(t.w->refresh());
  EXPECT_EQ(t.published.back(), (GpuLabels{{kGpu0, labels("train-0", "ml", "worker")}}));
  ASSERT_EQ(t.lines.size(), 2u);
  EXPECT_EQ(t.lines[1], "info: kubelet pod-resources at " + t.socket +
                            " answers: 1 pods, 1 GPUs held by 1 containers; GetAllocatableResources not served");

  t.kubelet.setPods({});  // the pod went
  ASSERT_TRUE(t.w->refresh());
  EXPECT_EQ(t.published.back(), GpuLabels{});
  EXPECT_EQ(t.lines.size(), 2u);  // nothing new to say

  t.kubelet.stop();
  EXPECT_FALSE(t.w->refresh());
  EXPECT_FALSE(t.w->refresh());
  EXPECT_EQ(t.published.back(), GpuLabels{});
  ASSERT_EQ(t.lines.size(), 3u);
  EXPECT_TRUE(t.lines[2].starts_with("warning: kubelet pod-resources at " + t.socket + ": ")) << t.lines[2];
}

TEST(PodWatcher, ASlowKubeletMissesTheDeadlineAndDropsTheLabels) {
  Watched t(std::chrono::milliseconds(200));
  ASSERT_TRUE(t.kubelet.start());
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "train-0", {{"worker", "nvidia.com/gpu", {kGpu0}}});
  t.kubelet.setPods(r);
  v1::AllocatableResourcesResponse a;
  auto* d = a.add_devices();
  d->set_resource_name("nvidia.com/gpu");
  d->add_device_ids(kGpu0);
  t.kubelet.setAllocatable(a);
  ASSERT_TRUE(t.w->refresh());
  EXPECT_EQ(t.published.back().size(), 1u);
  EXPECT_EQ(t.lines.back(), "info: kubelet pod-resources at " + t.socket +
                                " answers: 1 pods, 1 GPUs held by 1 containers; allocatable: nvidia.com/gpu 1");

  t.kubelet.setDelay(std::chrono::milliseconds(5000));
  Status s = t.w->refresh();
  EXPECT_EQ(s.message(), "List: no answer within the deadline");
  EXPECT_EQ(t.published.back(), GpuLabels{});
  EXPECT_FALSE(t.w->refresh());
  EXPECT_EQ(t.lines.size(), 2u);
  EXPECT_EQ(t.lines[1],
            "warning: kubelet pod-resources at " + t.socket +
                ": List: no answer within the deadline; pod labels dropped until it answers (reported once)");

  t.kubelet.setDelay(std::chrono::milliseconds(0));
  ASSERT_TRUE(t.w->refresh());
  EXPECT_EQ(t.published.back().size(), 1u);
  EXPECT_EQ(t.lines.size(), 3u);
}

TEST(PodWatcher, AnAnswerOverTheMessageLimitIsRefused) {
  Watched t(std::chrono::milliseconds(2000), 1024);
  ASSERT_TRUE(t.kubelet.start());
  v1::ListPodResourcesResponse r;
  for (int i = 0; i < 40; ++i) addPod(r, "ml", "p" + std::to_string(i), {{"worker", "nvidia.com/gpu", {kGpu0}}});
  ASSERT_GT(r.ByteSizeLong(), 1024u);
  t.kubelet.setPods(r);
  Status s = t.w->refresh();
  EXPECT_TRUE(s.message().starts_with("List: answer too large")) << s.message();
  EXPECT_EQ(t.published.back(), GpuLabels{});
}

// gRPC's receive limit is 4 MiB by default: an answer of exactly that size is read, one byte
// more is refused.
TEST(PodWatcher, TheDefaultMessageLimitIsFourMiB) {
  Watched t;
  ASSERT_TRUE(t.kubelet.start());
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "train-0", {{"worker", "nvidia.com/gpu", {kGpu0}}, {"pad", "example.com/pad", {""}}});
  auto* pad = r.mutable_pod_resources(0)->mutable_containers(1)->mutable_devices(0)->mutable_device_ids(0);
  const std::size_t limit = 4 << 20;
  pad->assign(limit - r.ByteSizeLong(), 'x');
  pad->resize(pad->size() - (r.ByteSizeLong() - limit));  // the nested length prefixes grew with it
  ASSERT_EQ(r.ByteSizeLong(), limit);
  t.kubelet.setPods(r);
  Status s = t.w->refresh();
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(t.published.back().size(), 1u);
  pad->push_back('x');
  t.kubelet.setPods(r);
  s = t.w->refresh();
  EXPECT_TRUE(s.message().starts_with("List: answer too large")) << s.message();
}

// What an answer holds that labels nothing is said once, and again only when it changes.
TEST(PodWatcher, WhatLabelsNothingIsSaidWhenItChanges) {
  Watched t;
  ASSERT_TRUE(t.kubelet.start());
  const std::string prefix = "warning: kubelet pod-resources: ";
  const std::string index_ids =
      "1 NVIDIA device ids are not UUIDs and label nothing (device plugin DEVICE_ID_STRATEGY=index?)";
  v1::ListPodResourcesResponse r;
  addPod(r, "ml", "by-index", {{"w", "nvidia.com/gpu", {"0"}}});
  t.kubelet.setPods(r);
  ASSERT_TRUE(t.w->refresh());
  ASSERT_TRUE(t.w->refresh());
  ASSERT_EQ(t.lines.size(), 2u);  // the warning, then the first answer's info line
  EXPECT_EQ(t.lines[0], prefix + index_ids);
  addPod(r, "ml", "odd name", {{"w", "nvidia.com/gpu", {kGpu0}}});
  t.kubelet.setPods(r);
  ASSERT_TRUE(t.w->refresh());
  ASSERT_EQ(t.lines.size(), 3u);
  const std::string odd = "pod name \"odd name\": a byte outside [A-Za-z0-9._-]; its GPUs are not labelled";
  EXPECT_EQ(t.lines[2], prefix + index_ids + "; 1 refused: " + odd);
  addPod(r, "ml", "", {{"w", "nvidia.com/gpu", {kGpu1}}});
  t.kubelet.setPods(r);
  ASSERT_TRUE(t.w->refresh());
  ASSERT_EQ(t.lines.size(), 4u);
  EXPECT_EQ(t.lines[3],
            prefix + index_ids + "; 2 refused: " + odd + "; pod name \"\": empty; its GPUs are not labelled");
  t.kubelet.setPods({});
  ASSERT_TRUE(t.w->refresh());
  EXPECT_EQ(t.lines.size(), 4u);  // nothing refused: nothing to say
}

}  // namespace
}  // namespace gw::cluster::k8s
