#include "cli/diag_nvml_impl.h"

#include <utility>

#include "nvml/errors.h"

namespace gw::cli {
namespace {

// A function the driver lacks is, for the diagnostics, a query the GPU does not support.
Status normalise(const Status& st) {
  if (st.nvmlCode() == NVML_ERROR_FUNCTION_NOT_FOUND) return Status::Nvml(diag::kNvmlNotSupported, st.message());
  return st;
}

}  // namespace

DiagNvmlImpl::~DiagNvmlImpl() {
  if (events_ && s_.api().nvmlEventSetFree) s_.api().nvmlEventSetFree(events_);
}

Status DiagNvmlImpl::stalledStatus(int gpu) const {
  return Status::Nvml(NVML_ERROR_TIMEOUT, "GPU " + std::to_string(gpu) + " stalled: " + nvml::noAnswer(deadline_));
}

bool DiagNvmlImpl::stalled(int gpu) const { return stalled_.count(gpu) > 0; }

Result<nvml::Device> DiagNvmlImpl::device(int gpu) {
  if (gpu < 0) return Status::Nvml(NVML_ERROR_INVALID_ARGUMENT, "invalid GPU index " + std::to_string(gpu));
  auto idx = static_cast<size_t>(gpu);
  if (idx < devices_.size() && devices_[idx].valid()) return devices_[idx];
  if (stalled(gpu)) return stalledStatus(gpu);
  const nvml::Session* session = &s_;
  auto d = underDeadline<nvml::Device>(gpu, [session, gpu]() -> Result<nvml::Device> {
    auto v = session->deviceByIndex(static_cast<unsigned>(gpu));
    if (!v) return normalise(v.status());
    return *v;
  });
  if (!d) return d.status();
  if (devices_.size() <= idx) devices_.resize(idx + 1);
  devices_[idx] = *d;
  return *d;
}

Result<int> DiagNvmlImpl::gpuCount() {
  auto n = s_.deviceCount();
  if (!n) return normalise(n.status());
  return static_cast<int>(*n);
}

Result<std::string> DiagNvmlImpl::name(int gpu) {
  return onGpu<std::string>(gpu, [](const nvml::Device& d) -> Result<std::string> {
    auto v = d.name();
    if (!v) return normalise(v.status());
    return *v;
  });
}

Result<std::string> DiagNvmlImpl::uuid(int gpu) {
  return onGpu<std::string>(gpu, [](const nvml::Device& d) -> Result<std::string> {
    auto v = d.uuid();
    if (!v) return normalise(v.status());
    return *v;
  });
}

Result<std::string> DiagNvmlImpl::pciBusId(int gpu) {
  return onGpu<std::string>(gpu, [](const nvml::Device& d) -> Result<std::string> {
    auto v = d.pciInfo();
    if (!v) return normalise(v.status());
    return v->bus_id;
  });
}

Result<uint32_t> DiagNvmlImpl::pciDeviceId(int gpu) {
  return onGpu<uint32_t>(gpu, [](const nvml::Device& d) -> Result<uint32_t> {
    auto v = d.pciInfo();
    if (!v) return normalise(v.status());
    return static_cast<uint32_t>((v->device_id & 0xffffU) << 16 | (v->vendor_id & 0xffffU));
  });
}

Result<diag::PcieLink> DiagNvmlImpl::pcieLink(int gpu) {
  return onGpu<diag::PcieLink>(gpu, [](const nvml::Device& d) -> Result<diag::PcieLink> {
    auto gen = d.pcieGen();
    if (!gen) return normalise(gen.status());
    auto width = d.pcieWidth();
    if (!width) return normalise(width.status());
    auto max_gen = d.pcieMaxGen();
    if (!max_gen) return normalise(max_gen.status());
    auto max_width = d.pcieMaxWidth();
    if (!max_width) return normalise(max_width.status());
    diag::PcieLink l;
    l.cur_gen = static_cast<int>(*gen);
    l.cur_width = static_cast<int>(*width);
    l.max_gen = static_cast<int>(*max_gen);
    l.max_width = static_cast<int>(*max_width);
    return l;
  });
}

Result<double> DiagNvmlImpl::powerLimitW(int gpu) {
  return onGpu<double>(gpu, [](const nvml::Device& d) -> Result<double> {
    auto v = d.enforcedPowerLimitMw();
    if (!v) v = d.powerLimitMw();
    if (!v) return normalise(v.status());
    return *v / 1000.0;
  });
}

Result<double> DiagNvmlImpl::powerDrawW(int gpu) {
  return onGpu<double>(gpu, [](const nvml::Device& d) -> Result<double> {
    auto v = d.powerUsageMw();
    if (!v) return normalise(v.status());
    return *v / 1000.0;
  });
}

Result<unsigned> DiagNvmlImpl::temperatureC(int gpu) {
  return onGpu<unsigned>(gpu, [](const nvml::Device& d) -> Result<unsigned> {
    auto v = d.temperature();
    if (!v) return normalise(v.status());
    return *v;
  });
}

Result<diag::Clocks> DiagNvmlImpl::clocks(int gpu) {
  return onGpu<diag::Clocks>(gpu, [](const nvml::Device& d) -> Result<diag::Clocks> {
    auto sm = d.clock(NVML_CLOCK_SM);
    if (!sm) return normalise(sm.status());
    auto mem = d.clock(NVML_CLOCK_MEM);
    if (!mem) return normalise(mem.status());
    return diag::Clocks{*sm, *mem};
  });
}

Result<uint64_t> DiagNvmlImpl::clockEventReasons(int gpu) {
  return onGpu<uint64_t>(gpu, [](const nvml::Device& d) -> Result<uint64_t> {
    auto v = d.clockEventReasons();
    if (!v) return normalise(v.status());
    return static_cast<uint64_t>(*v);
  });
}

Result<diag::EccCounts> DiagNvmlImpl::ecc(int gpu) {
  return onGpu<diag::EccCounts>(gpu, [](const nvml::Device& d) -> Result<diag::EccCounts> {
    auto vol = d.eccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC);
    if (!vol) return normalise(vol.status());
    auto agg = d.eccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC);
    if (!agg) return normalise(agg.status());
    return diag::EccCounts{*vol, *agg};
  });
}

