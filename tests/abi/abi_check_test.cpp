// Checks src/nvml/nvml_abi.h against bindings.rs of Debian's librust-nvml-wrapper-sys-dev: struct
// layouts, constant values, function signatures and typedefs. See rust_abi.h for the reader.
//
// The lists below name each of our declarations through a macro, so a misspelt name does not
// compile; HeaderCoverage fails when nvml_abi.h declares something these lists do not name.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "nvml/nvml_abi.h"
#include "rust_abi.h"

namespace gw::abi_test {
namespace {

// Names we declare that are newer than the bindings.rs we check against (so absent from it).
// Add a name here only with a comment saying which NVML version introduced it.
const std::set<std::string> kConstantsNewerThanBindings = {
    // NVML 12.0 (driver R525): the GPU instance profiles of H100, from nvml.h:
    // #define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 0x8, #define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9
    "NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1",
    // NVML 12.2 (driver R535): from nvml.h, NVML_ERROR_DEPRECATED = 26, "The requested
    // functionality has been deprecated".
    "NVML_ERROR_DEPRECATED",
    "NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2",
    // NVML 12.0 (driver R525): the board's latest power sample as a field value, from nvml.h:
    // #define NVML_FI_DEV_POWER_INSTANT 186 (milliwatts; 185 is the one-second average).
    "NVML_FI_DEV_POWER_INSTANT",
    // NVML 12.5 (driver R560): the recovery the driver asks for, from nvml.h:
    // #define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230, and nvmlDeviceGpuRecoveryAction_t's
    // NONE 0, GPU_RESET 1, NODE_REBOOT 2, DRAIN_P2P 3, DRAIN_AND_RESET 4 (R570).
    "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION",
    "NVML_GPU_RECOVERY_ACTION_NONE",
    "NVML_GPU_RECOVERY_ACTION_GPU_RESET",
    "NVML_GPU_RECOVERY_ACTION_NODE_REBOOT",
    "NVML_GPU_RECOVERY_ACTION_DRAIN_P2P",
    "NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET",
    // NVML 12.8 (driver R570): nvmlDeviceAddressingModeType_t's NONE 0, HMM 1, ATS 2, from nvml.h.
    "NVML_DEVICE_ADDRESSING_MODE_NONE",
    "NVML_DEVICE_ADDRESSING_MODE_HMM",
    "NVML_DEVICE_ADDRESSING_MODE_ATS",
    // NVML 12.2 (driver R535) and 12.4 (R550): the NVSwitch fabric registration and its health, from
    // nvml.h's #defines (values in nvml_abi.h; the health mask's fields: TRUE 1, FALSE 2, shifts 0, 2,
    // 4, 6, 8, widths 3 and 15; summary NOT_SUPPORTED 0, HEALTHY 1, UNHEALTHY 2, LIMITED_CAPACITY 3).
    "NVML_GPU_FABRIC_UUID_LEN",
    "NVML_GPU_FABRIC_STATE_NOT_SUPPORTED",
    "NVML_GPU_FABRIC_STATE_NOT_STARTED",
    "NVML_GPU_FABRIC_STATE_IN_PROGRESS",
    "NVML_GPU_FABRIC_STATE_COMPLETED",
    "NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_NOT_SUPPORTED",
    "NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE",
    "NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_FALSE",
    "NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW",
    "NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_DEGRADED_BW",
    "NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_NOT_SUPPORTED",
    "NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_TRUE",
    "NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_FALSE",
    "NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY",
    "NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_RECOVERY",
    "NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_NOT_SUPPORTED",
    "NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE",
    "NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_FALSE",
    "NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY",
    "NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY",
    "NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_NOT_SUPPORTED",
    "NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_TRUE",
    "NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_FALSE",
    "NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY",
    "NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ACCESS_TIMEOUT_RECOVERY",
    "NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NOT_SUPPORTED",
    "NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE",
    "NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_SYSGUID",
    "NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_CHASSIS_SN",
    "NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NO_PARTITION",
    "NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INSUFFICIENT_NVLINKS",
    "NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION",
    "NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION",
    "NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED",
    "NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY",
    "NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY",
    "NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY",
};
const std::set<std::string> kFunctionsNewerThanBindings = {
    // NVML 12.0 (driver R525): GPM samples of one MIG GPU instance. Signature from nvml.h:
    // nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample)
    "nvmlGpmMigSampleGet",
    // NVML 12.0 (driver R525): JPEG and OFA engine utilisation. Signatures from nvml.h:
    // nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t device, unsigned int *utilization,
    //                                          unsigned int *samplingPeriodUs), and the same for Ofa.
    "nvmlDeviceGetJpgUtilization",
    "nvmlDeviceGetOfaUtilization",
    // NVML 11.8 (driver R520): the GPU's own PCIe generation. Signature from nvml.h:
    // nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGenDevice)
    "nvmlDeviceGetGpuMaxPcieLinkGeneration",
    // NVML 12.2 (driver R535): confidential computing's protected memory. Signature from nvml.h:
    // nvmlReturn_t nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t device, nvmlMemory_t *memory)
    "nvmlDeviceGetConfComputeProtectedMemoryUsage",
    // NVML 12.4 (driver R550): SRAM's error status. Signature from nvml.h:
    // nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(nvmlDevice_t device, nvmlEccSramErrorStatus_t *status)
    "nvmlDeviceGetSramEccErrorStatus",
    // NVML 12.8 (driver R570): system memory addressing. Signature from nvml.h:
    // nvmlReturn_t nvmlDeviceGetAddressingMode(nvmlDevice_t device, nvmlDeviceAddressingMode_t *mode)
    "nvmlDeviceGetAddressingMode",
    // NVML 12.4 (driver R550): the chip-to-chip link. Signature from nvml.h:
    // nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device, nvmlC2cModeInfo_t *c2cModeInfo)
    "nvmlDeviceGetC2cModeInfoV",
    // NVML 12.2 (driver R535): the fabric registration. Signature from nvml.h:
    // nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *gpuFabricInfo)
    "nvmlDeviceGetGpuFabricInfoV",
};

// Structs newer than bindings.rs, with their layout as nvml.h declares it (each field's offset
// and size on x86-64, worked out from its C declaration), which ours must match field by field.
struct NvmlHLayout {
  std::size_t size;
  std::vector<std::tuple<std::string, std::size_t, std::size_t>> fields;  // name, offset, size
};
const std::map<std::string, NvmlHLayout> kStructsNewerThanBindings = {
    // typedef struct { unsigned int version; unsigned long long aggregateUncParity, aggregateUncSecDed,
    // aggregateCor, volatileUncParity, volatileUncSecDed, volatileCor, aggregateUncBucketL2,
    // aggregateUncBucketSm, aggregateUncBucketPcie, aggregateUncBucketMcu, aggregateUncBucketOther;
    // unsigned int bThresholdExceeded; } nvmlEccSramErrorStatus_v1_t;
    {"nvmlEccSramErrorStatus_v1_t",
     {104,
      {{"version", 0, 4},
       {"aggregateUncParity", 8, 8},
       {"aggregateUncSecDed", 16, 8},
       {"aggregateCor", 24, 8},
       {"volatileUncParity", 32, 8},
       {"volatileUncSecDed", 40, 8},
       {"volatileCor", 48, 8},
       {"aggregateUncBucketL2", 56, 8},
       {"aggregateUncBucketSm", 64, 8},
       {"aggregateUncBucketPcie", 72, 8},
       {"aggregateUncBucketMcu", 80, 8},
       {"aggregateUncBucketOther", 88, 8},
       {"bThresholdExceeded", 96, 4}}}},
    // typedef struct { unsigned int version; unsigned int value; } nvmlDeviceAddressingMode_v1_t;
    {"nvmlDeviceAddressingMode_v1_t", {8, {{"version", 0, 4}, {"value", 4, 4}}}},
    // typedef struct { unsigned int isC2cEnabled; } nvmlC2cModeInfo_v1_t;
    {"nvmlC2cModeInfo_v1_t", {4, {{"isC2cEnabled", 0, 4}}}},
    // typedef struct { unsigned int version; unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
    // nvmlReturn_t status; unsigned int cliqueId; nvmlGpuFabricState_t state; unsigned int healthMask;
    // } nvmlGpuFabricInfo_v2_t; and v3 adds unsigned char healthSummary; (nvmlGpuFabricState_t is an
    // unsigned char, nvmlReturn_t an enum of 4 bytes; the mask is aligned to 4 after the state).
    {"nvmlGpuFabricInfo_v2_t",
     {36,
      {{"version", 0, 4},
       {"clusterUuid", 4, 16},
       {"status", 20, 4},
       {"cliqueId", 24, 4},
       {"state", 28, 1},
       {"healthMask", 32, 4}}}},
    {"nvmlGpuFabricInfo_v3_t",
     {40,
      {{"version", 0, 4},
       {"clusterUuid", 4, 16},
       {"status", 20, 4},
       {"cliqueId", 24, 4},
       {"state", 28, 1},
       {"healthMask", 32, 4},
       {"healthSummary", 36, 1}}}},
};

std::vector<std::string> CheckAgainstNvmlH(const OurStruct& s, const NvmlHLayout& h) {
  std::vector<std::string> problems;
  const std::string name = s.name;
  if (s.size != h.size)
    problems.push_back(name + ": our sizeof " + std::to_string(s.size) + ", nvml.h's " + std::to_string(h.size));
  if (s.fields.size() != h.fields.size())
    problems.push_back(name + ": we list " + std::to_string(s.fields.size()) + " fields, nvml.h has " +
                       std::to_string(h.fields.size()));
  for (std::size_t i = 0; i < std::min(s.fields.size(), h.fields.size()); ++i) {
    const auto& [field, offset, size] = h.fields[i];
    const OurField& o = s.fields[i];
    if (o.name != field || o.offset != offset || o.size != size)
      problems.push_back(name + "." + o.name + " at " + std::to_string(o.offset) + " (" + std::to_string(o.size) +
                         " bytes), nvml.h's field " + std::to_string(i) + " is " + field + " at " +
                         std::to_string(offset) + " (" + std::to_string(size) + " bytes)");
  }
  return problems;
}

// ----- Our structs: every field, in order. -----
#define GW_F(T, f) \
  OurField { #f, offsetof(T, f), sizeof(T::f), alignof(decltype(T::f)) }
#define GW_S(T, ...)                                                 \
  OurStruct {                                                        \
#T, std::is_union_v < T>, sizeof(T), alignof(T), { __VA_ARGS__ } \
  }

using GpmMetricInfo = decltype(nvmlGpmMetric_t::metricInfo);

std::vector<OurStruct> OurStructs() {
  return {
      GW_S(nvmlPciInfo_t, GW_F(nvmlPciInfo_t, busIdLegacy), GW_F(nvmlPciInfo_t, domain), GW_F(nvmlPciInfo_t, bus),
           GW_F(nvmlPciInfo_t, device), GW_F(nvmlPciInfo_t, pciDeviceId), GW_F(nvmlPciInfo_t, pciSubSystemId),
           GW_F(nvmlPciInfo_t, busId)),
      GW_S(nvmlUtilization_t, GW_F(nvmlUtilization_t, gpu), GW_F(nvmlUtilization_t, memory)),
      GW_S(nvmlRowRemapperHistogramValues_t, GW_F(nvmlRowRemapperHistogramValues_t, max),
           GW_F(nvmlRowRemapperHistogramValues_t, high), GW_F(nvmlRowRemapperHistogramValues_t, partial),
           GW_F(nvmlRowRemapperHistogramValues_t, low), GW_F(nvmlRowRemapperHistogramValues_t, none)),
      GW_S(nvmlMemory_t, GW_F(nvmlMemory_t, total), GW_F(nvmlMemory_t, free), GW_F(nvmlMemory_t, used)),
      GW_S(nvmlEccSramErrorStatus_v1_t, GW_F(nvmlEccSramErrorStatus_v1_t, version),
           GW_F(nvmlEccSramErrorStatus_v1_t, aggregateUncParity), GW_F(nvmlEccSramErrorStatus_v1_t, aggregateUncSecDed),
           GW_F(nvmlEccSramErrorStatus_v1_t, aggregateCor), GW_F(nvmlEccSramErrorStatus_v1_t, volatileUncParity),
           GW_F(nvmlEccSramErrorStatus_v1_t, volatileUncSecDed), GW_F(nvmlEccSramErrorStatus_v1_t, volatileCor),
           GW_F(nvmlEccSramErrorStatus_v1_t, aggregateUncBucketL2),
           GW_F(nvmlEccSramErrorStatus_v1_t, aggregateUncBucketSm),
           GW_F(nvmlEccSramErrorStatus_v1_t, aggregateUncBucketPcie),
           GW_F(nvmlEccSramErrorStatus_v1_t, aggregateUncBucketMcu),
           GW_F(nvmlEccSramErrorStatus_v1_t, aggregateUncBucketOther),
           GW_F(nvmlEccSramErrorStatus_v1_t, bThresholdExceeded)),
      GW_S(nvmlDeviceAddressingMode_v1_t, GW_F(nvmlDeviceAddressingMode_v1_t, version),
           GW_F(nvmlDeviceAddressingMode_v1_t, value)),
      GW_S(nvmlC2cModeInfo_v1_t, GW_F(nvmlC2cModeInfo_v1_t, isC2cEnabled)),
      GW_S(nvmlGpuFabricInfo_v2_t, GW_F(nvmlGpuFabricInfo_v2_t, version), GW_F(nvmlGpuFabricInfo_v2_t, clusterUuid),
           GW_F(nvmlGpuFabricInfo_v2_t, status), GW_F(nvmlGpuFabricInfo_v2_t, cliqueId),
           GW_F(nvmlGpuFabricInfo_v2_t, state), GW_F(nvmlGpuFabricInfo_v2_t, healthMask)),
      GW_S(nvmlGpuFabricInfo_v3_t, GW_F(nvmlGpuFabricInfo_v3_t, version), GW_F(nvmlGpuFabricInfo_v3_t, clusterUuid),
           GW_F(nvmlGpuFabricInfo_v3_t, status), GW_F(nvmlGpuFabricInfo_v3_t, cliqueId),
           GW_F(nvmlGpuFabricInfo_v3_t, state), GW_F(nvmlGpuFabricInfo_v3_t, healthMask),
           GW_F(nvmlGpuFabricInfo_v3_t, healthSummary)),
      GW_S(nvmlMemory_v2_t, GW_F(nvmlMemory_v2_t, version), GW_F(nvmlMemory_v2_t, total),
           GW_F(nvmlMemory_v2_t, reserved), GW_F(nvmlMemory_v2_t, free), GW_F(nvmlMemory_v2_t, used)),
      GW_S(nvmlBAR1Memory_t, GW_F(nvmlBAR1Memory_t, bar1Total), GW_F(nvmlBAR1Memory_t, bar1Free),
           GW_F(nvmlBAR1Memory_t, bar1Used)),
      GW_S(nvmlProcessInfo_v1_t, GW_F(nvmlProcessInfo_v1_t, pid), GW_F(nvmlProcessInfo_v1_t, usedGpuMemory)),
      GW_S(nvmlProcessInfo_v2_t, GW_F(nvmlProcessInfo_v2_t, pid), GW_F(nvmlProcessInfo_v2_t, usedGpuMemory),
           GW_F(nvmlProcessInfo_v2_t, gpuInstanceId), GW_F(nvmlProcessInfo_v2_t, computeInstanceId)),
      GW_S(nvmlProcessInfo_t, GW_F(nvmlProcessInfo_t, pid), GW_F(nvmlProcessInfo_t, usedGpuMemory),
           GW_F(nvmlProcessInfo_t, gpuInstanceId), GW_F(nvmlProcessInfo_t, computeInstanceId)),
      GW_S(nvmlDeviceAttributes_t, GW_F(nvmlDeviceAttributes_t, multiprocessorCount),
           GW_F(nvmlDeviceAttributes_t, sharedCopyEngineCount), GW_F(nvmlDeviceAttributes_t, sharedDecoderCount),
           GW_F(nvmlDeviceAttributes_t, sharedEncoderCount), GW_F(nvmlDeviceAttributes_t, sharedJpegCount),
           GW_F(nvmlDeviceAttributes_t, sharedOfaCount), GW_F(nvmlDeviceAttributes_t, gpuInstanceSliceCount),
           GW_F(nvmlDeviceAttributes_t, computeInstanceSliceCount), GW_F(nvmlDeviceAttributes_t, memorySizeMB)),
      GW_S(nvmlProcessUtilizationSample_t, GW_F(nvmlProcessUtilizationSample_t, pid),
           GW_F(nvmlProcessUtilizationSample_t, timeStamp), GW_F(nvmlProcessUtilizationSample_t, smUtil),
           GW_F(nvmlProcessUtilizationSample_t, memUtil), GW_F(nvmlProcessUtilizationSample_t, encUtil),
           GW_F(nvmlProcessUtilizationSample_t, decUtil)),
      GW_S(nvmlValue_t, GW_F(nvmlValue_t, dVal), GW_F(nvmlValue_t, uiVal), GW_F(nvmlValue_t, ulVal),
           GW_F(nvmlValue_t, ullVal), GW_F(nvmlValue_t, sllVal)),
      GW_S(nvmlFieldValue_t, GW_F(nvmlFieldValue_t, fieldId), GW_F(nvmlFieldValue_t, scopeId),
           GW_F(nvmlFieldValue_t, timestamp), GW_F(nvmlFieldValue_t, latencyUsec), GW_F(nvmlFieldValue_t, valueType),
           GW_F(nvmlFieldValue_t, nvmlReturn), GW_F(nvmlFieldValue_t, value)),
      GW_S(nvmlEventData_t, GW_F(nvmlEventData_t, device), GW_F(nvmlEventData_t, eventType),
           GW_F(nvmlEventData_t, eventData), GW_F(nvmlEventData_t, gpuInstanceId),
           GW_F(nvmlEventData_t, computeInstanceId)),
      GW_S(nvmlGpmMetric_t, GW_F(nvmlGpmMetric_t, metricId), GW_F(nvmlGpmMetric_t, nvmlReturn),
           GW_F(nvmlGpmMetric_t, value), GW_F(nvmlGpmMetric_t, metricInfo)),
      // The anonymous struct nvml.h nests in nvmlGpmMetric_t, under the name bindgen gives it.
      OurStruct{"nvmlGpmMetric_t__bindgen_ty_1",
                false,
                sizeof(GpmMetricInfo),
                alignof(GpmMetricInfo),
                {GW_F(GpmMetricInfo, shortName), GW_F(GpmMetricInfo, longName), GW_F(GpmMetricInfo, unit)}},
      GW_S(nvmlGpmMetricsGet_t, GW_F(nvmlGpmMetricsGet_t, version), GW_F(nvmlGpmMetricsGet_t, numMetrics),
           GW_F(nvmlGpmMetricsGet_t, sample1), GW_F(nvmlGpmMetricsGet_t, sample2), GW_F(nvmlGpmMetricsGet_t, metrics)),
      GW_S(nvmlGpmSupport_t, GW_F(nvmlGpmSupport_t, version), GW_F(nvmlGpmSupport_t, isSupportedDevice)),
      GW_S(nvmlGpuInstancePlacement_t, GW_F(nvmlGpuInstancePlacement_t, start), GW_F(nvmlGpuInstancePlacement_t, size)),
      GW_S(nvmlGpuInstanceProfileInfo_t, GW_F(nvmlGpuInstanceProfileInfo_t, id),
           GW_F(nvmlGpuInstanceProfileInfo_t, isP2pSupported), GW_F(nvmlGpuInstanceProfileInfo_t, sliceCount),
           GW_F(nvmlGpuInstanceProfileInfo_t, instanceCount), GW_F(nvmlGpuInstanceProfileInfo_t, multiprocessorCount),
           GW_F(nvmlGpuInstanceProfileInfo_t, copyEngineCount), GW_F(nvmlGpuInstanceProfileInfo_t, decoderCount),
           GW_F(nvmlGpuInstanceProfileInfo_t, encoderCount), GW_F(nvmlGpuInstanceProfileInfo_t, jpegCount),
           GW_F(nvmlGpuInstanceProfileInfo_t, ofaCount), GW_F(nvmlGpuInstanceProfileInfo_t, memorySizeMB)),
      GW_S(nvmlGpuInstanceProfileInfo_v2_t, GW_F(nvmlGpuInstanceProfileInfo_v2_t, version),
           GW_F(nvmlGpuInstanceProfileInfo_v2_t, id), GW_F(nvmlGpuInstanceProfileInfo_v2_t, isP2pSupported),
           GW_F(nvmlGpuInstanceProfileInfo_v2_t, sliceCount), GW_F(nvmlGpuInstanceProfileInfo_v2_t, instanceCount),
           GW_F(nvmlGpuInstanceProfileInfo_v2_t, multiprocessorCount),
           GW_F(nvmlGpuInstanceProfileInfo_v2_t, copyEngineCount), GW_F(nvmlGpuInstanceProfileInfo_v2_t, decoderCount),
           GW_F(nvmlGpuInstanceProfileInfo_v2_t, encoderCount), GW_F(nvmlGpuInstanceProfileInfo_v2_t, jpegCount),
           GW_F(nvmlGpuInstanceProfileInfo_v2_t, ofaCount), GW_F(nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB),
           GW_F(nvmlGpuInstanceProfileInfo_v2_t, name)),
      GW_S(nvmlGpuInstanceInfo_t, GW_F(nvmlGpuInstanceInfo_t, device), GW_F(nvmlGpuInstanceInfo_t, id),
           GW_F(nvmlGpuInstanceInfo_t, profileId), GW_F(nvmlGpuInstanceInfo_t, placement)),
      GW_S(nvmlComputeInstancePlacement_t, GW_F(nvmlComputeInstancePlacement_t, start),
           GW_F(nvmlComputeInstancePlacement_t, size)),
      GW_S(nvmlComputeInstanceProfileInfo_t, GW_F(nvmlComputeInstanceProfileInfo_t, id),
           GW_F(nvmlComputeInstanceProfileInfo_t, sliceCount), GW_F(nvmlComputeInstanceProfileInfo_t, instanceCount),
           GW_F(nvmlComputeInstanceProfileInfo_t, multiprocessorCount),
           GW_F(nvmlComputeInstanceProfileInfo_t, sharedCopyEngineCount),
           GW_F(nvmlComputeInstanceProfileInfo_t, sharedDecoderCount),
           GW_F(nvmlComputeInstanceProfileInfo_t, sharedEncoderCount),
           GW_F(nvmlComputeInstanceProfileInfo_t, sharedJpegCount),
           GW_F(nvmlComputeInstanceProfileInfo_t, sharedOfaCount)),
      GW_S(nvmlComputeInstanceInfo_t, GW_F(nvmlComputeInstanceInfo_t, device),
           GW_F(nvmlComputeInstanceInfo_t, gpuInstance), GW_F(nvmlComputeInstanceInfo_t, id),
           GW_F(nvmlComputeInstanceInfo_t, profileId), GW_F(nvmlComputeInstanceInfo_t, placement)),
  };
}
#undef GW_S
#undef GW_F

// ----- Our scalar and handle typedefs. -----
#define GW_T(T) \
  OurTypedef { #T, sizeof(T), std::is_signed_v < T>, std::is_pointer_v < T> }
std::vector<OurTypedef> OurTypedefs() {
  return {
      GW_T(nvmlReturn_t),
      GW_T(nvmlDevice_t),
      GW_T(nvmlEventSet_t),
      GW_T(nvmlValueType_t),
      GW_T(nvmlEnableState_t),
      GW_T(nvmlBrandType_t),
      GW_T(nvmlTemperatureSensors_t),
      GW_T(nvmlTemperatureThresholds_t),
      GW_T(nvmlComputeMode_t),
      GW_T(nvmlGpuVirtualizationMode_t),
      GW_T(nvmlMemoryErrorType_t),
      GW_T(nvmlEccCounterType_t),
      GW_T(nvmlMemoryLocation_t),
      GW_T(nvmlClockType_t),
      GW_T(nvmlClockId_t),
      GW_T(nvmlPstates_t),
      GW_T(nvmlInforomObject_t),
      GW_T(nvmlPageRetirementCause_t),
      GW_T(nvmlPcieUtilCounter_t),
      GW_T(nvmlNvLinkErrorCounter_t),
      GW_T(nvmlIntNvLinkDeviceType_t),
      GW_T(nvmlGpuTopologyLevel_t),
      GW_T(nvmlAffinityScope_t),
      GW_T(nvmlDeviceArchitecture_t),
      GW_T(nvmlGpmSample_t),
      GW_T(nvmlGpmMetricId_t),
      GW_T(nvmlGpuInstance_t),
      GW_T(nvmlComputeInstance_t),
  };
}
#undef GW_T

// ----- Our constants (enumerators and #defines). -----
#define GW_C(name) \
  OurConstant { #name, static_cast < long long>(name) }
std::vector<OurConstant> OurConstants() {
  return {
      // nvmlReturn_t
      GW_C(NVML_SUCCESS),
      GW_C(NVML_ERROR_UNINITIALIZED),
      GW_C(NVML_ERROR_INVALID_ARGUMENT),
      GW_C(NVML_ERROR_NOT_SUPPORTED),
      GW_C(NVML_ERROR_NO_PERMISSION),
      GW_C(NVML_ERROR_ALREADY_INITIALIZED),
      GW_C(NVML_ERROR_NOT_FOUND),
      GW_C(NVML_ERROR_INSUFFICIENT_SIZE),
      GW_C(NVML_ERROR_INSUFFICIENT_POWER),
      GW_C(NVML_ERROR_DRIVER_NOT_LOADED),
      GW_C(NVML_ERROR_TIMEOUT),
      GW_C(NVML_ERROR_IRQ_ISSUE),
      GW_C(NVML_ERROR_LIBRARY_NOT_FOUND),
      GW_C(NVML_ERROR_FUNCTION_NOT_FOUND),
      GW_C(NVML_ERROR_CORRUPTED_INFOROM),
      GW_C(NVML_ERROR_GPU_IS_LOST),
      GW_C(NVML_ERROR_RESET_REQUIRED),
      GW_C(NVML_ERROR_OPERATING_SYSTEM),
      GW_C(NVML_ERROR_LIB_RM_VERSION_MISMATCH),
      GW_C(NVML_ERROR_IN_USE),
      GW_C(NVML_ERROR_MEMORY),
      GW_C(NVML_ERROR_NO_DATA),
      GW_C(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED),
      GW_C(NVML_ERROR_INSUFFICIENT_RESOURCES),
      GW_C(NVML_ERROR_FREQ_NOT_SUPPORTED),
      GW_C(NVML_ERROR_ARGUMENT_VERSION_MISMATCH),
      GW_C(NVML_ERROR_DEPRECATED),
      GW_C(NVML_ERROR_UNKNOWN),
      // Buffer sizes and limits
      GW_C(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE),
      GW_C(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE),
      GW_C(NVML_DEVICE_UUID_BUFFER_SIZE),
      GW_C(NVML_DEVICE_UUID_V2_BUFFER_SIZE),
      GW_C(NVML_DEVICE_PART_NUMBER_BUFFER_SIZE),
      GW_C(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE),
      GW_C(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE),
      GW_C(NVML_DEVICE_NAME_BUFFER_SIZE),
      GW_C(NVML_DEVICE_NAME_V2_BUFFER_SIZE),
      GW_C(NVML_DEVICE_SERIAL_BUFFER_SIZE),
      GW_C(NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE),
      GW_C(NVML_GSP_FIRMWARE_VERSION_BUF_SIZE),
      GW_C(NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE),
      GW_C(NVML_NVLINK_MAX_LINKS),
      GW_C(NVML_VALUE_NOT_AVAILABLE),
      // Init flags
      GW_C(NVML_INIT_FLAG_NO_GPUS),
      GW_C(NVML_INIT_FLAG_NO_ATTACH),
      // nvmlValueType_t
      GW_C(NVML_VALUE_TYPE_DOUBLE),
      GW_C(NVML_VALUE_TYPE_UNSIGNED_INT),
      GW_C(NVML_VALUE_TYPE_UNSIGNED_LONG),
      GW_C(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG),
      GW_C(NVML_VALUE_TYPE_SIGNED_LONG_LONG),
      GW_C(NVML_VALUE_TYPE_COUNT),
      // nvmlEnableState_t
      GW_C(NVML_FEATURE_DISABLED),
      GW_C(NVML_FEATURE_ENABLED),
      // nvmlBrandType_t
      GW_C(NVML_BRAND_UNKNOWN),
      GW_C(NVML_BRAND_QUADRO),
      GW_C(NVML_BRAND_TESLA),
      GW_C(NVML_BRAND_NVS),
      GW_C(NVML_BRAND_GRID),
      GW_C(NVML_BRAND_GEFORCE),
      GW_C(NVML_BRAND_TITAN),
      GW_C(NVML_BRAND_NVIDIA_RTX),
      GW_C(NVML_BRAND_NVIDIA),
      GW_C(NVML_BRAND_GEFORCE_RTX),
      // Temperature sensors and thresholds
      GW_C(NVML_TEMPERATURE_GPU),
      GW_C(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN),
      GW_C(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
      GW_C(NVML_TEMPERATURE_THRESHOLD_MEM_MAX),
      GW_C(NVML_TEMPERATURE_THRESHOLD_GPU_MAX),
      // nvmlComputeMode_t
      // nvmlGpuVirtualizationMode_t
      GW_C(NVML_GPU_VIRTUALIZATION_MODE_NONE),
      GW_C(NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH),
      GW_C(NVML_GPU_VIRTUALIZATION_MODE_VGPU),
      GW_C(NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU),
      GW_C(NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA),
      GW_C(NVML_COMPUTEMODE_DEFAULT),
      GW_C(NVML_COMPUTEMODE_EXCLUSIVE_THREAD),
      GW_C(NVML_COMPUTEMODE_PROHIBITED),
      GW_C(NVML_COMPUTEMODE_EXCLUSIVE_PROCESS),
      // Memory errors, ECC counters, memory locations
      GW_C(NVML_MEMORY_ERROR_TYPE_CORRECTED),
      GW_C(NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
      GW_C(NVML_VOLATILE_ECC),
      GW_C(NVML_AGGREGATE_ECC),
      GW_C(NVML_MEMORY_LOCATION_L1_CACHE),
      GW_C(NVML_MEMORY_LOCATION_L2_CACHE),
      GW_C(NVML_MEMORY_LOCATION_DEVICE_MEMORY),
      GW_C(NVML_MEMORY_LOCATION_REGISTER_FILE),
      GW_C(NVML_MEMORY_LOCATION_TEXTURE_MEMORY),
      GW_C(NVML_MEMORY_LOCATION_TEXTURE_SHM),
      GW_C(NVML_MEMORY_LOCATION_CBU),
      GW_C(NVML_MEMORY_LOCATION_SRAM),
      // Fabric
      GW_C(NVML_GPU_FABRIC_UUID_LEN),
      GW_C(NVML_GPU_FABRIC_STATE_NOT_SUPPORTED),
      GW_C(NVML_GPU_FABRIC_STATE_NOT_STARTED),
      GW_C(NVML_GPU_FABRIC_STATE_IN_PROGRESS),
      GW_C(NVML_GPU_FABRIC_STATE_COMPLETED),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_NOT_SUPPORTED),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_FALSE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_DEGRADED_BW),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_NOT_SUPPORTED),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_TRUE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_FALSE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_RECOVERY),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_NOT_SUPPORTED),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_FALSE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_NOT_SUPPORTED),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_TRUE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_FALSE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ACCESS_TIMEOUT_RECOVERY),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NOT_SUPPORTED),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_SYSGUID),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_CHASSIS_SN),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NO_PARTITION),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INSUFFICIENT_NVLINKS),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION),
      GW_C(NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION),
      GW_C(NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED),
      GW_C(NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY),
      GW_C(NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY),
      GW_C(NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY),
      // Clock types and ids
      GW_C(NVML_CLOCK_GRAPHICS),
      GW_C(NVML_CLOCK_SM),
      GW_C(NVML_CLOCK_MEM),
      GW_C(NVML_CLOCK_VIDEO),
      GW_C(NVML_CLOCK_COUNT),
      GW_C(NVML_CLOCK_ID_CURRENT),
      GW_C(NVML_CLOCK_ID_APP_CLOCK_TARGET),
      GW_C(NVML_CLOCK_ID_APP_CLOCK_DEFAULT),
      GW_C(NVML_CLOCK_ID_CUSTOMER_BOOST_MAX),
      // P-states
      GW_C(NVML_PSTATE_0),
      GW_C(NVML_PSTATE_8),
      GW_C(NVML_PSTATE_15),
      GW_C(NVML_PSTATE_UNKNOWN),
      // InfoROM objects
      GW_C(NVML_INFOROM_OEM),
      GW_C(NVML_INFOROM_ECC),
      GW_C(NVML_INFOROM_POWER),
      // Page retirement causes
      GW_C(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS),
      GW_C(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR),
      // PCIe utilization counters
      GW_C(NVML_PCIE_UTIL_TX_BYTES),
      GW_C(NVML_PCIE_UTIL_RX_BYTES),
      // NVLink error counters and device types
      GW_C(NVML_NVLINK_ERROR_DL_REPLAY),
      GW_C(NVML_NVLINK_ERROR_DL_RECOVERY),
      GW_C(NVML_NVLINK_ERROR_DL_CRC_FLIT),
      GW_C(NVML_NVLINK_ERROR_DL_CRC_DATA),
      GW_C(NVML_NVLINK_ERROR_DL_ECC_DATA),
      GW_C(NVML_NVLINK_DEVICE_TYPE_GPU),
      GW_C(NVML_NVLINK_DEVICE_TYPE_IBMNPU),
      GW_C(NVML_NVLINK_DEVICE_TYPE_SWITCH),
      GW_C(NVML_NVLINK_DEVICE_TYPE_UNKNOWN),
      // Topology levels
      GW_C(NVML_TOPOLOGY_INTERNAL),
      GW_C(NVML_TOPOLOGY_SINGLE),
      GW_C(NVML_TOPOLOGY_MULTIPLE),
      GW_C(NVML_TOPOLOGY_HOSTBRIDGE),
      GW_C(NVML_TOPOLOGY_NODE),
      GW_C(NVML_TOPOLOGY_SYSTEM),
      // Affinity scope
      GW_C(NVML_AFFINITY_SCOPE_NODE),
      GW_C(NVML_AFFINITY_SCOPE_SOCKET),
      // Architectures
      GW_C(NVML_DEVICE_ARCH_KEPLER),
      GW_C(NVML_DEVICE_ARCH_MAXWELL),
      GW_C(NVML_DEVICE_ARCH_PASCAL),
      GW_C(NVML_DEVICE_ARCH_VOLTA),
      GW_C(NVML_DEVICE_ARCH_TURING),
      GW_C(NVML_DEVICE_ARCH_AMPERE),
      GW_C(NVML_DEVICE_ARCH_ADA),
      GW_C(NVML_DEVICE_ARCH_HOPPER),
      GW_C(NVML_DEVICE_ARCH_UNKNOWN),
      // MIG
      GW_C(NVML_DEVICE_MIG_DISABLE),
      GW_C(NVML_DEVICE_MIG_ENABLE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_1_SLICE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_2_SLICE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_3_SLICE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_4_SLICE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_7_SLICE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_8_SLICE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_6_SLICE),
      GW_C(NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1),
      GW_C(NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1),
      GW_C(NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2),
      GW_C(NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE),
      GW_C(NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE),
      GW_C(NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE),
      GW_C(NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE),
      GW_C(NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE),
      GW_C(NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE),
      GW_C(NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE),
      GW_C(NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED),
      // Event types
      GW_C(nvmlEventTypeSingleBitEccError),
      GW_C(nvmlEventTypeDoubleBitEccError),
      GW_C(nvmlEventTypePState),
      GW_C(nvmlEventTypeXidCriticalError),
      GW_C(nvmlEventTypeClock),
      GW_C(nvmlEventTypePowerSourceChange),
      GW_C(nvmlEventMigConfigChange),
      GW_C(nvmlEventTypeNone),
      GW_C(nvmlEventTypeAll),
      // Clock event ("throttle") reasons
      GW_C(nvmlClocksThrottleReasonGpuIdle),
      GW_C(nvmlClocksThrottleReasonApplicationsClocksSetting),
      GW_C(nvmlClocksThrottleReasonSwPowerCap),
      GW_C(nvmlClocksThrottleReasonHwSlowdown),
      GW_C(nvmlClocksThrottleReasonSyncBoost),
      GW_C(nvmlClocksThrottleReasonSwThermalSlowdown),
      GW_C(nvmlClocksThrottleReasonHwThermalSlowdown),
      GW_C(nvmlClocksThrottleReasonHwPowerBrakeSlowdown),
      GW_C(nvmlClocksThrottleReasonDisplayClockSetting),
      GW_C(nvmlClocksThrottleReasonNone),
      // Field ids
      GW_C(NVML_FI_DEV_ECC_CURRENT),
      GW_C(NVML_FI_DEV_ECC_PENDING),
      GW_C(NVML_FI_DEV_ECC_SBE_VOL_TOTAL),
      GW_C(NVML_FI_DEV_ECC_DBE_VOL_TOTAL),
      GW_C(NVML_FI_DEV_ECC_SBE_AGG_TOTAL),
      GW_C(NVML_FI_DEV_ECC_DBE_AGG_TOTAL),
      GW_C(NVML_FI_DEV_RETIRED_SBE),
      GW_C(NVML_FI_DEV_RETIRED_DBE),
      GW_C(NVML_FI_DEV_RETIRED_PENDING),
      GW_C(NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL),
      GW_C(NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL),
      GW_C(NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL),
      GW_C(NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL),
      GW_C(NVML_FI_DEV_NVLINK_BANDWIDTH_C0_TOTAL),
      GW_C(NVML_FI_DEV_NVLINK_BANDWIDTH_C1_TOTAL),
      GW_C(NVML_FI_DEV_MEMORY_TEMP),
      GW_C(NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION),
      GW_C(NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON),
      GW_C(NVML_FI_DEV_NVLINK_LINK_COUNT),
      GW_C(NVML_FI_DEV_RETIRED_PENDING_SBE),
      GW_C(NVML_FI_DEV_RETIRED_PENDING_DBE),
      GW_C(NVML_FI_DEV_PCIE_REPLAY_COUNTER),
      GW_C(NVML_FI_DEV_PCIE_REPLAY_ROLLOVER_COUNTER),
      GW_C(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX),
      GW_C(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX),
      GW_C(NVML_FI_DEV_REMAPPED_COR),
      GW_C(NVML_FI_DEV_REMAPPED_UNC),
      GW_C(NVML_FI_DEV_REMAPPED_PENDING),
      GW_C(NVML_FI_DEV_REMAPPED_FAILURE),
      GW_C(NVML_FI_DEV_POWER_INSTANT),
      GW_C(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION),
      GW_C(NVML_GPU_RECOVERY_ACTION_NONE),
      GW_C(NVML_GPU_RECOVERY_ACTION_GPU_RESET),
      GW_C(NVML_GPU_RECOVERY_ACTION_NODE_REBOOT),
      GW_C(NVML_GPU_RECOVERY_ACTION_DRAIN_P2P),
      GW_C(NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET),
      GW_C(NVML_DEVICE_ADDRESSING_MODE_NONE),
      GW_C(NVML_DEVICE_ADDRESSING_MODE_HMM),
      GW_C(NVML_DEVICE_ADDRESSING_MODE_ATS),
      GW_C(NVML_FI_MAX),
      // GPM
      GW_C(NVML_GPM_METRIC_GRAPHICS_UTIL),
      GW_C(NVML_GPM_METRIC_SM_UTIL),
      GW_C(NVML_GPM_METRIC_SM_OCCUPANCY),
      GW_C(NVML_GPM_METRIC_ANY_TENSOR_UTIL),
      GW_C(NVML_GPM_METRIC_DRAM_BW_UTIL),
      GW_C(NVML_GPM_METRIC_FP64_UTIL),
      GW_C(NVML_GPM_METRIC_FP32_UTIL),
      GW_C(NVML_GPM_METRIC_FP16_UTIL),
      GW_C(NVML_GPM_METRIC_PCIE_TX_PER_SEC),
      GW_C(NVML_GPM_METRIC_PCIE_RX_PER_SEC),
      GW_C(NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC),
      GW_C(NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC),
      GW_C(NVML_GPM_METRIC_MAX),
      GW_C(NVML_GPM_METRICS_GET_VERSION),
      GW_C(NVML_GPM_SUPPORT_VERSION),
  };
}
#undef GW_C

