// KmsgSource on a plain file under a temporary root: lines appended while it runs arrive,
// malformed lines are counted, the position survives a restart, a truncated or replaced file is
// read again from the start.
#include "events/kmsg_source.h"
#include "events/line_reader.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>
#include <fstream>
#include <thread>

#include "events_test_util.h"

namespace gw::events {
namespace {

using testing::appendFile;
using testing::Collector;
using testing::TempDir;
using testing::waitFor;

const char* kXid79 =
    "4,100,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the "
    "bus.\n";
const char* kXid13 = "4,101,5100000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=77, name=train, Graphics Exception\n";
const char* kXid48 = "4,102,5200000,-;NVRM: Xid (PCI:0000:5d:00): 48, pid=78, name=train, DBE\n";
const char* kIrrelevant = "6,103,5300000,-;usb 1-1: new high-speed USB device number 2\n";
const char* kMalformed = "4,104,5400000,-;NVRM: Xid (PCI:0000:3b:00): abc, pid=1, name=x, oops\n";

class KmsgSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(root_.path() + "/dev");
    kmsg_ = root_.path() + "/dev/kmsg";
    appendFile(kmsg_, "");
    opt_.position_path = state_.path() + "/kmsg-position.json";
    opt_.poll_ms = 10;
    opt_.lookup = [](const std::string& bus) -> std::pair<int, std::string> {
      if (bus == "00000000:3B:00.0") return {2, "GPU-two"};
      return {-1, ""};
    };
  }
  TempDir root_, state_;
  std::string kmsg_;
  KmsgSourceOptions opt_;
};

TEST_F(KmsgSourceTest, AppendedLinesArriveMalformedCounted) {
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  appendFile(kmsg_, std::string(kXid79) + kIrrelevant + kMalformed);
  ASSERT_TRUE(waitFor([&] { return src.stats().lines >= 3; }));
  appendFile(kmsg_, std::string(kXid13));
  ASSERT_TRUE(waitFor([&] { return got.size() >= 2; }));
  auto ev = got.events();
  ASSERT_EQ(ev.size(), 2U);
  EXPECT_EQ(ev[0].kind, EventKind::Xid);
  EXPECT_EQ(ev[0].code, 79);
  EXPECT_EQ(ev[0].gpu_index, 2);
  EXPECT_EQ(ev[0].gpu_uuid, "GPU-two");
  EXPECT_EQ(ev[0].pid, 1234);
  EXPECT_EQ(ev[0].process, "python3");
  EXPECT_EQ(ev[0].source, EventSource::KernelLog);
  EXPECT_EQ(ev[1].code, 13);
  auto st = src.stats();
  EXPECT_EQ(st.lines, 4U);
  EXPECT_EQ(st.events, 2U);
  EXPECT_EQ(st.malformed, 1U);
  EXPECT_EQ(st.irrelevant, 1U);
  // A plain file has no kernel records to lose or pass over: only /dev/kmsg counts those.
  EXPECT_EQ(st.overwritten, 0U);
  EXPECT_EQ(st.oversized, 0U);
  ASSERT_EQ(st.last_malformed.size(), 1U);
  EXPECT_NE(st.last_malformed.back().find("abc"), std::string::npos);
  EXPECT_TRUE(src.healthy());
}

TEST_F(KmsgSourceTest, PartialLineWaitsForItsNewline) {
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  std::string line(kXid13);
  appendFile(kmsg_, line.substr(0, 30));
  std::this_thread::sleep_for(std::chrono::milliseconds(40));  // a few polls see the partial line
  EXPECT_EQ(src.stats().lines, 0U);
  appendFile(kmsg_, line.substr(30));
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
  EXPECT_EQ(got.events()[0].code, 13);
  EXPECT_EQ(src.stats().lines, 1U);
}

