#include "events/kmsg_source.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "platform/atomic_file.h"
#include "platform/bounded_json.h"
#include "platform/regular_file.h"
#include "platform/log.h"
#include "platform/clock.h"
#include "platform/thread_guard.h"

namespace gw::events {
namespace {

std::optional<std::int64_t> wallClockMs(const WallClock& w) {
  if (w.year == 0 || w.month == 0 || w.day == 0) return std::nullopt;
  std::tm tm{};
  tm.tm_year = w.year - 1900;
  tm.tm_mon = w.month - 1;
  tm.tm_mday = w.day;
  tm.tm_hour = w.hour;
  tm.tm_min = w.minute;
  tm.tm_sec = w.second;
  std::time_t t;
  if (w.utcOffsetMinutes) {
    t = timegm(&tm) - static_cast<std::time_t>(*w.utcOffsetMinutes) * 60;
  } else {
    tm.tm_isdst = -1;
    t = mktime(&tm);
  }
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<std::int64_t>(t) * 1000 + w.microsecond / 1000;
}

// "prio,seq,usec,flags;..." → seq.
std::optional<std::uint64_t> recordSequence(std::string_view rec) {
  auto c1 = rec.find(',');
  if (c1 == std::string_view::npos) return std::nullopt;
  std::uint64_t v = 0;
  std::size_t i = c1 + 1;
  if (i >= rec.size() || rec[i] < '0' || rec[i] > '9') return std::nullopt;
  for (; i < rec.size() && rec[i] >= '0' && rec[i] <= '9'; ++i) v = v * 10 + (rec[i] - '0');
  if (i >= rec.size() || rec[i] != ',') return std::nullopt;
  return v;
}

}  // namespace

KmsgSource::KmsgSource(platform::FsRoot root, EventBus* bus, KmsgSourceOptions options)
    : root_(std::move(root)), bus_(bus), opt_(std::move(options)) {}

KmsgSource::~KmsgSource() { stop(); }

std::string KmsgSource::lastError() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

KmsgSourceStats KmsgSource::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string KmsgSource::statePath() const { return opt_.position_path; }

std::string KmsgSource::bootId() const {
  auto r = root_.readLine("/proc/sys/kernel/random/boot_id");
  return r.ok() ? *r : std::string();
}

std::optional<GpuEvent> KmsgSource::handleLine(std::string_view line, bool from_device) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  auto r = parseKernelLine(line);
  std::lock_guard lock(mu_);
  ++stats_.lines;
  if (!r.ok()) {
    ++stats_.malformed;
    stats_.last_malformed.emplace_back(line);
    while (stats_.last_malformed.size() > opt_.keep_malformed) stats_.last_malformed.pop_front();
    return std::nullopt;
  }
  if (!r->has_value()) {
    ++stats_.irrelevant;
    return std::nullopt;
  }
  const KernelEvent& k = **r;
  if (k.kind == KernelEventKind::kGpuUuid) {
    ++stats_.mappings;
    // Bounded: a node has a few GPUs; a log naming thousands of bus ids keeps the first ones.
    constexpr std::size_t kMaxLearned = 1024;
    if (!k.pciBusId.empty() && !k.uuid.empty() && (learned_.size() < kMaxLearned || learned_.count(k.pciBusId)))
      learned_[k.pciBusId] = k.uuid;
    return std::nullopt;
  }
  GpuEvent e;
  e.source = EventSource::KernelLog;
  if (k.kind == KernelEventKind::kSXid) {
    e.kind = EventKind::SXid;
  } else {
    e.kind = k.inferred ? EventKind::FallenOffBus : EventKind::Xid;
  }
  e.code = k.inferred ? 79 : k.code;
  e.pci_bus_id = k.pciBusId;
  e.message = k.message;
  if (!k.device.empty() && k.kind == KernelEventKind::kSXid) e.message = k.device + ": " + e.message;
  e.raw = k.raw;
  if (k.pid) e.pid = *k.pid;
  e.process = k.processName;
  if (k.wallClock) {
    if (auto t = wallClockMs(*k.wallClock)) e.timestamp_ms = *t;
  }
  if (e.timestamp_ms == 0 && from_device && k.monotonicUs) {
    e.timestamp_ms = platform::wallMsOfMonoUs(*k.monotonicUs);
  }
  if (e.timestamp_ms == 0) e.timestamp_ms = platform::wallMs();
  if (!e.pci_bus_id.empty()) {
    if (opt_.lookup) {
      auto [idx, uuid] = opt_.lookup(e.pci_bus_id);
      e.gpu_index = idx;
      e.gpu_uuid = uuid;
    }
    if (e.gpu_uuid.empty()) {
      if (auto it = learned_.find(e.pci_bus_id); it != learned_.end()) e.gpu_uuid = it->second;
    }
  }
  return e;
}

