// Our own declaration of the subset of the NVML C ABI that gpuwarden uses.
//
// Why not NVIDIA's nvml.h: the product must build on hosts with no NVIDIA software at all, and
// both the real library and our simulator are reached only through dlopen. Every constant,
// struct layout and signature here is a fact of the published ABI; tests/abi checks each one
// against bindings.rs from Debian's librust-nvml-wrapper-sys-dev, generated from nvml.h.
//
// The function list is an X-macro so that the loader, the simulator and the ABI test all
// derive from one list: a function is added in exactly one place.
#pragma once

#include <cstdint>

extern "C" {

typedef unsigned int nvmlReturn_t;
enum : nvmlReturn_t {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

// Buffer sizes.
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_PART_NUMBER_BUFFER_SIZE 80
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE 30
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE 32
#define NVML_GSP_FIRMWARE_VERSION_BUF_SIZE 64  // nvmlDeviceGetGspFirmwareVersion takes no length
#define NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE 16
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_VALUE_NOT_AVAILABLE (-1)
#define NVML_INIT_FLAG_NO_GPUS 1
#define NVML_INIT_FLAG_NO_ATTACH 2

// Versioned structs carry their size and version in the first field.
#define NVML_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // (device id << 16) | vendor id
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

// Memory banks by how many spare rows the row remapper has left in each (nvidia-smi's "Bank Remap
// Availability Histogram").
typedef struct nvmlRowRemapperHistogramValues_st {
  unsigned int max;
  unsigned int high;
  unsigned int partial;
  unsigned int low;
  unsigned int none;
} nvmlRowRemapperHistogramValues_t;

// SRAM ECC errors as nvidia-smi 580 shows them (-q's "SRAM Uncorrectable Parity" and the sources):
// unique uncorrectable errors by kind and by unit, and whether the RMA threshold was crossed.
typedef struct {
  unsigned int version;
  unsigned long long aggregateUncParity;
  unsigned long long aggregateUncSecDed;
  unsigned long long aggregateCor;
  unsigned long long volatileUncParity;
  unsigned long long volatileUncSecDed;
  unsigned long long volatileCor;
  unsigned long long aggregateUncBucketL2;
  unsigned long long aggregateUncBucketSm;
  unsigned long long aggregateUncBucketPcie;
  unsigned long long aggregateUncBucketMcu;
  unsigned long long aggregateUncBucketOther;
  unsigned int bThresholdExceeded;
} nvmlEccSramErrorStatus_v1_t;
#define nvmlEccSramErrorStatus_v1 NVML_STRUCT_VERSION(EccSramErrorStatus, 1)

// How the GPU addresses system memory (nvmlDeviceGetAddressingMode): HMM, ATS or neither.
typedef struct {
  unsigned int version;
  unsigned int value;
} nvmlDeviceAddressingMode_v1_t;
#define nvmlDeviceAddressingMode_v1 NVML_STRUCT_VERSION(DeviceAddressingMode, 1)
enum : unsigned int {
  NVML_DEVICE_ADDRESSING_MODE_NONE = 0,
  NVML_DEVICE_ADDRESSING_MODE_HMM = 1,
  NVML_DEVICE_ADDRESSING_MODE_ATS = 2,
};

// Whether the GPU's chip-to-chip link (Grace Hopper, Grace Blackwell) is in use. nvml.h gives it a
// version macro but no version field, so nothing is set before the call.
typedef struct {
  unsigned int isC2cEnabled;
} nvmlC2cModeInfo_v1_t;

// A GPU's registration with the NVSwitch fabric (nvidia-fabricmanager; NVLink domains of GB200).
// Until the state is COMPLETED with status SUCCESS, CUDA on the GPU fails to initialise (error 802,
// "system not yet initialized"). v2 (R535+) lacks the summary; v3 (R550+) adds it.
// nvml.h's state member is an nvmlGpuFabricState_t, an unsigned char.
#define NVML_GPU_FABRIC_UUID_LEN 16
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;  // of a COMPLETED registration
  unsigned int cliqueId;
  unsigned char state;      // NVML_GPU_FABRIC_STATE_*
  unsigned int healthMask;  // NVML_GPU_FABRIC_HEALTH_MASK_*: fields of a few bits each
} nvmlGpuFabricInfo_v2_t;
#define nvmlGpuFabricInfo_v2 NVML_STRUCT_VERSION(GpuFabricInfo, 2)
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
  unsigned char healthSummary;  // NVML_GPU_FABRIC_HEALTH_SUMMARY_*
} nvmlGpuFabricInfo_v3_t;
#define nvmlGpuFabricInfo_v3 NVML_STRUCT_VERSION(GpuFabricInfo, 3)
enum : unsigned int {
  NVML_GPU_FABRIC_STATE_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_STATE_NOT_STARTED = 1,
  NVML_GPU_FABRIC_STATE_IN_PROGRESS = 2,
  NVML_GPU_FABRIC_STATE_COMPLETED = 3,
};
enum : unsigned int {
  NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE = 1,
  NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_FALSE = 2,
  NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW = 0,
  NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_DEGRADED_BW = 3,
  NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_TRUE = 1,
  NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_FALSE = 2,
  NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY = 2,
  NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_RECOVERY = 3,
  NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE = 1,
  NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_FALSE = 2,
  NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY = 4,
  NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY = 3,
  NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_TRUE = 1,
  NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_FALSE = 2,
  NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY = 6,
  NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ACCESS_TIMEOUT_RECOVERY = 3,
  NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE = 1,
  NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_SYSGUID = 2,
  NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_CHASSIS_SN = 3,
  NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NO_PARTITION = 4,
  NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INSUFFICIENT_NVLINKS = 5,
  NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION = 8,
  NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION = 15,
};
enum : unsigned int {
  NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED = 0,
  NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY = 1,
  NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY = 2,
  NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY = 3,
};

