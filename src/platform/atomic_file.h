// Whole-file replacement that a crash or a concurrent reader can never see half done.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/result.h"

namespace gw::platform {

// Replaces (or creates) `path` with `bytes`: writes a temporary file in the same folder, checks
// that every byte was written, fsyncs it, renames it over `path` and fsyncs the folder, so the
// file holds the old bytes or the new ones, also after a power cut. `mode` is as for open(2)
// (the umask applies). On failure the temporary file is removed, `path` is untouched, and the
// Status (origin Errno) names the path and the reason. Not for logs that grow by appending.
// Every outcome is reported to storageHealth() (platform/storage_health.h).
Status writeFileAtomic(const std::string& path, std::string_view bytes, mode_t mode = 0644);

// How many temporary names one write tries when the name is taken (a leftover of a crashed run
// with the same pid) before it gives up with EEXIST.
inline constexpr int kTemporaryNameTries = 64;

// Appends `bytes` (one or more whole records) to `path`, creating it. Every write and the close
// are checked; a record written only in part is cut off again (the file keeps its old length), so
// a full disk never leaves half a line for the next reader to glue to the next one. Not synced
// (an append-only log is allowed to lose its tail in a power cut, never to hold garbage). Outcomes
// are reported to storageHealth().
Status appendToFile(const std::string& path, std::string_view bytes, mode_t mode = 0644);

}  // namespace gw::platform
