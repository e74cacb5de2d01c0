// Hand-built sampler views for the exporter's tests and benchmark: an HGX H100 node with 8 GPUs,
// one MIG device on GPU 0, GPU 5 lost, GPU 6 stalled, and GPU 3 without a memory temperature.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collect/gpu_view.h"
#include "export/prometheus.h"
#include "fields/catalog.h"

namespace gw::exporter::testing {

inline constexpr std::int64_t kNowMs = 1'700'000'000'000;
inline constexpr const char* kModel = "NVIDIA H100 80GB HBM3";
inline constexpr const char* kBusIds[8] = {"00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0",
                                           "00000000:5D:00.0", "00000000:9A:00.0", "00000000:AB:00.0",
                                           "00000000:BA:00.0", "00000000:DB:00.0"};

inline std::string gpuUuid(unsigned i) { return "GPU-5e1c7a2b-8f3d-4c6e-9a0b-1d2e3f4a5b6" + std::to_string(i); }
inline const std::string kMigUuid = "MIG-0a1b2c3d-4e5f-5a6b-8c7d-9e0f1a2b3c4d";

// A plausible catalog value (in the catalog's unit) for a field on GPU i.
inline double sampleValue(const fields::Field& f, unsigned i) {
  const std::string_view k = f.key;
  if (k == "gpu_temp") return 45 + i;
  if (k == "memory_temp") return 52 + i;
  if (k == "power_usage") return i == 0 ? 412.345 : 300.5 + i;
  if (k == "total_energy") return 123456789 + i;
  if (k == "gpu_util") return 57;
  if (k == "mem_copy_util") return 31;
  if (k == "fb_total") return 81559;
  if (k == "fb_used") return 12345;
  if (k == "fb_free") return 81559 - 12345 - 568;
  if (k == "fb_reserved") return 568;
  if (k == "sm_clock" || k == "graphics_clock") return 1980;
  if (k == "mem_clock" || k == "max_mem_clock" || k == "app_mem_clock") return 2619;
  if (k == "max_sm_clock" || k == "app_sm_clock") return 1980;
  if (k == "video_clock") return 1545;
  if (k == "power_limit" || k == "enforced_power_limit" || k == "power_default_limit" || k == "power_max_limit")
    return 700;
  if (k == "power_min_limit") return 200;
  if (k == "pstate") return 0;
  if (k == "fan_speed") return 0;
  if (k == "clock_event_reasons") return 0;
  if (k == "slowdown_temp") return 90;
  if (k == "shutdown_temp") return 92;
  if (k == "pcie_link_gen" || k == "pcie_max_link_gen") return 5;
  if (k == "pcie_link_width" || k == "pcie_max_link_width") return 16;
  if (k == "pcie_tx_throughput") return 1234;
  if (k == "pcie_rx_throughput") return 5678;
  if (k == "ecc_mode") return 1;
  if (k == "nvlink_active_links") return 18;
  if (k == "persistence_mode") return 1;
  return 0;  // error counters, retired pages, remapped rows, flags
}

inline collect::GpuView makeGpu(unsigned i) {
  collect::GpuView g;
  g.id.index = i;
  g.id.uuid = gpuUuid(i);
  g.id.name = kModel;
  g.id.pci_bus_id = kBusIds[i % 8];
  g.id.device = "nvidia" + std::to_string(i);
  g.state = collect::GpuState::Up;
  g.last_sample_ms = kNowMs - 1500;
  g.samples = 1000;
  const auto all = fields::all();
  g.values.resize(all.size());
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k].read_number == nullptr) continue;
    g.values[k] = {sampleValue(all[k], i), kNowMs - 1500, true};
  }
  return g;
}

inline collect::FieldValue& valueOf(collect::GpuView& g, std::string_view key) {
  return g.values[fields::indexOf(*fields::findByKey(key))];
}

