// DiagNvml: everything the diagnostics need to know from NVML, and nothing more.
//
// The CLI implements it over the NVML wrapper (real driver or the simulator). Conventions:
//  - `gpu` is the NVML index (0..gpuCount()-1);
//  - a query the GPU does not support returns Status::Error(msg, kNvmlNotSupported) (the NVML
//    return code, 3): the check then says "not supported" instead of warning;
//  - a GPU that did not answer within the call deadline returns Status::Nvml(kNvmlTimeout, why)
//    from then on (a hung GPU costs one deadline, not the run);
//  - any other error is reported in the check's evidence (warn), never invented;
//  - calls need not be thread-safe: runDiag serialises every call through one mutex.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace gw::diag {

inline constexpr int kNvmlNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED
inline constexpr int kNvmlTimeout = 10;      // NVML_ERROR_TIMEOUT

struct PcieLink {
  int cur_gen = 0, cur_width = 0;  // right now (an idle link may train down its generation)
  int max_gen = 0, max_width = 0;  // what the GPU and slot can do
};

struct Clocks {
  unsigned sm_mhz = 0, mem_mhz = 0;
};

struct EccCounts {
  uint64_t volatile_dbe = 0;   // uncorrected since the driver loaded
  uint64_t aggregate_dbe = 0;  // uncorrected over the card's life
};

struct RetiredPages {
  uint64_t sbe = 0, dbe = 0;  // pages retired for single/double-bit errors
  bool pending = false;       // retirement waits for a GPU reset / reboot
};

struct RowRemap {
  uint64_t correctable = 0, uncorrectable = 0;  // rows remapped for each cause
  bool pending = false;                         // remap waits for a GPU reset
  bool failure = false;                         // a remap failed: the card must be replaced
};

struct GpuProcess {
  unsigned pid = 0;
  std::string name;
  uint64_t used_bytes = 0;
};

struct XidEvent {
  int gpu = -1;
  uint64_t xid = 0;
};

class DiagNvml {
 public:
  virtual ~DiagNvml() = default;

  virtual Result<int> gpuCount() = 0;
  virtual Result<std::string> name(int gpu) = 0;  // "NVIDIA H100 80GB HBM3"
  virtual Result<std::string> uuid(int gpu) = 0;
  virtual Result<std::string> pciBusId(int gpu) = 0;  // "00000000:17:00.0" (NVML form)
  virtual Result<uint32_t> pciDeviceId(int gpu) = 0;  // nvmlPciInfo_t.pciDeviceId, 0x233010DE
  virtual Result<PcieLink> pcieLink(int gpu) = 0;
  virtual Result<double> powerLimitW(int gpu) = 0;     // enforced limit, watts
  virtual Result<double> powerDrawW(int gpu) = 0;      // current draw, watts
  virtual Result<unsigned> temperatureC(int gpu) = 0;  // GPU core
  virtual Result<Clocks> clocks(int gpu) = 0;
  virtual Result<uint64_t> clockEventReasons(int gpu) = 0;  // nvmlClocksThrottleReason* bits
  virtual Result<EccCounts> ecc(int gpu) = 0;
  virtual Result<RetiredPages> retiredPages(int gpu) = 0;
  virtual Result<RowRemap> rowRemap(int gpu) = 0;
  virtual Result<bool> persistenceMode(int gpu) = 0;
  virtual Result<bool> inforomValid(int gpu) = 0;  // nvmlDeviceValidateInforom == SUCCESS
  virtual Result<std::vector<GpuProcess>> computeProcesses(int gpu) = 0;
  virtual Result<int> nvlinkActiveLinks(int gpu) = 0;  // 0 when the GPU has no NVLink
  virtual Result<std::string> serial(int gpu) = 0;     // board serial number
  virtual Result<std::string> vbiosVersion(int gpu) = 0;
  virtual Result<std::string> driverVersion() = 0;  // "550.54.15"
  virtual Result<int> cudaDriverVersion() = 0;      // highest CUDA the driver supports: 12040 = 12.4

  // Xid events that arrived since the previous call, without blocking. The first call arms the
  // watch (e.g. creates the NVML event set) and returns only events newer than it.
  virtual std::vector<XidEvent> pollXids() = 0;
};

}  // namespace gw::diag
