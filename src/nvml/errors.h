// NVML return codes as typed errors with their meaning for an operator.
#pragma once

#include <chrono>
#include <string>

#include "common/result.h"
#include "nvml/nvml_abi.h"

namespace gw::nvml {

// NVML's own short name ("GPU_IS_LOST").
const char* errorName(nvmlReturn_t r);
// What it means and what to do, in one sentence ("Driver/library version mismatch: ...").
std::string errorMeaning(nvmlReturn_t r);
// A Status whose nvmlCode() is the nvmlReturn_t and whose message is "<call>: <meaning>".
Status nvmlError(nvmlReturn_t r, const char* call);

// Errors that mean "this value does not exist here" rather than "something is wrong".
inline bool isUnsupported(int code) {
  return code == NVML_ERROR_NOT_SUPPORTED || code == NVML_ERROR_FUNCTION_NOT_FOUND || code == NVML_ERROR_NOT_FOUND;
}
inline bool isLost(int code) { return code == NVML_ERROR_GPU_IS_LOST || code == NVML_ERROR_RESET_REQUIRED; }

// What every reader says of a GPU that did not answer by the call deadline (a hung GPU).
inline std::string noAnswer(std::chrono::milliseconds deadline) {
  return "no answer from NVML within " + std::to_string(deadline.count()) + " ms";
}

}  // namespace gw::nvml