// Struct-version constants, NVML_STRUCT_VERSION(data, ver): bindgen cannot evaluate them, so
// they are checked against the struct size computed from bindings.rs.
struct OurStructVersion {
  const char* name;
  unsigned int value;
  const char* struct_name;
  unsigned int version;
};
#define GW_V(name, T, ver) \
  OurStructVersion { #name, name, #T, ver }
std::vector<OurStructVersion> OurStructVersions() {
  return {GW_V(nvmlMemory_v2, nvmlMemory_v2_t, 2),
          GW_V(nvmlGpuInstanceProfileInfo_v2, nvmlGpuInstanceProfileInfo_v2_t, 2),
          GW_V(nvmlEccSramErrorStatus_v1, nvmlEccSramErrorStatus_v1_t, 1),
          GW_V(nvmlDeviceAddressingMode_v1, nvmlDeviceAddressingMode_v1_t, 1),
          GW_V(nvmlGpuFabricInfo_v2, nvmlGpuFabricInfo_v2_t, 2),
          GW_V(nvmlGpuFabricInfo_v3, nvmlGpuFabricInfo_v3_t, 3)};
}
#undef GW_V

// ----- Our functions, straight from the X-macro. -----
#define GW_FN(name, ret, params) OurFunction{#name, #ret, #params},
std::vector<OurFunction> OurFunctions() { return {GW_NVML_FUNCTIONS(GW_FN)}; }
#undef GW_FN

// ----- bindings.rs -----

struct Loaded {
  std::optional<RustBindings> bindings;
  std::string error;
};

const Loaded& Load() {
  static const Loaded loaded = [] {
    Loaded l;
    const std::string path = GW_BINDINGS_RS;
    if (path.empty()) {
      l.error =
          "bindings.rs of nvml-wrapper-sys was not found at configure time "
          "(/usr/share/cargo/registry/nvml-wrapper-sys-*/src/bindings.rs). Install it with\n"
          "    apt-get install librust-nvml-wrapper-sys-dev\n"
          "then re-run cmake (scripts/setup does both), or point -DGW_NVML_BINDINGS_RS=<path> at a copy.";
      return l;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      l.error = "cannot read " + path +
                " (found at configure time). Reinstall it: apt-get install librust-nvml-wrapper-sys-dev, "
                "then re-run cmake.";
      return l;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    try {
      l.bindings = RustBindings::Parse(ss.str());
    } catch (const ParseError& e) {
      l.error = path + ": " + e.what();
    }
    return l;
  }();
  return loaded;
}

#define GW_REQUIRE_BINDINGS(var)                              \
  const Loaded& loaded_ = Load();                             \
  ASSERT_TRUE(loaded_.bindings.has_value()) << loaded_.error; \
  const RustBindings& var = *loaded_.bindings

std::string Report(const std::vector<std::string>& problems) {
  std::string s = std::to_string(problems.size()) +
                  " mismatch(es) between src/nvml/nvml_abi.h and bindings.rs (" GW_BINDINGS_RS "):";
  for (const std::string& p : problems) s += "\n  " + p;
  return s;
}

TEST(NvmlAbi, BindingsParse) {
  GW_REQUIRE_BINDINGS(rust);
  // Sanity: the reader saw the parts it needs, so an empty result below means "all matched".
  EXPECT_GT(rust.records().size(), 40u);
  EXPECT_GT(rust.functions().size(), 200u);
  EXPECT_GT(rust.constants().size(), 400u);
  EXPECT_TRUE(rust.records().count("nvmlPciInfo_st"));
  EXPECT_TRUE(rust.functions().count("nvmlInit_v2"));
}

TEST(NvmlAbi, StructLayouts) {
  GW_REQUIRE_BINDINGS(rust);
  std::vector<OurStruct> ours;
  std::vector<std::string> problems;
  std::size_t fields = 0;
  for (const auto& s : OurStructs()) {
    fields += s.fields.size();
    if (auto h = kStructsNewerThanBindings.find(s.name); h != kStructsNewerThanBindings.end()) {
      for (auto& p : CheckAgainstNvmlH(s, h->second)) problems.push_back(p);
    } else {
      ours.push_back(s);
    }
  }
  for (auto& p : CheckStructs(rust, ours)) problems.push_back(p);
  EXPECT_TRUE(problems.empty()) << Report(problems);
  std::cout << "[abi] " << ours.size() << " structs/unions, " << fields << " fields checked\n";
}

TEST(NvmlAbi, StructFieldListsAreComplete) {
  const auto problems = CheckFieldListComplete(OurStructs());
  EXPECT_TRUE(problems.empty()) << Report(problems);
}

TEST(NvmlAbi, Typedefs) {
  GW_REQUIRE_BINDINGS(rust);
  const auto ours = OurTypedefs();
  const auto problems = CheckTypedefs(rust, ours);
  EXPECT_TRUE(problems.empty()) << Report(problems);
  std::cout << "[abi] " << ours.size() << " typedefs checked\n";
}

TEST(NvmlAbi, Constants) {
  GW_REQUIRE_BINDINGS(rust);
  const auto ours = OurConstants();
  auto problems = CheckConstants(rust, ours, kConstantsNewerThanBindings);
  for (const OurStructVersion& v : OurStructVersions()) {
    std::size_t size = 0;
    if (auto h = kStructsNewerThanBindings.find(v.struct_name); h != kStructsNewerThanBindings.end()) {
      size = h->second.size;
    } else {
      std::string error;
      const auto layout = rust.LayoutOfRecord(v.struct_name, &error);
      if (!layout) {
        problems.push_back(std::string(v.name) + ": " + error);
        continue;
      }
      size = layout->size;
    }
    const unsigned long long expected = size | (static_cast<unsigned long long>(v.version) << 24U);
    if (v.value != expected) {
      problems.push_back(std::string(v.name) + ": our value " + std::to_string(v.value) +
                         ", NVML_STRUCT_VERSION over bindings.rs's " + v.struct_name + " gives " +
                         std::to_string(expected));
    }
  }
  EXPECT_TRUE(problems.empty()) << Report(problems);
  std::cout << "[abi] " << ours.size() + OurStructVersions().size() << " constants checked\n";
}

TEST(NvmlAbi, Functions) {
  GW_REQUIRE_BINDINGS(rust);
  const auto ours = OurFunctions();
  const auto problems = CheckFunctions(rust, ours, kFunctionsNewerThanBindings);
  EXPECT_TRUE(problems.empty()) << Report(problems);
  std::cout << "[abi] " << ours.size() << " functions checked\n";
}

TEST(NvmlAbi, AllowListsOnlyNameWhatBindingsLacks) {
  // An allow-list entry that bindings.rs has after all is stale and would hide a real check.
  GW_REQUIRE_BINDINGS(rust);
  for (const std::string& name : kConstantsNewerThanBindings) {
    EXPECT_TRUE(rust.FindConstant(name).empty()) << name << " is in bindings.rs: remove it from the allow-list";
  }
  for (const std::string& name : kFunctionsNewerThanBindings) {
    EXPECT_FALSE(rust.functions().count(name)) << name << " is in bindings.rs: remove it from the allow-list";
  }
  for (const auto& [name, layout] : kStructsNewerThanBindings) {
    std::string error;
    EXPECT_FALSE(rust.LayoutOfRecord(name, &error).has_value()) << name << " is in bindings.rs: check it there instead";
  }
}

// Every constant, struct and typedef nvml_abi.h declares is named in the lists above, so a
// declaration added to the header cannot slip past this test.
TEST(NvmlAbi, HeaderCoverage) {
  std::ifstream in(GW_NVML_ABI_H);
  ASSERT_TRUE(in) << "cannot read " << GW_NVML_ABI_H;
  std::stringstream ss;
  ss << in.rdbuf();
  // Drop comments, keep line structure.
  const std::string text = std::regex_replace(ss.str(), std::regex(R"(//[^\n]*)"), "");

  std::set<std::string> constants, structs, typedefs;
  const std::regex define(R"((?:^|\n)[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+\S)");
  for (std::sregex_iterator it(text.begin(), text.end(), define), end; it != end; ++it) constants.insert((*it)[1]);
  const std::regex enum_block(R"(enum\s*(?::\s*\w+(?:\s+\w+)*\s*)?\{([^}]*)\})");
  const std::regex enumerator(R"((\w+)\s*=)");
  for (std::sregex_iterator it(text.begin(), text.end(), enum_block), end; it != end; ++it) {
    const std::string body = (*it)[1];
    for (std::sregex_iterator e(body.begin(), body.end(), enumerator); e != end; ++e) constants.insert((*e)[1]);
  }
  // One level of nesting: nvmlGpmMetric_t holds an anonymous struct, as nvml.h declares it.
  const std::regex record(R"(typedef\s+(?:struct|union)\s+\w*\s*\{(?:[^{}]|\{[^{}]*\})*\}\s*(\w+)\s*;)");
  for (std::sregex_iterator it(text.begin(), text.end(), record), end; it != end; ++it) structs.insert((*it)[1]);
  const std::regex scalar(R"(typedef\s+[^;{}()]*?(\w+)\s*;)");
  for (std::sregex_iterator it(text.begin(), text.end(), scalar), end; it != end; ++it) typedefs.insert((*it)[1]);

  std::set<std::string> listed;
  for (const auto& c : OurConstants()) listed.insert(c.name);
  for (const auto& v : OurStructVersions()) listed.insert(v.name);
  for (const std::string& name : constants) {
    EXPECT_TRUE(listed.count(name)) << "nvml_abi.h defines " << name
                                    << " but tests/abi/abi_check_test.cpp does not check it: add it to "
                                       "OurConstants() (or OurStructVersions())";
  }
  listed.clear();
  for (const auto& s : OurStructs()) listed.insert(s.name);
  for (const std::string& name : structs) {
    EXPECT_TRUE(listed.count(name)) << "nvml_abi.h declares struct " << name
                                    << " but tests/abi/abi_check_test.cpp does not check it: add it to OurStructs()";
  }
  listed.clear();
  for (const auto& t : OurTypedefs()) listed.insert(t.name);
  for (const std::string& name : typedefs) {
    EXPECT_TRUE(listed.count(name)) << "nvml_abi.h declares typedef " << name
                                    << " but tests/abi/abi_check_test.cpp does not check it: add it to OurTypedefs()";
  }
  // The scan itself must have found the declarations, or it proves nothing.
  EXPECT_GE(constants.size(), OurConstants().size());
  EXPECT_EQ(structs.size() + 1, OurStructs().size());  // + the nested nvmlGpmMetric_t__bindgen_ty_1
  EXPECT_EQ(typedefs.size(), OurTypedefs().size());
}

}  // namespace
}  // namespace gw::abi_test
