// GpuBackend: how the host logic reaches the GPU tests. The production implementation is the
// dlopen'd CUDA part (openCudaBackend); the measured results are the C ABI's POD structs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "diag/cuda/gwcuda_abi.h"

namespace gw::diag {

// Why GPU tests cannot run. None: they can.
enum class BackendState {
  Ready,
  BuiltWithoutCuda,  // the part was not built and none was found
  PartNotLoadable,   // found but dlopen failed or its ABI version differs
  NoDriver,          // libcuda.so.1 absent (no NVIDIA driver, e.g. simulator hosts)
  NoDevice,          // driver present but CUDA sees no device
  CudaBroken,        // CUDA itself fails to initialise (driver/runtime mismatch...) - a failure
};

// Returns true to continue, false to stop early.
using ProgressFn = std::function<bool(double fraction)>;
// The GEMM burn's progress: also the counts and GFLOP/s so far (a live display shows them).
using GemmProgressFn = std::function<bool(double fraction, const GwGemmResult& so_far)>;
// Returns the duty cycle in [0,1] for the next ~100 ms, or a negative value to stop.
using PowerControlFn = std::function<double(double fraction)>;

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  virtual BackendState state() const = 0;
  // Human reason when state() != Ready: "no GPU (libcuda.so.1: cannot open shared object...)".
  virtual std::string reason() const = 0;

  virtual Result<std::vector<GwDeviceProps>> devices() = 0;
  virtual Result<GwVecAddResult> vectorAdd(int dev, size_t n) = 0;
  virtual Result<GwMemtestResult> memtest(int dev, double fraction, unsigned patterns, double min_seconds,
                                          const ProgressFn& progress) = 0;
  virtual Result<GwBandwidthResult> hostBandwidth(int dev, size_t bytes, int iterations) = 0;
  virtual Result<GwP2PResult> p2pBandwidth(int src, int dst, size_t bytes, int iterations) = 0;
  virtual Result<GwGemmResult> gemmBurn(int dev, double seconds, int precision, const GemmProgressFn& progress) = 0;
  virtual Result<GwTriadResult> streamTriad(int dev, size_t bytes_per_array, int iterations) = 0;
  virtual Result<GwPowerResult> targetedPower(int dev, double seconds, int precision,
                                              const PowerControlFn& control) = 0;
};

// Candidate paths of the part, in search order: explicit, $GPUWARDEN_CUDA_PART,
// <exe dir>/../lib/libgpuwarden-cuda.so, the build tree's copy (when built with CUDA).
std::vector<std::string> cudaPartCandidates(const std::string& explicit_path);
// True when this build produced the part (GW_HAVE_CUDA_PART).
bool builtWithCudaPart();
// Path of the part in the build tree ("" when not built with CUDA).
std::string cudaPartBuildPath();

// Loads the part and asks it for devices. Never fails: a backend that cannot run says why.
std::unique_ptr<GpuBackend> openCudaBackend(const std::string& explicit_path = "");

// Each NVML GPU's CUDA ordinal, matched by PCI bus id (-1: not visible to CUDA), with its
// properties (zeroed when not visible). Fails when the part cannot list its devices.
struct CudaMapping {
  std::vector<int> ordinal;
  std::vector<GwDeviceProps> props;
};
Result<CudaMapping> mapCudaDevices(GpuBackend& backend, const std::vector<Result<std::string>>& nvml_bus_ids);

// "cudaMalloc(...): out of memory" from the part's error record.
std::string describeError(const GwError& e);

}  // namespace gw::diag