void KmsgSource::emit(GpuEvent e, bool publish, std::vector<GpuEvent>* out) {
  {
    std::lock_guard lock(mu_);
    ++stats_.events;
  }
  if (out) out->push_back(e);
  if (publish && bus_) bus_->publish(e);
}

// ------------------------------------------------------------------ position

void KmsgSource::loadPosition() {
  pos_ = {};
  position_unknown_ = false;
  const std::string path = statePath();
  if (path.empty()) return;
  std::string why;
  try {
    // A position is a few numbers and a boot id: anything larger is damage, never read whole.
    auto text = platform::readRegularFileIfThere(path, 4096, "the kmsg position");
    if (!text) throw std::runtime_error(text.error());
    if (!*text) return;  // first start: the whole kernel log is new
    auto parsed = platform::parseBounded(**text, 1, 16);
    if (!parsed) throw std::runtime_error(parsed.error());
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    const auto count = [&](const char* key) { return platform::wholeNumberOr<std::uint64_t>(j, key, 0); };
    pos_.device = j.value("device", false);
    if (j.contains("seq")) pos_.seq = count("seq");
    pos_.boot_id = j.value("boot_id", std::string());
    pos_.offset = count("offset");
    pos_.inode = count("inode");
    return;
  } catch (const std::exception& e) {
    why = e.what();
  }
  // An empty or damaged file (a writer from before atomic writes, a disk that failed): where we
  // stopped is unknown. Reading the kernel log from its start would replay Xids that were handled
  // (and resolved) as new incidents; so this start begins at the log's end, and says so.
  pos_ = {};
  position_unknown_ = true;
  const std::string aside = path + ".damaged";
  std::error_code ec;
  std::filesystem::rename(path, aside, ec);
  const std::string msg = "kmsg position file " + path + " is unreadable (" + why + "), kept as " + aside +
                          "; following the kernel log from its end (records before this start are not replayed)";
  platform::logLine("warning", msg);
  std::lock_guard lock(mu_);
  last_error_ = msg;
}

bool KmsgSource::savePosition() {
  const std::string path = statePath();
  if (path.empty() || stream_) return true;  // a stream (FIFO) has no position to come back to
  nlohmann::json j;
  j["device"] = pos_.device;
  if (pos_.device) {
    if (pos_.seq) j["seq"] = *pos_.seq;
    j["boot_id"] = pos_.boot_id;
  } else {
    j["offset"] = pos_.offset;
    j["inode"] = pos_.inode;
  }
  // Atomic: the file holds the previous position or this one, never a part of either. A failure
  // (full disk; logged once by storage health) keeps the old one and is retried by the caller.
  if (Status s = platform::writeFileAtomic(path, j.dump() + "\n", 0640); !s.ok()) {
    std::lock_guard lock(mu_);
    last_error_ = s.message();
    return false;
  }
  return true;
}

// ------------------------------------------------------------------ lifecycle