TEST_F(KmsgSourceTest, GpuUuidLinesTeachTheMapping) {
  opt_.lookup = nullptr;
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  appendFile(kmsg_, "6,1,1000,-;NVRM: GPU at PCI:0000:5d:00: GPU-5b0e7d1a-9c3f-4a77-8d21-0f6e2c9b1a44\n");
  appendFile(kmsg_, kXid48);
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
  auto ev = got.events();
  EXPECT_EQ(ev[0].gpu_uuid, "GPU-5b0e7d1a-9c3f-4a77-8d21-0f6e2c9b1a44");
  EXPECT_EQ(ev[0].pci_bus_id, "00000000:5D:00.0");
  EXPECT_EQ(src.stats().mappings, 1U);
}

TEST_F(KmsgSourceTest, RestartResumesAfterSavedPosition) {
  appendFile(kmsg_, std::string(kXid79) + kXid13);
  {
    EventBus bus;
    Collector got(bus);
    KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
    ASSERT_TRUE(src.start().ok());
    ASSERT_TRUE(waitFor([&] { return got.size() >= 2; }));
    src.stop();
    EXPECT_EQ(got.size(), 2U);
  }
  EXPECT_TRUE(std::filesystem::exists(state_.path() + "/kmsg-position.json"));
  appendFile(kmsg_, kXid48);  // written while no agent ran
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
  appendFile(kmsg_, kXid13);
  ASSERT_TRUE(waitFor([&] { return got.size() >= 2; }));
  auto ev = got.events();
  ASSERT_EQ(ev.size(), 2U);  // no duplicates of the first two, nothing lost
  EXPECT_EQ(ev[0].code, 48);
  EXPECT_EQ(ev[1].code, 13);
  EXPECT_EQ(src.stats().lines, 2U);
}

// An empty (or damaged) position file, as an older writer left it on a full disk: the lines
// already handled are not replayed as new events; the file is kept aside; what arrives now is read
// and the position saved again.
TEST_F(KmsgSourceTest, UnreadablePositionFileReplaysNothing) {
  appendFile(kmsg_, std::string(kXid79) + kXid13);
  for (const char* damaged : {"", "{\"offset\": 1", "\x01\x02garbage"}) {
    appendFile(opt_.position_path, "");
    std::filesystem::resize_file(opt_.position_path, 0);
    appendFile(opt_.position_path, damaged);
    EventBus bus;
    Collector got(bus);
    KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
    ASSERT_TRUE(src.start().ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // ten polls
    EXPECT_EQ(got.size(), 0U) << "replayed after a position file of '" << damaged << "'";
    EXPECT_NE(src.lastError().find("unreadable"), std::string::npos) << src.lastError();
    EXPECT_TRUE(std::filesystem::exists(opt_.position_path + ".damaged"));
    appendFile(kmsg_, kXid48);
    ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
    src.stop();
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got.events()[0].code, 48);
    // The position is readable again and at the end.
    std::ifstream in(opt_.position_path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"offset\":" + std::to_string(std::filesystem::file_size(kmsg_))), std::string::npos) << text;
  }
}