// 8 GPUs + the MIG device (last).
inline std::vector<collect::GpuView> makeNode() {
  std::vector<collect::GpuView> v;
  for (unsigned i = 0; i < 8; ++i) v.push_back(makeGpu(i));
  v[0].id.uuid = gpuUuid(0);
  valueOf(v[0], "mig_mode").value = 1;

  valueOf(v[3], "memory_temp").valid = false;  // unsupported on this board

  v[5].state = collect::GpuState::Lost;
  v[5].state_reason = "nvmlDeviceGetTemperature: GPU is lost";
  v[5].nvml_errors = 17;
  v[5].last_sample_ms = kNowMs - 60'000;

  v[6].state = collect::GpuState::Stalled;
  v[6].state_reason = "nvmlDeviceGetPowerUsage exceeded 2 s deadline";
  v[6].last_sample_ms = kNowMs - 7'250;

  collect::GpuView mig;
  mig.id.index = 0;
  mig.id.uuid = kMigUuid;
  mig.id.name = "NVIDIA H100 80GB HBM3 MIG 1g.10gb";
  mig.id.pci_bus_id = kBusIds[0];
  mig.id.device = "nvidia0";
  mig.id.is_mig = true;
  mig.id.parent_uuid = gpuUuid(0);
  mig.id.mig_profile = "1g.10gb";
  mig.id.gpu_instance_id = 5;
  mig.id.compute_instance_id = 0;
  mig.state = collect::GpuState::Up;
  mig.last_sample_ms = kNowMs - 1500;
  mig.values.resize(fields::all().size());
  mig.values[fields::indexOf(*fields::findByKey("fb_total"))] = {9984, kNowMs, true};
  mig.values[fields::indexOf(*fields::findByKey("fb_used"))] = {9728, kNowMs, true};
  v.push_back(std::move(mig));
  return v;
}

inline collect::AgentStats makeAgent() {
  collect::AgentStats a;
  a.hostname = "node1";
  a.driver_version = "550.54.15";
  a.nvml_version = "12.550.54.15";
  a.cuda_driver_version = 12040;
  a.started_ms = kNowMs - 3'600'000;
  a.nvml_reinits = 2;
  a.driver_up = true;
  return a;
}

// The health service's results for makeNode(): GPU 2 warning, GPU 5 (lost) fatal, the others
// healthy; Xid 79 on GPU 5; Xid 13 on GPU 2 counted under its UUID and under its bare index (the
// kernel log knew only the index), which are one series; Xid 48 of a GPU no longer in the node.
inline HealthSeries makeHealth() {
  HealthSeries h;
  h.states = {"healthy", "warning", "critical", "fatal", "unknown"};
  for (unsigned i = 0; i < 8; ++i) h.gpus.push_back({gpuUuid(i), i == 2 ? "warning" : i == 5 ? "fatal" : "healthy"});
  h.open_incidents = {{"info", 0}, {"warning", 1}, {"critical", 0}, {"fatal", 1}};
  h.xids = {{5, gpuUuid(5), 79, 1}, {2, gpuUuid(2), 13, 2}, {2, "", 13, 1}, {9, "GPU-gone", 48, 4}};
  // Open incidents: GPU 5's and GPU 2's; one of a GPU no longer in the node is left out.
  h.findings = {
      {gpuUuid(5), "gpu_lost", "fatal"}, {gpuUuid(2), "thermal_slowdown", "warning"}, {"GPU-gone", "xid", "critical"}};
  return h;
}

// A whole page with the health series, as the agent assembles it.
inline void renderPage(std::string& out, const std::vector<collect::GpuView>& gpus, const collect::AgentStats& agent,
                       const SelfMetrics& self, const ExportOptions& o, Format f,
                       const HealthSeries& health = makeHealth()) {
  renderSampledMetrics(out, gpus, agent, o, f, self.version);
  renderHealthMetrics(out, health, gpus, agent, o, f);
  renderScrapeMetrics(out, gpus, agent, self, o, f);
}

}  // namespace gw::exporter::testing
