#include "nvml/errors.h"

namespace gw::nvml {

const char* errorName(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "SUCCESS";
    case NVML_ERROR_UNINITIALIZED:
      return "UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED:
      return "NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION:
      return "NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT:
      return "TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE:
      return "IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED:
      return "RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE:
      return "IN_USE";
    case NVML_ERROR_MEMORY:
      return "MEMORY";
    case NVML_ERROR_NO_DATA:
      return "NO_DATA";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
      return "VGPU_ECC_NOT_SUPPORTED";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "INSUFFICIENT_RESOURCES";
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return "FREQ_NOT_SUPPORTED";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "ARGUMENT_VERSION_MISMATCH";
    case NVML_ERROR_DEPRECATED:
      return "DEPRECATED";
    default:
      return "UNKNOWN";
  }
}

std::string errorMeaning(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "NVML was not initialised";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "not supported on this device";
    case NVML_ERROR_NO_PERMISSION:
      return "insufficient permissions (run as root or adjust /dev/nvidia* permissions)";
    case NVML_ERROR_NOT_FOUND:
      return "not found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "buffer too small";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "a power cable is not connected properly";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "NVIDIA driver is not loaded: the nvidia kernel module is not running "
             "(check `lsmod | grep nvidia`, `dmesg | grep -i nvrm`, or run `gpuwarden doctor`)";
    case NVML_ERROR_TIMEOUT:
      return "the call timed out";
    case NVML_ERROR_IRQ_ISSUE:
      return "interrupt problem between the driver and the GPU (check dmesg for NVRM errors)";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML library not found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "the installed driver does not provide this function";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "the GPU's InfoROM is corrupted (RMA candidate)";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost: it has fallen off the bus or stopped responding (Xid 79 class); drain the node and reset or "
             "replace the GPU";
    case NVML_ERROR_RESET_REQUIRED:
      return "the GPU needs a reset (nvidia-smi -r) or a reboot before it can be used";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "the operating system blocked the call";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "Driver/library version mismatch: the loaded nvidia kernel module and libnvidia-ml.so come from "
             "different driver versions (usually the driver was upgraded without a reboot); reboot, or reload the "
             "nvidia kernel modules";
    case NVML_ERROR_IN_USE:
      return "the GPU is in use by another process";
    case NVML_ERROR_MEMORY:
      return "out of memory in the driver";
    case NVML_ERROR_NO_DATA:
      return "no data";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "insufficient resources";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "struct version not supported by this driver";
    case NVML_ERROR_DEPRECATED:
      return "Requested functionality has been deprecated";
    case NVML_ERROR_UNKNOWN:
      return "Unknown Error (the driver gave no reason)";
    default:
      return std::string("unknown NVML error ") + std::to_string(r);
  }
}

Status nvmlError(nvmlReturn_t r, const char* call) {
  return Status::Nvml(static_cast<int>(r), std::string(call) + ": " + errorMeaning(r));
}

}  // namespace gw::nvml