// The position file is read within 4096 bytes and as whole counts: a file one byte longer, an
// offset that is a fraction or negative, a directory in its place are damage (said, kept aside,
// nothing replayed); a valid position padded to exactly 4096 bytes is where reading resumes.
TEST_F(KmsgSourceTest, APositionFileIsReadWithinItsBoundsAndAsWholeCounts) {
  appendFile(kmsg_, std::string(kXid79) + kXid13);
  struct stat st {};
  ASSERT_EQ(::stat(kmsg_.c_str(), &st), 0);
  const std::string position = R"({"device":false,"offset":)" + std::to_string(std::string(kXid79).size()) +
                               R"(,"inode":)" + std::to_string(st.st_ino) + "}";
  {
    std::filesystem::remove(opt_.position_path);
    appendFile(opt_.position_path, position + std::string(4096 - position.size(), ' '));
    EventBus bus;
    Collector got(bus);
    KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
    ASSERT_TRUE(src.start().ok());
    ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
    src.stop();
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got.events()[0].code, 13);  // resumed after the first line
    EXPECT_TRUE(src.lastError().empty()) << src.lastError();
  }
  struct Damage {
    std::string text;  // empty: a directory
    std::string why;
  };
  const std::vector<Damage> damages = {
      {position + std::string(4097 - position.size(), ' '), "the kmsg position is 4097 bytes; at most 4096"},
      {R"({"device":false,"offset":1.5,"inode":1})", "\"offset\" is not a whole number in range"},
      {R"({"device":false,"offset":-1,"inode":1})", "\"offset\" is not a whole number in range"},
      {R"({"device":true,"seq":1e300,"boot_id":"x"})", "\"seq\" is not a whole number in range"},
      {R"({"device":[[1]]})", "JSON nested deeper than 1"},
      {"", "the kmsg position must be a regular file (this is a directory)"},
  };
  for (const auto& d : damages) {
    std::filesystem::remove_all(opt_.position_path);
    std::filesystem::remove_all(opt_.position_path + ".damaged");
    if (d.text.empty())
      std::filesystem::create_directory(opt_.position_path);
    else
      appendFile(opt_.position_path, d.text);
    EventBus bus;
    Collector got(bus);
    KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
    ASSERT_TRUE(src.start().ok());
    EXPECT_NE(src.lastError().find("is unreadable ("), std::string::npos) << src.lastError();
    EXPECT_NE(src.lastError().find(d.why + "), kept as"), std::string::npos) << src.lastError();
    EXPECT_TRUE(std::filesystem::exists(opt_.position_path + ".damaged")) << d.why;
    appendFile(kmsg_, kXid48);  // read from the end: only what arrives now
    ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
    src.stop();
    ASSERT_EQ(got.size(), 1U) << d.why;
    EXPECT_EQ(got.events()[0].code, 48) << d.why;
  }
}

TEST_F(KmsgSourceTest, ShrunkFileBetweenRunsStartsOver) {
  appendFile(kmsg_, std::string(kXid79) + kXid13 + kIrrelevant);
  {
    EventBus bus;
    Collector got(bus);
    KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
    ASSERT_TRUE(src.start().ok());
    ASSERT_TRUE(waitFor([&] { return src.stats().lines >= 3; }));
  }
  std::ofstream(kmsg_, std::ios::trunc) << kXid48;  // shorter than the saved offset
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
  EXPECT_EQ(got.events()[0].code, 48);
  EXPECT_EQ(src.stats().restarts, 1U);
}

TEST_F(KmsgSourceTest, TruncatedWhileRunningStartsOver) {
  appendFile(kmsg_, std::string(kXid79) + kXid13);
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  ASSERT_TRUE(waitFor([&] { return got.size() >= 2; }));
  std::ofstream(kmsg_, std::ios::trunc) << "";  // truncated in place
  ASSERT_TRUE(waitFor([&] { return src.stats().restarts >= 1; }));
  appendFile(kmsg_, kXid48);
  ASSERT_TRUE(waitFor([&] { return got.size() >= 3; }));
  EXPECT_EQ(got.events()[2].code, 48);
}

// A line still waiting for its newline when the file is truncated belongs to the old file: the
// new file's first line is read on its own, not glued to that fragment (which would make it the
// fragment's Xid 79 instead of its own 13).
TEST_F(KmsgSourceTest, APartialLineDoesNotOutliveATruncation) {
  std::string fragment(kXid79);
  fragment.pop_back();  // no newline yet
  appendFile(kmsg_, std::string(kXid48) + fragment);
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));  // the fragment came with it, and waits
  std::ofstream(kmsg_, std::ios::trunc) << "";
  ASSERT_TRUE(waitFor([&] { return src.stats().restarts >= 1; }));
  appendFile(kmsg_, kXid13);
  ASSERT_TRUE(waitFor([&] { return got.size() >= 2; }));
  src.stop();
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got.events()[0].code, 48);
  EXPECT_EQ(got.events()[1].code, 13);
  EXPECT_EQ(src.stats().lines, 2U);
}

TEST_F(KmsgSourceTest, ReplacedFileWhileRunningStartsOver) {
  appendFile(kmsg_, std::string(kXid79));
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
  const std::string next = root_.path() + "/dev/kmsg.new";
  appendFile(next, std::string(kXid13) + kXid48);
  std::filesystem::rename(next, kmsg_);
  ASSERT_TRUE(waitFor([&] { return got.size() >= 3; }));
  EXPECT_EQ(got.events()[1].code, 13);
  EXPECT_EQ(got.events()[2].code, 48);
  EXPECT_GE(src.stats().restarts, 1U);
}

