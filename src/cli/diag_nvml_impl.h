// DiagNvml over the NVML wrapper (the real driver or the simulator): what `gpuwarden diag` reads.
#pragma once

#include <vector>

#include "diag/diag_nvml.h"
#include "nvml/nvml.h"

namespace gw::cli {

class DiagNvmlImpl : public diag::DiagNvml {
 public:
  explicit DiagNvmlImpl(nvml::Session& session) : s_(session) {}
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
  nvml::Session& s_;
  std::vector<nvml::Device> devices_;  // by index; invalid until first looked up
  nvmlEventSet_t events_ = nullptr;
  bool watch_armed_ = false;
};

}  // namespace gw::cli
