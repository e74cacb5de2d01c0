// The sampling engine: one worker thread per GPU so that one GPU cannot hold up another, a
// deadline on every NVML call (a call past it marks the GPU stalled and its values stale, the
// rest go on), GPU_IS_LOST marks it lost, and the driver going away is survived by
// re-initialising with backoff and re-enumerating, GPUs keeping their identity by UUID.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collect/gpu_view.h"
#include "common/result.h"
#include "fields/catalog.h"
#include "nvml/nvml.h"

namespace gw::collect {

// How long one NVML call may take before its GPU counts as stalled: the agent's default, and
// the bound every CLI command puts on a GPU's reads.
inline constexpr std::chrono::milliseconds kDefaultCallDeadline{2000};

// While the driver is gone the supervisor tries NVML again after a wait that starts at half a
// second and doubles up to ten (docs/design.md); it looks at the workers every 100 ms.
inline constexpr std::chrono::milliseconds kReinitFirstWait{500};
inline constexpr std::chrono::milliseconds kReinitMaxWait{10000};
inline constexpr std::chrono::milliseconds kSuperviseTick{100};
inline std::chrono::milliseconds nextReinitWait(std::chrono::milliseconds wait) {
  return std::min(wait * 2, kReinitMaxWait);
}

struct SamplerConfig {
  std::chrono::milliseconds fast_interval{1000};                  // fast-moving fields (temperature, power, util)
  std::chrono::milliseconds slow_interval{10000};                 // ECC, retired pages, remapped rows, NVLink errors
  std::chrono::milliseconds call_deadline{kDefaultCallDeadline};  // an NVML call longer than this marks the GPU stalled
  std::vector<const fields::Field*> fields;  // numeric fields to sample; empty = every numeric field
};

// Receives every sample after a pass (for the history store). Called on the GPU's worker
// thread; must be cheap and thread safe.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void onSample(const GpuIdentity& gpu, const fields::Field& field, std::int64_t ts_ms, double value) = 0;
};

using SessionOpener = std::function<Result<std::unique_ptr<nvml::Session>>()>;

class Sampler {
 public:
  Sampler(SessionOpener opener, SamplerConfig config);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Opens NVML and starts the workers. Fails only if NVML cannot be opened at all at start
  // (the agent then reports the reason); after a successful start, driver loss is survived.
  Status start();
  void stop();

  void setSink(SampleSink* sink);  // before start()
  void reconfigure(const SamplerConfig& config);

  // Consistent copies of every GPU's latest state; never blocks on NVML.
  std::vector<GpuView> snapshot() const;
  AgentStats agentStats() const;
  // Changes whenever anything snapshot() or agentStats() return may have changed (a pass
  // published, a GPU stalled, the driver went or came back). Process-wide and monotonic.
  std::uint64_t generation() const;
  // Goes up every time the supervising loop goes round (about ten times a second), also while
  // the driver is away and while a GPU hangs in a call: what the service watchdog keeps alive.
  std::uint64_t heartbeat() const { return heartbeat_.load(std::memory_order_relaxed); }
  // The session, for inventory and events; may be null while the driver is down. Callers must
  // treat it as possibly re-created: hold it only for the duration of one request.
  std::shared_ptr<nvml::Session> session() const;

  // Instead of start(): one sampling pass of every GPU on the caller's thread, no workers (the
  // first one opens NVML and reads the static fields too). A synchronous monitor, the scenario
  // tests and the benchmarks step the sampler with it.
  void sampleOnce();

 private:
  struct Worker;
  void supervise();
  // threads=false: identify every GPU on the caller's thread and start no workers (benchmarks).
  Status enumerate(bool threads);
  void stopWorkers();

  SessionOpener opener_;
  SamplerConfig config_;
  SampleSink* sink_ = nullptr;

  mutable std::mutex mu_;  // guards session_, workers_, stats_
  std::shared_ptr<nvml::Session> session_;
  std::vector<std::shared_ptr<Worker>> workers_;
  std::vector<GpuView> down_views_;  // last known GPUs, shown as down while the driver is away
  AgentStats stats_;

  std::atomic<bool> running_{false};
  std::atomic<std::uint64_t> heartbeat_{0};
  std::mutex wake_mu_;
  std::condition_variable wake_;
  std::thread supervisor_;
};

}  // namespace gw::collect