TEST_F(KmsgSourceTest, ScanOnceReadsWhatIsThereWithoutFollowing) {
  appendFile(kmsg_, std::string(kXid79) + kMalformed + kXid13 + " SUBSYSTEM=pci\n");
  KmsgSource src(platform::FsRoot(root_.path()), nullptr, opt_);
  auto r = src.scanOnce();
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 2U);
  EXPECT_EQ((*r)[0].code, 79);
  EXPECT_EQ(src.stats().malformed, 1U);
  EXPECT_FALSE(std::filesystem::exists(state_.path() + "/kmsg-position.json"));
}

// `gpuwarden events` may run beside a bus that rules and incidents subscribe to: a one-off scan
// of a plain file returns what it read and publishes none of it (that is the follower's job).
TEST_F(KmsgSourceTest, ScanOnceOfAFilePublishesNothing) {
  appendFile(kmsg_, std::string(kXid79) + kXid13);
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  auto r = src.scanOnce();
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 2U);
  EXPECT_EQ((*r)[1].code, 13);
  EXPECT_EQ(got.size(), 0U);
  EXPECT_EQ(src.stats().events, 2U);
}

TEST_F(KmsgSourceTest, MissingKmsgIsAnErrorNotACrash) {
  std::filesystem::remove(kmsg_);
  KmsgSource src(platform::FsRoot(root_.path()), nullptr, opt_);
  EXPECT_FALSE(src.start().ok());
  EXPECT_FALSE(src.healthy());
  EXPECT_FALSE(src.scanOnce().ok());
}

TEST_F(KmsgSourceTest, FallenOffTheBusLineIsAnInferredXid79) {
  KmsgSource src(platform::FsRoot(root_.path()), nullptr, opt_);
  auto e = src.handleLine("4,5,6,-;NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.", false);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, EventKind::FallenOffBus);
  EXPECT_EQ(e->code, 79);
  EXPECT_EQ(e->gpu_index, 2);
}

// The last ten malformed lines are kept for the operator (docs/events.md), oldest dropped first.
TEST_F(KmsgSourceTest, TheLastTenMalformedLinesAreKept) {
  KmsgSource src(platform::FsRoot(root_.path()), nullptr, opt_);
  for (int i = 1; i <= 11; ++i)
    src.handleLine("4,1,1,-;NVRM: Xid (PCI:0000:3b:00): bad" + std::to_string(i) + ", x", false);
  const auto st = src.stats();
  EXPECT_EQ(st.malformed, 11U);
  ASSERT_EQ(st.last_malformed.size(), 10U);
  EXPECT_NE(st.last_malformed.front().find("bad2,"), std::string::npos) << st.last_malformed.front();
  EXPECT_NE(st.last_malformed.back().find("bad11,"), std::string::npos) << st.last_malformed.back();
}

