#include "events/nvml_event_source.h"

#include <algorithm>
#include <chrono>

#include "nvml/errors.h"
#include "platform/clock.h"
#include "platform/thread_guard.h"

namespace gw::events {
namespace {

// Errors after which the session is unusable until the owner re-initialises it.
bool isDriverGone(nvmlReturn_t r) {
  return r == NVML_ERROR_UNINITIALIZED || r == NVML_ERROR_DRIVER_NOT_LOADED ||
         r == NVML_ERROR_LIB_RM_VERSION_MISMATCH || r == NVML_ERROR_INVALID_ARGUMENT ||
         r == NVML_ERROR_LIBRARY_NOT_FOUND;
}

std::string describe(nvmlReturn_t r, const char* call) {
  return std::string(call) + ": " + nvml::errorName(r) + " (" + nvml::errorMeaning(r) + ")";
}

}  // namespace

NvmlEventSource::NvmlEventSource(const nvml::Session& session, EventBus& bus, NvmlEventSourceOptions options)
    : session_(session), bus_(bus), opt_(options) {}

NvmlEventSource::~NvmlEventSource() { stop(); }

std::string NvmlEventSource::lastError() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

NvmlEventSourceStats NvmlEventSource::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void NvmlEventSource::setError(const std::string& e) {
  std::lock_guard lock(mu_);
  last_error_ = e;
}

void NvmlEventSource::freeSet() {
  const auto& api = session_.api();
  if (set_ && api.nvmlEventSetFree) api.nvmlEventSetFree(set_);  // may fail once the driver is gone
  set_ = nullptr;
}

Status NvmlEventSource::registerAll() {
  const auto& api = session_.api();
  freeSet();
  gpus_.clear();
  if (!api.nvmlEventSetCreate || !api.nvmlDeviceRegisterEvents || (!api.nvmlEventSetWait_v2 && !api.nvmlEventSetWait)) {
    return Status::Nvml(NVML_ERROR_FUNCTION_NOT_FOUND, "NVML events are not supported by this library");
  }
  nvmlReturn_t r = api.nvmlEventSetCreate(&set_);
  if (r != NVML_SUCCESS) {
    set_ = nullptr;
    return nvml::nvmlError(r, "nvmlEventSetCreate");
  }
  auto count = session_.deviceCount();
  if (!count.ok()) {
    freeSet();
    return count.status();
  }
  NvmlEventSourceStats st;
  {
    std::lock_guard lock(mu_);
    st.lost = stats_.lost;
  }
  std::vector<int> registered, unsupported, skipped;
  for (unsigned i = 0; i < *count; ++i) {
    if (opt_.skip && opt_.skip(i)) {
      skipped.push_back(static_cast<int>(i));
      continue;
    }
    auto dev = session_.deviceByIndex(i);
    if (!dev.ok()) {
      if (nvml::isLost(dev.status().nvmlCode()) &&
          std::find(st.lost.begin(), st.lost.end(), static_cast<int>(i)) == st.lost.end()) {
        st.lost.push_back(static_cast<int>(i));
      }
      continue;
    }
    nvmlDevice_t h = dev->handle();
    if (std::find(lost_handles_.begin(), lost_handles_.end(), h) != lost_handles_.end()) continue;
    unsigned long long supported = opt_.types;
    if (api.nvmlDeviceGetSupportedEventTypes) {
      unsigned long long s = 0;
      nvmlReturn_t sr = api.nvmlDeviceGetSupportedEventTypes(h, &s);
      if (sr == NVML_SUCCESS) {
        supported = s;
      } else if (nvml::isLost(sr)) {
        st.lost.push_back(static_cast<int>(i));
        lost_handles_.push_back(h);
        continue;
      } else if (isDriverGone(sr)) {
        freeSet();
        return nvml::nvmlError(sr, "nvmlDeviceGetSupportedEventTypes");
      }
    }
    const unsigned long long want = supported & opt_.types;
    if (want == 0) {
      unsupported.push_back(static_cast<int>(i));
      continue;
    }
    nvmlReturn_t rr = api.nvmlDeviceRegisterEvents(h, want, set_);
    if (rr != NVML_SUCCESS) {
      if (nvml::isLost(rr)) {
        st.lost.push_back(static_cast<int>(i));
        lost_handles_.push_back(h);
      } else if (isDriverGone(rr)) {
        freeSet();
        return nvml::nvmlError(rr, "nvmlDeviceRegisterEvents");
      } else {
        unsupported.push_back(static_cast<int>(i));
      }
      continue;
    }
    GpuInfo info;
    info.index = static_cast<int>(i);
    if (auto u = dev->uuid(); u.ok()) info.uuid = *u;
    if (auto p = dev->pciInfo(); p.ok()) info.bus_id = p->bus_id;
    gpus_[h] = info;
    registered.push_back(info.index);
  }
  std::lock_guard lock(mu_);
  stats_.registered = std::move(registered);
  stats_.unsupported = std::move(unsupported);
  stats_.skipped = std::move(skipped);
  stats_.lost = std::move(st.lost);
  return Status::Ok();
}

Status NvmlEventSource::start() {
  stop();
  stop_ = false;
  lost_handles_.clear();
  {
    std::lock_guard lock(mu_);
    stats_ = {};
    last_error_.clear();
  }
  Status s = registerAll();
  if (!s.ok()) {
    healthy_ = false;
    setError(s.message());
    return s;
  }
  healthy_ = true;
  if (!opt_.thread) return Status::Ok();
  running_ = true;
  thread_ = std::thread(platform::guardedThread("nvml-events", [this] { run(); }));
  return Status::Ok();
}

void NvmlEventSource::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  running_ = false;
  freeSet();
  gpus_.clear();
}