Result<diag::RetiredPages> DiagNvmlImpl::retiredPages(int gpu) {
  return onGpu<diag::RetiredPages>(gpu, [](const nvml::Device& d) -> Result<diag::RetiredPages> {
    auto sbe = d.retiredPages(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
    if (!sbe) return normalise(sbe.status());
    auto dbe = d.retiredPages(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
    if (!dbe) return normalise(dbe.status());
    auto pending = d.retiredPagesPending();
    if (!pending) return normalise(pending.status());
    diag::RetiredPages p;
    p.sbe = *sbe;
    p.dbe = *dbe;
    p.pending = *pending;
    return p;
  });
}

Result<diag::RowRemap> DiagNvmlImpl::rowRemap(int gpu) {
  return onGpu<diag::RowRemap>(gpu, [](const nvml::Device& d) -> Result<diag::RowRemap> {
    auto v = d.remappedRows();
    if (!v) return normalise(v.status());
    diag::RowRemap r;
    r.correctable = v->correctable;
    r.uncorrectable = v->uncorrectable;
    r.pending = v->pending;
    r.failure = v->failure;
    return r;
  });
}

Result<bool> DiagNvmlImpl::persistenceMode(int gpu) {
  return onGpu<bool>(gpu, [](const nvml::Device& d) -> Result<bool> {
    auto v = d.persistenceMode();
    if (!v) return normalise(v.status());
    return *v;
  });
}

Result<bool> DiagNvmlImpl::inforomValid(int gpu) {
  return onGpu<bool>(gpu, [](const nvml::Device& d) -> Result<bool> {
    Status st = d.validateInforom();
    if (st.ok()) return true;
    if (st.nvmlCode() == NVML_ERROR_CORRUPTED_INFOROM) return false;
    return normalise(st);
  });
}

Result<std::vector<diag::GpuProcess>> DiagNvmlImpl::computeProcesses(int gpu) {
  auto v =
      onGpu<std::vector<nvml::ProcessInfo>>(gpu, [](const nvml::Device& d) -> Result<std::vector<nvml::ProcessInfo>> {
        auto p = d.computeProcesses();
        if (!p) return normalise(p.status());
        return *p;
      });
  if (!v) return v.status();
  std::vector<diag::GpuProcess> out;
  for (const auto& p : *v) {
    diag::GpuProcess g;
    g.pid = p.pid;
    g.used_bytes = p.used_bytes;
    if (auto n = s_.processName(p.pid)) g.name = *n;
    out.push_back(std::move(g));
  }
  return out;
}

Result<int> DiagNvmlImpl::nvlinkActiveLinks(int gpu) {
  return onGpu<int>(gpu, [](const nvml::Device& d) -> Result<int> {
    int active = 0;
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      auto v = d.nvlinkActive(link);
      if (!v) {
        // Not supported / no such link: the GPU has no (more) NVLink. A lost GPU is an error.
        if (nvml::isLost(v.status().nvmlCode())) return v.status();
        continue;
      }
      if (*v) ++active;
    }
    return active;
  });
}

Result<std::string> DiagNvmlImpl::serial(int gpu) {
  return onGpu<std::string>(gpu, [](const nvml::Device& d) -> Result<std::string> {
    auto v = d.serial();
    if (!v) return normalise(v.status());
    return *v;
  });
}

Result<std::string> DiagNvmlImpl::vbiosVersion(int gpu) {
  return onGpu<std::string>(gpu, [](const nvml::Device& d) -> Result<std::string> {
    auto v = d.vbiosVersion();
    if (!v) return normalise(v.status());
    return *v;
  });
}

Result<std::string> DiagNvmlImpl::driverVersion() {
  auto v = s_.driverVersion();
  if (!v) return normalise(v.status());
  return *v;
}

Result<int> DiagNvmlImpl::cudaDriverVersion() {
  auto v = s_.cudaDriverVersion();
  if (!v) return normalise(v.status());
  return *v;
}

std::vector<diag::XidEvent> DiagNvmlImpl::pollXids() {
  std::vector<diag::XidEvent> out;
  const auto& api = s_.api();
  if (!watch_armed_) {
    watch_armed_ = true;
    if (!api.nvmlEventSetCreate || !api.nvmlDeviceRegisterEvents || !api.nvmlEventSetWait_v2) return out;
    if (api.nvmlEventSetCreate(&events_) != NVML_SUCCESS) {
      events_ = nullptr;
      return out;
    }
    auto n = gpuCount();
    bool any = false;
    for (int i = 0; n && i < *n; ++i) {
      nvmlEventSet_t set = events_;
      const nvml::NvmlApi* a = &api;
      auto registered = onGpu<bool>(i, [set, a](const nvml::Device& d) -> Result<bool> {
        return a->nvmlDeviceRegisterEvents(d.handle(), nvmlEventTypeXidCriticalError, set) == NVML_SUCCESS;
      });
      if (registered && *registered) any = true;
    }
    if (!any) {
      if (api.nvmlEventSetFree) api.nvmlEventSetFree(events_);
      events_ = nullptr;
    }
    return out;  // only events newer than the watch
  }
  if (!events_) return out;
  for (int guard = 0; guard < 1024; ++guard) {
    nvmlEventData_t data{};
    if (api.nvmlEventSetWait_v2(events_, &data, 0) != NVML_SUCCESS) break;  // TIMEOUT: nothing more
    if (!(data.eventType & nvmlEventTypeXidCriticalError)) continue;
    diag::XidEvent e;
    e.xid = data.eventData;
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].valid() && devices_[i].handle() == data.device) e.gpu = static_cast<int>(i);
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace gw::cli
