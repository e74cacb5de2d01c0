#include "events/kmsg_device.h"

#include <cerrno>

namespace gw::events {

KmsgReadResult readKmsgRecord(const KmsgReadFn& read, std::vector<char>& buf) {
  if (buf.size() < kKmsgRecordBuffer) buf.resize(kKmsgRecordBuffer);
  for (int interrupts = 0; interrupts < kMaxInterrupts; ++interrupts) {
    errno = 0;
    const ssize_t n = read(buf.data(), buf.size());
    if (n > 0) {
      const auto got = static_cast<std::size_t>(n) < buf.size() ? static_cast<std::size_t>(n) : buf.size();
      std::string_view rec(buf.data(), got);
      return {KmsgReadOutcome::kRecord, rec.substr(0, rec.find('\n')), 0};
    }
    if (n == 0) return {KmsgReadOutcome::kNoneYet, {}, 0};
    const int e = errno;
    if (e == EINTR) continue;
    if (e == EPIPE) return {KmsgReadOutcome::kLost, {}, e};
    if (e == EINVAL) return {KmsgReadOutcome::kSkipped, {}, e};
    if (e == EAGAIN || e == EWOULDBLOCK) return {KmsgReadOutcome::kNoneYet, {}, e};
    return {KmsgReadOutcome::kError, {}, e};
  }
  return {KmsgReadOutcome::kNoneYet, {}, EINTR};
}

}  // namespace gw::events
