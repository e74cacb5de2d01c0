// A stand-in for libgpuwarden-cuda.so at its C ABI, so that the production loader
// (cuda_backend.cpp: dlopen, symbol lookup, ABI check, state and reason, the callbacks) runs on a
// machine without a GPU. $GW_STUB_PART, read at each call, chooses what the "driver" says.
//
// Scripted fleets (gpuwarden burn on the simulator): $GW_STUB_BUS_IDS, comma separated, are the
// devices' PCI bus ids (their count is the device count), and $GW_STUB_GEMM, comma separated,
// one per device, is how its GEMM burn goes - ok, miscompare, checksum (a differing result),
// slow (half the GFLOP/s), lost (fails half way) - in real time, reporting every 100 ms.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "diag/cuda/gwcuda_abi.h"

namespace {
std::string mode() {
  const char* m = std::getenv("GW_STUB_PART");
  return m ? m : "ready";
}
std::vector<std::string> listEnv(const char* name) {
  std::vector<std::string> v;
  const char* s = std::getenv(name);
  if (!s) return v;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) v.push_back(x);
  return v;
}
int fail(GwError* e, int code, const char* call, const char* message) {
  e->code = code;
  std::snprintf(e->call, sizeof e->call, "%s", call);
  std::snprintf(e->message, sizeof e->message, "%s", message);
  return code;
}
}  // namespace

extern "C" {

GWCUDA_API int gwcuda_abi_version(void) { return mode() == "abi" ? GWCUDA_ABI_VERSION + 1 : GWCUDA_ABI_VERSION; }

GWCUDA_API int gwcuda_device_count(int* count, GwError* err) {
  const std::string m = mode();
  *count = 0;
  if (m == "nodriver") return fail(err, GWCUDA_E_NO_DRIVER, "dlopen(libcuda.so.1)", "cannot open shared object file");
  if (m == "nodevice") return 0;
  if (m == "nodevice100") return fail(err, 100, "cudaGetDeviceCount", "no CUDA-capable device is detected");
  if (m == "stub34") return fail(err, 34, "", "CUDA driver is a stub library");
  if (m == "broken") return fail(err, 35, "cudaGetDeviceCount", "CUDA driver version is insufficient");
  if (m == "codeonly") return fail(err, 999, "", "");
  const auto buses = listEnv("GW_STUB_BUS_IDS");
  *count = buses.empty() ? 2 : static_cast<int>(buses.size());
  return 0;
}

GWCUDA_API int gwcuda_device_props(int dev, GwDeviceProps* out, GwError* err) {
  if (mode() == "badprops" && dev == 1) return fail(err, 2, "cudaGetDeviceProperties(1)", "out of memory");
  const auto buses = listEnv("GW_STUB_BUS_IDS");
  if (dev >= 0 && static_cast<size_t>(dev) < buses.size())
    std::snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%s", buses[dev].c_str());
  else
    std::snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "0000:%02x:00.0", 0x17 + dev);
  out->runtime_version = 12080;
  out->free_mem = size_t(1) << 34;
  return 0;
}

GWCUDA_API int gwcuda_vector_add(int dev, size_t n, GwVecAddResult* out, GwError* err) {
  if (dev == 1) return fail(err, 2, "cudaMalloc(d_a)", "out of memory");
  if (dev == 2) return fail(err, 7, "", "");
  out->n = n;
  return 0;
}

GWCUDA_API int gwcuda_memtest(int, double fraction, unsigned patterns_mask, double min_seconds, GwProgressFn progress,
                              void* user, GwMemtestResult* out, GwError* err) {
  if (progress(user, 0.5) != 0) return fail(err, GWCUDA_E_CANCELLED, "memtest", "cancelled");
  out->bytes_tested = static_cast<uint64_t>(fraction * 1000);
  out->rounds = patterns_mask;
  out->seconds = min_seconds;
  return 0;
}

GWCUDA_API int gwcuda_h2d_d2h_bandwidth(int dev, size_t bytes, int iterations, GwBandwidthResult* out, GwError*) {
  *out = GwBandwidthResult{bytes, iterations, 10.0 + dev, 20.0 + dev, 1, 2};
  return 0;
}

GWCUDA_API int gwcuda_p2p_bandwidth(int src, int dst, size_t bytes, int iterations, GwP2PResult* out, GwError*) {
  *out = GwP2PResult{src, dst, 1, static_cast<double>(bytes), static_cast<double>(iterations)};
  return 0;
}

GWCUDA_API int gwcuda_gemm_burn(int dev, double seconds, int precision, GwGemmProgressFn progress, void* user,
                                GwGemmResult* out, GwError* err) {
  out->precision = precision;
  const auto script = listEnv("GW_STUB_GEMM");
  if (script.empty()) {
    out->seconds = seconds;
    if (progress(user, 1.0, out) != 0) return fail(err, GWCUDA_E_CANCELLED, "gemm", "cancelled");
    return 0;
  }
  const std::string how = static_cast<size_t>(dev) < script.size() ? script[dev] : "ok";
  out->used_cublas = 1;
  out->n = 8192;
  out->checksum = how == "checksum" ? 0xBAD0000000000000ull + precision : 0xC0FFEE0000000000ull + precision;
  out->gflops = how == "slow" ? 25000.0 : 50000.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 1;; ++step) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out->seconds = elapsed;
    out->iterations = static_cast<uint64_t>(step) * 10;
    if (how == "miscompare" && step >= 3) {
      out->failed_iterations = static_cast<uint64_t>(step - 2);
      out->miscompared_elements = out->failed_iterations * 7;
    }
    if (how == "lost" && elapsed >= seconds / 2)
      return fail(err, 999, "cudaStreamSynchronize(stream_)", "unspecified launch failure");
    if (elapsed >= seconds) break;
    // Asked to stop: like the real part, the run ends early with what it counted.
    if (progress && progress(user, elapsed / seconds, out) != 0) return 0;
  }
  if (progress) progress(user, 1.0, out);
  return 0;
}

GWCUDA_API int gwcuda_stream_triad(int, size_t bytes_per_array, int iterations, GwTriadResult* out, GwError*) {
  out->bytes_per_array = bytes_per_array;
  out->iterations = iterations;
  return 0;
}

GWCUDA_API int gwcuda_targeted_power(int, double seconds, int precision, GwPowerControlFn control, void* user,
                                     GwPowerResult* out, GwError*) {
  out->mean_duty = control(user, 0.25);
  out->seconds = seconds;
  out->used_cublas = precision;
  return 0;
}

}  // extern "C"