// A log naming thousands of bus ids teaches the first 1024 UUIDs and no more.
TEST_F(KmsgSourceTest, AtMostAThousandAndTwentyFourBusIdsAreLearned) {
  opt_.lookup = nullptr;
  KmsgSource src(platform::FsRoot(root_.path()), nullptr, opt_);
  char bus[32], line[160];
  for (int i = 0; i < 1025; ++i) {
    std::snprintf(line, sizeof line, "6,1,1,-;NVRM: GPU at PCI:%04x:%02x:00: GPU-%08d-0000-0000-0000-000000000000",
                  i / 256, i % 256, i);
    src.handleLine(line, false);
  }
  const auto uuidOf = [&](int i) {
    std::snprintf(bus, sizeof bus, "%04x:%02x:00", i / 256, i % 256);
    auto e = src.handleLine(std::string("4,1,1,-;NVRM: Xid (PCI:") + bus + "): 48, pid=1, name=x, DBE", false);
    return e ? e->gpu_uuid : std::string("no event");
  };
  EXPECT_EQ(uuidOf(0), "GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(uuidOf(1023), "GPU-00001023-0000-0000-0000-000000000000");
  EXPECT_EQ(uuidOf(1024), "");
}

// A 1 MB line: handed over cut at kMaxKernelLineBytes as soon as that much has arrived (before its
// newline, so it is not held whole), and the lines after it are still read.
TEST_F(KmsgSourceTest, LongLineIsCutWithoutBeingHeldAndTheNextLinesStillParse) {
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok());
  const std::string head = "4,105,5500000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=big, ";
  appendFile(kmsg_, head + std::string(512 * 1024, 'A'));
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; })) << "the cut line waits for its newline";
  EXPECT_EQ(src.stats().truncated, 1U);
  appendFile(kmsg_, std::string(512 * 1024, 'B') + "\n" + kXid48);
  ASSERT_TRUE(waitFor([&] { return got.size() >= 2; }));
  src.stop();
  auto ev = got.events();
  ASSERT_EQ(ev.size(), 2U);
  EXPECT_EQ(ev[0].code, 13);
  EXPECT_LE(ev[0].raw.size(), kMaxKernelLineBytes + kTruncatedMarker.size());
  EXPECT_TRUE(ev[0].raw.ends_with(kTruncatedMarker)) << ev[0].raw.substr(ev[0].raw.size() - 40);
  EXPECT_EQ(ev[0].raw.find('B'), std::string::npos);
  EXPECT_EQ(ev[1].code, 48);
  EXPECT_EQ(src.stats().truncated, 1U);
  EXPECT_EQ(src.stats().lines, 2U);  // the tail of the long line is not a line of its own
}

TEST_F(KmsgSourceTest, ScanOnceCutsALongLine) {
  appendFile(kmsg_, std::string(kXid79).substr(0, 40) + std::string(1 << 20, 'x') + "\n" + kXid13);
  KmsgSource src(platform::FsRoot(root_.path()), nullptr, opt_);
  auto r = src.scanOnce();
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1U);
  EXPECT_EQ((*r)[0].code, 13);
  EXPECT_EQ(src.stats().truncated, 1U);
  EXPECT_EQ(src.stats().lines, 2U);
}

// A FIFO as the kernel log (no size, no offsets): read as a stream, across writers, no position.
TEST_F(KmsgSourceTest, FifoIsReadAsAStream) {
  std::filesystem::remove(kmsg_);
  ASSERT_EQ(::mkfifo(kmsg_.c_str(), 0600), 0);
  EventBus bus;
  Collector got(bus);
  KmsgSource src(platform::FsRoot(root_.path()), &bus, opt_);
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  auto write = [&](const std::string& text) {
    const int fd = ::open(kmsg_.c_str(), O_WRONLY | O_CLOEXEC);  // the reader is there: no wait
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
  };
  write(std::string(kXid79) + kIrrelevant);
  ASSERT_TRUE(waitFor([&] { return got.size() >= 1; }));
  write(std::string(kXid13) + kXid48);  // a second writer after the first closed
  ASSERT_TRUE(waitFor([&] { return got.size() >= 3; }));
  src.stop();
  auto ev = got.events();
  ASSERT_EQ(ev.size(), 3U);
  EXPECT_EQ(ev[0].code, 79);
  EXPECT_EQ(ev[1].code, 13);
  EXPECT_EQ(ev[2].code, 48);
  EXPECT_EQ(src.stats().lines, 4U);
  EXPECT_EQ(src.stats().restarts, 0U);
  EXPECT_FALSE(std::filesystem::exists(state_.path() + "/kmsg-position.json"));
}