Status KmsgSource::start() {
  stop();
  stop_ = false;
  const std::string path = root_.path("/dev/kmsg");
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    healthy_ = false;
    std::string e = "cannot open " + path + ": " + std::strerror(errno);
    std::lock_guard lock(mu_);
    last_error_ = e;
    return Status::Error(e);
  }
  struct stat st {};
  ::fstat(fd_, &st);
  const bool device = S_ISCHR(st.st_mode);
  stream_ = !device && !S_ISREG(st.st_mode);  // a FIFO (or socket): no offsets to keep
  loadPosition();
  lines_.reset();
  if (stream_) {
    pos_ = {};
  } else if (device) {
    const std::string boot = bootId();
    if (!pos_.device || pos_.boot_id != boot) pos_ = {};  // another boot: sequence numbers restart
    pos_.device = true;
    pos_.boot_id = boot;
    if (position_unknown_) ::lseek(fd_, 0, SEEK_END);  // the next record written, not the oldest kept
  } else {
    const auto ino = static_cast<std::uint64_t>(st.st_ino);
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (pos_.device || (pos_.inode != 0 && pos_.inode != ino) || pos_.offset > size) {
      if (pos_.offset != 0 || pos_.inode != 0) {
        std::lock_guard lock(mu_);
        ++stats_.restarts;
      }
      pos_ = {};
    }
    pos_.device = false;
    pos_.inode = ino;
    if (position_unknown_) pos_.offset = size;
  }
  healthy_ = true;
  running_ = true;
  thread_ = std::thread(platform::guardedThread("kernel-log", [this] { run(); }));
  return Status::Ok();
}

void KmsgSource::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) {
    savePosition();
    ::close(fd_);
    fd_ = -1;
  }
  running_ = false;
}

bool KmsgSource::waitStop(unsigned ms) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_.load(); });
}

void KmsgSource::run() {
  if (pos_.device) {
    followDevice();
  } else {
    followFile();
  }
  running_ = false;
}

void KmsgSource::followDevice() {
  std::vector<char> buf(kKmsgRecordBuffer);
  const KmsgReadFn read = [this](char* b, std::size_t len) { return ::read(fd_, b, len); };
  bool dirty = position_unknown_;
  while (!stop_) {
    const KmsgReadResult r = readKmsgRecord(read, buf);
    switch (r.outcome) {
      case KmsgReadOutcome::kRecord: {
        auto seq = recordSequence(r.record);
        if (seq && pos_.seq && *seq <= *pos_.seq) {
          std::lock_guard lock(mu_);
          ++stats_.skipped;
          continue;
        }
        if (auto e = handleLine(r.record, true)) emit(std::move(*e), true, nullptr);
        if (seq) pos_.seq = seq;
        dirty = true;
        continue;
      }
      case KmsgReadOutcome::kLost:
      case KmsgReadOutcome::kSkipped:
        countUnread(r.outcome);
        continue;
      case KmsgReadOutcome::kNoneYet: {
        if (dirty) dirty = !savePosition();  // not saved (full disk): tried again at the next poll
        pollfd p{fd_, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(opt_.poll_ms));
        continue;
      }
      case KmsgReadOutcome::kError:
        break;
    }
    std::string e = std::string("reading /dev/kmsg: ") + std::strerror(r.error);
    {
      std::lock_guard lock(mu_);
      last_error_ = e;
    }
    healthy_ = false;
    break;
  }
}

void KmsgSource::countUnread(KmsgReadOutcome why) {
  std::lock_guard lock(mu_);
  if (why == KmsgReadOutcome::kLost) ++stats_.overwritten;
  if (why == KmsgReadOutcome::kSkipped) ++stats_.oversized;
}

