// The production GpuBackend: libgpuwarden-cuda.so, dlopen'd on first use.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "diag/diag.h"
#include "diag/gpu_backend.h"
#include "platform/dynlib.h"

namespace gw::diag {

bool builtWithCudaPart() {
#ifdef GW_HAVE_CUDA_PART
  return true;
#else
  return false;
#endif
}

std::string cudaPartBuildPath() {
#ifdef GW_CUDA_PART_BUILD_PATH
  return GW_CUDA_PART_BUILD_PATH;
#else
  return "";
#endif
}

std::vector<std::string> cudaPartCandidates(const std::string& explicit_path) {
  std::vector<std::string> c;
  if (!explicit_path.empty()) return {explicit_path};
  if (const char* env = std::getenv("GPUWARDEN_CUDA_PART"); env && *env) return {env};
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    // Installed (lib/gpuwarden beside bin/, deploy/CMakeLists.txt), then a build tree's lib/.
    const auto bin = std::filesystem::path(exe).parent_path();
    c.push_back((bin / ".." / "lib" / "gpuwarden" / "libgpuwarden-cuda.so").lexically_normal().string());
    c.push_back((bin / ".." / "lib" / "libgpuwarden-cuda.so").lexically_normal().string());
  }
  std::string built = cudaPartBuildPath();
  if (!built.empty() && (c.empty() || c[0] != built)) c.push_back(built);
  return c;
}

std::string describeError(const GwError& e) {
  std::string s = e.call[0] ? std::string(e.call) + ": " : std::string();
  s += e.message[0] ? e.message : ("error " + std::to_string(e.code));
  return s;
}

Result<CudaMapping> mapCudaDevices(GpuBackend& backend, const std::vector<Result<std::string>>& nvml_bus_ids) {
  auto devs = backend.devices();
  if (!devs.ok()) return Status::Error("cannot list CUDA devices: " + devs.error());
  std::map<std::string, int> by_bus;
  for (size_t d = 0; d < devs->size(); ++d) by_bus[normalizePciBusId((*devs)[d].pci_bus_id)] = static_cast<int>(d);
  CudaMapping m;
  for (const auto& bus : nvml_bus_ids) {
    auto it = bus.ok() ? by_bus.find(normalizePciBusId(*bus)) : by_bus.end();
    m.ordinal.push_back(it == by_bus.end() ? -1 : it->second);
    m.props.push_back(it == by_bus.end() ? GwDeviceProps{} : (*devs)[it->second]);
  }
  return m;
}

namespace {

#define GW_PART_FUNCTIONS(X)  \
  X(gwcuda_abi_version)       \
  X(gwcuda_device_count)      \
  X(gwcuda_device_props)      \
  X(gwcuda_vector_add)        \
  X(gwcuda_memtest)           \
  X(gwcuda_h2d_d2h_bandwidth) \
  X(gwcuda_p2p_bandwidth)     \
  X(gwcuda_gemm_burn)         \
  X(gwcuda_stream_triad)      \
  X(gwcuda_targeted_power)

class CudaPartBackend : public GpuBackend {
 public:
  explicit CudaPartBackend(const std::string& explicit_path) { open(explicit_path); }

  BackendState state() const override { return state_; }
  std::string reason() const override { return reason_; }

  Result<std::vector<GwDeviceProps>> devices() override {
    if (state_ != BackendState::Ready) return Status::Error(reason_);
    std::vector<GwDeviceProps> out;
    for (int d = 0; d < count_; ++d) {
      GwDeviceProps p{};
      GwError e{};
      if (fn_.gwcuda_device_props(d, &p, &e) != 0) return Status::Error(describeError(e));
      out.push_back(p);
    }
    return out;
  }

  template <typename T, typename F>
  Result<T> call(F&& f) {
    if (state_ != BackendState::Ready) return Status::Error(reason_);
    T out{};
    GwError e{};
    if (f(&out, &e) != 0) return Status::Error(describeError(e));
    return out;
  }

