/* The C ABI between gpuwarden's host logic (gw_diag) and the CUDA part (libgpuwarden-cuda.so).
 *
 * The part is loaded with dlopen only when a GPU test runs; the main binary never links CUDA.
 * Everything crossing this line is a plain C function with POD structs, so the two sides may be
 * built by different compilers (g++ for the host, nvcc for the part). gw_diag checks
 * gwcuda_abi_version() == GWCUDA_ABI_VERSION at load and refuses a part that differs.
 *
 * Conventions:
 *  - every function returns 0 on success, otherwise the failing CUDA error code (cudaError_t) or
 *    one of the GWCUDA_E_* codes below, and fills `err` (call that failed + cudaGetErrorString);
 *  - device numbers are CUDA runtime ordinals; the host maps them to NVML indices by PCI bus id;
 *  - progress callbacks are called from the calling thread, return non-zero to stop early;
 *  - functions for different devices may run concurrently from different threads.
 * Change any struct or signature => bump GWCUDA_ABI_VERSION.
 */
#ifndef GPUWARDEN_GWCUDA_ABI_H
#define GPUWARDEN_GWCUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GWCUDA_ABI_VERSION 2 /* 2: FP64 and TENSOR precisions; the GEMM burn reports progress with its counts */

#if defined(__GNUC__)
#define GWCUDA_API __attribute__((visibility("default")))
#else
#define GWCUDA_API
#endif

/* Error codes outside the cudaError_t range. */
#define GWCUDA_E_NO_DRIVER 10001 /* libcuda.so.1 (the NVIDIA driver's CUDA library) is absent */
#define GWCUDA_E_BAD_ARGUMENT 10002
#define GWCUDA_E_CANCELLED 10003   /* a progress callback asked to stop */
#define GWCUDA_E_UNSUPPORTED 10004 /* e.g. peer access not possible between two devices */

typedef struct GwError {
  int code;          /* 0 = ok */
  char call[128];    /* the call that failed, e.g. "cudaMalloc(d_a, 268435456)" */
  char message[256]; /* cudaGetErrorString text or our own explanation */
} GwError;

/* Returns non-zero to ask the running test to stop. fraction in [0,1]. */
typedef int (*GwProgressFn)(void* user, double fraction);

/* The GEMM burn's progress, after each batch of GEMMs: so_far holds the counts, checksum and
 * GFLOP/s of the run up to now (seconds = elapsed), so a caller can show them live. */
struct GwGemmResult;
typedef int (*GwGemmProgressFn)(void* user, double fraction, const struct GwGemmResult* so_far);

/* Targeted power: called about every 100 ms with the elapsed fraction; returns the desired busy
 * duty cycle in [0,1] for the next window, or a negative value to stop. */
typedef double (*GwPowerControlFn)(void* user, double fraction);

typedef struct GwDeviceProps {
  char name[96];
  char pci_bus_id[32]; /* "0000:17:00.0" */
  int cc_major, cc_minor;
  int sm_count;
  size_t total_mem; /* bytes */
  size_t free_mem;  /* bytes, at query time */
  int mem_bus_width_bits;
  int mem_clock_khz;       /* peak memory clock; 0 if unknown */
  double peak_mem_bw_gbps; /* 2 * clock * width / 8 (DDR); 0 if unknown */
  int driver_version;      /* cudaDriverGetVersion, e.g. 13000 */
  int runtime_version;     /* cudaRuntimeGetVersion */
} GwDeviceProps;

typedef struct GwVecAddResult {
  size_t n;
  double max_abs_error; /* must be exactly 0 */
  uint64_t mismatches;
  double kernel_ms;
} GwVecAddResult;

#define GW_MEMTEST_WALKING_ONES 0x1u /* walking 1s and walking 0s over every bit of a word */
#define GW_MEMTEST_OWN_ADDRESS 0x2u  /* each word holds its own address, then its complement */
#define GW_MEMTEST_MOVING_INV 0x4u   /* moving inversions with 0s/1s and a random pattern */
#define GW_MEMTEST_RANDOM 0x8u       /* per-word pseudo-random data, then its complement */
#define GW_MEMTEST_ALL 0xFu
#define GW_MEMTEST_MAX_RECORDED 16

typedef struct GwMemError {
  uint64_t offset; /* byte offset into the tested region */
  uint64_t expected, actual;
  uint32_t pattern; /* GW_MEMTEST_* bit of the test that saw it */
  uint32_t pad;
} GwMemError;

