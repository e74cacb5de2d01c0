// The filesystem seam: everything the product reads from /proc, /sys, /dev, /etc, /usr/local and
// the kernel log goes through an FsRoot, so tests point it at a fixture tree (--root DIR).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gw::platform {

class FsRoot {
 public:
  explicit FsRoot(std::string root = "/");

  const std::string& root() const { return root_; }
  bool isHostRoot() const { return root_ == "/"; }

  // Maps an absolute host path ("/proc/modules") to the path under the root.
  std::string path(std::string_view absolute) const;

  // Reads at most max_bytes (files under /proc and /sys report size 0, so we read until EOF).
  Result<std::string> readFile(std::string_view absolute, std::size_t max_bytes = 4 << 20) const;
  // First line without its newline, trimmed of surrounding whitespace.
  Result<std::string> readLine(std::string_view absolute) const;
  bool exists(std::string_view absolute) const;
  bool isDirectory(std::string_view absolute) const;
  bool isCharDevice(std::string_view absolute) const;
  // Entry names (not paths), sorted, without "." and "..". Empty with an error if unreadable.
  Result<std::vector<std::string>> listDir(std::string_view absolute) const;
  // Target of a symbolic link as stored in the link (not resolved against the root).
  Result<std::string> readLink(std::string_view absolute) const;
  // Size in bytes of a filesystem (statvfs), e.g. for /dev/shm.
  Result<std::uint64_t> filesystemSize(std::string_view absolute) const;

 private:
  std::string root_;
};

}  // namespace gw::platform