  Result<GwVecAddResult> vectorAdd(int dev, size_t n) override {
    return call<GwVecAddResult>([&](auto* o, GwError* e) { return fn_.gwcuda_vector_add(dev, n, o, e); });
  }
  Result<GwMemtestResult> memtest(int dev, double fraction, unsigned patterns, double min_seconds,
                                  const ProgressFn& progress) override {
    return call<GwMemtestResult>([&](auto* o, GwError* e) {
      return fn_.gwcuda_memtest(dev, fraction, patterns, min_seconds, &CudaPartBackend::onProgress,
                                const_cast<ProgressFn*>(&progress), o, e);
    });
  }
  Result<GwBandwidthResult> hostBandwidth(int dev, size_t bytes, int iterations) override {
    return call<GwBandwidthResult>(
        [&](auto* o, GwError* e) { return fn_.gwcuda_h2d_d2h_bandwidth(dev, bytes, iterations, o, e); });
  }
  Result<GwP2PResult> p2pBandwidth(int src, int dst, size_t bytes, int iterations) override {
    return call<GwP2PResult>(
        [&](auto* o, GwError* e) { return fn_.gwcuda_p2p_bandwidth(src, dst, bytes, iterations, o, e); });
  }
  Result<GwGemmResult> gemmBurn(int dev, double seconds, int precision, const GemmProgressFn& progress) override {
    return call<GwGemmResult>([&](auto* o, GwError* e) {
      return fn_.gwcuda_gemm_burn(dev, seconds, precision, &CudaPartBackend::onGemmProgress,
                                  const_cast<GemmProgressFn*>(&progress), o, e);
    });
  }
  Result<GwTriadResult> streamTriad(int dev, size_t bytes_per_array, int iterations) override {
    return call<GwTriadResult>(
        [&](auto* o, GwError* e) { return fn_.gwcuda_stream_triad(dev, bytes_per_array, iterations, o, e); });
  }
  Result<GwPowerResult> targetedPower(int dev, double seconds, int precision, const PowerControlFn& control) override {
    return call<GwPowerResult>([&](auto* o, GwError* e) {
      return fn_.gwcuda_targeted_power(dev, seconds, precision, &CudaPartBackend::onControl,
                                       const_cast<PowerControlFn*>(&control), o, e);
    });
  }

 private:
  static int onProgress(void* user, double f) {
    auto* fn = static_cast<ProgressFn*>(user);
    return (*fn && !(*fn)(f)) ? 1 : 0;
  }
  static int onGemmProgress(void* user, double f, const GwGemmResult* so_far) {
    auto* fn = static_cast<GemmProgressFn*>(user);
    return (*fn && so_far && !(*fn)(f, *so_far)) ? 1 : 0;
  }
  static double onControl(void* user, double f) {
    auto* fn = static_cast<PowerControlFn*>(user);
    return *fn ? (*fn)(f) : 1.0;
  }

  void open(const std::string& explicit_path) {
    auto candidates = cudaPartCandidates(explicit_path);
    std::string last_error;
    std::string tried_found;
    for (const auto& path : candidates) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) continue;
      auto lib = platform::DynamicLibrary::open(path);
      if (!lib.ok()) {
        last_error = path + ": " + lib.error();
        continue;
      }
      lib_ = std::move(lib).value();
      tried_found = path;
      break;
    }
    if (!lib_.isOpen()) {
      if (last_error.empty() && !builtWithCudaPart()) {
        state_ = BackendState::BuiltWithoutCuda;
        reason_ = "built without CUDA";
      } else {
        state_ = BackendState::PartNotLoadable;
        reason_ = last_error.empty() ? "CUDA part libgpuwarden-cuda.so not found (set "
                                       "GPUWARDEN_CUDA_PART)"
                                     : "CUDA part not loadable: " + last_error;
      }
      return;
    }
#define GW_RESOLVE(name)                                                      \
  fn_.name = reinterpret_cast<decltype(&::name)>(lib_.symbol(#name));         \
  if (!fn_.name) {                                                            \
    state_ = BackendState::PartNotLoadable;                                   \
    reason_ = "CUDA part " + tried_found + " lacks " #name " (stale build?)"; \
    return;                                                                   \
  }
    GW_PART_FUNCTIONS(GW_RESOLVE)
#undef GW_RESOLVE
    int v = fn_.gwcuda_abi_version();
    if (v != GWCUDA_ABI_VERSION) {
      state_ = BackendState::PartNotLoadable;
      reason_ = "CUDA part " + tried_found + " has ABI version " + std::to_string(v) + ", expected " +
                std::to_string(GWCUDA_ABI_VERSION);
      return;
    }
    GwError e{};
    int rc = fn_.gwcuda_device_count(&count_, &e);
    if (rc == GWCUDA_E_NO_DRIVER) {
      state_ = BackendState::NoDriver;
      reason_ = "no GPU (NVIDIA driver library not found: " + std::string(e.message) + ")";
    } else if (rc == 100 /* cudaErrorNoDevice */ || rc == 34 /* cudaErrorStubLibrary */ || (rc == 0 && count_ == 0)) {
      state_ = BackendState::NoDevice;
      reason_ = rc == 0 ? "no GPU (CUDA sees no device)" : "no GPU (" + describeError(e) + ")";
    } else if (rc != 0) {
      state_ = BackendState::CudaBroken;
      reason_ = "CUDA cannot initialise: " + describeError(e);
    } else {
      state_ = BackendState::Ready;
      reason_ = "ready (" + tried_found + ", " + std::to_string(count_) + " device(s))";
    }
  }

  struct Functions {
#define GW_FIELD(name) decltype(&::name) name = nullptr;
    GW_PART_FUNCTIONS(GW_FIELD)
#undef GW_FIELD
  } fn_;
  platform::DynamicLibrary lib_;
  BackendState state_ = BackendState::PartNotLoadable;
  std::string reason_;
  int count_ = 0;
};

}  // namespace

std::unique_ptr<GpuBackend> openCudaBackend(const std::string& explicit_path) {
  return std::make_unique<CudaPartBackend>(explicit_path);
}

}  // namespace gw::diag
