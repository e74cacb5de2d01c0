#include "platform/storage_health.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "platform/clock.h"
#include "platform/log.h"

namespace gw::platform {
namespace {

std::string kindOf(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return "disk full";
    case EROFS:
      return "read-only file system";
    default:
      return "write error";
  }
}

// One name per file however it was reached ("data/history.db", "/abs/data/./history.db").
std::string keyOf(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace

StorageFileState& StorageHealth::entry(const std::string& key) {
  auto it = files_.find(key);
  if (it != files_.end()) return it->second;
  StorageFileState s;
  s.path = key;
  s.file = std::filesystem::path(key).filename().string();
  return files_.emplace(key, std::move(s)).first->second;
}

void StorageHealth::failed(const std::string& given, int err, const std::string& message) {
  const std::string path = keyOf(given);
  bool log = false;
  {
    std::lock_guard lock(mu_);
    StorageFileState& s = entry(path);
    ++s.write_errors;
    log = !s.failing;
    if (!s.failing) s.failing_since_ms = wallMs();
    s.failing = true;
    s.err = err;
    s.reason = message;
    failing_ = true;
  }
  if (log)
    logLine("error", kindOf(err) + ": cannot write " + path + ": " + message +
                         " (kept in memory and retried; further failures of this file are counted, not logged)");
}

void StorageHealth::succeeded(const std::string& given) {
  if (!failing_.load(std::memory_order_relaxed)) return;  // the common case: nothing to recover from
  const std::string path = keyOf(given);
  std::uint64_t errors = 0;
  {
    std::lock_guard lock(mu_);
    auto it = files_.find(path);
    if (it == files_.end() || !it->second.failing) return;
    it->second.failing = false;
    errors = it->second.write_errors;
    bool any = false;
    for (const auto& [p, f] : files_) any = any || f.failing;
    failing_ = any;
  }
  logLine("info",
          "storage recovered: " + path + " written again (" + std::to_string(errors) + " failed write(s) so far)");
}

void StorageHealth::movedAside(const std::string& path) {
  const std::string key = keyOf(path);
  std::lock_guard lock(mu_);
  ++entry(key).moved_aside;
}

std::vector<StorageFileState> StorageHealth::snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<StorageFileState> out;
  out.reserve(files_.size());
  for (const auto& [path, s] : files_) out.push_back(s);
  return out;
}

bool StorageHealth::ok() const {
  std::lock_guard lock(mu_);
  for (const auto& [path, s] : files_)
    if (s.failing) return false;
  return true;
}

std::string StorageHealth::problem() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [path, s] : files_) {
    if (!s.failing) continue;
    if (!out.empty()) out += '\n';
    out += kindOf(s.err) + ": cannot write " + path + ": " + s.reason;
  }
  return out;
}

void StorageHealth::reset() {
  std::lock_guard lock(mu_);
  files_.clear();
  failing_ = false;
}

StorageHealth& storageHealth() {
  static StorageHealth* h = new StorageHealth();  // never destroyed: writers may run at exit
  return *h;
}

bool isStorageErrno(int err) { return err == ENOSPC || err == EDQUOT || err == EIO || err == EROFS || err == EFBIG; }

}  // namespace gw::platform
