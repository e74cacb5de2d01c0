// A small tmpfs for disk-full tests: mounted on a fresh directory, filled to the last byte on
// demand and freed again. Mounting needs root (CAP_SYS_ADMIN); where it is refused, mounted() is
// false and why() says so, for GTEST_SKIP.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace gw::testsupport {

class SmallTmpfs {
 public:
  explicit SmallTmpfs(std::size_t bytes) : dir_("gw-tmpfs") {
    const std::string opts = "size=" + std::to_string(bytes) + ",mode=0755";
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      why_ = "cannot mount a tmpfs on " + dir_.path() + " (" + std::strerror(errno) +
             "): disk-full tests need root or CAP_SYS_ADMIN";
      return;
    }
    mounted_ = true;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }
  const std::string& path() const { return dir_.path(); }

  // Writes filler files until the file system refuses with ENOSPC; returns the bytes written.
  std::size_t fill() {
    std::size_t total = 0;
    std::vector<char> block(4096, 'x');
    for (int n = 0;; ++n) {
      const std::string f = path() + "/.filler-" + std::to_string(fillers_++);
      const int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) break;  // not even an inode left
      bool full = false;
      for (std::size_t size = block.size(); size > 0 && !full;) {
        const ssize_t w = ::write(fd, block.data(), size);
        if (w > 0) {
          total += static_cast<std::size_t>(w);
        } else if (size > 1) {
          size /= 2;  // the last page: fill what is left of it too
        } else {
          full = true;
        }
      }
      ::close(fd);
      if (full) break;
    }
    return total;
  }
  // Removes the filler: the space is back.
  void release() {
    for (int i = 0; i < fillers_; ++i) std::filesystem::remove(path() + "/.filler-" + std::to_string(i));
    fillers_ = 0;
  }

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string why_;
  int fillers_ = 0;
};

}  // namespace gw::testsupport
