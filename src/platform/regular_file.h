// Reading a file that must be a regular file: one an operator names (a configuration, a web
// configuration, a certificate, a binary to inspect), one under a fixture root, one a script wrote.
// A directory, a FIFO or a device where a file should be is refused at once, never waited on in
// open(2) or read without end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"

namespace gw::platform {

// Opened read-only with O_NONBLOCK (a FIFO cannot hang open(2) waiting for a writer), then kept
// only if fstat calls it a regular file. Closed when it goes.
class RegularFile {
 public:
  enum class Links { kFollow, kRefuse };
  explicit RegularFile(const std::string& path, Links links = Links::kFollow);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  // Why it is not open: open(2)'s errno, or 0 when it opened but is not a regular file.
  int openErrno() const { return errno_; }
  bool isDirectory() const { return directory_; }
  // "PATH: <open's error>" or "PATH: not a regular file".
  std::string whyNot() const;
  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }
  // Appends what is left, up to `limit` bytes in all (a file that grew past it is cut there, so a
  // caller that reads limit = bound + 1 tells a grown file). 0, or read(2)'s errno.
  int readUpTo(std::size_t limit, std::string& out);

 private:
  std::string path_;
  int fd_ = -1;
  int errno_ = 0;
  bool directory_ = false;
  std::uint64_t size_ = 0;
};

// `what` names the file in messages ("the configuration"): "PATH: the configuration must be a
// regular file (this is a directory)", "PATH: the configuration is N bytes; at most M". Checked
// while it is read too (it may grow meanwhile).
Result<std::string> readRegularFile(const std::string& path, std::size_t max_bytes, const std::string& what);
// The same for a file of ours that may not be written yet: nullopt when it is not there.
Result<std::optional<std::string>> readRegularFileIfThere(const std::string& path, std::size_t max_bytes,
                                                          const std::string& what);

}  // namespace gw::platform
