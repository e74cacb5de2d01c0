// The reference inputs of the pinned on-disk formats (tests/golden/, docs/testing.md) and the
// writers that turn them into files with today's code.
//
// FROZEN: every committed golden was written from these inputs, and the goldens of every version
// are compared against them. Changing an input makes the old goldens fail; to cover something new,
// add a new input (and, for the current version, a new golden file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "alert/alert.h"
#include "common/result.h"
#include "store/store_types.h"

namespace gw::golden {

// 2026-01-01T00:00:00Z: the time base of the history, incident and alert inputs.
inline constexpr int64_t kT0 = 1'767'225'600'000;

// ---- Chunks (store/chunk_codec.h): tests/golden/chunk-v<format>-<name>.bin ----
struct ChunkRow {
  int64_t ts;
  std::vector<double> values;
};
struct ChunkInput {
  std::string name;
  int columns;
  std::vector<ChunkRow> rows;
};
std::vector<ChunkInput> chunkInputs();
// Today's encoding of `in`.
std::vector<uint8_t> encodeChunk(const ChunkInput& in);

// ---- History (store/store.h): tests/golden/history-v<schema>.db ----
struct HistorySample {
  int64_t ts;
  double value;
};
struct SeriesInput {
  std::string gpu_uuid, field;
  std::vector<HistorySample> samples;
};
std::vector<SeriesInput> historyInputs();
// The writer's options: small chunks so that every series has sealed and open chunks.
store::StoreOptions historyOptions(const std::string& path);
// The one compaction: every step before it is downsampled; full resolution older than
// raw_retention (24 h) before it is deleted (the "retired" series keeps only downsampled rows).
inline constexpr int64_t kHistoryCompactAt = kT0 + 12 * 3'600'000;
inline constexpr int64_t kHistoryStepMs = 60'000;
Status writeHistoryDb(const std::string& path);

// ---- Incidents (health/incidents.h): tests/golden/incidents-v<schema>.db ----
// Two agent lifetimes of findings, acknowledgements and resolutions; the incidents they leave are
// listed, literally, in golden_test.cpp.
Status writeIncidentsDb(const std::string& path);

// ---- Alert queue (alert/queue.h): tests/golden/alerts-v<schema>.db ----
// The alerts submitted; what the queue holds afterwards is listed in golden_test.cpp.
alert::Alert goldenAlert(int which);  // 0: A firing, 1: B firing, 2: A resolved, 3: C firing
Status writeAlertsDb(const std::string& path);

// ---- Jobs (node/job_store.h): tests/golden/jobs-v<schema>.db ----
// Job 17 (Slurm, alice) on both golden GPUs for 4 s with an Xid 79, ended; job 18 (api) running on
// GPU-golden-b, checkpointed. What they hold is listed in golden_test.cpp.
Status writeJobsDb(const std::string& path);

// ---- Records (node/records.h): tests/golden/records-v<schema>.db ----
// Two install records (the second a driver change) and a setting change.
Status writeRecordsDb(const std::string& path);

}  // namespace gw::golden
