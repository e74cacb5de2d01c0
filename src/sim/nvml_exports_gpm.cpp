// GPU Performance Monitoring (GPM): a sample holds the simulated time and the GPU's activity
// integrals at that time (physics.h); a metric is the change between two samples over the time
// between them, so it is the workload's average over exactly that interval, as on real hardware.
// Hopper and newer profiles only; a MIG instance is sampled through its parent and GPU instance id.
#include "sim/export_api.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "sim/workload.h"
#include "sim/world.h"

using namespace gw::sim;

namespace {

constexpr std::uint32_t kSampleMagic = 0x53475747;  // "GWGS"
constexpr double kKiB = 1024.0;

struct SimGpmSample {
  std::uint32_t magic = kSampleMagic;
  bool filled = false;
  const Device* gpu = nullptr;  // the physical GPU
  unsigned slot = 0;            // 0 the whole GPU, 1 + i MIG instance i
  double t = 0;
  double active_s = 0, dram_s = 0;  // integrals, fraction-seconds
  double pcie_tx_kb = 0, pcie_rx_kb = 0;
  double nvlink_tx_kib = 0, nvlink_rx_kib = 0;  // over every link
};

SimGpmSample* fromHandle(nvmlGpmSample_t h) {
  auto* s = reinterpret_cast<SimGpmSample*>(h);
  return s && s->magic == kSampleMagic ? s : nullptr;
}

bool gpmCapable(const Device& d) {
  return d.profile->architecture >= NVML_DEVICE_ARCH_HOPPER && d.profile->architecture != NVML_DEVICE_ARCH_UNKNOWN;
}

// The integrals at c.t: the step's start plus its rate over the part of the step elapsed.
void fill(const Call& c, unsigned slot, SimGpmSample* out) {
  out->gpu = c.gpu;
  out->slot = slot;
  out->t = c.t;
  c.gpu->physics->read(c.t, [&](const StepState& s) {
    const double into = std::max(0.0, c.t - static_cast<double>(s.step) * kStepSeconds);
    out->active_s = s.gpm_active_s[slot] + s.gpm_active[slot] * into;
    out->dram_s = s.gpm_dram_s[slot] + s.gpm_dram[slot] * into;
    out->pcie_tx_kb = s.pcie_tx_kb + s.pcie_tx_kbs * into;
    out->pcie_rx_kb = s.pcie_rx_kb + s.pcie_rx_kbs * into;
    double tx = 0, rx = 0;
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; ++l) {
      const bool on = (s.nvlink_active >> l) & 1u;
      tx += s.nvlink_tx_kib[l] + (on ? s.nvlink_rate_kibs * into : 0);
      rx += s.nvlink_rx_kib[l] + (on ? s.nvlink_rate_kibs * 0.97 * into : 0);
    }
    out->nvlink_tx_kib = tx;
    out->nvlink_rx_kib = rx;
    return 0;
  });
  out->filled = true;
}

char* text(const char* s) { return const_cast<char*>(s); }  // nvml.h's fields are char*, never written

}  // namespace

