// The CUDA part, compute load: the GEMM burn (R27, in the manner of gpu-burn) and the
// targeted-power run. Every GEMM multiplies the same A and B, so every result must be
// bit-identical to the first one; each result is compared on the device and any difference
// counts as a miscompare. cuBLAS is used when libcublas can be dlopen'd (tensor cores for
// TF32/FP16/BF16/TENSOR); otherwise the part's own tiled kernel carries the load: FP64 for FP64,
// FP32 for everything else (the result says what ran).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "gwcuda_common.cuh"

#if __has_include(<cublas_v2.h>)
#include <cublas_v2.h>
#define GW_WITH_CUBLAS 1
#else
#define GW_WITH_CUBLAS 0
#endif

namespace gwcuda {
namespace {

#if GW_WITH_CUBLAS
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // cublasGemmEx is overloaded in C++ (cudaDataType vs cublasComputeType_t): name the C one.
  using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                      const void*, cudaDataType, int, const void*, cudaDataType, int, const void*,
                                      void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmExFn gemm_ex = nullptr;
  bool ok = false;
};

const Cublas& cublas() {
  static Cublas c;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* names[] = {"libcublas.so." GW_STR(CUBLAS_VER_MAJOR), "libcublas.so"};
    for (const char* n : names) {
      void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL);
      if (!h) continue;
      c.create = reinterpret_cast<decltype(c.create)>(dlsym(h, "cublasCreate_v2"));
      c.destroy = reinterpret_cast<decltype(c.destroy)>(dlsym(h, "cublasDestroy_v2"));
      c.set_stream = reinterpret_cast<decltype(c.set_stream)>(dlsym(h, "cublasSetStream_v2"));
      c.gemm_ex = reinterpret_cast<decltype(c.gemm_ex)>(dlsym(h, "cublasGemmEx"));
      c.ok = c.create && c.destroy && c.set_stream && c.gemm_ex;
      if (c.ok) return;
    }
  });
  return c;
}

void checkBlas(cublasStatus_t s, const char* call, GwError* err) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    char msg[64];
    std::snprintf(msg, sizeof msg, "cuBLAS status %d", static_cast<int>(s));
    fail(err, 20000 + static_cast<int>(s), call, msg);
  }
}
#endif

constexpr int kTile = 64, kTileK = 16;