TEST(BoundedLines, HoldsAtMostTheBoundAndSplitsAcrossChunks) {
  BoundedLines lines(8);
  std::vector<std::pair<std::string, bool>> got;
  auto each = [&](std::string_view l, bool cut) { got.emplace_back(std::string(l), cut); };
  lines.feed("ab", each);
  lines.feed("c\n12345678\n123456789", each);  // exactly 8 is whole; 9 is cut
  EXPECT_LE(lines.pending(), 8U);
  for (int i = 0; i < 1000; ++i) {
    lines.feed(std::string(1000, 'z'), each);
    ASSERT_LE(lines.pending(), 8U);
  }
  lines.feed("zz\nlast", each);
  lines.finish(each);
  ASSERT_EQ(got.size(), 4U);
  EXPECT_EQ(got[0], (std::pair<std::string, bool>{"abc", false}));
  EXPECT_EQ(got[1], (std::pair<std::string, bool>{"12345678", false}));
  EXPECT_EQ(got[2], (std::pair<std::string, bool>{"12345678", true}));
  EXPECT_EQ(got[3], (std::pair<std::string, bool>{"last", false}));
}

// A stream one byte longer than the 64 KiB read chunk: the last read returns a single byte, and
// that byte is still a line (the log's last one, without its newline).
TEST(BoundedLines, AStreamsLastSingleByteIsRead) {
  std::string text;
  for (int i = 0; i < 32768; ++i) text += "a\n";  // exactly 64 KiB
  text += "z";
  std::istringstream in(text);
  std::vector<std::pair<std::string, bool>> got;
  forEachBoundedLine(in, [&](std::string_view l, bool cut) { got.emplace_back(std::string(l), cut); });
  ASSERT_EQ(got.size(), 32769U);
  EXPECT_EQ(got.front(), (std::pair<std::string, bool>{"a", false}));
  EXPECT_EQ(got.back(), (std::pair<std::string, bool>{"z", false}));
}

}  // namespace
}  // namespace gw::events

namespace gw::events {
namespace {

// The records on /dev/kmsg now, read the way the kernel serves them (one per read, non-blocking):
// their sequence numbers, oldest first.
std::vector<std::uint64_t> kernelLogSequences() {
  std::vector<std::uint64_t> out;
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return out;
  std::vector<char> buf(16384);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EPIPE || errno == EINVAL)) continue;
    if (n <= 0) break;
    const std::string rec(buf.data(), static_cast<std::size_t>(n));
    const auto c1 = rec.find(',');
    const auto c2 = rec.find(',', c1 + 1);
    out.push_back(std::stoull(rec.substr(c1 + 1, c2 - c1 - 1)));
  }
  ::close(fd);
  return out;
}

// The character-device path on the machine's real kernel log (read only: nothing is written to
// it): every record is read, the position saved is the last record's sequence number, a restart
// skips every record up to it, and a quiet log is not written back again and again. CI runs as
// root, which may read /dev/kmsg.
TEST(KmsgSourceDevice, TheRealKernelLogIsReadOnceAndResumedAfterItsLastRecord) {
  ASSERT_EQ(::access("/dev/kmsg", R_OK), 0) << "/dev/kmsg is not readable: the suite runs as root";
  TempDir root, state;
  std::filesystem::create_directories(root.path() + "/dev");
  std::filesystem::create_symlink("/dev/kmsg", root.path() + "/dev/kmsg");
  KmsgSourceOptions opt;
  opt.position_path = state.path() + "/kmsg-position.json";
  opt.poll_ms = 20;
  const auto before = kernelLogSequences();
  ASSERT_FALSE(before.empty());
  std::uint64_t first_lines = 0;
  {
    EventBus bus;
    KmsgSource src(platform::FsRoot(root.path()), &bus, opt);
    ASSERT_TRUE(src.start().ok()) << src.lastError();
    ASSERT_TRUE(waitFor([&] { return src.stats().lines >= before.size(); })) << src.stats().lines;
    ASSERT_TRUE(waitFor([&] { return std::filesystem::exists(opt.position_path); }));
    // Caught up and saved: the file is not rewritten while nothing new arrives.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    struct stat a {
    }, b{};
    ASSERT_EQ(::stat(opt.position_path.c_str(), &a), 0);
    const auto lines = src.stats().lines;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ASSERT_EQ(::stat(opt.position_path.c_str(), &b), 0);
    if (src.stats().lines == lines) {
      EXPECT_EQ(a.st_ino, b.st_ino) << "the position was written again with nothing new";
    }
    EXPECT_TRUE(src.healthy()) << src.lastError();
    src.stop();
    first_lines = src.stats().lines;
  }
  const auto after = kernelLogSequences();
  std::ifstream in(opt.position_path);
  std::stringstream text;
  text << in.rdbuf();
  const auto pos = nlohmann::json::parse(text.str(), nullptr, false);
  ASSERT_TRUE(pos.is_object()) << text.str();
  ASSERT_TRUE(pos.contains("seq")) << text.str();
  const std::uint64_t saved = pos["seq"].get<std::uint64_t>();
  // The last record it read: at least the last one there before it started, at most the last now.
  EXPECT_GE(saved, before.back());
  EXPECT_LE(saved, after.back());
  EXPECT_GE(first_lines, before.size());
  // A restart skips what was read and reads only what came since.
  EventBus bus;
  KmsgSource src(platform::FsRoot(root.path()), &bus, opt);
  ASSERT_TRUE(src.start().ok());
  std::uint64_t older = 0;
  for (auto s : after) older += s <= saved;
  ASSERT_TRUE(waitFor([&] { return src.stats().skipped >= older; })) << src.stats().skipped << " of " << older;
  src.stop();
  std::uint64_t newer = 0;
  for (auto s : kernelLogSequences()) newer += s > saved;
  EXPECT_LE(src.stats().lines, newer);  // nothing read twice
  if (newer == 0) {
    EXPECT_EQ(src.stats().lines, 0U);
  }
}

}  // namespace
}  // namespace gw::events

