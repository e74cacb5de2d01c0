// Kubernetes (docs/kubernetes.md): which pod and container hold each GPU, from the kubelet's
// pod-resources gRPC API (pod_resources.proto) on its unix socket. A watcher thread asks the
// kubelet every refresh interval, off the scrape path, under a deadline per call, and hands the
// node the labels of each GPU (dcgm-exporter's names: pod, namespace, container); a kubelet that
// is gone, slow or refusing drops the labels and is reported once, when that starts, not on every
// refresh.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/result.h"

namespace v1 {
class ListPodResourcesResponse;
class AllocatableResourcesResponse;
}  // namespace v1

namespace gw::cluster::k8s {

inline constexpr const char* kDefaultPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

// Bounds on what is read from the kubelet: a node runs at most a few hundred pods, so anything
// past these is a broken or hostile answer, cut there and reported.
struct PodResourcesLimits {
  std::size_t max_message_bytes = 4 << 20;  // gRPC's receive limit on one answer
  std::size_t max_pods = 2048;
  std::size_t max_containers = 8192;  // over all pods
  std::size_t max_devices = 8192;     // device ids of NVIDIA resources, over all containers
  // Kubernetes names: a pod's name is a DNS subdomain (at most 253), a namespace's and a
  // container's a DNS label (at most 63).
  std::size_t max_name_bytes = 253;
  std::size_t max_device_id_bytes = 128;
};

// UUID ("GPU-…" or "MIG-…") -> its labels, name order. Several containers on one GPU
// (time-slicing) share it: each label's values are joined with ',' in the same order, so the
// n-th pod goes with the n-th namespace and the n-th container.
using GpuLabels = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

struct PodMapping {
  GpuLabels labels;
  std::size_t pods = 0;        // pods read
  std::size_t containers = 0;  // containers holding at least one GPU
  // Device ids of NVIDIA resources that are not GPU or MIG UUIDs (a device plugin run with
  // DEVICE_ID_STRATEGY=index): they name no GPU the exporter can find, so they label nothing.
  std::size_t not_uuids = 0;
  // What was refused or cut, one line each (at most a few; the count is in `refused_count`).
  std::vector<std::string> refused;
  std::size_t refused_count = 0;
};

// The labels of each GPU a List answer hands a container. Resources are the NVIDIA device
// plugin's (`nvidia.com/…`: gpu, mig-<profile>, their `.shared` forms); device ids are UUIDs,
// a time-slicing replica's "::<n>" suffix dropped. A pod, namespace or container name that is
// empty, too long or outside [A-Za-z0-9._-] is refused with its container, never labelled.
PodMapping mapPodResources(const v1::ListPodResourcesResponse& answer, const PodResourcesLimits& limits);

// NVIDIA device ids GetAllocatableResources reports, by resource name.
std::map<std::string, std::size_t> allocatableNvidiaDevices(const v1::AllocatableResourcesResponse& answer,
                                                            const PodResourcesLimits& limits);

struct PodResourcesOptions {
  std::string socket;  // the kubelet's pod-resources socket
  std::chrono::milliseconds interval{10000};
  std::chrono::milliseconds timeout{2000};  // deadline of each call
  PodResourcesLimits limits;
  // Receives every refresh's labels (empty when the kubelet did not answer); required.
  std::function<void(GpuLabels)> publish;
  // Lifecycle lines ("info" | "warning", message); platform::logLine when empty.
  std::function<void(const std::string&, const std::string&)> log;
};

class PodResourcesWatcher {
 public:
  // Starts the refresh thread; its first refresh happens at once.
  static std::unique_ptr<PodResourcesWatcher> start(PodResourcesOptions options);
  // Without a thread: refresh() is called by the owner (tests).
  static std::unique_ptr<PodResourcesWatcher> manual(PodResourcesOptions options);
  ~PodResourcesWatcher();
  PodResourcesWatcher(const PodResourcesWatcher&) = delete;
  PodResourcesWatcher& operator=(const PodResourcesWatcher&) = delete;

  void stop();
  // Asks the kubelet once and publishes; the error when it did not answer.
  Status refresh();

 private:
  struct Client;
  explicit PodResourcesWatcher(PodResourcesOptions options);
  void run();
  void log(const std::string& level, const std::string& message) const;

  PodResourcesOptions opt_;
  std::unique_ptr<Client> client_;
  bool failing_ = false;  // the last refresh failed (and was reported)
  bool answered_ = false;
  std::string last_refusal_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gw::cluster::k8s
