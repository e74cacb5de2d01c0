// Scan a whole kernel log (a dmesg / journalctl dump, or /dev/kmsg records one per line) for
// NVIDIA events. Used by `gpuwarden xid scan FILE`, which streams (scanLogStream).
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "events/kmsg_parser.h"

namespace gw::health {

struct MalformedLine {
  std::size_t lineNumber = 0;  // 1-based
  std::string error;
};

struct LogScanTotals {
  std::size_t lines = 0;                   // lines read
  std::size_t irrelevant = 0;              // not NVIDIA events
  std::size_t malformed = 0;               // NVIDIA lines that could not be parsed (skipped)
  std::size_t truncated = 0;               // lines cut at events::kMaxKernelLineBytes
  std::vector<MalformedLine> firstErrors;  // the first kMaxErrorsKept of them
  static constexpr std::size_t kMaxErrorsKept = 20;
};

struct LogScan : LogScanTotals {
  std::vector<events::KernelEvent> events;  // in file order
};

// Streams `in` line by line (each line cut at events::kMaxKernelLineBytes, its raw text then
// ending with events::kTruncatedMarker), handing every event to on_event as it is read: memory
// does not grow with the file.
LogScanTotals scanLogStream(std::istream& in, const std::function<void(events::KernelEvent&&)>& on_event);

// Every event kept (tests, small logs).
LogScan parseLogFile(std::istream& in);

}  // namespace gw::health
