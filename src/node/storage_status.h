// The data folder's storage health (platform/storage_health.h) as the agent shows it: the
// /healthz verdict, and the series of /metrics. Files are named by their place in the folder;
// diag reports (one file each) count as "diag", files outside the folder (the command sink's) as
// "other", so the metric's label values stay few.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "export/prometheus.h"
#include "node/data_dir.h"
#include "store/store_types.h"

namespace gw::node {

// "" while every file takes writes; else what /healthz says, one line per failing file, e.g.
// "disk full: cannot write /var/lib/gpuwarden/history.db: database or disk is full (...)".
std::string storageProblem();

// {"status": "degraded", "reason": <storageProblem()>, "storage": [{"path", "error", "since"}]}.
// /healthz answers it with 200: a full disk loses history, not the agent's readings, so a probe
// must not restart the agent and Prometheus keeps scraping /metrics.
nlohmann::json storageStatusJson();

// For exporter::renderStorageMetrics. `history`: the history store's stats, null without one.
exporter::StorageSeries storageSeries(const DataDir& dir, const store::Stats* history);

}  // namespace gw::node