typedef struct GwMemtestResult {
  uint64_t bytes_tested;
  uint64_t errors;               /* words that read back wrong, all patterns */
  uint64_t errors_by_pattern[4]; /* index = bit number of GW_MEMTEST_* */
  uint32_t rounds;               /* complete passes over all selected patterns */
  uint32_t recorded;             /* entries used in first_errors */
  GwMemError first_errors[GW_MEMTEST_MAX_RECORDED];
  double seconds;
} GwMemtestResult;

typedef struct GwBandwidthResult {
  size_t bytes; /* per transfer */
  int iterations;
  double h2d_gbps; /* best of iterations, 1e9 bytes/s, pinned host memory */
  double d2h_gbps;
  double h2d_avg_gbps;
  double d2h_avg_gbps;
} GwBandwidthResult;

typedef struct GwP2PResult {
  int src, dst;
  int peer_access; /* cudaDeviceCanAccessPeer(src -> dst) */
  double gbps;     /* src -> dst copy, best of iterations */
  double avg_gbps;
} GwP2PResult;

#define GW_GEMM_FP32 0
#define GW_GEMM_TF32 1
#define GW_GEMM_FP16 2
#define GW_GEMM_BF16 3
#define GW_GEMM_FP64 4 /* double: cuBLAS (GemmEx, 64F compute) or the part's own FP64 kernel */
#define GW_GEMM_TENSOR                                                 \
  5 /* FP32 matrices on the tensor cores: inputs rounded to FP16, FP32 \
       accumulate (cuBLAS CUBLAS_COMPUTE_32F_FAST_16F); needs cuBLAS */

typedef struct GwGemmResult {
  int precision;              /* GW_GEMM_*: what ran (builtin kernels: FP64 for FP64, else FP32) */
  int used_cublas;            /* 1: cuBLAS (dlopen'd), 0: the part's own kernel */
  int n;                      /* square matrix size */
  uint64_t iterations;        /* GEMMs computed and compared */
  uint64_t failed_iterations; /* GEMMs whose result differed from the first one */
  uint64_t miscompared_elements;
  uint64_t checksum; /* FNV-1a of the reference result's bytes (compare across GPUs) */
  double gflops;     /* sustained over the run */
  double seconds;
} GwGemmResult;

typedef struct GwTriadResult {
  size_t bytes_per_array;
  int iterations;
  double best_gbps; /* 3 * bytes_per_array / best time (STREAM counting) */
  double avg_gbps;
  uint64_t wrong_elements; /* a[i] != b[i] + s*c[i] after the run */
} GwTriadResult;

typedef struct GwPowerResult {
  double seconds;
  double mean_duty; /* average busy fraction asked by the controller */
  uint64_t iterations;
  uint64_t failed_iterations; /* load results differed from the reference */
  int used_cublas;
} GwPowerResult;

GWCUDA_API int gwcuda_abi_version(void);
GWCUDA_API int gwcuda_device_count(int* count, GwError* err);
GWCUDA_API int gwcuda_device_props(int dev, GwDeviceProps* out, GwError* err);
GWCUDA_API int gwcuda_vector_add(int dev, size_t n, GwVecAddResult* out, GwError* err);
GWCUDA_API int gwcuda_memtest(int dev, double fraction, unsigned patterns_mask, double min_seconds,
                              GwProgressFn progress, void* user, GwMemtestResult* out, GwError* err);
GWCUDA_API int gwcuda_h2d_d2h_bandwidth(int dev, size_t bytes, int iterations, GwBandwidthResult* out, GwError* err);
GWCUDA_API int gwcuda_p2p_bandwidth(int src, int dst, size_t bytes, int iterations, GwP2PResult* out, GwError* err);
GWCUDA_API int gwcuda_gemm_burn(int dev, double seconds, int precision, GwGemmProgressFn progress, void* user,
                                GwGemmResult* out, GwError* err);
GWCUDA_API int gwcuda_stream_triad(int dev, size_t bytes_per_array, int iterations, GwTriadResult* out, GwError* err);
GWCUDA_API int gwcuda_targeted_power(int dev, double seconds, int precision, GwPowerControlFn control, void* user,
                                     GwPowerResult* out, GwError* err);

#ifdef __cplusplus
}
#endif

#endif /* GPUWARDEN_GWCUDA_ABI_H */
