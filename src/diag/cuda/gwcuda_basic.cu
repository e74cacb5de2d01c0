// The CUDA part, basic tests: device enumeration, the R14 deployment test (vector add),
// host<->device and peer-to-peer bandwidth, and the STREAM triad.
#include <dlfcn.h>

#include <algorithm>
#include <vector>

#include "gwcuda_common.cuh"

namespace gwcuda {

int ensureDriver(GwError* err) {
  // cudart would fail later with "CUDA driver version is insufficient"; asking the loader first
  // names the real cause. The handle stays open for the life of the process, like cudart's.
  static void* handle = nullptr;
  if (handle) return 0;
  dlerror();
  handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = dlerror();
    setError(err, GWCUDA_E_NO_DRIVER, "dlopen(libcuda.so.1)", e ? e : "libcuda.so.1 (NVIDIA driver) not found");
    return GWCUDA_E_NO_DRIVER;
  }
  return 0;
}

void useDevice(int dev, GwError* err) {
  if (ensureDriver(err) != 0) throw Failure{GWCUDA_E_NO_DRIVER};
  int count = 0;
  GW_CHECK(cudaGetDeviceCount(&count));
  if (dev < 0 || dev >= count) fail(err, GWCUDA_E_BAD_ARGUMENT, "useDevice", "no such CUDA device");
  GW_CHECK(cudaSetDevice(dev));
}

int smCount(int dev, GwError* err) {
  int v = 0;
  GW_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
  return v;
}

namespace {

__global__ void vecAddKernel(const float* a, const float* b, float* c, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    c[i] = a[i] + b[i];
}

__global__ void triadInit(double* a, double* b, double* c, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
}

// a = b + s*c on double2 (16-byte accesses); n2 = number of double2 elements.
__global__ void triadKernel(double2* a, const double2* b, const double2* c, double s, size_t n2) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n2;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    double2 bb = b[i], cc = c[i];
    a[i] = make_double2(bb.x + s * cc.x, bb.y + s * cc.y);
  }
}

__global__ void triadVerify(const double* a, size_t n, double expect, unsigned long long* wrong) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    if (a[i] != expect) ++local;
  if (local) atomicAdd(wrong, local);
}

float elapsedMs(const Event& a, const Event& b, GwError* err) {
  float ms = 0;
  GW_CHECK(cudaEventElapsedTime(&ms, a.e, b.e));
  return ms;
}

}  // namespace
}  // namespace gwcuda

using namespace gwcuda;

