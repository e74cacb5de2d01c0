// Shared helpers of the CUDA part: error capture, RAII holders, the driver presence check.
// Every CUDA call goes through GW_CHECK, which records the call text and cudaGetErrorString and
// unwinds to the extern "C" entry point (no exception ever crosses the C ABI).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "gwcuda_abi.h"

#define GW_STR2(x) #x
#define GW_STR(x) GW_STR2(x)

namespace gwcuda {

struct Failure {
  int code;
};

inline void setError(GwError* err, int code, const char* call, const char* message) {
  if (!err) return;
  err->code = code;
  std::snprintf(err->call, sizeof err->call, "%s", call ? call : "");
  std::snprintf(err->message, sizeof err->message, "%s", message ? message : "");
}

[[noreturn]] inline void fail(GwError* err, int code, const char* call, const char* message) {
  setError(err, code, call, message);
  throw Failure{code};
}

inline void check(cudaError_t e, const char* call, GwError* err) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so the next call starts clean
    fail(err, static_cast<int>(e), call, cudaGetErrorString(e));
  }
}

#define GW_CHECK(call) ::gwcuda::check((call), #call, err)

// Runs body; converts a Failure into the return code. Used by every extern "C" function.
template <typename F>
int guarded(GwError* err, F&& body) {
  if (err) std::memset(err, 0, sizeof *err);
  try {
    body();
    return 0;
  } catch (const Failure& f) {
    return f.code;
  } catch (...) {
    setError(err, 1, "", "unexpected C++ exception in the CUDA part");
    return 1;
  }
}

// Returns 0 when libcuda.so.1 can be loaded, otherwise fills err (GWCUDA_E_NO_DRIVER).
int ensureDriver(GwError* err);

// Selects the device and verifies it exists.
void useDevice(int dev, GwError* err);

template <typename T>
struct DevBuf {
  T* p = nullptr;
  size_t count = 0;
  DevBuf() = default;
  DevBuf(size_t n, GwError* err) : count(n) { GW_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T))); }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  size_t bytes() const { return count * sizeof(T); }
};

struct PinnedBuf {
  void* p = nullptr;
  PinnedBuf(size_t bytes, GwError* err) { GW_CHECK(cudaMallocHost(&p, bytes)); }
  ~PinnedBuf() {
    if (p) cudaFreeHost(p);
  }
  PinnedBuf(const PinnedBuf&) = delete;
  PinnedBuf& operator=(const PinnedBuf&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  explicit Event(GwError* err) { GW_CHECK(cudaEventCreate(&e)); }
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct Stream {
  cudaStream_t s = nullptr;
  explicit Stream(GwError* err) { GW_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

inline double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline unsigned gridFor(size_t n, unsigned block, int sm_count) {
  size_t want = (n + block - 1) / block;
  size_t cap = static_cast<size_t>(sm_count > 0 ? sm_count : 80) * 8;
  if (want > cap) want = cap;
  return static_cast<unsigned>(want ? want : 1);
}

int smCount(int dev, GwError* err);

__host__ __device__ inline unsigned long long splitmix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace gwcuda
