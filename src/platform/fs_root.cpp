#include "platform/fs_root.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "platform/regular_file.h"

namespace gw::platform {

FsRoot::FsRoot(std::string root) : root_(std::move(root)) {
  if (root_.empty()) root_ = "/";
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string FsRoot::path(std::string_view absolute) const {
  if (root_ == "/") return std::string(absolute);
  std::string p = root_;
  if (absolute.empty() || absolute.front() != '/') p += '/';
  p += absolute;
  return p;
}

Result<std::string> FsRoot::readFile(std::string_view absolute, std::size_t max_bytes) const {
  const std::string p = path(absolute);
  RegularFile file(p);  // a FIFO or a device where a file should be (a fixture, a damaged /etc)
  if (!file.ok()) return Status::Error(file.whyNot());
  std::string data;
  if (const int err = file.readUpTo(max_bytes, data); err != 0) return Status::Error(p + ": " + std::strerror(err));
  return data;
}

Result<std::string> FsRoot::readLine(std::string_view absolute) const {
  auto data = readFile(absolute, 64 << 10);
  if (!data) return data.status();
  std::string s = data->substr(0, data->find('\n'));
  auto notspace = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), notspace));
  s.erase(std::find_if(s.rbegin(), s.rend(), notspace).base(), s.end());
  return s;
}

bool FsRoot::exists(std::string_view absolute) const {
  struct stat st {};
  return ::lstat(path(absolute).c_str(), &st) == 0;
}

bool FsRoot::isDirectory(std::string_view absolute) const {
  struct stat st {};
  return ::stat(path(absolute).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool FsRoot::isCharDevice(std::string_view absolute) const {
  struct stat st {};
  return ::stat(path(absolute).c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

Result<std::vector<std::string>> FsRoot::listDir(std::string_view absolute) const {
  const std::string p = path(absolute);
  DIR* d = ::opendir(p.c_str());
  if (!d) return Status::Error(p + ": " + std::strerror(errno));
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> FsRoot::readLink(std::string_view absolute) const {
  const std::string p = path(absolute);
  char buf[4096];
  ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
  if (n < 0) return Status::Error(p + ": " + std::strerror(errno));
  return std::string(buf, static_cast<std::size_t>(n));
}

Result<std::uint64_t> FsRoot::filesystemSize(std::string_view absolute) const {
  const std::string p = path(absolute);
  struct statvfs st {};
  if (::statvfs(p.c_str(), &st) != 0) return Status::Error(p + ": " + std::strerror(errno));
  return static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
}

}  // namespace gw::platform