NvmlEventSource::GpuInfo NvmlEventSource::infoFor(nvmlDevice_t h) {
  if (auto it = gpus_.find(h); it != gpus_.end()) return it->second;
  // A handle we did not register (should not happen): ask NVML, keep the answer.
  GpuInfo info;
  nvml::Device dev(&session_.api(), h);
  if (auto i = dev.index(); i.ok()) info.index = static_cast<int>(*i);
  if (auto u = dev.uuid(); u.ok()) info.uuid = *u;
  if (auto p = dev.pciInfo(); p.ok()) info.bus_id = p->bus_id;
  gpus_[h] = info;
  return info;
}

GpuEvent NvmlEventSource::toEvent(const nvmlEventData_t& d) {
  GpuEvent e;
  e.timestamp_ms = platform::wallMs();
  e.source = EventSource::Nvml;
  const GpuInfo info = infoFor(d.device);
  e.gpu_index = info.index;
  e.gpu_uuid = info.uuid;
  e.pci_bus_id = info.bus_id;
  switch (d.eventType) {
    case nvmlEventTypeXidCriticalError:
      e.kind = EventKind::Xid;
      e.code = static_cast<int>(d.eventData);
      e.message = "Xid critical error " + std::to_string(e.code) + " (NVML event)";
      break;
    case nvmlEventTypeSingleBitEccError:
      e.kind = EventKind::EccSingleBit;
      e.message = "single-bit ECC error (corrected)";
      break;
    case nvmlEventTypeDoubleBitEccError:
      e.kind = EventKind::EccDoubleBit;
      e.message = "double-bit ECC error (uncorrectable)";
      break;
    case nvmlEventTypePState: {
      e.kind = EventKind::PState;
      nvml::Device dev(&session_.api(), d.device);
      auto p = dev.pstate();
      e.message = p.ok() ? "P-state changed to P" + std::to_string(*p) : "P-state changed";
      break;
    }
    case nvmlEventTypeClock:
      e.kind = EventKind::Clock;
      e.message = "clocks changed";
      break;
    default:
      e.kind = EventKind::Xid;
      e.message = "NVML event type " + std::to_string(d.eventType);
      break;
  }
  return e;
}

bool NvmlEventSource::dropLostGpus() {
  bool any = false;
  std::vector<int> lost_now;
  for (const auto& [h, info] : gpus_) {
    nvml::Device dev(&session_.api(), h);
    auto p = dev.pstate();  // a live query: a lost GPU answers GPU_IS_LOST
    if (!p.ok() && nvml::isLost(p.status().nvmlCode())) {
      lost_handles_.push_back(h);
      lost_now.push_back(info.index);
      any = true;
    }
  }
  if (any) {
    std::lock_guard lock(mu_);
    for (int i : lost_now) {
      if (std::find(stats_.lost.begin(), stats_.lost.end(), i) == stats_.lost.end()) {
        stats_.lost.push_back(i);
      }
    }
  }
  return any;
}

NvmlEventSource::Waited NvmlEventSource::waitOnce(unsigned wait_ms) {
  const auto& api = session_.api();
  auto wait = api.nvmlEventSetWait_v2 ? api.nvmlEventSetWait_v2 : api.nvmlEventSetWait;
  const char* wait_name = api.nvmlEventSetWait_v2 ? "nvmlEventSetWait_v2" : "nvmlEventSetWait";
  nvmlEventData_t data{};
  const nvmlReturn_t r = wait(set_, &data, wait_ms);
  {
    std::lock_guard lock(mu_);
    ++stats_.waits;
  }
  if (r == NVML_SUCCESS) {
    GpuEvent e = toEvent(data);
    {
      std::lock_guard lock(mu_);
      ++stats_.events;
    }
    bus_.publish(e);
    return Waited::kEvent;
  }
  if (r == NVML_ERROR_TIMEOUT) return Waited::kTimeout;
  {
    std::lock_guard lock(mu_);
    ++stats_.errors;
  }
  setError(describe(r, wait_name));
  if (isDriverGone(r)) {
    healthy_ = false;
    return Waited::kStop;
  }
  if (nvml::isLost(r)) {
    // One GPU in the set is gone: rebuild the set without it and keep listening to the rest.
    if (dropLostGpus()) {
      Status s = registerAll();
      if (!s.ok()) {
        setError(s.message());
        healthy_ = false;
        return Waited::kStop;
      }
    }
  }
  return Waited::kRetry;
}

void NvmlEventSource::run() {
  auto pause = [this](unsigned ms) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_.load(); });
  };
  while (!stop_) {
    const auto t0 = std::chrono::steady_clock::now();
    const Waited w = waitOnce(opt_.wait_ms);
    if (w == Waited::kStop) break;
    if (w == Waited::kTimeout && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(opt_.wait_ms / 4))
      pause(opt_.idle_ms);
    if (w == Waited::kRetry) pause(100);  // transient error: back off a little
  }
  running_ = false;
}

void NvmlEventSource::drain() {
  if (opt_.thread || !healthy_ || !set_) return;
  // Bounded: a source that never stops answering cannot hold the caller.
  for (int k = 0; k < 4096; ++k)
    if (waitOnce(0) != Waited::kEvent) return;
}

}  // namespace gw::events
