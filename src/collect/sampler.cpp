#include "collect/sampler.h"

#include "platform/deadline.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "nvml/errors.h"
#include "nvml/inventory.h"
#include "platform/clock.h"
#include "platform/host_name.h"
#include "platform/log.h"
#include "platform/thread_guard.h"

namespace gw::collect {
namespace {

std::atomic<std::uint64_t> g_view_version{0};
std::uint64_t nextViewVersion() { return g_view_version.fetch_add(1, std::memory_order_relaxed) + 1; }

using Clock = std::chrono::steady_clock;

using platform::monoMs;
using platform::wallMs;

bool driverGone(int code) {
  return code == NVML_ERROR_UNINITIALIZED || code == NVML_ERROR_DRIVER_NOT_LOADED ||
         code == NVML_ERROR_LIB_RM_VERSION_MISMATCH;
}

double fromFieldValue(const nvmlFieldValue_t& v) {
  switch (v.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return v.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return v.value.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(v.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(v.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(v.value.sllVal);
    default:
      return 0;
  }
}

}  // namespace

const char* stateName(GpuState s) {
  switch (s) {
    case GpuState::Up:
      return "up";
    case GpuState::Stalled:
      return "stalled";
    case GpuState::Lost:
      return "lost";
    case GpuState::Down:
      return "down";
  }
  return "unknown";
}

// One GPU (and its MIG devices), sampled on its own thread.
struct Sampler::Worker {
  struct Target {
    GpuIdentity id;
    nvml::Device device;
    std::vector<FieldValue> values;  // working copy, indexed by catalog index
    std::vector<char> unsupported;   // catalog index -> never ask again (until re-enumeration)
    std::vector<char> unbatchable;   // field id answered NOT_SUPPORTED in a batch but works alone
    GpuState state = GpuState::Up;
    std::string reason;
    std::uint64_t errors = 0;
    std::uint64_t samples = 0;
    std::int64_t last_sample_ms = 0;
    // Profiling (GPM): the sample of the last pass and the buffer for this one; the metrics are
    // the change between the two.
    nvml::GpmSample gpm_prev, gpm_cur;
    bool gpm_has_prev = false;
    bool gpm_off = false;  // no profiling here: said once, never asked again (until re-enumeration)
  };

  unsigned index = 0;  // NVML index of the GPU this worker owns
  std::vector<Target> targets;
  std::vector<const fields::Field*> fields;
  std::shared_ptr<nvml::Session> session;  // keeps the library initialised while we run
  SampleSink* sink = nullptr;
  std::chrono::milliseconds fast{1000}, slow{10000}, deadline{2000};

  std::thread thread;
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> call_started_ms{0};  // monotonic; 0 when not inside an NVML call
  std::atomic<bool> driver_gone{false};
  std::atomic<bool> abandoned{false};  // detached by stopWorkers while stuck in a call
  std::mutex sleep_mu;
  std::condition_variable sleep_cv;

  mutable std::mutex mu;  // guards published, identified
  std::vector<GpuView> published;
  bool identified = false;
  std::condition_variable identified_cv;
  bool stalled = false;  // set by the supervisor while a call is past its deadline
  std::string stalled_reason;

  // Batched reads through nvmlDeviceGetFieldValues: one call instead of one per field.
  std::vector<nvmlFieldValue_t> batch;
  std::vector<std::size_t> batch_index;

  // Profiling fields among `fields`, and the request for them (reused every pass).
  std::vector<const fields::Field*> gpm_fields;
  std::vector<nvmlGpmMetric_t> gpm_request;
  std::vector<const fields::Field*> gpm_requested;
  enum class GpmSupport { Unknown, Yes, No } gpm_support = GpmSupport::Unknown;

  // Samples belong to the session's library: free them while it is still loaded (members are
  // destroyed after this body, the session among them).
  ~Worker() {
    for (auto& t : targets) {
      t.gpm_prev.reset();
      t.gpm_cur.reset();
    }
  }

  template <typename F>
  auto timed(F&& f) {
    call_started_ms = monoMs();
    auto r = f();
    call_started_ms = 0;
    return r;
  }

  // Finds out which GPU (and MIG devices) index is, on this thread: on a hung GPU these calls
  // block, and the deadline watchdog then shows the GPU as stalled instead of holding up the start.
  void identify() {
    GpuIdentity id;
    id.index = index;
    // id.device stays empty until the driver names the node: /dev/nvidia<minor> follows the
    // driver's probe order, not NVML's index, so the index would name another GPU's node.
    std::vector<Target> found;
    auto add = [&](GpuIdentity gid, nvml::Device d, GpuState state, std::string reason) {
      Target t;
      t.id = std::move(gid);
      t.device = d;
      t.values.assign(fields::all().size(), FieldValue{});
      t.unsupported.assign(fields::all().size(), 0);
      t.unbatchable.assign(fields::all().size(), 0);
      t.state = state;
      t.reason = std::move(reason);
      found.push_back(std::move(t));
    };
    auto dev = timed([&] { return session->deviceByIndex(index); });
    if (!dev) {
      if (driverGone(dev.status().nvmlCode())) driver_gone = true;
      add(id, nvml::Device(), GpuState::Lost, dev.error());
    } else {
      auto uuid = timed([&] { return dev->uuid(); });
      id.uuid = uuid.value_or("");
      id.name = timed([&] { return dev->name(); }).value_or("");
      if (auto pci = timed([&] { return dev->pciInfo(); })) id.pci_bus_id = pci->bus_id;
      if (auto minor = timed([&] { return dev->minorNumber(); })) id.device = "nvidia" + std::to_string(*minor);
      const bool lost = !uuid && nvml::isLost(uuid.status().nvmlCode());
      add(id, *dev, lost ? GpuState::Lost : GpuState::Up, lost ? uuid.error() : "");
      if (!lost && timed([&] { return dev->migEnabled(); }).value_or(false)) {
        unsigned max = timed([&] { return dev->maxMigDevices(); }).value_or(0);
        for (unsigned m = 0; m < max && !stop; ++m) {
          auto md = timed([&] { return dev->migDevice(m); });
          if (!md) continue;
          GpuIdentity mid = id;
          mid.is_mig = true;
          mid.parent_uuid = id.uuid;
          mid.uuid = timed([&] { return md->uuid(); }).value_or("");
          mid.name = timed([&] { return md->name(); }).value_or(id.name);
          mid.gpu_instance_id = timed([&] { return md->gpuInstanceId(); }).value_or(0);
          mid.compute_instance_id = timed([&] { return md->computeInstanceId(); }).value_or(0);
          if (auto a = timed([&] { return md->attributes(); }))
            mid.mig_profile =
                nvml::gpuInstanceProfile(nvml::migProfileName(mid.name, a->gpuInstanceSliceCount, a->memorySizeMB));
          add(mid, *md, GpuState::Up, "");
        }
      }
    }
    std::lock_guard lock(mu);
    targets = std::move(found);
    published.clear();
    for (const auto& t : targets) {
      GpuView v;
      v.id = t.id;
      v.state = t.state;
      v.state_reason = t.reason;
      v.values = t.values;
      v.version = nextViewVersion();
      published.push_back(std::move(v));
    }
    identified = true;
    identified_cv.notify_all();
  }

  // Says once per GPU why it has no profiling metrics; a GPU without GPM is no error.
  void gpmUnavailable(const std::string& why) {
    if (gpm_support != GpmSupport::No) {
      gpm_support = GpmSupport::No;
      std::string who = "GPU " + std::to_string(index);
      if (!targets.empty() && !targets[0].id.uuid.empty()) who += " (" + targets[0].id.uuid + ")";
      platform::logLine("info", who + ": no profiling metrics (DCGM_FI_PROF_*): " + why);
    }
    for (auto& x : targets) {
      x.gpm_off = true;
      x.gpm_prev.reset();
      x.gpm_cur.reset();
    }
  }

  // One GPM sample of t, and the metrics over the interval since its previous one. True when the
  // GPU or the driver was lost on the way.
  bool gpmPass(Target& t, std::int64_t now) {
    if (gpm_fields.empty() || t.gpm_off || targets.empty()) return false;
    const nvml::Device& gpu = targets[0].device;  // a MIG instance is sampled through its parent
    if (gpm_support == GpmSupport::Unknown) {
      auto ok = timed([&] { return gpu.gpmSupported(); });
      if (!ok) {
        const int code = ok.status().nvmlCode();
        if (nvml::isLost(code) || driverGone(code)) {
          record(t, *gpm_fields[0], fields::indexOf(*gpm_fields[0]), ok.status(), now);
          return true;
        }
        gpmUnavailable(ok.error());
        return false;
      }
      if (!*ok) {
        gpmUnavailable("the GPU does not support GPM (Hopper and newer do)");
        return false;
      }
      gpm_support = GpmSupport::Yes;
    }
    if (!t.gpm_cur.handle()) {
      auto a = gpu.gpmAllocSample();
      auto b = a ? gpu.gpmAllocSample() : Result<nvml::GpmSample>(a.status());
      if (!a || !b) {
        gpmUnavailable((a ? b.error() : a.error()));
        return false;
      }
      t.gpm_prev = std::move(a).value();
      t.gpm_cur = std::move(b).value();
      t.gpm_has_prev = false;
    }
    Status st = timed([&] {
      return t.id.is_mig ? gpu.gpmMigSampleGet(t.id.gpu_instance_id, t.gpm_cur) : gpu.gpmSampleGet(t.gpm_cur);
    });
    if (!st.ok()) {
      t.gpm_has_prev = false;
      if (nvml::isUnsupported(st.nvmlCode())) {
        gpmUnavailable(st.message());
        return false;
      }
      record(t, *gpm_fields[0], fields::indexOf(*gpm_fields[0]), st, now);
      return t.state == GpuState::Lost || driver_gone;
    }
    if (t.gpm_has_prev) {
      gpm_request.clear();
      gpm_requested.clear();
      for (const fields::Field* f : gpm_fields) {
        if (t.unsupported[fields::indexOf(*f)]) continue;
        nvmlGpmMetric_t m{};
        m.metricId = f->gpm.metric;
        gpm_request.push_back(m);
        gpm_requested.push_back(f);
      }
      Status ms = timed([&] {
        return gpu.gpmMetrics(t.gpm_prev, t.gpm_cur, gpm_request.data(), static_cast<unsigned>(gpm_request.size()));
      });
      for (std::size_t i = 0; i < gpm_requested.size(); ++i) {
        const fields::Field& f = *gpm_requested[i];
        const nvmlGpmMetric_t& m = gpm_request[i];
        if (!ms.ok()) {
          record(t, f, fields::indexOf(f), ms, now);
          break;
        }
        if (m.nvmlReturn == NVML_SUCCESS && std::isfinite(m.value)) {
          record(t, f, fields::indexOf(f), m.value * f.gpm.scale, now);
        } else {
          const nvmlReturn_t rc = m.nvmlReturn == NVML_SUCCESS ? NVML_ERROR_UNKNOWN : m.nvmlReturn;
          record(t, f, fields::indexOf(f), nvml::nvmlError(rc, "nvmlGpmMetricsGet"), now);
        }
      }
      if (t.state == GpuState::Lost || driver_gone) return true;
    }
    std::swap(t.gpm_prev, t.gpm_cur);
    t.gpm_has_prev = true;
    return false;
  }

  void run() {
    runLoop();
    if (abandoned) platform::noteAbandonedDone();
  }

  void runLoop() {
    identify();
    auto next_slow = Clock::now();
    bool first = true;
    while (!stop) {
      const auto start = Clock::now();
      const bool slow_due = start >= next_slow;
      if (slow_due) next_slow = start + slow;
      pass(first, slow_due);
      first = false;
      std::unique_lock lock(sleep_mu);
      sleep_cv.wait_until(lock, start + fast, [&] { return stop.load(); });
    }
  }

  bool due(const fields::Field& f, bool first, bool slow_due) const {
    switch (f.cadence) {
      case fields::Cadence::Fast:
        return true;
      case fields::Cadence::Slow:
        return slow_due;
      case fields::Cadence::Static:
        return first;
    }
    return false;
  }

  void record(Target& t, const fields::Field& f, std::size_t idx, const Result<double>& r, std::int64_t now) {
    if (r.ok()) {
      t.values[idx] = {*r, now, true};
      if (sink) sink->onSample(t.id, f, now, *r);
      return;
    }
    const int code = r.status().nvmlCode();
    t.values[idx].valid = false;
    if (nvml::isUnsupported(code)) {
      t.unsupported[idx] = 1;
    } else if (nvml::isLost(code)) {
      t.state = GpuState::Lost;
      t.reason = r.error();
    } else if (driverGone(code)) {
      driver_gone = true;
      t.reason = r.error();
    } else {
      ++t.errors;
    }
  }

  void pass(bool first, bool slow_due) {
    for (auto& t : targets) {
      if (stop) return;
      // Lost before it could be opened: there is nothing to ask until the driver re-enumerates.
      if (!t.device.valid()) continue;
      const std::int64_t now = wallMs();
      t.state = GpuState::Up;
      bool lost = false;
      // Batch the fields NVML offers as field ids.
      batch.clear();
      batch_index.clear();
      for (std::size_t k = 0; k < fields.size(); ++k) {
        const auto& f = *fields[k];
        const std::size_t idx = fields::indexOf(f);
        if (!f.nvml_fi || t.unsupported[idx] || t.unbatchable[idx] || !due(f, first, slow_due)) continue;
        nvmlFieldValue_t v{};
        v.fieldId = f.nvml_fi;
        batch.push_back(v);
        batch_index.push_back(k);
      }
      if (!batch.empty()) {
        Status s = timed([&] { return t.device.fieldValues(batch.data(), static_cast<int>(batch.size())); });
        if (!s.ok() && nvml::isUnsupported(s.nvmlCode())) {
          // No batches at all (an NVML before nvmlDeviceGetFieldValues): each field asks its own
          // getter from now on, below, instead of the batch failing on one field a pass.
          for (std::size_t k : batch_index) t.unbatchable[fields::indexOf(*fields[k])] = 1;
        } else if (!s.ok()) {
          record(t, *fields[batch_index[0]], fields::indexOf(*fields[batch_index[0]]), Result<double>(s), now);
          lost = t.state == GpuState::Lost || driver_gone;
        } else {
          for (std::size_t b = 0; b < batch.size(); ++b) {
            const auto& f = *fields[batch_index[b]];
            const std::size_t idx = fields::indexOf(f);
            if (batch[b].nvmlReturn == NVML_SUCCESS) {
              record(t, f, idx, fromFieldValue(batch[b]), now);
            } else if (nvml::isUnsupported(batch[b].nvmlReturn)) {
              // Some drivers answer a field alone but not in a batch: ask directly from now on.
              t.unbatchable[idx] = 1;
            } else {
              record(t, f, idx, nvml::nvmlError(batch[b].nvmlReturn, "nvmlDeviceGetFieldValues"), now);
            }
          }
        }
      }
      for (std::size_t k = 0; k < fields.size() && !lost && !stop; ++k) {
        const auto& f = *fields[k];
        const std::size_t idx = fields::indexOf(f);
        if (t.unsupported[idx] || f.gpm.metric || !due(f, first, slow_due)) continue;
        if (f.nvml_fi && !t.unbatchable[idx]) continue;
        auto r = timed([&] { return f.read_number(t.device); });
        record(t, f, idx, r, now);
        if (t.state == GpuState::Lost || driver_gone) lost = true;
      }
      if (!lost && !stop) lost = gpmPass(t, now);
      if (!lost) {
        ++t.samples;
        t.last_sample_ms = wallMs();
      }
    }
    publish();
  }

  void publish() {
    std::lock_guard lock(mu);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      const auto& t = targets[i];
      GpuView& v = published[i];
      v.version = nextViewVersion();
      v.values = t.values;  // same size every time: no allocation
      v.samples = t.samples;
      v.nvml_errors = t.errors;
      v.last_sample_ms = t.last_sample_ms;
      if (t.state == GpuState::Lost) {
        v.state = GpuState::Lost;
        v.state_reason = t.reason;
      } else if (driver_gone) {
        v.state = GpuState::Down;
        v.state_reason = t.reason;
      } else if (stalled) {
        v.state = GpuState::Stalled;
        v.state_reason = stalled_reason;
      } else {
        v.state = GpuState::Up;
        v.state_reason.clear();
      }
    }
  }

  // Called by the supervisor: is a call past its deadline?
  void checkDeadline(std::int64_t now_mono) {
    const std::int64_t started = call_started_ms.load();
    const bool late = started != 0 && now_mono - started > deadline.count();
    std::lock_guard lock(mu);
    if (late && !stalled) {
      stalled = true;
      stalled_reason = "an NVML call has not returned for more than " + std::to_string(deadline.count()) + " ms";
      for (auto& v : published)
        if (v.state == GpuState::Up) {
          v.version = nextViewVersion();
          v.state = GpuState::Stalled;
          v.state_reason = stalled_reason;
        }
    } else if (started == 0 && stalled) {
      stalled = false;  // the next publish shows it up again
    }
  }
};

Sampler::Sampler(SessionOpener opener, SamplerConfig config) : opener_(std::move(opener)), config_(std::move(config)) {
  if (config_.fields.empty()) {
    for (const auto& f : fields::all())
      if (f.read_number) config_.fields.push_back(&f);
  }
  stats_.hostname = platform::hostName();
}

Sampler::~Sampler() { stop(); }

void Sampler::setSink(SampleSink* sink) { sink_ = sink; }

Status Sampler::enumerate(bool threads) {
  auto session = opener_();
  if (!session) return session.status();
  std::shared_ptr<nvml::Session> s(std::move(session).value());
  auto count = s->deviceCount();
  if (!count) return count.status();

  // One worker per GPU, each identifying its own GPU on its own thread; wait for them up to the
  // call deadline, so that a hung GPU shows as stalled rather than holding up everything else.
  std::vector<std::shared_ptr<Worker>> workers;
  for (unsigned i = 0; i < *count; ++i) {
    auto w = std::make_shared<Worker>();
    w->index = i;
    w->session = s;
    w->sink = sink_;
    w->fields = config_.fields;
    for (const fields::Field* f : config_.fields)
      if (f->gpm.metric) w->gpm_fields.push_back(f);
    w->fast = config_.fast_interval;
    w->slow = config_.slow_interval;
    w->deadline = config_.call_deadline;
    GpuView placeholder;       // until identify() has answered
    placeholder.id.index = i;  // no device name until identify() reads the minor number
    placeholder.state = GpuState::Up;
    placeholder.values.assign(fields::all().size(), FieldValue{});
    placeholder.version = nextViewVersion();
    w->published.push_back(std::move(placeholder));
    workers.push_back(std::move(w));
  }
  for (auto& w : workers) {
    if (!threads) {
      w->identify();
      continue;
    }
    auto shared = w;
    w->thread = std::thread(platform::guardedThread("sampler", [shared] { shared->run(); }));
  }
  const auto until = Clock::now() + config_.call_deadline;
  for (auto& w : workers) {
    std::unique_lock lock(w->mu);
    if (w->identified_cv.wait_until(lock, until, [&] { return w->identified; })) continue;
    // Still inside its first call: stalled from the start, so that nothing else asks it now.
    w->stalled = true;
    w->stalled_reason = nvml::noAnswer(config_.call_deadline) + " while identifying the GPU";
    for (auto& v : w->published) {
      v.version = nextViewVersion();
      v.state = GpuState::Stalled;
      v.state_reason = w->stalled_reason;
    }
  }

  AgentStats stats;
  stats.driver_version = s->driverVersion().value_or("");
  stats.nvml_version = s->nvmlVersion().value_or("");
  stats.cuda_driver_version = s->cudaDriverVersion().value_or(0);
  {
    std::lock_guard lock(mu_);
    session_ = s;
    for (auto& w : workers) workers_.push_back(std::move(w));
    stats_.driver_version = stats.driver_version;
    stats_.nvml_version = stats.nvml_version;
    stats_.cuda_driver_version = stats.cuda_driver_version;
    stats_.driver_up = true;
  }
  return Status::Ok();
}

Status Sampler::start() {
  if (running_) return Status::Ok();
  stats_.started_ms = wallMs();
  Status st = enumerate(true);
  if (!st.ok()) return st;
  running_ = true;
  supervisor_ = std::thread(platform::guardedThread("sampler-supervisor", [this] { supervise(); }));
  return Status::Ok();
}

void Sampler::stopWorkers() {
  std::vector<std::shared_ptr<Worker>> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) {
    w->stop = true;
    w->sleep_cv.notify_all();
  }
  for (auto& w : workers) {
    if (!w->thread.joinable()) continue;
    // A worker stuck inside a hung NVML call cannot be joined; it owns a reference to its state
    // and the session, and finishes on its own when the call returns.
    if (w->call_started_ms.load() != 0) {
      w->abandoned = true;
      platform::noteAbandoned();
      w->thread.detach();
    } else {
      w->thread.join();
    }
  }
}

void Sampler::stop() {
  if (!running_.exchange(false)) return;
  wake_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
  stopWorkers();
  std::lock_guard lock(mu_);
  session_.reset();
}

void Sampler::supervise() {
  auto backoff = kReinitFirstWait;
  while (running_) {
    {
      std::unique_lock lock(wake_mu_);
      wake_.wait_for(lock, kSuperviseTick, [&] { return !running_.load(); });
    }
    if (!running_) break;
    heartbeat_.fetch_add(1, std::memory_order_relaxed);
    const std::int64_t now = monoMs();
    bool driver_gone = false, all_lost = true, any = false;
    {
      std::lock_guard lock(mu_);
      for (auto& w : workers_) {
        w->checkDeadline(now);
        driver_gone = driver_gone || w->driver_gone.load();
        std::lock_guard wl(w->mu);
        for (const auto& v : w->published) {
          any = true;
          if (v.state != GpuState::Lost) all_lost = false;
        }
      }
    }
    // Every GPU lost at once, or calls answering "uninitialised": the driver went away.
    if (!driver_gone && !(any && all_lost)) continue;

    std::vector<GpuView> last = snapshot();
    {
      std::lock_guard lock(mu_);
      stats_.driver_up = false;
    }
    stopWorkers();
    {
      std::lock_guard lock(mu_);
      session_.reset();
      down_views_ = last;
      for (auto& v : down_views_) {
        v.version = nextViewVersion();
        v.state = GpuState::Down;
        v.state_reason = "NVIDIA driver unavailable; re-initialising";
      }
    }
    // Re-initialise with backoff until the driver answers again.
    while (running_) {
      Status st = enumerate(true);
      if (st.ok()) break;
      {
        std::lock_guard lock(mu_);
        for (auto& v : down_views_) v.state_reason = "NVIDIA driver unavailable: " + st.message();
      }
      // The wait goes round in supervising ticks, each a heartbeat: a wait of up to ten seconds
      // between tries is the loop alive, not stuck, and a service watchdog shorter than the wait
      // must not restart the agent for the driver's absence.
      const auto retry_at = std::chrono::steady_clock::now() + backoff;
      std::unique_lock lock(wake_mu_);
      for (auto at = std::chrono::steady_clock::now(); running_ && at < retry_at;
           at = std::chrono::steady_clock::now()) {
        wake_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(kSuperviseTick, retry_at - at),
                       [&] { return !running_.load(); });
        heartbeat_.fetch_add(1, std::memory_order_relaxed);
      }
      backoff = nextReinitWait(backoff);
    }
    if (!running_) break;
    backoff = kReinitFirstWait;
    std::lock_guard lock(mu_);
    down_views_.clear();
    ++stats_.nvml_reinits;
    nextViewVersion();
  }
}

