#include "health/log_scan.h"

#include <utility>

#include "events/line_reader.h"

namespace gw::health {

LogScanTotals scanLogStream(std::istream& in, const std::function<void(events::KernelEvent&&)>& on_event) {
  LogScanTotals scan;
  events::forEachBoundedLine(in, [&](std::string_view line, bool truncated) {
    ++scan.lines;
    if (truncated) ++scan.truncated;
    auto parsed = events::parseKernelLine(line);
    if (!parsed.ok()) {
      ++scan.malformed;
      if (scan.firstErrors.size() < LogScanTotals::kMaxErrorsKept) {
        scan.firstErrors.push_back({scan.lines, parsed.error()});
      }
      return;
    }
    if (!parsed->has_value()) {
      ++scan.irrelevant;
      return;
    }
    if (truncated) (*parsed)->raw += events::kTruncatedMarker;
    on_event(std::move(**parsed));
  });
  return scan;
}

LogScan parseLogFile(std::istream& in) {
  LogScan scan;
  static_cast<LogScanTotals&>(scan) =
      scanLogStream(in, [&scan](events::KernelEvent&& e) { scan.events.push_back(std::move(e)); });
  return scan;
}

}  // namespace gw::health