// C = A * B, row-major, n a multiple of 64; 256 threads compute a 64x64 tile, 4x4 each.
// T is float or double; fma() keeps the rounding identical from run to run for both.
template <typename T>
__global__ __launch_bounds__(256) void gemmTiled(int n, const T* A, const T* B, T* C) {
  __shared__ T As[kTileK][kTile + 1];
  __shared__ T Bs[kTileK][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  T acc[4][4] = {};
  for (int k0 = 0; k0 < n; k0 += kTileK) {
    for (int l = threadIdx.x; l < kTile * kTileK; l += 256) {
      int r = l / kTileK, k = l % kTileK;
      As[k][r] = A[static_cast<size_t>(row0 + r) * n + k0 + k];
      int kb = l / kTile, c = l % kTile;
      Bs[kb][c] = B[static_cast<size_t>(k0 + kb) * n + col0 + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTileK; ++k) {
      T a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = As[k][ty + 16 * i];
        b[i] = Bs[k][tx + 16 * i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) C[static_cast<size_t>(row0 + ty + 16 * i) * n + col0 + tx + 16 * j] = acc[i][j];
}

// The same values in every precision (24 random bits in [-1, 1)), so every GPU starts alike.
__global__ void initMatrix(float* f, __half* h, __nv_bfloat16* b, double* d, size_t count, unsigned long long seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    float v = static_cast<float>(splitmix64(seed ^ i) >> 40) / static_cast<float>(1ull << 24) * 2.0f - 1.0f;
    if (f) f[i] = v;
    if (d) d[i] = static_cast<double>(v);
    if (h) h[i] = __float2half(v);
    if (b) b[i] = __float2bfloat16(v);
  }
}

__global__ void compareKernel(const unsigned* ref, const unsigned* out, size_t words, unsigned long long* iter_bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    if (ref[i] != out[i]) ++local;
  if (local) atomicAdd(iter_bad, local);
}

// counters[0] = this iteration's bad words, [1] = total bad words, [2] = failed iterations.
__global__ void finishIteration(unsigned long long* counters) {
  if (counters[0]) {
    counters[1] += counters[0];
    counters[2] += 1;
    counters[0] = 0;
  }
}

class GemmLoad {
 public:
  GemmLoad(int dev, int precision, GwError* err) : err_(err) {
    try {
      setup(dev, precision, err);
    } catch (...) {
      release();  // a constructor that throws gets no destructor
      throw;
    }
  }

  ~GemmLoad() { release(); }
  GemmLoad(const GemmLoad&) = delete;
  GemmLoad& operator=(const GemmLoad&) = delete;

 private:
  void setup(int dev, int precision, GwError* err) {
    useDevice(dev, err);
    sms_ = smCount(dev, err);
    size_t free_b = 0, total_b = 0;
    GW_CHECK(cudaMemGetInfo(&free_b, &total_b));
    n_ = free_b > (size_t(3) << 30) ? 8192 : 4096;
    precision_ = precision;
#if GW_WITH_CUBLAS
    use_cublas_ = cublas().ok;
#endif
    if (!use_cublas_ && precision_ != GW_GEMM_FP64) precision_ = GW_GEMM_FP32;
    size_t count = static_cast<size_t>(n_) * n_;
    bool half = precision_ == GW_GEMM_FP16, bf = precision_ == GW_GEMM_BF16, dbl = precision_ == GW_GEMM_FP64;
    const size_t in_size = half || bf ? 2 : dbl ? 8 : 4;
    out_size_ = dbl ? 8 : 4;
    GW_CHECK(cudaMalloc(&A_, count * in_size));
    GW_CHECK(cudaMalloc(&B_, count * in_size));
    GW_CHECK(cudaMalloc(&ref_, count * out_size_));
    GW_CHECK(cudaMalloc(&work_, count * out_size_));
    GW_CHECK(cudaMalloc(&counters_, 3 * sizeof(unsigned long long)));
    GW_CHECK(cudaMemset(counters_, 0, 3 * sizeof(unsigned long long)));
    GW_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    unsigned grid = gridFor(count, 256, sms_);
    for (int m = 0; m < 2; ++m) {
      void* p = m == 0 ? A_ : B_;
      initMatrix<<<grid, 256, 0, stream_>>>(half || bf || dbl ? nullptr : static_cast<float*>(p),
                                            half ? static_cast<__half*>(p) : nullptr,
                                            bf ? static_cast<__nv_bfloat16*>(p) : nullptr,
                                            dbl ? static_cast<double*>(p) : nullptr, count, 0x5EED0000ull + m);
      GW_CHECK(cudaGetLastError());
    }
#if GW_WITH_CUBLAS
    if (use_cublas_) {
      checkBlas(cublas().create(&handle_), "cublasCreate", err);
      checkBlas(cublas().set_stream(handle_, stream_), "cublasSetStream", err);
    }
#endif
    multiply(ref_);
    GW_CHECK(cudaStreamSynchronize(stream_));
    std::vector<unsigned char> host(count * out_size_);
    GW_CHECK(cudaMemcpy(host.data(), ref_, host.size(), cudaMemcpyDeviceToHost));
    unsigned long long h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : host) h = (h ^ c) * 1099511628211ull;
    checksum_ = h;
  }

  void release() {
#if GW_WITH_CUBLAS
    if (handle_) cublas().destroy(handle_);
    handle_ = nullptr;
#endif
    for (void* p : {A_, B_, ref_, work_, static_cast<void*>(counters_)})
      if (p) cudaFree(p);
    A_ = B_ = ref_ = work_ = nullptr;
    counters_ = nullptr;
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }

 public:
  // One GEMM into the work buffer, compared with the reference (queued, asynchronous).
  void iterate() {
    GwError* err = err_;
    multiply(work_);
    size_t words = static_cast<size_t>(n_) * n_ * (out_size_ / 4);
    compareKernel<<<gridFor(words, 256, sms_), 256, 0, stream_>>>(
        static_cast<const unsigned*>(ref_), static_cast<const unsigned*>(work_), words, counters_);
    GW_CHECK(cudaGetLastError());
    finishIteration<<<1, 1, 0, stream_>>>(counters_);
    GW_CHECK(cudaGetLastError());
    ++iterations_;
  }

  void sync() {
    GwError* err = err_;
    GW_CHECK(cudaStreamSynchronize(stream_));
  }

  void counters(unsigned long long* bad_words, unsigned long long* failed_iters) {
    GwError* err = err_;
    unsigned long long h[3] = {};
    GW_CHECK(cudaMemcpy(h, counters_, sizeof h, cudaMemcpyDeviceToHost));
    *bad_words = h[1];
    *failed_iters = h[2];
  }

  // The counts so far, for a progress report; waits for the queued GEMMs.
  void snapshot(GwGemmResult* r, double elapsed) {
    unsigned long long bad = 0, failed = 0;
    counters(&bad, &failed);
    r->precision = precision_;
    r->used_cublas = use_cublas_ ? 1 : 0;
    r->n = n_;
    r->iterations = iterations_;
    r->miscompared_elements = bad;
    r->failed_iterations = failed;
    r->checksum = checksum_;
    const double n = n_;
    r->gflops = elapsed > 0 ? 2.0 * n * n * n * static_cast<double>(iterations_) / elapsed / 1e9 : 0;
    r->seconds = elapsed;
  }

  bool usedCublas() const { return use_cublas_; }
  unsigned long long iterations() const { return iterations_; }

 private:
  void multiply(void* C) {
    GwError* err = err_;
#if GW_WITH_CUBLAS
    if (use_cublas_) {
      // alpha and beta take the compute type's width: double for 64F, float otherwise.
      const float alpha = 1.0f, beta = 0.0f;
      const double alpha_d = 1.0, beta_d = 0.0;
      const void* a = &alpha;
      const void* b = &beta;
      cudaDataType_t t = CUDA_R_32F, out = CUDA_R_32F;
      cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
      if (precision_ == GW_GEMM_TF32) ct = CUBLAS_COMPUTE_32F_FAST_TF32;
      if (precision_ == GW_GEMM_TENSOR) ct = CUBLAS_COMPUTE_32F_FAST_16F;
      if (precision_ == GW_GEMM_FP16) t = CUDA_R_16F;
      if (precision_ == GW_GEMM_BF16) t = CUDA_R_16BF;
      if (precision_ == GW_GEMM_FP64) {
        // GemmEx with 64F types and compute is cublasDgemm; one dlsym'd entry serves all.
        t = out = CUDA_R_64F;
        ct = CUBLAS_COMPUTE_64F;
        a = &alpha_d;
        b = &beta_d;
      }
      checkBlas(cublas().gemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, a, A_, t, n_, B_, t, n_, b, C, out, n_,
                                 ct, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx", err);
      return;
    }
#endif
    dim3 grid(n_ / kTile, n_ / kTile);
    if (precision_ == GW_GEMM_FP64)
      gemmTiled<double><<<grid, 256, 0, stream_>>>(n_, static_cast<const double*>(A_), static_cast<const double*>(B_),
                                                   static_cast<double*>(C));
    else
      gemmTiled<float><<<grid, 256, 0, stream_>>>(n_, static_cast<const float*>(A_), static_cast<const float*>(B_),
                                                  static_cast<float*>(C));
    GW_CHECK(cudaGetLastError());
  }

  GwError* err_;
  int sms_ = 0, n_ = 0, precision_ = GW_GEMM_FP32;
  size_t out_size_ = 4;  // bytes per result element
  bool use_cublas_ = false;
  void *A_ = nullptr, *B_ = nullptr, *ref_ = nullptr, *work_ = nullptr;
  unsigned long long* counters_ = nullptr;
  cudaStream_t stream_ = nullptr;
#if GW_WITH_CUBLAS
  cublasHandle_t handle_ = nullptr;
#endif
  unsigned long long iterations_ = 0, checksum_ = 0;
};

}  // namespace
}  // namespace gwcuda

using namespace gwcuda;

extern "C" int gwcuda_gemm_burn(int dev, double seconds, int precision, GwGemmProgressFn progress, void* user,
                                GwGemmResult* out, GwError* err) {
  return guarded(err, [&] {
    if (!out || seconds <= 0 || precision < GW_GEMM_FP32 || precision > GW_GEMM_TENSOR)
      fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_gemm_burn", "bad argument");
    std::memset(out, 0, sizeof *out);
    GemmLoad load(dev, precision, err);
    const double t0 = nowSeconds();
    double elapsed = 0;
    int batch = 1;
    while (elapsed < seconds) {
      double b0 = nowSeconds();
      for (int i = 0; i < batch; ++i) load.iterate();
      load.sync();
      double took = nowSeconds() - b0;
      // Aim for ~250 ms per batch so progress and the deadline stay responsive.
      if (took < 0.15 && batch < 4096) batch *= 2;
      elapsed = nowSeconds() - t0;
      if (progress) {
        GwGemmResult so_far{};
        load.snapshot(&so_far, elapsed);
        if (progress(user, std::min(elapsed / seconds, 0.999), &so_far) != 0) break;
      }
    }
    load.snapshot(out, nowSeconds() - t0);
    if (progress) progress(user, 1.0, out);
  });
}

extern "C" int gwcuda_targeted_power(int dev, double seconds, int precision, GwPowerControlFn control, void* user,
                                     GwPowerResult* out, GwError* err) {
  return guarded(err, [&] {
    if (!out || seconds <= 0 || precision < GW_GEMM_FP32 || precision > GW_GEMM_TENSOR)
      fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_targeted_power", "bad argument");
    std::memset(out, 0, sizeof *out);
    GemmLoad load(dev, precision, err);
    const double window = 0.1, t0 = nowSeconds();
    double duty_sum = 0;
    unsigned long long windows = 0;
    for (;;) {
      double elapsed = nowSeconds() - t0;
      if (elapsed >= seconds) break;
      double duty = control ? control(user, elapsed / seconds) : 1.0;
      if (duty < 0) break;
      duty = std::min(duty, 1.0);
      duty_sum += duty;
      ++windows;
      const double w0 = nowSeconds();
      while (nowSeconds() - w0 < duty * window) {
        load.iterate();
        load.sync();
      }
      double rest = window - (nowSeconds() - w0);
      if (rest > 0) std::this_thread::sleep_for(std::chrono::duration<double>(rest));
    }
    out->seconds = nowSeconds() - t0;
    out->mean_duty = windows ? duty_sum / windows : 0;
    out->iterations = load.iterations();
    unsigned long long bad = 0, failed = 0;
    load.counters(&bad, &failed);
    out->failed_iterations = failed;
    out->used_cublas = load.usedCublas() ? 1 : 0;
  });
}