void KmsgSource::handleFileLine(std::string_view line, bool truncated, bool publish, std::vector<GpuEvent>* out) {
  if (truncated) {
    std::lock_guard lock(mu_);
    ++stats_.truncated;
  }
  if (line.empty() || line.front() == ' ' || line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (auto e = handleLine(line, false)) {
    if (truncated) e->raw += kTruncatedMarker;
    emit(std::move(*e), publish, out);
  }
}

// Reads the complete lines after the position (a FIFO: what has arrived); returns true if any
// were consumed.
bool KmsgSource::readFileLines(int fd, bool publish, std::vector<GpuEvent>* out) {
  bool consumed = false;
  std::vector<char> buf(65536);
  for (;;) {
    const std::uint64_t at = pos_.offset + lines_.pending();
    const ssize_t n =
        stream_ ? ::read(fd, buf.data(), buf.size()) : ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the end for now (a FIFO: EAGAIN, or no writer)
    lines_.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)),
                [&](std::string_view line, bool truncated) { handleFileLine(line, truncated, publish, out); });
    const std::uint64_t done = at + static_cast<std::uint64_t>(n) - lines_.pending();
    if (done != pos_.offset) {
      pos_.offset = done;
      consumed = true;
    }
    if (publish && stop_) break;
  }
  return consumed;
}

void KmsgSource::followFile() {
  const std::string path = root_.path("/dev/kmsg");
  bool dirty = position_unknown_;
  while (!stop_) {
    struct stat st {};
    if (!stream_ && ::fstat(fd_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) < pos_.offset + lines_.pending()) {
      // Truncated: start over.
      pos_.offset = 0;
      lines_.reset();
      std::lock_guard lock(mu_);
      ++stats_.restarts;
    }
    if (stream_) ::fstat(fd_, &st);
    if (readFileLines(fd_, true, nullptr)) dirty = true;
    if (dirty) dirty = !savePosition();  // not saved (full disk): tried again at the next poll
    // Replaced (rotated)? Finish the old file above, then follow the new one from the start.
    struct stat now {};
    if (::stat(path.c_str(), &now) == 0 && now.st_ino != st.st_ino) {
      int nfd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      if (nfd >= 0) {
        struct stat nst {};
        ::fstat(nfd, &nst);
        ::close(fd_);
        fd_ = nfd;
        stream_ = !S_ISREG(nst.st_mode);
        pos_.offset = 0;
        pos_.inode = static_cast<std::uint64_t>(now.st_ino);
        lines_.reset();
        {
          std::lock_guard lock(mu_);
          ++stats_.restarts;
        }
        dirty = !savePosition();
        continue;
      }
    }
    waitStop(opt_.poll_ms);
  }
}

Result<std::vector<GpuEvent>> KmsgSource::scanOnce() {
  const std::string path = root_.path("/dev/kmsg");
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  std::vector<GpuEvent> out;
  struct stat st {};
  ::fstat(fd, &st);
  if (S_ISCHR(st.st_mode)) {
    std::vector<char> buf(kKmsgRecordBuffer);
    const KmsgReadFn read = [fd](char* b, std::size_t len) { return ::read(fd, b, len); };
    for (bool more = true; more;) {
      const KmsgReadResult r = readKmsgRecord(read, buf);
      switch (r.outcome) {
        case KmsgReadOutcome::kRecord:
          if (auto e = handleLine(r.record, true)) emit(std::move(*e), false, &out);
          break;
        case KmsgReadOutcome::kLost:
        case KmsgReadOutcome::kSkipped:
          countUnread(r.outcome);
          break;
        case KmsgReadOutcome::kNoneYet:  // all there is now
        case KmsgReadOutcome::kError:
          more = false;
          break;
      }
    }
  } else {
    BoundedLines lines;
    auto each = [&](std::string_view line, bool truncated) { handleFileLine(line, truncated, false, &out); };
    std::vector<char> buf(65536);
    for (;;) {
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      lines.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)), each);
    }
    lines.finish(each);
  }
  ::close(fd);
  return out;
}

}  // namespace gw::events
