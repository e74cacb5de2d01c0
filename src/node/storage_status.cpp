#include "node/storage_status.h"

#include <cstring>
#include <filesystem>
#include <map>

#include "platform/clock.h"
#include "platform/storage_health.h"

namespace gw::node {

std::string storageProblem() { return platform::storageHealth().problem(); }

nlohmann::json storageStatusJson() {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : platform::storageHealth().snapshot()) {
    if (!f.failing) continue;
    files.push_back({{"path", f.path},
                     {"error", std::strerror(f.err)},
                     {"reason", f.reason},
                     {"since", platform::formatRfc3339(f.failing_since_ms)},
                     {"write_errors", f.write_errors}});
  }
  return {{"status", files.empty() ? "ok" : "degraded"}, {"reason", storageProblem()}, {"storage", files}};
}

exporter::StorageSeries storageSeries(const DataDir& dir, const store::Stats* history) {
  namespace fs = std::filesystem;
  exporter::StorageSeries out;
  std::map<std::string, exporter::StorageSeries::File> by_name;
  std::error_code ec;
  auto folder = [&](const std::string& d) {
    fs::path p = fs::absolute(d, ec).lexically_normal();
    return p.has_filename() ? p : p.parent_path();  // "/x/data/" names the folder "/x/data"
  };
  const fs::path root = folder(dir.root());
  const fs::path diag = folder(dir.diagReports());
  for (const auto& f : platform::storageHealth().snapshot()) {
    if (f.failing) out.ok = false;
    const fs::path p = fs::path(f.path).lexically_normal();
    std::string name = "other";
    if (p.parent_path() == root)
      name = f.file;
    else if (p.parent_path() == diag)
      name = "diag";
    auto& e = by_name[name];
    e.file = name;
    e.write_errors += f.write_errors;
    e.moved_aside += f.moved_aside;
  }
  for (auto& [name, f] : by_name) out.files.push_back(std::move(f));
  if (history) {
    out.history = true;
    out.history_pending_bytes = history->pending_bytes;
    out.history_dropped_samples = history->dropped_samples;
    out.history_corrupt_chunks = history->corrupt_chunks;
  }
  return out;
}

}  // namespace gw::node
