// One read of the kernel log's character device (/dev/kmsg) and what it means.
//
// Each read() of /dev/kmsg returns exactly one record, and its errors say different things:
// EINTR (interrupted: read again), EPIPE (records were overwritten before we read them; the next
// read returns the oldest one still there), EINVAL (a record larger than the buffer: the kernel has
// moved past it), EAGAIN on a non-blocking descriptor (nothing more for now: wait, never spin).
// Both the live follower and the one-off scan read the device through readKmsgRecord, so the
// meaning of each answer lives here once; the read itself is passed in, which lets the tests
// play any sequence of answers the kernel can give without a real /dev/kmsg.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string_view>
#include <vector>

namespace gw::events {

// read(2) on the device: fills at most `len` bytes of `buf`, returns the count or -1 with errno.
using KmsgReadFn = std::function<ssize_t(char* buf, std::size_t len)>;

enum class KmsgReadOutcome {
  kRecord,   // `record` holds one record's first line (continuation lines dropped)
  kLost,     // EPIPE: records were overwritten before they were read
  kSkipped,  // EINVAL: a record too large for the buffer, passed over by the kernel
  kNoneYet,  // EAGAIN / EWOULDBLOCK, or end of file: wait for more
  kError,    // anything else: `error` holds errno
};

struct KmsgReadResult {
  KmsgReadOutcome outcome = KmsgReadOutcome::kNoneYet;
  std::string_view record;  // points into the buffer passed to readKmsgRecord
  int error = 0;
};

// The buffer for one record; the kernel's records are at most 8 KiB (CONSOLE_EXT_LOG_MAX).
inline constexpr std::size_t kKmsgRecordBuffer = 16384;

// One record or one condition. EINTR is read again here (at most kMaxInterrupts times in a row,
// then reported as kNoneYet so the caller's wait comes first).
KmsgReadResult readKmsgRecord(const KmsgReadFn& read, std::vector<char>& buf);
inline constexpr int kMaxInterrupts = 16;

}  // namespace gw::events