extern "C" {

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* gpmSupport) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!gpmSupport) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  gpmSupport->isSupportedDevice = gpmCapable(*c.dev) ? 1 : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* gpmSample) {
  GW_ENTER_SYSTEM();
  if (!gpmSample) return NVML_ERROR_INVALID_ARGUMENT;
  auto* s = new (std::nothrow) SimGpmSample();
  if (!s) return NVML_ERROR_MEMORY;
  *gpmSample = reinterpret_cast<nvmlGpmSample_t>(s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
  SimGpmSample* s = fromHandle(gpmSample);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  s->magic = 0;  // a second free of the same handle is then refused, not a double delete
  delete s;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
  // A MIG device is sampled through its parent (nvmlGpmMigSampleGet).
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  SimGpmSample* s = fromHandle(gpmSample);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (!gpmCapable(*c.dev)) return NVML_ERROR_NOT_SUPPORTED;
  fill(c, 0, s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  SimGpmSample* s = fromHandle(gpmSample);
  if (!s) return NVML_ERROR_INVALID_ARGUMENT;
  if (!gpmCapable(*c.dev)) return NVML_ERROR_NOT_SUPPORTED;
  if (!c.dev->mig_current.load()) return NVML_ERROR_NOT_SUPPORTED;
  const auto& instances = c.dev->cfg->mig_instances;
  for (std::size_t i = 0; i < instances.size() && i + 1 < kGpmSlots; ++i) {
    if (instances[i].gpu_instance_id != gpuInstanceId) continue;
    fill(c, static_cast<unsigned>(i + 1), s);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* metricsGet) {
  GW_ENTER_SYSTEM();
  if (!metricsGet) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlGpmMetricsGet_t& g = *metricsGet;
  if (g.version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (g.numMetrics > NVML_GPM_METRIC_MAX) return NVML_ERROR_INVALID_ARGUMENT;
  const SimGpmSample* a = fromHandle(g.sample1);
  const SimGpmSample* b = fromHandle(g.sample2);
  if (!a || !b || !a->filled || !b->filled || a->gpu != b->gpu || a->slot != b->slot) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const double dt = b->t - a->t;
  if (!(dt > 0)) return NVML_ERROR_INVALID_ARGUMENT;  // same instant, or the samples swapped
  const Workload& w = a->gpu->cfg->workload;
  const GpmMix mix = gpmMix(w);
  const double active = 100 * (b->active_s - a->active_s) / dt;  // percent, as GPM answers
  const double dram = 100 * (b->dram_s - a->dram_s) / dt;
  const bool whole = a->slot == 0;
  for (unsigned i = 0; i < g.numMetrics; ++i) {
    nvmlGpmMetric_t& m = g.metrics[i];
    m.nvmlReturn = NVML_SUCCESS;
    m.value = 0;
    m.metricInfo = {};
    auto set = [&](double v, const char* short_name, const char* long_name, const char* unit) {
      m.value = v;
      m.metricInfo.shortName = text(short_name);
      m.metricInfo.longName = text(long_name);
      m.metricInfo.unit = text(unit);
    };
    switch (m.metricId) {
      case NVML_GPM_METRIC_GRAPHICS_UTIL:
        set(active, "gr_util", "graphics engine utilization", "%");
        break;
      case NVML_GPM_METRIC_SM_UTIL:
        set(active * mix.sm, "sm_util", "SM utilization", "%");
        break;
      case NVML_GPM_METRIC_SM_OCCUPANCY:
        set(active * mix.sm * mix.occupancy, "sm_occupancy", "SM occupancy", "%");
        break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
        set(active * mix.tensor, "any_tensor_util", "any tensor utilization", "%");
        break;
      case NVML_GPM_METRIC_DRAM_BW_UTIL:
        set(dram, "dram_bw_util", "DRAM bandwidth utilization", "%");
        break;
      case NVML_GPM_METRIC_FP64_UTIL:
        set(active * mix.fp64, "fp64_util", "FP64 utilization", "%");
        break;
      case NVML_GPM_METRIC_FP32_UTIL:
        set(active * mix.fp32, "fp32_util", "FP32 utilization", "%");
        break;
      case NVML_GPM_METRIC_FP16_UTIL:
        set(active * mix.fp16, "fp16_util", "FP16 utilization", "%");
        break;
      // Bus traffic belongs to the whole GPU: a GPU instance has no PCIe or NVLink of its own.
      case NVML_GPM_METRIC_PCIE_TX_PER_SEC:
        if (whole)
          set((b->pcie_tx_kb - a->pcie_tx_kb) / kKiB / dt, "pcie_tx", "PCIe TX", "MiB/sec");
        else
          m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
      case NVML_GPM_METRIC_PCIE_RX_PER_SEC:
        if (whole)
          set((b->pcie_rx_kb - a->pcie_rx_kb) / kKiB / dt, "pcie_rx", "PCIe RX", "MiB/sec");
        else
          m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
      case NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC:
        if (whole)
          set((b->nvlink_tx_kib - a->nvlink_tx_kib) / kKiB / dt, "nvlink_tx", "NVLink TX", "MiB/sec");
        else
          m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
      case NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC:
        if (whole)
          set((b->nvlink_rx_kib - a->nvlink_rx_kib) / kKiB / dt, "nvlink_rx", "NVLink RX", "MiB/sec");
        else
          m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
      default:
        m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        break;
    }
  }
  return NVML_SUCCESS;
}

}  // extern "C"