namespace gw::events {
namespace {

// A saved log's own time stamps are the events' times (not when the line was read): journalctl's
// ISO time with its offset, in every month (a month or day of 0 would be no date at all).
TEST(KmsgSourceWallClock, ASavedLinesOwnTimeIsTheEventsTime) {
  TempDir root;
  std::filesystem::create_directories(root.path() + "/dev");
  std::string text;
  for (int month = 1; month <= 12; ++month) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "2024-%02d-28T10:00:01.250000+01:00 node07 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=7, name=x, "
                  "Graphics Exception\n",
                  month);
    text += line;
  }
  appendFile(root.path() + "/dev/kmsg", text);
  KmsgSource src(platform::FsRoot(root.path()), nullptr);
  auto events = src.scanOnce();
  ASSERT_TRUE(events) << events.error();
  ASSERT_EQ(events->size(), 12u);
  for (int month = 1; month <= 12; ++month) {
    std::tm tm{};
    tm.tm_year = 124;
    tm.tm_mon = month - 1;
    tm.tm_mday = 28;
    tm.tm_hour = 9;  // 10:00:01 at +01:00
    tm.tm_sec = 1;
    EXPECT_EQ((*events)[static_cast<std::size_t>(month - 1)].timestamp_ms,
              static_cast<std::int64_t>(timegm(&tm)) * 1000 + 250)
        << "month " << month;
  }
}

}  // namespace
}  // namespace gw::events

namespace gw::events {
namespace {

// A log saved with CRLF line ends (copied through Windows, or a serial console): the carriage
// return is not part of the event's text.
TEST(KmsgSourceLines, CarriageReturnsAreNotPartOfTheEvent) {
  TempDir root;
  std::filesystem::create_directories(root.path() + "/dev");
  appendFile(root.path() + "/dev/kmsg",
             "4,100,5000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=77, name=train, Graphics Exception\r\n"
             "4,101,5000001,-;NVRM: Xid (PCI:0000:3b:00): 48, pid=78, name=train, DBE\r\r\n");
  KmsgSource src(platform::FsRoot(root.path()), nullptr);
  auto events = src.scanOnce();
  ASSERT_TRUE(events) << events.error();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].raw, "4,100,5000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=77, name=train, Graphics Exception");
  EXPECT_EQ((*events)[1].raw, "4,101,5000001,-;NVRM: Xid (PCI:0000:3b:00): 48, pid=78, name=train, DBE");
  EXPECT_EQ((*events)[1].message.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace gw::events
