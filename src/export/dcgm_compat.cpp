#include "export/dcgm_compat.h"

#include <array>
#include <utility>

namespace gw::exporter::detail {
namespace {

constexpr auto G = fields::Type::Gauge;
constexpr auto C = fields::Type::Counter;

// Facts from dcgm-exporter's etc/default-counters.csv and etc/dcp-metrics-included.csv: metric,
// declared Prometheus type, help text. dcgm-exporter declares the PCIe throughput (a rate in KB/s),
// retired pages and remapped rows as counters; we keep its declarations in the Dcgm naming.
constexpr std::array<std::pair<std::string_view, DcgmMeta>, 42> kShipped = {{
    {"DCGM_FI_DEV_SM_CLOCK", {G, "SM clock frequency (in MHz)."}},
    {"DCGM_FI_DEV_MEM_CLOCK", {G, "Memory clock frequency (in MHz)."}},
    {"DCGM_FI_DEV_MEMORY_TEMP", {G, "Memory temperature (in C)."}},
    {"DCGM_FI_DEV_GPU_TEMP", {G, "GPU temperature (in C)."}},
    {"DCGM_FI_DEV_POWER_USAGE", {G, "Power draw (in W)."}},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", {C, "Total energy consumption since boot (in mJ)."}},
    {"DCGM_FI_DEV_PCIE_TX_THROUGHPUT", {C, "Total number of bytes transmitted through PCIe TX (in KB) via NVML."}},
    {"DCGM_FI_DEV_PCIE_RX_THROUGHPUT", {C, "Total number of bytes received through PCIe RX (in KB) via NVML."}},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", {C, "Total number of PCIe retries."}},
    {"DCGM_FI_DEV_GPU_UTIL", {G, "GPU utilization (in %)."}},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", {G, "Memory utilization (in %)."}},
    {"DCGM_FI_DEV_ENC_UTIL", {G, "Encoder utilization (in %)."}},
    {"DCGM_FI_DEV_DEC_UTIL", {G, "Decoder utilization (in %)."}},
    {"DCGM_FI_DEV_XID_ERRORS", {G, "Value of the last XID error encountered."}},
    {"DCGM_FI_DEV_FB_FREE", {G, "Framebuffer memory free (in MiB)."}},
    {"DCGM_FI_DEV_FB_USED", {G, "Framebuffer memory used (in MiB)."}},
    {"DCGM_FI_DEV_FB_RESERVED", {G, "Framebuffer memory reserved (in MiB)."}},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", {C, "Total number of single-bit volatile ECC errors."}},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", {C, "Total number of double-bit volatile ECC errors."}},
    {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", {C, "Total number of single-bit persistent ECC errors."}},
    {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", {C, "Total number of double-bit persistent ECC errors."}},
    {"DCGM_FI_DEV_RETIRED_SBE", {C, "Total number of retired pages due to single-bit errors."}},
    {"DCGM_FI_DEV_RETIRED_DBE", {C, "Total number of retired pages due to double-bit errors."}},
    {"DCGM_FI_DEV_RETIRED_PENDING", {C, "Total number of pages pending retirement."}},
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", {C, "Total number of NVLink flow-control CRC errors."}},
    {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", {C, "Total number of NVLink data CRC errors."}},
    {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", {C, "Total number of NVLink retries."}},
    {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", {C, "Total number of NVLink recovery errors."}},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", {C, "Total number of NVLink bandwidth counters for all lanes"}},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", {C, "Number of remapped rows for uncorrectable errors"}},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", {C, "Number of remapped rows for correctable errors"}},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", {G, "Whether remapping of rows has failed"}},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", {G, "Ratio of time the graphics engine is active."}},
    {"DCGM_FI_PROF_SM_ACTIVE", {G, "The ratio of cycles an SM has at least 1 warp assigned."}},
    {"DCGM_FI_PROF_SM_OCCUPANCY", {G, "The ratio of number of warps resident on an SM."}},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {G, "Ratio of cycles the tensor (HMMA) pipe is active."}},
    {"DCGM_FI_PROF_DRAM_ACTIVE",
     {G, "Ratio of cycles the device memory interface is active sending or receiving data."}},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", {G, "Ratio of cycles the fp64 pipes are active."}},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", {G, "Ratio of cycles the fp32 pipes are active."}},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", {G, "Ratio of cycles the fp16 pipes are active."}},
    {"DCGM_FI_PROF_PCIE_TX_BYTES",
     {G,
      "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in "
      "bytes per second."}},
    {"DCGM_FI_PROF_PCIE_RX_BYTES",
     {G,
      "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes "
      "per second."}},
}};

}  // namespace

std::optional<DcgmMeta> dcgmExporterMeta(std::string_view dcgm_name) {
  for (const auto& [name, meta] : kShipped)
    if (name == dcgm_name) return meta;
  return std::nullopt;
}

DcgmValueKind dcgmValueKind(int dcgm_id) {
  // DCGM_FT_DOUBLE fields: power usage (155), instant power (157), the power limits (160-164),
  // and the profiling fields (DCGM_FI_PROF_*, 1001-1099). The rest are INT64, the recovery action
  // (1523) among them.
  if (dcgm_id == 155 || dcgm_id == 157 || (dcgm_id >= 160 && dcgm_id <= 164) || (dcgm_id >= 1001 && dcgm_id < 1100))
    return DcgmValueKind::Double;
  return DcgmValueKind::Int64;
}

}  // namespace gw::exporter::detail
