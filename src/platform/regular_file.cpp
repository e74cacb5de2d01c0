#include "platform/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gw::platform {

RegularFile::RegularFile(const std::string& path, Links links) : path_(path) {
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (links == Links::kRefuse ? O_NOFOLLOW : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    errno_ = errno;
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    directory_ = S_ISDIR(st.st_mode);
    ::close(fd);
    return;
  }
  fd_ = fd;
  size_ = static_cast<std::uint64_t>(st.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RegularFile::whyNot() const {
  return path_ + ": " + (errno_ != 0 ? std::strerror(errno_) : "not a regular file");
}

int RegularFile::readUpTo(std::size_t limit, std::string& out) {
  char buf[65536];
  while (out.size() < limit) {
    const ssize_t n = ::read(fd_, buf, std::min(sizeof buf, limit - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return 0;
}

namespace {

Result<std::string> readOpened(RegularFile& file, const std::string& path, std::size_t max_bytes,
                               const std::string& what) {
  if (!file.ok()) {
    if (file.openErrno() != 0)
      return Status::Error(path + ": cannot read " + what + ": " + std::strerror(file.openErrno()));
    return Status::Error(path + ": " + what + " must be a regular file" +
                         (file.isDirectory() ? " (this is a directory)" : ""));
  }
  if (file.size() > max_bytes)
    return Status::Error(path + ": " + what + " is " + std::to_string(file.size()) + " bytes; at most " +
                         std::to_string(max_bytes));
  std::string text;
  if (const int err = file.readUpTo(max_bytes + 1, text); err != 0)
    return Status::Error(path + ": cannot read " + what + ": " + std::strerror(err));
  if (text.size() > max_bytes)  // grew while we read it
    return Status::Error(path + ": " + what + " is larger than " + std::to_string(max_bytes) + " bytes");
  return text;
}

}  // namespace

Result<std::string> readRegularFile(const std::string& path, std::size_t max_bytes, const std::string& what) {
  RegularFile file(path);
  return readOpened(file, path, max_bytes, what);
}

Result<std::optional<std::string>> readRegularFileIfThere(const std::string& path, std::size_t max_bytes,
                                                          const std::string& what) {
  RegularFile file(path);
  if (file.openErrno() == ENOENT) return std::optional<std::string>();
  auto text = readOpened(file, path, max_bytes, what);
  if (!text) return text.status();
  return std::optional<std::string>(std::move(text).value());
}

}  // namespace gw::platform
