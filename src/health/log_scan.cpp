#include "health/log_scan.h"

#include <utility>

namespace gw::health {

LogScan parseLogFile(std::istream& in) {
  LogScan scan;
  std::string line;
  while (std::getline(in, line)) {
    ++scan.lines;
    auto parsed = events::parseKernelLine(line);
    if (!parsed.ok()) {
      ++scan.malformed;
      if (scan.firstErrors.size() < LogScan::kMaxErrorsKept) {
        scan.firstErrors.push_back({scan.lines, parsed.error()});
      }
      continue;
    }
    if (!parsed->has_value()) {
      ++scan.irrelevant;
      continue;
    }
    scan.events.push_back(std::move(**parsed));
  }
  return scan;
}

}  // namespace gw::health
