// The schema and the SQL shared between connections. Values are always bound, never spliced in.
#include "store/store_impl.h"

namespace gw::store {

// chunks: full-resolution samples, one row per chunk of one series. The open chunk of a series
// is rewritten in place (same key) at every flush until it is full.
// rollups: downsampled steps, chunks of 4-column samples (min, max, sum, count) keyed the same way.
// Both are WITHOUT ROWID so the primary key is the table: no second index to store.
const char* const kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS series (
  id INTEGER PRIMARY KEY,
  gpu_uuid TEXT NOT NULL,
  field TEXT NOT NULL,
  rolled_until INTEGER NOT NULL,
  UNIQUE (gpu_uuid, field)
);
CREATE TABLE IF NOT EXISTS chunks (
  series_id INTEGER NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,
  count INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (series_id, start_ms)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollups (
  series_id INTEGER NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL,
  count INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (series_id, start_ms)
) WITHOUT ROWID;
)sql";

// Chunks of a series overlapping [?2, ?3]. Chunks of one series never overlap, so the first one
// that can reach ?2 is the last one starting at or before it: this keeps the scan on the key.
const char* const kScanChunksSql =
    "SELECT start_ms, end_ms, count, data FROM chunks WHERE series_id = ?1 AND start_ms >= "
    "coalesce((SELECT max(start_ms) FROM chunks WHERE series_id = ?1 AND start_ms <= ?2), ?2) "
    "AND start_ms <= ?3 ORDER BY start_ms";

const char* const kScanRollupsSql =
    "SELECT start_ms, end_ms, count, data FROM rollups WHERE series_id = ?1 AND start_ms >= "
    "coalesce((SELECT max(start_ms) FROM rollups WHERE series_id = ?1 AND start_ms <= ?2), ?2) "
    "AND start_ms <= ?3 ORDER BY start_ms";

}  // namespace gw::store
