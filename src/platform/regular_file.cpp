#include "platform/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gw::platform {

Result<std::string> readRegularFile(const std::string& path, std::size_t max_bytes, const std::string& what) {
  // O_NONBLOCK: a FIFO given by mistake must not hang us in open(2); it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Status::Error(path + ": cannot read " + what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    return Status::Error(path + ": " + what + " must be a regular file" + (dir ? " (this is a directory)" : ""));
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Status::Error(path + ": " + what + " is " + std::to_string(st.st_size) + " bytes; at most " +
                         std::to_string(max_bytes));
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::Error(path + ": cannot read " + what + ": " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // grew while we read it
      ::close(fd);
      return Status::Error(path + ": " + what + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace gw::platform
