// DiagNvml over the NVML wrapper (the real driver or the simulator): what `gpuwarden diag` and
// `gpuwarden burn` read. Every call on a GPU runs under the call deadline: a GPU that does not
// answer in time is "stalled" for the rest of the run, and every later call on it fails at once
// (NVML_ERROR_TIMEOUT), so a hung GPU costs a run one deadline instead of holding it forever.
#pragma once

#include <chrono>
#include <set>
#include <vector>

#include "diag/diag_nvml.h"
#include "nvml/nvml.h"
#include "platform/deadline.h"

namespace gw::cli {

class DiagNvmlImpl : public diag::DiagNvml {
 public:
  DiagNvmlImpl(nvml::Session& session, std::chrono::milliseconds deadline) : s_(session), deadline_(deadline) {}
  ~DiagNvmlImpl() override;
  DiagNvmlImpl(const DiagNvmlImpl&) = delete;
  DiagNvmlImpl& operator=(const DiagNvmlImpl&) = delete;

  Result<int> gpuCount() override;
  Result<std::string> name(int gpu) override;
  Result<std::string> uuid(int gpu) override;
  Result<std::string> pciBusId(int gpu) override;
  Result<uint32_t> pciDeviceId(int gpu) override;
  Result<diag::PcieLink> pcieLink(int gpu) override;
  Result<double> powerLimitW(int gpu) override;
  Result<double> powerDrawW(int gpu) override;
  Result<unsigned> temperatureC(int gpu) override;
  Result<diag::Clocks> clocks(int gpu) override;
  Result<uint64_t> clockEventReasons(int gpu) override;
  Result<diag::EccCounts> ecc(int gpu) override;
  Result<diag::RetiredPages> retiredPages(int gpu) override;
  Result<diag::RowRemap> rowRemap(int gpu) override;
  Result<bool> persistenceMode(int gpu) override;
  Result<bool> inforomValid(int gpu) override;
  Result<std::vector<diag::GpuProcess>> computeProcesses(int gpu) override;
  Result<int> nvlinkActiveLinks(int gpu) override;
  Result<std::string> serial(int gpu) override;
  Result<std::string> vbiosVersion(int gpu) override;
  Result<std::string> driverVersion() override;
  Result<int> cudaDriverVersion() override;
  std::vector<diag::XidEvent> pollXids() override;

 private:
  Result<nvml::Device> device(int gpu);
  bool stalled(int gpu) const;
  Status stalledStatus(int gpu) const;

  // `call` runs on a thread of its own that is abandoned past the deadline, so it must not refer
  // to *this (which the command destroys while such a thread may still be inside NVML): it gets
  // the device by value and anything else by captured copies or the session, which outlives it.
  template <typename T, typename F>
  Result<T> underDeadline(int gpu, F call) {
    auto r = platform::runWithDeadline<Result<T>>(std::move(call), deadline_);
    if (!r) {
      stalled_.insert(gpu);
      return stalledStatus(gpu);
    }
    return std::move(*r);
  }
  template <typename T, typename F>
  Result<T> onGpu(int gpu, F call) {
    auto d = device(gpu);
    if (!d) return d.status();
    if (stalled(gpu)) return stalledStatus(gpu);
    return underDeadline<T>(gpu, [call, dev = *d]() -> Result<T> { return call(dev); });
  }

  nvml::Session& s_;
  std::chrono::milliseconds deadline_;
  std::set<int> stalled_;
  std::vector<nvml::Device> devices_;  // by index; invalid until first looked up
  nvmlEventSet_t events_ = nullptr;
  bool watch_armed_ = false;
};

}  // namespace gw::cli
