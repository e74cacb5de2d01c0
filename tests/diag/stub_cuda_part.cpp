// A stand-in for libgpuwarden-cuda.so at its C ABI, so that the production loader
// (cuda_backend.cpp: dlopen, symbol lookup, ABI check, state and reason, the callbacks) runs on a
// machine without a GPU. $GW_STUB_PART, read at each call, chooses what the "driver" says.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "diag/cuda/gwcuda_abi.h"

namespace {
std::string mode() {
  const char* m = std::getenv("GW_STUB_PART");
  return m ? m : "ready";
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
  *count = 2;
  return 0;
}

GWCUDA_API int gwcuda_device_props(int dev, GwDeviceProps* out, GwError* err) {
  if (mode() == "badprops" && dev == 1) return fail(err, 2, "cudaGetDeviceProperties(1)", "out of memory");
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

GWCUDA_API int gwcuda_gemm_burn(int, double seconds, int precision, GwProgressFn progress, void* user,
                                GwGemmResult* out, GwError* err) {
  if (progress(user, 1.0) != 0) return fail(err, GWCUDA_E_CANCELLED, "gemm", "cancelled");
  out->precision = precision;
  out->seconds = seconds;
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
