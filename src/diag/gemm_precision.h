// The GEMM precisions by name: the one table behind `diag`'s and `burn`'s --precision, the
// verdicts' "what ran" and the thresholds' gemm_tflops keys.
#pragma once

#include <string>

#include "diag/cuda/gwcuda_abi.h"

namespace gw::diag {

struct GemmPrecision {
  int code;                 // GW_GEMM_*
  const char* name;         // as typed and as reported
  const char* description;  // for --help and the docs
};

inline constexpr GemmPrecision kGemmPrecisions[] = {
    {GW_GEMM_FP16, "fp16", "FP16 matrices, FP32 accumulate (tensor cores)"},
    {GW_GEMM_BF16, "bf16", "BF16 matrices, FP32 accumulate (tensor cores)"},
    {GW_GEMM_TF32, "tf32", "FP32 matrices, TF32 tensor-core math"},
    {GW_GEMM_FP32, "fp32", "FP32 matrices, strict FP32 math (CUDA cores)"},
    {GW_GEMM_FP64, "fp64", "FP64 matrices, FP64 math (DGEMM)"},
    {GW_GEMM_TENSOR, "tensor",
     "FP32 matrices on the tensor cores: inputs rounded to FP16, FP32 accumulate (cuBLAS "
     "CUBLAS_COMPUTE_32F_FAST_16F)"},
};

// -1 when unknown.
inline int gemmPrecisionFromName(const std::string& name) {
  for (const auto& p : kGemmPrecisions)
    if (name == p.name) return p.code;
  return -1;
}

// "fp32" for a code it does not know (the part's own kernel is FP32).
inline const char* gemmPrecisionName(int code) {
  for (const auto& p : kGemmPrecisions)
    if (code == p.code) return p.name;
  return "fp32";
}

// "fp16, bf16, tf32, fp32, fp64, tensor": for errors that name the valid ones.
inline std::string gemmPrecisionList() {
  std::string s;
  for (const auto& p : kGemmPrecisions) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

}  // namespace gw::diag
