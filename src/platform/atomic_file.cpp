#include "platform/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "platform/storage_health.h"

namespace gw::platform {
namespace {

Status failure(const std::string& path, const std::string& what, int err) {
  storageHealth().failed(path, err, what + ": " + std::strerror(err));
  return Status::Errno(err, "cannot write " + path + ": " + what + ": " + std::strerror(err));
}

Status writeAtomic(const std::string& path, std::string_view bytes, mode_t mode) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // Unique per process and call: two writers of one file never share a temporary name. A name
  // can still be taken by a crashed run's leftover that had the same pid (an agent that is pid 1
  // in its container has it on every start): the next numbers are tried, never that file.
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1, open_err = 0;
  for (int tries = 0; tries < kTemporaryNameTries && fd < 0; ++tries) {
    tmp = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                  std::to_string(counter.fetch_add(1))))
              .string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    open_err = errno;
    if (fd < 0 && open_err != EEXIST) break;
  }
  if (fd < 0) return failure(path, "cannot create " + tmp, open_err);
  auto abandon = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    return failure(path, what, err);
  };

  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return abandon("wrote " + std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return abandon("fsync", err);
  }
  // Some file systems (NFS) report a failed write only at close.
  if (::close(fd) != 0) return abandon("close", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return abandon("rename from " + tmp, errno);

  // The rename is durable only once the folder is.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return failure(path, "replaced, but cannot open the folder to sync it", errno);
  const int rc = ::fsync(dfd);
  const int err = errno;
  ::close(dfd);
  // EINVAL: this file system does not sync folders; the rename is as durable as it can be.
  if (rc != 0 && err != EINVAL) return failure(path, "replaced, but cannot sync the folder " + dir.string(), err);
  return Status::Ok();
}

}  // namespace

Status writeFileAtomic(const std::string& path, std::string_view bytes, mode_t mode) {
  Status st = writeAtomic(path, bytes, mode);
  if (st.ok()) storageHealth().succeeded(path);
  return st;
}

Status appendToFile(const std::string& path, std::string_view bytes, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, mode);
  if (fd < 0) return failure(path, "cannot open to append", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return failure(path, "fstat", err);
  }
  const off_t before = st.st_size;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      // A part of a record is worse than none: the next reader would see it glued to the next one.
      if (done > 0 && ::ftruncate(fd, before) != 0) {
        ::close(fd);
        return failure(path,
                       "wrote " + std::to_string(done) + " of " + std::to_string(bytes.size()) +
                           " bytes and cannot cut the partial record off again",
                       err);
      }
      ::close(fd);
      return failure(path, "appended " + std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return failure(path, "close after append", errno);
  storageHealth().succeeded(path);
  return Status::Ok();
}

}  // namespace gw::platform