typedef struct nvmlUtilization_st {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlBAR1Memory_st {
  unsigned long long bar1Total;
  unsigned long long bar1Free;
  unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct nvmlDeviceAttributes_st {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

typedef struct nvmlProcessUtilizationSample_st {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU timestamp in microseconds
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef unsigned int nvmlValueType_t;
enum : nvmlValueType_t {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_COUNT = 5,
};

typedef union nvmlValue_st {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;  // microseconds since 1970
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;

typedef struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // Xid number for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

typedef unsigned int nvmlEnableState_t;
enum : nvmlEnableState_t { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };

typedef unsigned int nvmlBrandType_t;
enum : nvmlBrandType_t {
  NVML_BRAND_UNKNOWN = 0,
  NVML_BRAND_QUADRO = 1,
  NVML_BRAND_TESLA = 2,
  NVML_BRAND_NVS = 3,
  NVML_BRAND_GRID = 4,
  NVML_BRAND_GEFORCE = 5,
  NVML_BRAND_TITAN = 6,
  NVML_BRAND_NVIDIA_RTX = 13,
  NVML_BRAND_NVIDIA = 14,
  NVML_BRAND_GEFORCE_RTX = 15,
};

typedef unsigned int nvmlTemperatureSensors_t;
enum : nvmlTemperatureSensors_t { NVML_TEMPERATURE_GPU = 0 };

typedef unsigned int nvmlTemperatureThresholds_t;
enum : nvmlTemperatureThresholds_t {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
};

typedef unsigned int nvmlComputeMode_t;
enum : nvmlComputeMode_t {
  NVML_COMPUTEMODE_DEFAULT = 0,
  NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
  NVML_COMPUTEMODE_PROHIBITED = 2,
  NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

// What the GPU is to a hypervisor (nvidia-smi -q's "Virtualization Mode").
typedef unsigned int nvmlGpuVirtualizationMode_t;
enum : nvmlGpuVirtualizationMode_t {
  NVML_GPU_VIRTUALIZATION_MODE_NONE = 0,
  NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH = 1,
  NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2,
  NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU = 3,
  NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA = 4,
};

typedef unsigned int nvmlMemoryErrorType_t;
enum : nvmlMemoryErrorType_t { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };

typedef unsigned int nvmlEccCounterType_t;
enum : nvmlEccCounterType_t { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };

typedef unsigned int nvmlMemoryLocation_t;
enum : nvmlMemoryLocation_t {
  NVML_MEMORY_LOCATION_L1_CACHE = 0,
  NVML_MEMORY_LOCATION_L2_CACHE = 1,
  NVML_MEMORY_LOCATION_DEVICE_MEMORY = 2,
  NVML_MEMORY_LOCATION_REGISTER_FILE = 3,
  NVML_MEMORY_LOCATION_TEXTURE_MEMORY = 4,
  NVML_MEMORY_LOCATION_TEXTURE_SHM = 5,
  NVML_MEMORY_LOCATION_CBU = 6,
  NVML_MEMORY_LOCATION_SRAM = 7,  // Hopper's on-chip SRAMs, counted together
};

typedef unsigned int nvmlClockType_t;
enum : nvmlClockType_t {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
  NVML_CLOCK_COUNT = 4,
};

typedef unsigned int nvmlClockId_t;
enum : nvmlClockId_t {
  NVML_CLOCK_ID_CURRENT = 0,
  NVML_CLOCK_ID_APP_CLOCK_TARGET = 1,
  NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2,
  NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3,
};

typedef unsigned int nvmlPstates_t;
enum : nvmlPstates_t { NVML_PSTATE_0 = 0, NVML_PSTATE_8 = 8, NVML_PSTATE_15 = 15, NVML_PSTATE_UNKNOWN = 32 };

typedef unsigned int nvmlInforomObject_t;
enum : nvmlInforomObject_t { NVML_INFOROM_OEM = 0, NVML_INFOROM_ECC = 1, NVML_INFOROM_POWER = 2 };

typedef unsigned int nvmlPageRetirementCause_t;
enum : nvmlPageRetirementCause_t {
  NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
  NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1,
};

typedef unsigned int nvmlPcieUtilCounter_t;
enum : nvmlPcieUtilCounter_t { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };

typedef unsigned int nvmlNvLinkErrorCounter_t;
enum : nvmlNvLinkErrorCounter_t {
  NVML_NVLINK_ERROR_DL_REPLAY = 0,
  NVML_NVLINK_ERROR_DL_RECOVERY = 1,
  NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
  NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
  NVML_NVLINK_ERROR_DL_ECC_DATA = 4,
};

typedef unsigned int nvmlIntNvLinkDeviceType_t;
enum : nvmlIntNvLinkDeviceType_t {
  NVML_NVLINK_DEVICE_TYPE_GPU = 0,
  NVML_NVLINK_DEVICE_TYPE_IBMNPU = 1,
  NVML_NVLINK_DEVICE_TYPE_SWITCH = 2,
  NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 255,
};

typedef unsigned int nvmlGpuTopologyLevel_t;
enum : nvmlGpuTopologyLevel_t {
  NVML_TOPOLOGY_INTERNAL = 0,
  NVML_TOPOLOGY_SINGLE = 10,      // PIX
  NVML_TOPOLOGY_MULTIPLE = 20,    // PXB
  NVML_TOPOLOGY_HOSTBRIDGE = 30,  // PHB
  NVML_TOPOLOGY_NODE = 40,        // NODE
  NVML_TOPOLOGY_SYSTEM = 50,      // SYS
};

typedef unsigned int nvmlAffinityScope_t;
#define NVML_AFFINITY_SCOPE_NODE 0
#define NVML_AFFINITY_SCOPE_SOCKET 1

typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_MAXWELL 3
#define NVML_DEVICE_ARCH_PASCAL 4
#define NVML_DEVICE_ARCH_VOLTA 5
#define NVML_DEVICE_ARCH_TURING 6
#define NVML_DEVICE_ARCH_AMPERE 7
#define NVML_DEVICE_ARCH_ADA 8
#define NVML_DEVICE_ARCH_HOPPER 9
#define NVML_DEVICE_ARCH_UNKNOWN 0xffffffffU

#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1

// MIG partitioning. A GPU instance owns memory slices and compute slices of one GPU; compute
// instances split a GPU instance's compute slices. Both are opaque handles the library owns.
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

// GPU instance profiles: the `profile` argument of nvmlDeviceGetGpuInstanceProfileInfo(V). The
// profile's own id (what nvidia-smi prints and nvmlDeviceCreateGpuInstance takes) is another number.
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 0x7  // 1g with the media engines (+me)
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1 0x8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2 0x9  // 1g with twice the memory (1g.20gb on H100)
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE 0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE 0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE 0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE 0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE 0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE 0x5
#define NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE 0x6
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0

typedef struct nvmlGpuInstancePlacement_st {
  unsigned int start;  // first memory slice
  unsigned int size;   // memory slices
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
  unsigned int id;  // the profile id (nvidia-smi's "ID" column)
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct nvmlGpuInstanceProfileInfo_v2_st {
  unsigned int version;  // nvmlGpuInstanceProfileInfo_v2
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];  // "MIG 1g.10gb"
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2)

typedef struct nvmlGpuInstanceInfo_st {
  nvmlDevice_t device;  // the physical GPU
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstancePlacement_st {
  unsigned int start;  // first compute slice within the GPU instance
  unsigned int size;
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

typedef struct nvmlComputeInstanceInfo_st {
  nvmlDevice_t device;  // the physical GPU
  nvmlGpuInstance_t gpuInstance;
  unsigned int id;
  unsigned int profileId;
  nvmlComputeInstancePlacement_t placement;
} nvmlComputeInstanceInfo_t;

// Event types (bit mask).
#define nvmlEventTypeSingleBitEccError 0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError 0x0000000000000002ULL
#define nvmlEventTypePState 0x0000000000000004ULL
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
#define nvmlEventTypeClock 0x0000000000000010ULL
#define nvmlEventTypePowerSourceChange 0x0000000000000080ULL
#define nvmlEventMigConfigChange 0x0000000000000100ULL
#define nvmlEventTypeNone 0x0000000000000000ULL
#define nvmlEventTypeAll 0x000000000000019FULL

// Clock event ("throttle") reasons (bit mask).
#define nvmlClocksThrottleReasonGpuIdle 0x0000000000000001ULL
#define nvmlClocksThrottleReasonApplicationsClocksSetting 0x0000000000000002ULL
#define nvmlClocksThrottleReasonSwPowerCap 0x0000000000000004ULL
#define nvmlClocksThrottleReasonHwSlowdown 0x0000000000000008ULL
#define nvmlClocksThrottleReasonSyncBoost 0x0000000000000010ULL
#define nvmlClocksThrottleReasonSwThermalSlowdown 0x0000000000000020ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x0000000000000080ULL
#define nvmlClocksThrottleReasonDisplayClockSetting 0x0000000000000100ULL
#define nvmlClocksThrottleReasonNone 0x0000000000000000ULL

// Field ids for nvmlDeviceGetFieldValues (the subset we read).
#define NVML_FI_DEV_ECC_CURRENT 1
#define NVML_FI_DEV_ECC_PENDING 2
#define NVML_FI_DEV_ECC_SBE_VOL_TOTAL 3
#define NVML_FI_DEV_ECC_DBE_VOL_TOTAL 4
#define NVML_FI_DEV_ECC_SBE_AGG_TOTAL 5
#define NVML_FI_DEV_ECC_DBE_AGG_TOTAL 6
#define NVML_FI_DEV_RETIRED_SBE 29
#define NVML_FI_DEV_RETIRED_DBE 30
#define NVML_FI_DEV_RETIRED_PENDING 31
#define NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL 38
#define NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL 45
#define NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL 52
#define NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL 59
#define NVML_FI_DEV_NVLINK_BANDWIDTH_C0_TOTAL 66
#define NVML_FI_DEV_NVLINK_BANDWIDTH_C1_TOTAL 73
#define NVML_FI_DEV_MEMORY_TEMP 82
#define NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION 83
#define NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON 90
#define NVML_FI_DEV_NVLINK_LINK_COUNT 91
#define NVML_FI_DEV_RETIRED_PENDING_SBE 92
#define NVML_FI_DEV_RETIRED_PENDING_DBE 93
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94
#define NVML_FI_DEV_PCIE_REPLAY_ROLLOVER_COUNTER 95
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139
#define NVML_FI_DEV_REMAPPED_COR 142
#define NVML_FI_DEV_REMAPPED_UNC 143
#define NVML_FI_DEV_REMAPPED_PENDING 144
#define NVML_FI_DEV_REMAPPED_FAILURE 145
#define NVML_FI_DEV_POWER_INSTANT 186  // milliwatts, the board's latest sample (not the 1 s average)
// What the driver asks the operator to do after an error (R560 and later; it replaced fields 226 and
// 227, RESET_STATUS and DRAIN_AND_RESET_STATUS): one of NVML_GPU_RECOVERY_ACTION_*.
#define NVML_FI_DEV_GET_GPU_RECOVERY_ACTION 230
enum : unsigned int {
  NVML_GPU_RECOVERY_ACTION_NONE = 0,
  NVML_GPU_RECOVERY_ACTION_GPU_RESET = 1,
  NVML_GPU_RECOVERY_ACTION_NODE_REBOOT = 2,
  NVML_GPU_RECOVERY_ACTION_DRAIN_P2P = 3,
  NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET = 4,
};
#define NVML_FI_MAX 167

// GPU Performance Monitoring (GPM, Hopper and newer): two samples an interval apart give the
// profiling metrics over that interval. A sample is an opaque handle the library allocates.
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef unsigned int nvmlGpmMetricId_t;
enum : nvmlGpmMetricId_t {
  NVML_GPM_METRIC_GRAPHICS_UTIL = 1,  // percent
  NVML_GPM_METRIC_SM_UTIL = 2,
  NVML_GPM_METRIC_SM_OCCUPANCY = 3,
  NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
  NVML_GPM_METRIC_DRAM_BW_UTIL = 10,
  NVML_GPM_METRIC_FP64_UTIL = 11,
  NVML_GPM_METRIC_FP32_UTIL = 12,
  NVML_GPM_METRIC_FP16_UTIL = 13,
  NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20,  // MiB/s
  NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21,
  NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60,
  NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61,
  NVML_GPM_METRIC_MAX = 98,  // the size of nvmlGpmMetricsGet_t.metrics, not the largest id
};

#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION 1

typedef struct nvmlGpmMetric_st {
  unsigned int metricId;    // in: nvmlGpmMetricId_t
  nvmlReturn_t nvmlReturn;  // out: this metric's own result
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  // out: strings owned by the library
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;  // the earlier sample
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct nvmlGpmSupport_st {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

}  // extern "C"

// Every NVML entry point we call: X(name, return type, (parameters)).
// Versioned names come first; the loader falls back from _v3 to _v2 to the plain name.
#define GW_NVML_FUNCTIONS(X)                                                                                           \
  X(nvmlInitWithFlags, nvmlReturn_t, (unsigned int flags))                                                             \
  X(nvmlDeviceValidateInforom, nvmlReturn_t, (nvmlDevice_t device))                                                    \
  X(nvmlEventSetCreate, nvmlReturn_t, (nvmlEventSet_t * set))                                                          \
  X(nvmlEventSetFree, nvmlReturn_t, (nvmlEventSet_t set))                                                              \
  X(nvmlInit_v2, nvmlReturn_t, (void))                                                                                 \
  X(nvmlInit, nvmlReturn_t, (void))                                                                                    \
  X(nvmlShutdown, nvmlReturn_t, (void))                                                                                \
  X(nvmlErrorString, const char*, (nvmlReturn_t result))                                                               \
  X(nvmlSystemGetDriverVersion, nvmlReturn_t, (char* version, unsigned int length))                                    \
  X(nvmlSystemGetNVMLVersion, nvmlReturn_t, (char* version, unsigned int length))                                      \
  X(nvmlSystemGetCudaDriverVersion, nvmlReturn_t, (int* cudaDriverVersion))                                            \
  X(nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int* cudaDriverVersion))                                         \
  X(nvmlSystemGetProcessName, nvmlReturn_t, (unsigned int pid, char* name, unsigned int length))                       \
  X(nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned int* deviceCount))                                                  \
  X(nvmlDeviceGetCount, nvmlReturn_t, (unsigned int* deviceCount))                                                     \
  X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned int index, nvmlDevice_t* device))                           \
  X(nvmlDeviceGetHandleByIndex, nvmlReturn_t, (unsigned int index, nvmlDevice_t* device))                              \
  X(nvmlDeviceGetHandleByUUID, nvmlReturn_t, (const char* uuid, nvmlDevice_t* device))                                 \
  X(nvmlDeviceGetHandleByPciBusId_v2, nvmlReturn_t, (const char* pciBusId, nvmlDevice_t* device))                      \
  X(nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t device, char* name, unsigned int length))                           \
  X(nvmlDeviceGetBrand, nvmlReturn_t, (nvmlDevice_t device, nvmlBrandType_t * type_))                                  \
  X(nvmlDeviceGetIndex, nvmlReturn_t, (nvmlDevice_t device, unsigned int* index))                                      \
  X(nvmlDeviceGetSerial, nvmlReturn_t, (nvmlDevice_t device, char* serial, unsigned int length))                       \
  X(nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t device, char* uuid, unsigned int length))                           \
  X(nvmlDeviceGetMinorNumber, nvmlReturn_t, (nvmlDevice_t device, unsigned int* minorNumber))                          \
  X(nvmlDeviceGetBoardPartNumber, nvmlReturn_t, (nvmlDevice_t device, char* partNumber, unsigned int length))          \
  X(nvmlDeviceGetBoardId, nvmlReturn_t, (nvmlDevice_t device, unsigned int* boardId))                                  \
  X(nvmlDeviceGetMultiGpuBoard, nvmlReturn_t, (nvmlDevice_t device, unsigned int* multiGpuBool))                       \
  X(nvmlDeviceGetInforomImageVersion, nvmlReturn_t, (nvmlDevice_t device, char* version, unsigned int length))         \
  X(nvmlDeviceGetInforomVersion, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, nvmlInforomObject_t object, char* version, unsigned int length))                             \
  X(nvmlDeviceGetVbiosVersion, nvmlReturn_t, (nvmlDevice_t device, char* version, unsigned int length))                \
  X(nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t device, nvmlPciInfo_t * pci))                                 \
  X(nvmlDeviceGetPciInfo_v2, nvmlReturn_t, (nvmlDevice_t device, nvmlPciInfo_t * pci))                                 \
  X(nvmlDeviceGetPciInfo, nvmlReturn_t, (nvmlDevice_t device, nvmlPciInfo_t * pci))                                    \
  X(nvmlDeviceGetArchitecture, nvmlReturn_t, (nvmlDevice_t device, nvmlDeviceArchitecture_t * arch))                   \
  X(nvmlDeviceGetCudaComputeCapability, nvmlReturn_t, (nvmlDevice_t device, int* major, int* minor))                   \
  X(nvmlDeviceGetNumGpuCores, nvmlReturn_t, (nvmlDevice_t device, unsigned int* numCores))                             \
  X(nvmlDeviceGetAttributes_v2, nvmlReturn_t, (nvmlDevice_t device, nvmlDeviceAttributes_t * attributes))              \
  X(nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_v2_t * memory))                         \
  X(nvmlDeviceGetMemoryInfo, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_t * memory))                               \
  X(nvmlDeviceGetBAR1MemoryInfo, nvmlReturn_t, (nvmlDevice_t device, nvmlBAR1Memory_t * bar1Memory))                   \
  X(nvmlDeviceGetMemoryBusWidth, nvmlReturn_t, (nvmlDevice_t device, unsigned int* busWidth))                          \
  X(nvmlDeviceGetClockInfo, nvmlReturn_t, (nvmlDevice_t device, nvmlClockType_t type_, unsigned int* clock))           \
  X(nvmlDeviceGetMaxClockInfo, nvmlReturn_t, (nvmlDevice_t device, nvmlClockType_t type_, unsigned int* clock))        \
  X(nvmlDeviceGetApplicationsClock, nvmlReturn_t,                                                                      \
    (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int* clockMHz))                                          \
  X(nvmlDeviceGetDefaultApplicationsClock, nvmlReturn_t,                                                               \
    (nvmlDevice_t device, nvmlClockType_t clockType, unsigned int* clockMHz))                                          \
  X(nvmlDeviceGetClock, nvmlReturn_t,                                                                                  \
    (nvmlDevice_t device, nvmlClockType_t clockType, nvmlClockId_t clockId, unsigned int* clockMHz))                   \
  X(nvmlDeviceGetCurrPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t device, unsigned int* currLinkGen))               \
  X(nvmlDeviceGetCurrPcieLinkWidth, nvmlReturn_t, (nvmlDevice_t device, unsigned int* currLinkWidth))                  \
  X(nvmlDeviceGetMaxPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t device, unsigned int* maxLinkGen))                 \
  X(nvmlDeviceGetGpuMaxPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t device, unsigned int* maxLinkGenDevice))        \
  X(nvmlDeviceGetAccountingMode, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t * mode))                        \
  X(nvmlDeviceGetAccountingBufferSize, nvmlReturn_t, (nvmlDevice_t device, unsigned int* bufferSize))                  \
  X(nvmlDeviceGetGspFirmwareMode, nvmlReturn_t,                                                                        \
    (nvmlDevice_t device, unsigned int* isEnabled, unsigned int* defaultMode))                                         \
  X(nvmlDeviceGetGspFirmwareVersion, nvmlReturn_t, (nvmlDevice_t device, char* version))                               \
  X(nvmlDeviceGetVirtualizationMode, nvmlReturn_t, (nvmlDevice_t device, nvmlGpuVirtualizationMode_t * pVirtualMode))  \
  X(nvmlDeviceGetMaxPcieLinkWidth, nvmlReturn_t, (nvmlDevice_t device, unsigned int* maxLinkWidth))                    \
  X(nvmlDeviceGetPcieThroughput, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value))                                         \
  X(nvmlDeviceGetPcieReplayCounter, nvmlReturn_t, (nvmlDevice_t device, unsigned int* value))                          \
  X(nvmlDeviceGetPowerUsage, nvmlReturn_t, (nvmlDevice_t device, unsigned int* power))                                 \
  X(nvmlDeviceGetPowerManagementMode, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t * mode))                   \
  X(nvmlDeviceGetPowerManagementLimit, nvmlReturn_t, (nvmlDevice_t device, unsigned int* limit))                       \
  X(nvmlDeviceGetPowerManagementLimitConstraints, nvmlReturn_t,                                                        \
    (nvmlDevice_t device, unsigned int* minLimit, unsigned int* maxLimit))                                             \
  X(nvmlDeviceGetPowerManagementDefaultLimit, nvmlReturn_t, (nvmlDevice_t device, unsigned int* defaultLimit))         \
  X(nvmlDeviceGetEnforcedPowerLimit, nvmlReturn_t, (nvmlDevice_t device, unsigned int* limit))                         \
  X(nvmlDeviceGetTotalEnergyConsumption, nvmlReturn_t, (nvmlDevice_t device, unsigned long long* energy))              \
  X(nvmlDeviceGetTemperature, nvmlReturn_t,                                                                            \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp))                                    \
  X(nvmlDeviceGetTemperatureThreshold, nvmlReturn_t,                                                                   \
    (nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType, unsigned int* temp))                              \
  X(nvmlDeviceGetFanSpeed, nvmlReturn_t, (nvmlDevice_t device, unsigned int* speed))                                   \
  X(nvmlDeviceGetFanSpeed_v2, nvmlReturn_t, (nvmlDevice_t device, unsigned int fan, unsigned int* speed))              \
  X(nvmlDeviceGetNumFans, nvmlReturn_t, (nvmlDevice_t device, unsigned int* numFans))                                  \
  X(nvmlDeviceGetPerformanceState, nvmlReturn_t, (nvmlDevice_t device, nvmlPstates_t * pState))                        \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlReturn_t,                                                           \
    (nvmlDevice_t device, unsigned long long* clocksThrottleReasons))                                                  \
  X(nvmlDeviceGetSupportedClocksThrottleReasons, nvmlReturn_t,                                                         \
    (nvmlDevice_t device, unsigned long long* supportedClocksThrottleReasons))                                         \
  X(nvmlDeviceGetUtilizationRates, nvmlReturn_t, (nvmlDevice_t device, nvmlUtilization_t * utilization))               \
  X(nvmlDeviceGetEncoderUtilization, nvmlReturn_t,                                                                     \
    (nvmlDevice_t device, unsigned int* utilization, unsigned int* samplingPeriodUs))                                  \
  X(nvmlDeviceGetDecoderUtilization, nvmlReturn_t,                                                                     \
    (nvmlDevice_t device, unsigned int* utilization, unsigned int* samplingPeriodUs))                                  \
  X(nvmlDeviceGetJpgUtilization, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, unsigned int* utilization, unsigned int* samplingPeriodUs))                                  \
  X(nvmlDeviceGetOfaUtilization, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, unsigned int* utilization, unsigned int* samplingPeriodUs))                                  \
  X(nvmlDeviceGetEccMode, nvmlReturn_t,                                                                                \
    (nvmlDevice_t device, nvmlEnableState_t * current, nvmlEnableState_t * pending))                                   \
  X(nvmlDeviceGetTotalEccErrors, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType,                           \
     unsigned long long* eccCounts))                                                                                   \
  X(nvmlDeviceGetMemoryErrorCounter, nvmlReturn_t,                                                                     \
    (nvmlDevice_t device, nvmlMemoryErrorType_t errorType, nvmlEccCounterType_t counterType,                           \
     nvmlMemoryLocation_t locationType, unsigned long long* count))                                                    \
  X(nvmlDeviceGetRetiredPages, nvmlReturn_t,                                                                           \
    (nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int* pageCount, unsigned long long* addresses))    \
  X(nvmlDeviceGetRetiredPagesPendingStatus, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t * isPending))        \
  X(nvmlDeviceGetRemappedRows, nvmlReturn_t,                                                                           \
    (nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows, unsigned int* isPending,                      \
     unsigned int* failureOccurred))                                                                                   \
  X(nvmlDeviceGetConfComputeProtectedMemoryUsage, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_t * memory))          \
  X(nvmlDeviceGetSramEccErrorStatus, nvmlReturn_t, (nvmlDevice_t device, nvmlEccSramErrorStatus_v1_t * status))        \
  X(nvmlDeviceGetAddressingMode, nvmlReturn_t, (nvmlDevice_t device, nvmlDeviceAddressingMode_v1_t * mode))            \
  X(nvmlDeviceGetC2cModeInfoV, nvmlReturn_t, (nvmlDevice_t device, nvmlC2cModeInfo_v1_t * c2cModeInfo))                \
  X(nvmlDeviceGetGpuFabricInfoV, nvmlReturn_t, (nvmlDevice_t device, nvmlGpuFabricInfo_v3_t * gpuFabricInfo))          \
  X(nvmlDeviceGetRowRemapperHistogram, nvmlReturn_t, (nvmlDevice_t device, nvmlRowRemapperHistogramValues_t * values)) \
  X(nvmlDeviceGetPersistenceMode, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t * mode))                       \
  X(nvmlDeviceGetComputeMode, nvmlReturn_t, (nvmlDevice_t device, nvmlComputeMode_t * mode))                           \
  X(nvmlDeviceGetDisplayActive, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t * isActive))                     \
  X(nvmlDeviceGetDisplayMode, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t * display))                        \
  X(nvmlDeviceGetMigMode, nvmlReturn_t, (nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode))   \
  X(nvmlDeviceGetMaxMigDeviceCount, nvmlReturn_t, (nvmlDevice_t device, unsigned int* count))                          \
  X(nvmlDeviceGetMigDeviceHandleByIndex, nvmlReturn_t,                                                                 \
    (nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice))                                                \
  X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, nvmlReturn_t, (nvmlDevice_t migDevice, nvmlDevice_t * device))       \
  X(nvmlDeviceIsMigDeviceHandle, nvmlReturn_t, (nvmlDevice_t device, unsigned int* isMigDevice))                       \
  X(nvmlDeviceGetGpuInstanceId, nvmlReturn_t, (nvmlDevice_t device, unsigned int* id))                                 \
  X(nvmlDeviceGetComputeInstanceId, nvmlReturn_t, (nvmlDevice_t device, unsigned int* id))                             \
  X(nvmlDeviceSetMigMode, nvmlReturn_t, (nvmlDevice_t device, unsigned int mode, nvmlReturn_t* activationStatus))      \
  X(nvmlDeviceGetGpuInstanceProfileInfoV, nvmlReturn_t,                                                                \
    (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t* info))                                \
  X(nvmlDeviceGetGpuInstanceProfileInfo, nvmlReturn_t,                                                                 \
    (nvmlDevice_t device, unsigned int profile, nvmlGpuInstanceProfileInfo_t* info))                                   \
  X(nvmlDeviceGetGpuInstancePossiblePlacements_v2, nvmlReturn_t,                                                       \
    (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstancePlacement_t* placements, unsigned int* count))        \
  X(nvmlDeviceGetGpuInstanceRemainingCapacity, nvmlReturn_t,                                                           \
    (nvmlDevice_t device, unsigned int profileId, unsigned int* count))                                                \
  X(nvmlDeviceCreateGpuInstance, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstance))                                     \
  X(nvmlDeviceGetGpuInstances, nvmlReturn_t,                                                                           \
    (nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstances, unsigned int* count))               \
  X(nvmlDeviceGetGpuInstanceById, nvmlReturn_t,                                                                        \
    (nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t* gpuInstance))                                            \
  X(nvmlGpuInstanceGetInfo, nvmlReturn_t, (nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t * info))               \
  X(nvmlGpuInstanceDestroy, nvmlReturn_t, (nvmlGpuInstance_t gpuInstance))                                             \
  X(nvmlGpuInstanceGetComputeInstanceProfileInfo, nvmlReturn_t,                                                        \
    (nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,                                     \
     nvmlComputeInstanceProfileInfo_t* info))                                                                          \
  X(nvmlGpuInstanceGetComputeInstanceRemainingCapacity, nvmlReturn_t,                                                  \
    (nvmlGpuInstance_t gpuInstance, unsigned int profileId, unsigned int* count))                                      \
  X(nvmlGpuInstanceCreateComputeInstance, nvmlReturn_t,                                                                \
    (nvmlGpuInstance_t gpuInstance, unsigned int profileId, nvmlComputeInstance_t* computeInstance))                   \
  X(nvmlGpuInstanceGetComputeInstances, nvmlReturn_t,                                                                  \
    (nvmlGpuInstance_t gpuInstance, unsigned int profileId, nvmlComputeInstance_t* computeInstances,                   \
     unsigned int* count))                                                                                             \
  X(nvmlGpuInstanceGetComputeInstanceById, nvmlReturn_t,                                                               \
    (nvmlGpuInstance_t gpuInstance, unsigned int id, nvmlComputeInstance_t* computeInstance))                          \
  X(nvmlComputeInstanceGetInfo_v2, nvmlReturn_t,                                                                       \
    (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t * info))                                         \
  X(nvmlComputeInstanceGetInfo, nvmlReturn_t,                                                                          \
    (nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t * info))                                         \
  X(nvmlComputeInstanceDestroy, nvmlReturn_t, (nvmlComputeInstance_t computeInstance))                                 \
  X(nvmlDeviceGetNvLinkState, nvmlReturn_t, (nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive))     \
  X(nvmlDeviceGetNvLinkVersion, nvmlReturn_t, (nvmlDevice_t device, unsigned int link, unsigned int* version))         \
  X(nvmlDeviceGetNvLinkRemotePciInfo_v2, nvmlReturn_t, (nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci))   \
  X(nvmlDeviceGetNvLinkRemoteDeviceType, nvmlReturn_t,                                                                 \
    (nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t* pNvLinkDeviceType))                            \
  X(nvmlDeviceGetNvLinkErrorCounter, nvmlReturn_t,                                                                     \
    (nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter, unsigned long long* counterValue))      \
  X(nvmlDeviceGetTopologyCommonAncestor, nvmlReturn_t,                                                                 \
    (nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuTopologyLevel_t * pathInfo))                                   \
  X(nvmlDeviceGetCpuAffinity, nvmlReturn_t, (nvmlDevice_t device, unsigned int cpuSetSize, unsigned long* cpuSet))     \
  X(nvmlDeviceGetMemoryAffinity, nvmlReturn_t,                                                                         \
    (nvmlDevice_t device, unsigned int nodeSetSize, unsigned long* nodeSet, nvmlAffinityScope_t scope))                \
  X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t,                                                             \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                                          \
  X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlReturn_t,                                                             \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v2_t* infos))                                       \
  X(nvmlDeviceGetComputeRunningProcesses, nvmlReturn_t,                                                                \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_v1_t* infos))                                       \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlReturn_t,                                                            \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))                                          \
  X(nvmlDeviceGetProcessUtilization, nvmlReturn_t,                                                                     \
    (nvmlDevice_t device, nvmlProcessUtilizationSample_t * utilization, unsigned int* processSamplesCount,             \
     unsigned long long lastSeenTimeStamp))                                                                            \
  X(nvmlDeviceGetFieldValues, nvmlReturn_t, (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values))          \
  X(nvmlDeviceGetSupportedEventTypes, nvmlReturn_t, (nvmlDevice_t device, unsigned long long* eventTypes))             \
  X(nvmlDeviceRegisterEvents, nvmlReturn_t, (nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set))  \
  X(nvmlEventSetWait_v2, nvmlReturn_t, (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeoutms))           \
  X(nvmlEventSetWait, nvmlReturn_t, (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeoutms))              \
  X(nvmlDeviceSetPowerManagementLimit, nvmlReturn_t, (nvmlDevice_t device, unsigned int limit))                        \
  X(nvmlDeviceSetPersistenceMode, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t mode))                         \
  X(nvmlDeviceSetGpuLockedClocks, nvmlReturn_t,                                                                        \
    (nvmlDevice_t device, unsigned int minGpuClockMHz, unsigned int maxGpuClockMHz))                                   \
  X(nvmlDeviceResetGpuLockedClocks, nvmlReturn_t, (nvmlDevice_t device))                                               \
  X(nvmlDeviceSetMemoryLockedClocks, nvmlReturn_t,                                                                     \
    (nvmlDevice_t device, unsigned int minMemClockMHz, unsigned int maxMemClockMHz))                                   \
  X(nvmlDeviceResetMemoryLockedClocks, nvmlReturn_t, (nvmlDevice_t device))                                            \
  X(nvmlDeviceSetApplicationsClocks, nvmlReturn_t,                                                                     \
    (nvmlDevice_t device, unsigned int memClockMHz, unsigned int graphicsClockMHz))                                    \
  X(nvmlDeviceResetApplicationsClocks, nvmlReturn_t, (nvmlDevice_t device))                                            \
  X(nvmlDeviceSetComputeMode, nvmlReturn_t, (nvmlDevice_t device, nvmlComputeMode_t mode))                             \
  X(nvmlDeviceSetEccMode, nvmlReturn_t, (nvmlDevice_t device, nvmlEnableState_t ecc))                                  \
  X(nvmlGpmQueryDeviceSupport, nvmlReturn_t, (nvmlDevice_t device, nvmlGpmSupport_t * gpmSupport))                     \
  X(nvmlGpmSampleAlloc, nvmlReturn_t, (nvmlGpmSample_t * gpmSample))                                                   \
  X(nvmlGpmSampleFree, nvmlReturn_t, (nvmlGpmSample_t gpmSample))                                                      \
  X(nvmlGpmSampleGet, nvmlReturn_t, (nvmlDevice_t device, nvmlGpmSample_t gpmSample))                                  \
  X(nvmlGpmMigSampleGet, nvmlReturn_t, (nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample))   \
  X(nvmlGpmMetricsGet, nvmlReturn_t, (nvmlGpmMetricsGet_t * metricsGet))

// Declarations, so that a library exporting these (the simulator) is checked by the compiler.
#define GW_NVML_DECLARE(name, ret, params) extern "C" ret name params;
GW_NVML_FUNCTIONS(GW_NVML_DECLARE)
#undef GW_NVML_DECLARE