void Sampler::reconfigure(const SamplerConfig& config) {
  std::lock_guard lock(mu_);
  config_ = config;
  if (config_.fields.empty()) {
    for (const auto& f : fields::all())
      if (f.read_number) config_.fields.push_back(&f);
  }
  // Intervals and deadline apply from the workers' next pass; field lists at re-enumeration.
  for (auto& w : workers_) {
    w->fast = config_.fast_interval;
    w->slow = config_.slow_interval;
    w->deadline = config_.call_deadline;
  }
}

std::vector<GpuView> Sampler::snapshot() const {
  std::vector<GpuView> out;
  std::lock_guard lock(mu_);
  if (workers_.empty()) return down_views_;
  for (const auto& w : workers_) {
    std::lock_guard wl(w->mu);
    out.insert(out.end(), w->published.begin(), w->published.end());
  }
  return out;
}

std::uint64_t Sampler::generation() const { return g_view_version.load(std::memory_order_acquire); }

AgentStats Sampler::agentStats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::shared_ptr<nvml::Session> Sampler::session() const {
  std::lock_guard lock(mu_);
  return session_;
}

void Sampler::sampleOnce() {
  const bool first = workers_.empty();
  if (first && !enumerate(false).ok()) return;
  for (auto& w : workers_) w->pass(first, true);
}

}  // namespace gw::collect
