// Error counters and links: ECC, retired pages, row remapping, PCIe, NVLink, and the
// field-value interface that reads many of them at once.
#include "sim/export_api.h"

#include <algorithm>
#include <cmath>

#include "sim/faults.h"
#include "sim/noise.h"

using namespace gw::sim;

namespace {

const std::vector<const FaultConfig*>& faultsOf(const Call& c) { return c.gpu->physics->faults(); }

// NVSwitch (third generation, as in DGX H100) PCI identity for a switch index.
nvmlPciInfo_t switchPci(unsigned index) { return makePciInfo(0, 0x05 + index, 0, 0, 0x22A3, 0x187510DE); }

nvmlReturn_t checkLink(const Call& c, unsigned link) {
  if (c.dev->profile->nvlink_links == 0) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= c.dev->profile->nvlink_links) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

// Per-link NVLink speed in MB/s as NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON reports it.
unsigned nvlinkSpeedMbps(unsigned version) { return version >= 4 ? 26562 : 25781; }

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
  const DeviceSettings set = c.gpu->readSettings();
  *current = set.ecc_current ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  *pending = set.ecc_pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long* eccCounts) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!eccCounts || errorType > NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counterType > NVML_AGGREGATE_ECC) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (!c.gpu->readSettings().ecc_current) return NVML_ERROR_NOT_SUPPORTED;  // counters need ECC on
  EccCounts e = eccAt(faultsOf(c), c.t);
  // Volatile and aggregate agree: every error in a scenario happens after the driver loaded.
  *eccCounts = errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? e.sbe : e.dbe;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                             nvmlEccCounterType_t counterType, nvmlMemoryLocation_t location,
                                             unsigned long long* count) {
  {
    GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
    if (location > NVML_MEMORY_LOCATION_SRAM) return NVML_ERROR_INVALID_ARGUMENT;
    // Hopper counts its on-chip memories as one SRAM location and answers nothing for the
    // units older GPUs counted one by one (a real H200 on 580.159.04); the older boards of the
    // simulator count L1, L2 and the register file, and no texture, CBU or SRAM location.
    const bool hopper = c.dev->profile->architecture >= NVML_DEVICE_ARCH_HOPPER;
    const bool counted =
        location == NVML_MEMORY_LOCATION_DEVICE_MEMORY ||
        (hopper ? location == NVML_MEMORY_LOCATION_SRAM : location <= NVML_MEMORY_LOCATION_REGISTER_FILE);
    if (!counted) return NVML_ERROR_NOT_SUPPORTED;
  }
  nvmlReturn_t rc = nvmlDeviceGetTotalEccErrors(device, errorType, counterType, count);
  // The scenario's ECC errors are all in device memory.
  if (rc == NVML_SUCCESS && location != NVML_MEMORY_LOCATION_DEVICE_MEMORY) *count = 0;
  return rc;
}

// SRAM's unique uncorrectable errors: answered where the SRAM location is counted (Hopper and
// later, ECC on), all zero because the scenario's ECC errors are all in device memory.
nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(nvmlDevice_t device, nvmlEccSramErrorStatus_v1_t* status) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!status) return NVML_ERROR_INVALID_ARGUMENT;
  if (status->version != nvmlEccSramErrorStatus_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (c.dev->profile->architecture < NVML_DEVICE_ARCH_HOPPER || !c.gpu->readSettings().ecc_current)
    return NVML_ERROR_NOT_SUPPORTED;
  *status = nvmlEccSramErrorStatus_v1_t{};
  status->version = nvmlEccSramErrorStatus_v1;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int* pageCount,
                                       unsigned long long* addresses) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!pageCount || cause > NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->retires_pages || !c.gpu->readSettings().ecc_current) return NVML_ERROR_NOT_SUPPORTED;
  RetiredPages r = retiredAt(faultsOf(c), c.t);
  unsigned n = cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? r.dbe : r.sbe;
  if (*pageCount < n) {
    *pageCount = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && !addresses) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned long long pages = static_cast<unsigned long long>(c.dev->profile->memory_mib) * 256;  // 4 KiB pages
  for (unsigned i = 0; i < n; ++i) {
    addresses[i] = (hash(c.world->scenario.seed, c.dev->index, Signal::kPage, cause * 100000ull + i) % pages) * 4096;
  }
  *pageCount = n;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t* isPending) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!isPending) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->retires_pages || !c.gpu->readSettings().ecc_current) return NVML_ERROR_NOT_SUPPORTED;
  *isPending = retiredAt(faultsOf(c), c.t).pending ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int* corrRows, unsigned int* uncRows,
                                       unsigned int* isPending, unsigned int* failureOccurred) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!corrRows || !uncRows || !isPending || !failureOccurred) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->row_remapping || !c.gpu->readSettings().ecc_current) return NVML_ERROR_NOT_SUPPORTED;
  RemappedRows r = remappedAt(faultsOf(c), c.t);
  *corrRows = r.correctable;
  *uncRows = r.uncorrectable;
  *isPending = r.pending ? 1 : 0;
  *failureOccurred = r.failure ? 1 : 0;
  return NVML_SUCCESS;
}

