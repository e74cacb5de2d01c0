// The fleet view over Prometheus (docs/fleet.md): what every agent exports, read back from the
// Prometheus that scrapes them, as one picture — nodes, GPUs, idle GPUs, unhealthy GPUs with
// their open findings, the slowest GPU of each job against its peers, the top consumers.
// Prometheus is the engine users already run when they outgrow one node; gpuwarden adds no
// second collector.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace gw::cluster::fleet {

// One element of an instant vector.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Bounds on what a Prometheus answer may hold before it is trusted.
inline constexpr std::size_t kMaxAnswerBytes = 32 << 20;
inline constexpr std::size_t kMaxSamples = 200'000;
inline constexpr std::size_t kMaxLabels = 64;
inline constexpr std::size_t kMaxLabelBytes = 1024;

// The `data.result` of a /api/v1/query answer of resultType "vector"; an error names what is
// wrong (Prometheus' own error message when status is "error").
Result<std::vector<Sample>> parseVector(const std::string& body);

// Which metric names and labels the agents use (their metrics.naming; the host label may be
// renamed with metrics.host_label).
struct Naming {
  bool dcgm = true;
  std::string host_label = "Hostname";
  std::string util_query(const std::string& window) const;   // mean utilisation in %, per GPU
  std::string power_query(const std::string& window) const;  // mean power in W, per GPU
  std::string uuid_label() const { return dcgm ? "UUID" : "uuid"; }
  std::string model_label() const { return dcgm ? "modelName" : "model"; }
  std::string mig_label() const { return dcgm ? "GPU_I_ID" : "gpu_instance_id"; }
};

struct Inputs {
  std::vector<Sample> health;    // gpuwarden_gpu_health == 1 (one per GPU, its state)
  std::vector<Sample> findings;  // gpuwarden_gpu_finding == 1
  std::vector<Sample> util;      // Naming::util_query
  std::vector<Sample> power;     // Naming::power_query
};

struct Options {
  Naming naming;
  std::string window = "5m";
  double idle_util_pct = 2;             // health's idle_util: at or below, the GPU is idle
  double straggler_util_pct = 5;        // health's straggler_idle_util
  double straggler_peer_util_pct = 50;  // health's straggler_peer_util
  std::size_t top = 10;
};

// docs/fleet.md: {"window", "naming", "host_label", "totals": {nodes, gpus, idle, unhealthy},
// "nodes": [{node, gpus, idle, unhealthy}], "unhealthy": [{node, gpu, uuid, model, state,
// findings: [{rule, severity}]}], "idle": [{node, gpu, uuid, utilization_pct}], "jobs": [{job,
// label, nodes, gpus, utilization_pct, power_w, slowest: {node, gpu, uuid, utilization_pct,
// peers_median_pct, straggler}}], "top": [jobs by power, at most Options::top]}.
nlohmann::json buildReport(const Inputs& in, const Options& o);
std::string renderText(const nlohmann::json& report);

// Asks Prometheus at `base_url` ("http://prometheus:9090", a path prefix allowed) for one instant
// vector. Bounded (kMaxAnswerBytes, the deadline); errors name the query and what went wrong.
Result<std::vector<Sample>> query(const std::string& base_url, const std::string& promql,
                                  std::chrono::milliseconds deadline);

}  // namespace gw::cluster::fleet
