#include "cluster/pod_resources.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>

#include <grpcpp/grpcpp.h>

#include "cluster/pod_resources.grpc.pb.h"
#include "export/prometheus.h"
#include "platform/log.h"
#include "platform/thread_guard.h"

namespace gw::cluster::k8s {

namespace {

constexpr std::size_t kMaxRefusalLines = 4;

bool nameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

// What is wrong with a pod, namespace or container name; "" when it may become a label value.
std::string nameProblem(std::string_view s, const PodResourcesLimits& lim) {
  if (s.empty()) return "empty";
  if (s.size() > lim.max_name_bytes)
    return std::to_string(s.size()) + " bytes (at most " + std::to_string(lim.max_name_bytes) + ")";
  for (char c : s)
    if (!nameChar(c)) return "a byte outside [A-Za-z0-9._-]";
  return "";
}

// A printable, bounded excerpt of a refused string for the log.
std::string excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += (c >= 0x20 && c < 0x7f && c != '"') ? c : '?';
  if (s.size() > 40) out += "...";
  return "\"" + out + "\"";
}

bool nvidiaResource(std::string_view r) { return r.starts_with("nvidia.com/"); }

// The GPU or MIG UUID a device id names ("" when it is none): the NVIDIA device plugin's ids are
// UUIDs; with time-slicing each replica is the UUID with "::<n>" after it.
std::string deviceUuid(std::string_view id, const PodResourcesLimits& lim) {
  if (id.size() > lim.max_device_id_bytes) return "";
  if (auto p = id.find("::"); p != std::string_view::npos) id = id.substr(0, p);
  if (!id.starts_with("GPU-") && !id.starts_with("MIG-")) return "";
  if (id.size() <= 4) return "";
  for (char c : id) {
    // MIG UUIDs of old drivers read "MIG-GPU-<uuid>/<gi>/<ci>".
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '/';
    if (!ok) return "";
  }
  return std::string(id);
}

struct Holder {
  std::string pod, ns, container;
  auto key() const { return std::tie(ns, pod, container); }
  bool operator<(const Holder& o) const { return key() < o.key(); }
};

std::string describe(const grpc::Status& s) {
  std::string m = s.error_message();
  if (m.size() > 200) m = m.substr(0, 200) + "...";
  switch (s.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "no answer within the deadline";
    case grpc::StatusCode::UNAVAILABLE:
      return "unavailable (" + m + ")";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "answer too large (" + m + ")";
    default:
      return "gRPC error " + std::to_string(static_cast<int>(s.error_code())) + " (" + m + ")";
  }
}

}  // namespace

PodMapping mapPodResources(const v1::ListPodResourcesResponse& answer, const PodResourcesLimits& lim) {
  PodMapping out;
  auto refuse = [&](std::string line) {
    if (out.refused.size() < kMaxRefusalLines) out.refused.push_back(std::move(line));
    ++out.refused_count;
  };
  std::map<std::string, std::set<Holder>> holders;
  std::size_t containers = 0, devices = 0;
  bool cut = false, devices_cut = false;
  for (const auto& pod : answer.pod_resources()) {
    if (out.pods == lim.max_pods) {
      refuse("more than " + std::to_string(lim.max_pods) + " pods; the rest is not read");
      break;
    }
    ++out.pods;
    for (const auto& c : pod.containers()) {
      if (containers == lim.max_containers) {
        refuse("more than " + std::to_string(lim.max_containers) + " containers; the rest is not read");
        cut = true;
        break;
      }
      ++containers;
      std::vector<std::string> uuids;
      for (const auto& d : c.devices()) {
        if (!nvidiaResource(d.resource_name())) continue;
        for (const auto& id : d.device_ids()) {
          if (devices == lim.max_devices) {
            devices_cut = true;  // only an id past the bound is "the rest": exactly max_devices is all of them
            break;
          }
          ++devices;
          std::string u = deviceUuid(id, lim);
          if (u.empty())
            ++out.not_uuids;
          else
            uuids.push_back(std::move(u));
        }
      }
      if (uuids.empty()) continue;
      std::string problem;
      const char* field = "";
      if (problem = nameProblem(pod.name(), lim); !problem.empty())
        field = "pod";
      else if (problem = nameProblem(pod.namespace_(), lim); !problem.empty())
        field = "namespace";
      else if (problem = nameProblem(c.name(), lim); !problem.empty())
        field = "container";
      if (!problem.empty()) {
        refuse(std::string(field) + " name " +
               excerpt(field == std::string_view("pod")         ? pod.name()
                       : field == std::string_view("namespace") ? pod.namespace_()
                                                                : c.name()) +
               ": " + problem + "; its GPUs are not labelled");
        continue;
      }
      ++out.containers;
      for (auto& u : uuids) holders[u].insert(Holder{pod.name(), pod.namespace_(), c.name()});
    }
    if (cut) break;
  }
  if (devices_cut) refuse("more than " + std::to_string(lim.max_devices) + " NVIDIA device ids; the rest is not read");
  for (const auto& [uuid, set] : holders) {
    std::string pods, namespaces, names;
    for (const auto& h : set) {
      const bool first = pods.empty();
      pods += (first ? "" : ",") + h.pod;
      namespaces += (first ? "" : ",") + h.ns;
      names += (first ? "" : ",") + h.container;
    }
    out.labels[uuid] = {
        {exporter::kContainerLabel, names}, {exporter::kNamespaceLabel, namespaces}, {exporter::kPodLabel, pods}};
  }
  return out;
}