extern "C" {

int gwcuda_abi_version(void) { return GWCUDA_ABI_VERSION; }

int gwcuda_device_count(int* count, GwError* err) {
  return guarded(err, [&] {
    if (!count) fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_device_count", "count is null");
    *count = 0;
    if (ensureDriver(err) != 0) throw Failure{GWCUDA_E_NO_DRIVER};
    GW_CHECK(cudaGetDeviceCount(count));
  });
}

int gwcuda_device_props(int dev, GwDeviceProps* out, GwError* err) {
  return guarded(err, [&] {
    if (!out) fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_device_props", "out is null");
    std::memset(out, 0, sizeof *out);
    useDevice(dev, err);
    cudaDeviceProp p{};
    GW_CHECK(cudaGetDeviceProperties(&p, dev));
    std::snprintf(out->name, sizeof out->name, "%.95s", p.name);
    GW_CHECK(cudaDeviceGetPCIBusId(out->pci_bus_id, sizeof out->pci_bus_id, dev));
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    out->total_mem = p.totalGlobalMem;
    GW_CHECK(cudaMemGetInfo(&out->free_mem, &out->total_mem));
    out->mem_bus_width_bits = p.memoryBusWidth;
    int clk = 0;
    if (cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) {
      cudaGetLastError();  // attribute not reported by this driver: leave the peak unknown
      clk = 0;
    }
    out->mem_clock_khz = clk;
    out->peak_mem_bw_gbps = 2.0 * clk * 1e3 * (p.memoryBusWidth / 8.0) / 1e9;
    GW_CHECK(cudaDriverGetVersion(&out->driver_version));
    GW_CHECK(cudaRuntimeGetVersion(&out->runtime_version));
  });
}

int gwcuda_vector_add(int dev, size_t n, GwVecAddResult* out, GwError* err) {
  return guarded(err, [&] {
    if (!out || n == 0) fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_vector_add", "bad argument");
    std::memset(out, 0, sizeof *out);
    useDevice(dev, err);
    // Small integers: every sum is exact in float, so any difference is an error (max error 0).
    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<float>(i % 4096);
      b[i] = static_cast<float>((i * 7) % 1000);
    }
    DevBuf<float> da(n, err), db(n, err), dc(n, err);
    GW_CHECK(cudaMemcpy(da.p, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    GW_CHECK(cudaMemcpy(db.p, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    GW_CHECK(cudaMemset(dc.p, 0xFF, n * sizeof(float)));
    Event start(err), stop(err);
    GW_CHECK(cudaEventRecord(start.e));
    vecAddKernel<<<gridFor(n, 256, smCount(dev, err)), 256>>>(da.p, db.p, dc.p, n);
    GW_CHECK(cudaGetLastError());
    GW_CHECK(cudaEventRecord(stop.e));
    GW_CHECK(cudaEventSynchronize(stop.e));
    out->kernel_ms = elapsedMs(start, stop, err);
    GW_CHECK(cudaMemcpy(c.data(), dc.p, n * sizeof(float), cudaMemcpyDeviceToHost));
    out->n = n;
    for (size_t i = 0; i < n; ++i) {
      double e = static_cast<double>(c[i]) - (static_cast<double>(a[i]) + b[i]);
      if (e != 0.0 || c[i] != c[i]) {
        ++out->mismatches;
        double ae = (c[i] != c[i]) ? 1e30 : (e < 0 ? -e : e);
        out->max_abs_error = std::max(out->max_abs_error, ae);
      }
    }
  });
}

int gwcuda_h2d_d2h_bandwidth(int dev, size_t bytes, int iterations, GwBandwidthResult* out, GwError* err) {
  return guarded(err, [&] {
    if (!out || bytes == 0 || iterations <= 0)
      fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_h2d_d2h_bandwidth", "bad argument");
    std::memset(out, 0, sizeof *out);
    useDevice(dev, err);
    PinnedBuf host(bytes, err);
    std::memset(host.p, 0x5A, bytes);
    DevBuf<unsigned char> devb(bytes, err);
    Stream s(err);
    Event a(err), b(err);
    out->bytes = bytes;
    out->iterations = iterations;
    for (int dir = 0; dir < 2; ++dir) {
      double best = 0, sum = 0;
      for (int i = -1; i < iterations; ++i) {  // i == -1: warm-up, not counted
        GW_CHECK(cudaEventRecord(a.e, s.s));
        if (dir == 0)
          GW_CHECK(cudaMemcpyAsync(devb.p, host.p, bytes, cudaMemcpyHostToDevice, s.s));
        else
          GW_CHECK(cudaMemcpyAsync(host.p, devb.p, bytes, cudaMemcpyDeviceToHost, s.s));
        GW_CHECK(cudaEventRecord(b.e, s.s));
        GW_CHECK(cudaEventSynchronize(b.e));
        if (i < 0) continue;
        double gbps = bytes / (elapsedMs(a, b, err) * 1e-3) / 1e9;
        best = std::max(best, gbps);
        sum += gbps;
      }
      (dir == 0 ? out->h2d_gbps : out->d2h_gbps) = best;
      (dir == 0 ? out->h2d_avg_gbps : out->d2h_avg_gbps) = sum / iterations;
    }
  });
}

int gwcuda_p2p_bandwidth(int src, int dst, size_t bytes, int iterations, GwP2PResult* out, GwError* err) {
  return guarded(err, [&] {
    if (!out || bytes == 0 || iterations <= 0 || src == dst)
      fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_p2p_bandwidth", "bad argument");
    std::memset(out, 0, sizeof *out);
    out->src = src;
    out->dst = dst;
    useDevice(dst, err);
    useDevice(src, err);
    GW_CHECK(cudaDeviceCanAccessPeer(&out->peer_access, src, dst));
    if (!out->peer_access) return;  // reported, not measured: the host decides what it means
    cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();
    else
      GW_CHECK(e);
    GW_CHECK(cudaSetDevice(dst));
    DevBuf<unsigned char> dbuf(bytes, err);
    GW_CHECK(cudaSetDevice(src));
    DevBuf<unsigned char> sbuf(bytes, err);
    GW_CHECK(cudaMemset(sbuf.p, 0xA5, bytes));
    Stream s(err);
    Event a(err), b(err);
    double best = 0, sum = 0;
    for (int i = -1; i < iterations; ++i) {
      GW_CHECK(cudaEventRecord(a.e, s.s));
      GW_CHECK(cudaMemcpyPeerAsync(dbuf.p, dst, sbuf.p, src, bytes, s.s));
      GW_CHECK(cudaEventRecord(b.e, s.s));
      GW_CHECK(cudaEventSynchronize(b.e));
      if (i < 0) continue;
      double gbps = bytes / (elapsedMs(a, b, err) * 1e-3) / 1e9;
      best = std::max(best, gbps);
      sum += gbps;
    }
    out->gbps = best;
    out->avg_gbps = sum / iterations;
    GW_CHECK(cudaDeviceDisablePeerAccess(dst));
    // dbuf belongs to dst; DevBuf's cudaFree works from any current device (unified addressing).
  });
}

int gwcuda_stream_triad(int dev, size_t bytes_per_array, int iterations, GwTriadResult* out, GwError* err) {
  return guarded(err, [&] {
    if (!out || bytes_per_array < 1024 || iterations <= 0)
      fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_stream_triad", "bad argument");
    std::memset(out, 0, sizeof *out);
    useDevice(dev, err);
    size_t n = bytes_per_array / sizeof(double) / 2 * 2;  // even: double2 access
    DevBuf<double> a(n, err), b(n, err), c(n, err);
    DevBuf<unsigned long long> wrong(1, err);
    int sms = smCount(dev, err);
    triadInit<<<gridFor(n, 256, sms), 256>>>(a.p, b.p, c.p, n);
    GW_CHECK(cudaGetLastError());
    Event e0(err), e1(err);
    double best = 0, sum = 0;
    size_t n2 = n / 2;
    for (int i = -1; i < iterations; ++i) {
      GW_CHECK(cudaEventRecord(e0.e));
      triadKernel<<<gridFor(n2, 256, sms * 4), 256>>>(reinterpret_cast<double2*>(a.p),
                                                      reinterpret_cast<const double2*>(b.p),
                                                      reinterpret_cast<const double2*>(c.p), 3.0, n2);
      GW_CHECK(cudaGetLastError());
      GW_CHECK(cudaEventRecord(e1.e));
      GW_CHECK(cudaEventSynchronize(e1.e));
      if (i < 0) continue;
      double gbps = 3.0 * n * sizeof(double) / (elapsedMs(e0, e1, err) * 1e-3) / 1e9;
      best = std::max(best, gbps);
      sum += gbps;
    }
    GW_CHECK(cudaMemset(wrong.p, 0, sizeof(unsigned long long)));
    triadVerify<<<gridFor(n, 256, sms), 256>>>(a.p, n, 7.0, wrong.p);
    GW_CHECK(cudaGetLastError());
    GW_CHECK(cudaMemcpy(&out->wrong_elements, wrong.p, sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    out->bytes_per_array = n * sizeof(double);
    out->iterations = iterations;
    out->best_gbps = best;
    out->avg_gbps = sum / iterations;
  });
}

}  // extern "C"
