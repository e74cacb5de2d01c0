// readKmsgRecord: each answer the kernel's /dev/kmsg can give, played in order by a scripted read.
#include "events/kmsg_device.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace gw::events {
namespace {

// One scripted answer: a record's bytes, or -1 with an errno, or 0 (end of file).
struct Answer {
  std::string bytes;
  int err = 0;
  bool eof = false;
};

class Script {
 public:
  explicit Script(std::vector<Answer> answers) : answers_(std::move(answers)) {}
  KmsgReadFn fn() {
    return [this](char* buf, std::size_t len) -> ssize_t {
      ++calls_;
      if (next_ >= answers_.size()) {  // past the script: the device has nothing more
        errno = EAGAIN;
        return -1;
      }
      const Answer& a = answers_[next_++];
      last_len_ = len;
      if (a.eof) return 0;
      if (a.err) {
        errno = a.err;
        return -1;
      }
      std::memcpy(buf, a.bytes.data(), std::min(len, a.bytes.size()));
      return static_cast<ssize_t>(std::min(len, a.bytes.size()));
    };
  }
  int calls() const { return calls_; }
  std::size_t lastLen() const { return last_len_; }

 private:
  std::vector<Answer> answers_;
  std::size_t next_ = 0;
  int calls_ = 0;
  std::size_t last_len_ = 0;
};

TEST(KmsgDevice, OneReadIsOneRecordWithoutItsContinuationLines) {
  Script s({{"4,120,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n"}});
  std::vector<char> buf;
  auto r = readKmsgRecord(s.fn(), buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kRecord);
  EXPECT_EQ(r.record, "4,120,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1");
  EXPECT_EQ(s.calls(), 1);
  EXPECT_EQ(s.lastLen(), kKmsgRecordBuffer);  // the whole buffer offered: the kernel's 8 KiB fits
}

TEST(KmsgDevice, RecordWithoutNewlineIsKeptWhole) {
  Script s({{"6,1,0,-;hello"}});
  std::vector<char> buf;
  auto r = readKmsgRecord(s.fn(), buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kRecord);
  EXPECT_EQ(r.record, "6,1,0,-;hello");
}

TEST(KmsgDevice, InterruptedReadsAreRetriedThenTheRecordReturned) {
  Script s({{"", EINTR}, {"", EINTR}, {"6,2,0,-;after two signals\n"}});
  std::vector<char> buf;
  auto r = readKmsgRecord(s.fn(), buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kRecord);
  EXPECT_EQ(r.record, "6,2,0,-;after two signals");
  EXPECT_EQ(s.calls(), 3);
}

TEST(KmsgDevice, EndlessInterruptsStopAfterTheLimitInsteadOfSpinning) {
  std::vector<Answer> storm(kMaxInterrupts + 5, Answer{"", EINTR});
  Script s(storm);
  std::vector<char> buf;
  auto r = readKmsgRecord(s.fn(), buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kNoneYet);
  EXPECT_EQ(s.calls(), kMaxInterrupts);
}

TEST(KmsgDevice, EachErrorMeansItsOwnThingAndIsReadOnce) {
  struct Case {
    int err;
    KmsgReadOutcome want;
  } cases[] = {
      {EPIPE, KmsgReadOutcome::kLost},     {EINVAL, KmsgReadOutcome::kSkipped},
      {EAGAIN, KmsgReadOutcome::kNoneYet}, {EWOULDBLOCK, KmsgReadOutcome::kNoneYet},
      {EIO, KmsgReadOutcome::kError},      {EBADF, KmsgReadOutcome::kError},
      {EFAULT, KmsgReadOutcome::kError},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::strerror(c.err));
    // A record follows the error in the script: a reader that retried at once would return it.
    Script s({{"", c.err}, {"6,3,0,-;next\n"}});
    std::vector<char> buf;
    auto r = readKmsgRecord(s.fn(), buf);
    EXPECT_EQ(r.outcome, c.want);
    EXPECT_EQ(r.error, c.err);
    EXPECT_EQ(s.calls(), 1);
  }
}

TEST(KmsgDevice, EndOfFileMeansNothingYet) {
  Script s({{"", 0, true}, {"6,4,0,-;later\n"}});
  std::vector<char> buf;
  auto r = readKmsgRecord(s.fn(), buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kNoneYet);
  EXPECT_EQ(s.calls(), 1);
}

TEST(KmsgDevice, ALostBatchThenTheOldestRecordStillThere) {
  // The sequence a reader that fell behind sees: EPIPE once, then records resume.
  Script s({{"", EPIPE}, {"6,900,0,-;oldest kept\n"}, {"", EAGAIN}});
  std::vector<char> buf;
  EXPECT_EQ(readKmsgRecord(s.fn(), buf).outcome, KmsgReadOutcome::kLost);
  auto r = readKmsgRecord(s.fn(), buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kRecord);
  EXPECT_EQ(r.record, "6,900,0,-;oldest kept");
  EXPECT_EQ(readKmsgRecord(s.fn(), buf).outcome, KmsgReadOutcome::kNoneYet);
  EXPECT_EQ(s.calls(), 3);
}

TEST(KmsgDevice, ASmallCallerBufferIsGrownToARecordsSize) {
  Script s({{std::string(9000, 'x')}});
  std::vector<char> buf(16);
  auto r = readKmsgRecord(s.fn(), buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kRecord);
  EXPECT_EQ(r.record.size(), 9000u);
  EXPECT_EQ(buf.size(), kKmsgRecordBuffer);
}

TEST(KmsgDevice, AReadClaimingMoreThanTheBufferIsClamped) {
  // A read() answering more bytes than it was offered must not make a view past the buffer.
  KmsgReadFn liar = [](char* buf, std::size_t len) -> ssize_t {
    std::memset(buf, 'y', len);
    return static_cast<ssize_t>(len + 100);
  };
  std::vector<char> buf;
  auto r = readKmsgRecord(liar, buf);
  EXPECT_EQ(r.outcome, KmsgReadOutcome::kRecord);
  EXPECT_EQ(r.record.size(), kKmsgRecordBuffer);
}

}  // namespace
}  // namespace gw::events
