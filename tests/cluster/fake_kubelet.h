// A kubelet's pod-resources server for the tests: the PodResourcesLister service generated from
// our pod_resources.proto, on a unix socket, whose answers, delay and presence the test changes.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "cluster/pod_resources.grpc.pb.h"

namespace gw::test {

struct FakeContainer {
  std::string name;
  std::string resource;  // "nvidia.com/gpu"
  std::vector<std::string> device_ids;
};

// Appends a pod to a List answer.
inline void addPod(v1::ListPodResourcesResponse& r, const std::string& ns, const std::string& name,
                   const std::vector<FakeContainer>& containers) {
  auto* p = r.add_pod_resources();
  p->set_name(name);
  p->set_namespace_(ns);
  for (const auto& c : containers) {
    auto* cr = p->add_containers();
    cr->set_name(c.name);
    if (c.resource.empty()) continue;
    auto* d = cr->add_devices();
    d->set_resource_name(c.resource);
    for (const auto& id : c.device_ids) d->add_device_ids(id);
    d->mutable_topology()->add_nodes()->set_id(0);
  }
}

class FakeKubelet {
 public:
  explicit FakeKubelet(std::string socket) : socket_(std::move(socket)) {}
  ~FakeKubelet() { stop(); }

  bool start() {
    service_ = std::make_unique<Service>(*this);
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    b.RegisterService(service_.get());
    server_ = b.BuildAndStart();
    return server_ != nullptr;
  }
  void stop() {
    stopping_ = true;
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server_.reset();
    stopping_ = false;
  }

  void setPods(const v1::ListPodResourcesResponse& r) {
    std::lock_guard l(mu_);
    pods_ = r;
  }
  // nullopt: GetAllocatableResources answers UNIMPLEMENTED, like a kubelet before 1.21.
  void setAllocatable(std::optional<v1::AllocatableResourcesResponse> a) {
    std::lock_guard l(mu_);
    allocatable_ = std::move(a);
  }
  void setDelay(std::chrono::milliseconds d) { delay_ms_ = d.count(); }
  int listCalls() const { return list_calls_; }

 private:
  class Service final : public v1::PodResourcesLister::Service {
   public:
    explicit Service(FakeKubelet& k) : k_(k) {}
    grpc::Status List(grpc::ServerContext* ctx, const v1::ListPodResourcesRequest*,
                      v1::ListPodResourcesResponse* out) override {
      ++k_.list_calls_;
      // A slow kubelet: waits, but gives up when the caller or the test does.
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_.delay_ms_.load());
      while (std::chrono::steady_clock::now() < end && !ctx->IsCancelled() && !k_.stopping_)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::lock_guard l(k_.mu_);
      *out = k_.pods_;
      return grpc::Status::OK;
    }
    grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                         v1::AllocatableResourcesResponse* out) override {
      std::lock_guard l(k_.mu_);
      if (!k_.allocatable_) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "not served");
      *out = *k_.allocatable_;
      return grpc::Status::OK;
    }

   private:
    FakeKubelet& k_;
  };

  std::string socket_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  v1::ListPodResourcesResponse pods_;
  std::optional<v1::AllocatableResourcesResponse> allocatable_;
  std::atomic<long> delay_ms_{0};
  std::atomic<int> list_calls_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace gw::test