std::map<std::string, std::size_t> allocatableNvidiaDevices(const v1::AllocatableResourcesResponse& answer,
                                                            const PodResourcesLimits& lim) {
  std::map<std::string, std::size_t> out;
  std::size_t n = 0;
  for (const auto& d : answer.devices()) {
    if (!nvidiaResource(d.resource_name()) || nameProblem(d.resource_name().substr(11), lim) != "") continue;
    for (int i = 0; i < d.device_ids_size() && n < lim.max_devices; ++i, ++n) ++out[d.resource_name()];
  }
  return out;
}

// One channel per connection: gRPC's own reconnect backs off up to minutes, which would keep the
// labels away long after a restarted kubelet answers again; a failed call drops the channel and
// the next refresh dials afresh.
struct PodResourcesWatcher::Client {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesWatcher::PodResourcesWatcher(PodResourcesOptions options)
    : opt_(std::move(options)), client_(std::make_unique<Client>()) {}

std::unique_ptr<PodResourcesWatcher> PodResourcesWatcher::manual(PodResourcesOptions options) {
  return std::unique_ptr<PodResourcesWatcher>(new PodResourcesWatcher(std::move(options)));
}

std::unique_ptr<PodResourcesWatcher> PodResourcesWatcher::start(PodResourcesOptions options) {
  auto w = manual(std::move(options));
  w->log("info", "pod labels from the kubelet's pod-resources API at " + w->opt_.socket + ", every " +
                     std::to_string(w->opt_.interval.count()) + " ms");
  w->thread_ = std::thread(platform::guardedThread("pod-resources", [p = w.get()] { p->run(); }));
  return w;
}

PodResourcesWatcher::~PodResourcesWatcher() { stop(); }

void PodResourcesWatcher::stop() {
  {
    std::lock_guard l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PodResourcesWatcher::log(const std::string& level, const std::string& message) const {
  if (opt_.log)
    opt_.log(level, message);
  else
    platform::logLine(level, message);
}

void PodResourcesWatcher::run() {
  std::unique_lock l(mu_);
  while (!stop_) {
    l.unlock();
    (void)refresh();
    l.lock();
    cv_.wait_for(l, opt_.interval, [this] { return stop_; });
  }
}

Status PodResourcesWatcher::refresh() {
  auto fail = [&](const std::string& why) {
    client_->stub.reset();
    client_->channel.reset();
    opt_.publish({});
    if (!failing_)
      log("warning", "kubelet pod-resources at " + opt_.socket + ": " + why +
                         "; pod labels dropped until it answers (reported once)");
    failing_ = true;
    return Status::Error(why);
  };
  struct stat st {};
  if (::stat(opt_.socket.c_str(), &st) != 0) return fail("no such socket");
  if (!S_ISSOCK(st.st_mode)) return fail("not a unix socket");
  if (!client_->stub) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(static_cast<int>(opt_.limits.max_message_bytes));
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    client_->channel = grpc::CreateCustomChannel("unix:" + opt_.socket, grpc::InsecureChannelCredentials(), args);
    client_->stub = v1::PodResourcesLister::NewStub(client_->channel);
  }
  v1::ListPodResourcesResponse answer;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + opt_.timeout);
    const grpc::Status s = client_->stub->List(&ctx, v1::ListPodResourcesRequest{}, &answer);
    if (!s.ok()) return fail("List: " + describe(s));
  }
  PodMapping m = mapPodResources(answer, opt_.limits);
  // What the answer held that labels nothing, said when it changes rather than every refresh.
  std::string refusal;
  if (m.not_uuids > 0)
    refusal = std::to_string(m.not_uuids) +
              " NVIDIA device ids are not UUIDs and label nothing (device plugin DEVICE_ID_STRATEGY=index?)";
  if (m.refused_count > 0) {
    refusal += (refusal.empty() ? "" : "; ") + std::to_string(m.refused_count) + " refused: ";
    for (std::size_t i = 0; i < m.refused.size(); ++i) refusal += (i ? "; " : "") + m.refused[i];
  }
  if (refusal != last_refusal_ && !refusal.empty()) log("warning", "kubelet pod-resources: " + refusal);
  last_refusal_ = refusal;
  const std::size_t gpus = m.labels.size();
  opt_.publish(std::move(m.labels));
  if (failing_ || !answered_) {
    std::string what = "kubelet pod-resources at " + opt_.socket + " answers: " + std::to_string(m.pods) + " pods, " +
                       std::to_string(gpus) + " GPUs held by " + std::to_string(m.containers) + " containers";
    // Where served (kubelet 1.21+), what the kubelet can hand out says whether the device plugin
    // is there at all, which explains a node whose GPUs never get a pod label.
    v1::AllocatableResourcesResponse alloc;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + opt_.timeout);
    const grpc::Status s = client_->stub->GetAllocatableResources(&ctx, v1::AllocatableResourcesRequest{}, &alloc);
    if (s.ok()) {
      std::string list;
      for (const auto& [name, n] : allocatableNvidiaDevices(alloc, opt_.limits))
        list += (list.empty() ? "" : ", ") + name + " " + std::to_string(n);
      what += "; allocatable: " + (list.empty() ? std::string("no NVIDIA devices") : list);
    } else if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      what += "; GetAllocatableResources not served";
    }
    log("info", what);
  }
  failing_ = false;
  answered_ = true;
  return Status::Ok();
}

}  // namespace gw::cluster::k8s
