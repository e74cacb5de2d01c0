// Scan a whole kernel log (a dmesg / journalctl dump, or /dev/kmsg records one per line) for
// NVIDIA events. Used by `gpuwarden xid scan FILE`.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

#include "events/kmsg_parser.h"

namespace gw::health {

struct MalformedLine {
  std::size_t lineNumber = 0;  // 1-based
  std::string error;
};

struct LogScan {
  std::vector<events::KernelEvent> events;  // in file order
  std::size_t lines = 0;                    // lines read
  std::size_t irrelevant = 0;               // not NVIDIA events
  std::size_t malformed = 0;                // NVIDIA lines that could not be parsed (skipped)
  std::vector<MalformedLine> firstErrors;   // the first kMaxErrorsKept of them
  static constexpr std::size_t kMaxErrorsKept = 20;
};

LogScan parseLogFile(std::istream& in);

}  // namespace gw::health
