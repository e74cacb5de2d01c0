// dcgm-exporter's counters file (its -f / --collectors, e.g. etc/default-counters.csv), read so
// that an existing dcgm-exporter setup selects the same fields here: one field per line,
// "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).", '#' starts a comment.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gw::server {

inline constexpr std::size_t kMaxCountersFileBytes = 256 << 10;
inline constexpr std::size_t kMaxCountersLines = 4096;

struct CountersFile {
  std::vector<std::string> fields;  // catalog keys, in the file's order, without repeats
  // "DCGM_FI_DRIVER_VERSION, label, …": dcgm-exporter then puts the driver version on each series.
  bool driver_version_label = false;
  // DCGM fields gpuwarden does not collect (named once in the agent's log, not an error: the file
  // was written for dcgm-exporter), as "FILE:LINE NAME".
  std::vector<std::string> skipped;
};

// A malformed line (no type column, a type other than gauge / counter / label, a field gpuwarden
// has that is not numeric given as gauge or counter) is an error naming FILE:LINE.
Result<CountersFile> parseCountersFile(std::string_view text, const std::string& filename);
Result<CountersFile> loadCountersFile(const std::string& path);

}  // namespace gw::server
