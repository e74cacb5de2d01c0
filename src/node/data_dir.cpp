#include "node/data_dir.h"

#include "platform/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <regex>

namespace gw::node {

namespace {

// FNV-1a: a stable name, not a secret (the socket's permissions protect it).
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string canonical(const std::string& dir) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec);
  return ec ? dir : p.lexically_normal().string();
}

}  // namespace

void restrictDataUmask() {
  // One atomic call (reading the old umask would need a second, leaving a window at 0).
  ::umask(kDataUmask);
}

Status DataDir::create() const {
  restrictDataUmask();
  std::error_code ec;
  if (std::filesystem::create_directories(root_, ec)) ::chmod(root_.c_str(), 0750);
  if (ec) return Status::Error("cannot create data directory " + root_ + ": " + ec.message());
  return Status::Ok();
}

std::string DataDir::diagReportName(std::int64_t wall_ms, int level, int n) {
  std::time_t t = static_cast<std::time_t>(wall_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  return std::string(stamp) + "-r" + std::to_string(level) + (n > 1 ? "-" + std::to_string(n) : "") + ".json";
}

std::optional<DataDir::DiagReportName> DataDir::parseDiagReportName(const std::string& file) {
  static const std::regex kName(R"(^(\d{8}T\d{6}Z)-r([123])(-\d{1,6})?\.json$)");
  std::smatch m;
  if (!std::regex_match(file, m, kName)) return std::nullopt;
  const std::string t = m[1].str();  // 20260102T030405Z -> 2026-01-02T03:04:05Z
  return DiagReportName{t.substr(0, 4) + "-" + t.substr(4, 2) + "-" + t.substr(6, 2) + "T" + t.substr(9, 2) + ":" +
                            t.substr(11, 2) + ":" + t.substr(13, 2) + "Z",
                        m[2].str()[0] - '0'};
}

Result<std::string> DataDir::storeDiagReport(const std::string& json_text, int level, std::int64_t wall_ms) const {
  if (json_text.size() > kMaxDiagReportBytes)
    return Status::Error("the report is " + std::to_string(json_text.size()) + " bytes; at most " +
                         std::to_string(kMaxDiagReportBytes) + " are stored");
  const std::filesystem::path dir = diagReports();
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec)) ::chmod(dir.c_str(), 0750);
  if (ec) return Status::Error("cannot create " + dir.string() + ": " + ec.message());
  std::string name = diagReportName(wall_ms, level);
  for (int n = 2; std::filesystem::exists(dir / name, ec) && n < 1000; ++n) name = diagReportName(wall_ms, level, n);
  if (Status st = platform::writeFileAtomic((dir / name).string(), json_text, 0640); !st) return st;
  return name;
}

std::string runtimeDir() {
  if (const char* d = std::getenv("GPUWARDEN_RUNTIME_DIR"); d && *d) return d;
  if (::geteuid() == 0) return "/run/gpuwarden";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) return std::string(x) + "/gpuwarden";
  return "/tmp/gpuwarden-" + std::to_string(::geteuid());
}

std::string DataDir::controlSocket() const {
  char name[48];
  std::snprintf(name, sizeof name, "/agent-%016llx.sock", static_cast<unsigned long long>(fnv1a(canonical(root_))));
  return runtimeDir() + name;
}

Result<std::unique_ptr<DataDirLock>> DataDirLock::acquire(const DataDir& dir, std::chrono::milliseconds wait) {
  restrictDataUmask();
  const std::string path = dir.lockFile();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  const auto end = std::chrono::steady_clock::now() + wait;
  int locked = ::flock(fd, LOCK_EX | LOCK_NB);
  while (locked != 0 && errno == EWOULDBLOCK && std::chrono::steady_clock::now() < end) {
    ::usleep(20'000);
    locked = ::flock(fd, LOCK_EX | LOCK_NB);
  }
  if (locked != 0) {
    const int err = errno;
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("?");
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    if (err == EWOULDBLOCK)
      return Status::Error("data directory " + dir.root() + " is in use by another gpuwarden process (pid " + holder +
                           ")");
    return Status::Error("cannot lock " + path + ": " + std::strerror(err));
  }
  // The holder's pid, for the message above; informative only (the flock is the lock).
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd));
}

DataDirLock::~DataDirLock() {
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace gw::node
