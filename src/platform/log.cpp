#include "platform/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "platform/clock.h"

namespace gw::platform {

namespace {

// systemd's journal reads a service's stderr and takes a line's priority from a "<N>" prefix
// (sd-daemon(3)); it says that stderr is its stream by $JOURNAL_STREAM = "DEVICE:INODE" of it.
bool stderrIsJournal() {
  const char* js = std::getenv("JOURNAL_STREAM");
  if (!js || !*js) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
  return dev == static_cast<unsigned long long>(st.st_dev) && ino == static_cast<unsigned long long>(st.st_ino);
}

// syslog(3)'s priorities: error 3, warning 4, info 6, anything else (debug) 7.
const char* journalPrefix(const std::string& level) {
  if (level == "error") return "<3>";
  if (level == "warning") return "<4>";
  if (level == "info") return "<6>";
  return "<7>";
}

}  // namespace

void logLine(const std::string& level, const std::string& message) {
  static const bool journal = stderrIsJournal();
  std::string line = (journal ? std::string(journalPrefix(level)) : std::string()) + formatRfc3339(wallMs()) +
                     " gpuwarden " + level + ": " + message;
  // Newlines inside a message would break "one line per event".
  for (auto& ch : line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  line += '\n';
  // One write(2) so that lines from different threads do not interleave.
  ssize_t r = ::write(STDERR_FILENO, line.data(), line.size());
  (void)r;
}

LogLimiter::Admit LogLimiter::admit(Clock::time_point now) {
  std::lock_guard lock(mu_);
  Admit a;
  // A window lasts `window_` from its first line; the line after it opens the next one.
  if (!started_ || now - window_start_ > window_) {
    a.suppressed_now = suppressed_;
    started_ = true;
    window_start_ = now;
    in_window_ = 0;
    suppressed_ = 0;
  }
  if (++in_window_ > burst_) {
    ++suppressed_;
    a.suppressed_now = 0;  // reported with the next line that is let through
    return a;
  }
  a.log = true;
  return a;
}

}  // namespace gw::platform