// The simulator's model of the histogram: every bank starts with all its spare rows (the profile's
// recorded bank count under "max"); each remapped row takes a spare from one more bank, which
// moves from "max" to "high". A profile with no recorded bank count answers NOT_SUPPORTED rather
// than invent one.
nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t device, nvmlRowRemapperHistogramValues_t* values) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!values) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned banks = c.dev->profile->remap_banks;
  if (!c.dev->profile->row_remapping || banks == 0 || !c.gpu->readSettings().ecc_current)
    return NVML_ERROR_NOT_SUPPORTED;
  const RemappedRows r = remappedAt(faultsOf(c), c.t);
  const unsigned used = std::min(banks, r.correctable + r.uncorrectable);
  *values = nvmlRowRemapperHistogramValues_t{banks - used, used, 0, 0, 0};
  return NVML_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// PCIe.

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* currLinkGen) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!currLinkGen) return NVML_ERROR_INVALID_ARGUMENT;
  *currLinkGen = sample<&StepState::pcie_gen>(c);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* currLinkWidth) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!currLinkWidth) return NVML_ERROR_INVALID_ARGUMENT;
  *currLinkWidth = sample<&StepState::pcie_width>(c);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGen) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!maxLinkGen) return NVML_ERROR_INVALID_ARGUMENT;
  *maxLinkGen = c.dev->profile->pcie_max_gen;
  return NVML_SUCCESS;
}

// The simulated boards sit in slots of their own generation, so the GPU's maximum is the link's.
nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* maxLinkGenDevice) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!maxLinkGenDevice) return NVML_ERROR_INVALID_ARGUMENT;
  *maxLinkGenDevice = c.dev->profile->pcie_max_gen;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* maxLinkWidth) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!maxLinkWidth) return NVML_ERROR_INVALID_ARGUMENT;
  *maxLinkWidth = c.dev->profile->pcie_max_width;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!value || counter > NVML_PCIE_UTIL_RX_BYTES) return NVML_ERROR_INVALID_ARGUMENT;
  *value = c.dev->physics->read(c.t, [counter](const StepState& s) {
    return static_cast<unsigned>(counter == NVML_PCIE_UTIL_TX_BYTES ? s.pcie_tx_kbs : s.pcie_rx_kbs);
  });
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int* value) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!value) return NVML_ERROR_INVALID_ARGUMENT;
  *value = static_cast<unsigned>(pcieReplaysAt(faultsOf(c), c.t));
  return NVML_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// NVLink.

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* isActive) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!isActive) return NVML_ERROR_INVALID_ARGUMENT;
  if (nvmlReturn_t rc = checkLink(c, link); rc != NVML_SUCCESS) return rc;
  *isActive = (sample<&StepState::nvlink_active>(c) >> link) & 1u ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link, unsigned int* version) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  if (nvmlReturn_t rc = checkLink(c, link); rc != NVML_SUCCESS) return rc;
  *version = c.dev->profile->nvlink_version;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t* pci) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  if (nvmlReturn_t rc = checkLink(c, link); rc != NVML_SUCCESS) return rc;
  const NvLinkConfig& l = c.world->scenario.nvlinks[c.dev->index][link];
  switch (l.remote) {
    case NvLinkRemote::kSwitch:
      *pci = switchPci(l.switch_index);
      return NVML_SUCCESS;
    case NvLinkRemote::kGpu:
      *pci = c.world->gpus[l.peer]->pci;
      return NVML_SUCCESS;
    case NvLinkRemote::kNone:
      break;
  }
  return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                 nvmlIntNvLinkDeviceType_t* type) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!type) return NVML_ERROR_INVALID_ARGUMENT;
  if (nvmlReturn_t rc = checkLink(c, link); rc != NVML_SUCCESS) return rc;
  switch (c.world->scenario.nvlinks[c.dev->index][link].remote) {
    case NvLinkRemote::kSwitch:
      *type = NVML_NVLINK_DEVICE_TYPE_SWITCH;
      break;
    case NvLinkRemote::kGpu:
      *type = NVML_NVLINK_DEVICE_TYPE_GPU;
      break;
    case NvLinkRemote::kNone:
      *type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
      break;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link, nvmlNvLinkErrorCounter_t counter,
                                             unsigned long long* counterValue) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!counterValue || counter > NVML_NVLINK_ERROR_DL_ECC_DATA) return NVML_ERROR_INVALID_ARGUMENT;
  if (nvmlReturn_t rc = checkLink(c, link); rc != NVML_SUCCESS) return rc;
  *counterValue = nvlinkErrorsAt(faultsOf(c), link, counter, c.t);
  return NVML_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// Field values.

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (valuesCount < 0 || (valuesCount > 0 && !values)) return NVML_ERROR_INVALID_ARGUMENT;
  const Device& d = *c.dev;
  const GpuProfile& P = *d.profile;
  const auto& faults = faultsOf(c);
  const StepState s = d.physics->at(c.t);
  const long long ts = c.world->epochUs(c.t);
  const bool ecc = d.readSettings().ecc_current;

  for (int i = 0; i < valuesCount; ++i) {
    nvmlFieldValue_t& v = values[i];
    v.timestamp = ts;
    v.latencyUsec = 0;
    v.nvmlReturn = NVML_SUCCESS;
    v.value.ullVal = 0;
    auto u32 = [&](unsigned x) {
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
      v.value.uiVal = x;
    };
    auto u64 = [&](unsigned long long x) {
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      v.value.ullVal = x;
    };
    auto unsupported = [&] {
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    };
    // NVLink counters: scopeId names a link, or any larger value means all links.
    auto nvlink_sum = [&](auto per_link) {
      if (P.nvlink_links == 0) return unsupported();
      unsigned long long sum = 0;
      for (unsigned l = 0; l < P.nvlink_links; ++l) {
        if (v.scopeId < P.nvlink_links && v.scopeId != l) continue;
        sum += per_link(l);
      }
      u64(sum);
    };
    switch (v.fieldId) {
      case NVML_FI_DEV_ECC_CURRENT:
      case NVML_FI_DEV_ECC_PENDING:
        if (!P.ecc_supported)
          unsupported();
        else
          u32(ecc ? 1 : 0);
        break;
      case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
      case NVML_FI_DEV_ECC_SBE_AGG_TOTAL:
        if (!ecc)
          unsupported();
        else
          u64(eccAt(faults, c.t).sbe);
        break;
      case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
      case NVML_FI_DEV_ECC_DBE_AGG_TOTAL:
        if (!ecc)
          unsupported();
        else
          u64(eccAt(faults, c.t).dbe);
        break;
      case NVML_FI_DEV_RETIRED_SBE:
        if (!ecc)
          unsupported();
        else
          u64(retiredAt(faults, c.t).sbe);
        break;
      case NVML_FI_DEV_RETIRED_DBE:
        if (!ecc)
          unsupported();
        else
          u64(retiredAt(faults, c.t).dbe);
        break;
      case NVML_FI_DEV_RETIRED_PENDING:
      case NVML_FI_DEV_RETIRED_PENDING_SBE:
      case NVML_FI_DEV_RETIRED_PENDING_DBE: {
        if (!ecc) {
          unsupported();
          break;
        }
        RetiredPages r = retiredAt(faults, c.t);
        bool pending = r.pending && (v.fieldId == NVML_FI_DEV_RETIRED_PENDING ||
                                     (v.fieldId == NVML_FI_DEV_RETIRED_PENDING_SBE ? r.sbe > 0 : r.dbe > 0));
        u32(pending ? 1 : 0);
        break;
      }
      case NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL:
        nvlink_sum([&](unsigned l) { return nvlinkErrorsAt(faults, l, NVML_NVLINK_ERROR_DL_CRC_FLIT, c.t); });
        break;
      case NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL:
        nvlink_sum([&](unsigned l) { return nvlinkErrorsAt(faults, l, NVML_NVLINK_ERROR_DL_CRC_DATA, c.t); });
        break;
      case NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL:
        nvlink_sum([&](unsigned l) { return nvlinkErrorsAt(faults, l, NVML_NVLINK_ERROR_DL_REPLAY, c.t); });
        break;
      case NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL:
        nvlink_sum([&](unsigned l) { return nvlinkErrorsAt(faults, l, NVML_NVLINK_ERROR_DL_RECOVERY, c.t); });
        break;
      case NVML_FI_DEV_NVLINK_BANDWIDTH_C0_TOTAL:
      case NVML_FI_DEV_NVLINK_BANDWIDTH_C1_TOTAL:
        nvlink_sum(
            [&](unsigned l) { return static_cast<unsigned long long>(s.nvlink_tx_kib[l] + s.nvlink_rx_kib[l]); });
        break;
      case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
        nvlink_sum([&](unsigned l) { return static_cast<unsigned long long>(s.nvlink_tx_kib[l]); });
        break;
      case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
        nvlink_sum([&](unsigned l) { return static_cast<unsigned long long>(s.nvlink_rx_kib[l]); });
        break;
      case NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON:
        if (P.nvlink_links == 0)
          unsupported();
        else
          u32(nvlinkSpeedMbps(P.nvlink_version));
        break;
      case NVML_FI_DEV_NVLINK_LINK_COUNT:
        if (P.nvlink_links == 0)
          unsupported();
        else
          u32(P.nvlink_links);
        break;
      case NVML_FI_DEV_GET_GPU_RECOVERY_ACTION:
        u32(recoveryActionAt(faults, c.t));
        break;
      case NVML_FI_DEV_POWER_INSTANT:
        u32(static_cast<unsigned>(std::lround(s.power_w * 1000)));
        break;
      case NVML_FI_DEV_MEMORY_TEMP:
        if (!P.hbm)
          unsupported();
        else
          u32(static_cast<unsigned>(std::lround(s.temp_mem)));
        break;
      case NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION: {
        double into_step = std::max(0.0, c.t - static_cast<double>(s.step) * kStepSeconds);
        u64(static_cast<unsigned long long>(s.energy_mj + s.power_w * into_step * 1000));
        break;
      }
      case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
        u64(pcieReplaysAt(faults, c.t));
        break;
      case NVML_FI_DEV_PCIE_REPLAY_ROLLOVER_COUNTER:
        u64(0);
        break;
      case NVML_FI_DEV_REMAPPED_COR:
      case NVML_FI_DEV_REMAPPED_UNC:
      case NVML_FI_DEV_REMAPPED_PENDING:
      case NVML_FI_DEV_REMAPPED_FAILURE: {
        if (!P.row_remapping || !ecc) {
          unsupported();
          break;
        }
        RemappedRows r = remappedAt(faults, c.t);
        u32(v.fieldId == NVML_FI_DEV_REMAPPED_COR       ? r.correctable
            : v.fieldId == NVML_FI_DEV_REMAPPED_UNC     ? r.uncorrectable
            : v.fieldId == NVML_FI_DEV_REMAPPED_PENDING ? (r.pending ? 1 : 0)
                                                        : (r.failure ? 1 : 0));
        break;
      }
      default:
        unsupported();
        break;
    }
  }
  return NVML_SUCCESS;
}

}  // extern "C"
