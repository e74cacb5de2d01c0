// EventLog: de-duplication across sources and of the "fallen off the bus" follow-up, the ring,
// since(), Xid counters and the JSON-lines file.
#include "events/event_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include <nlohmann/json.hpp>

#include "events_test_util.h"

namespace gw::events {
namespace {

GpuEvent nvmlXid(std::int64_t ts, int code, int gpu = 2) {
  GpuEvent e;
  e.timestamp_ms = ts;
  e.source = EventSource::Nvml;
  e.kind = EventKind::Xid;
  e.code = code;
  e.gpu_index = gpu;
  e.gpu_uuid = "GPU-" + std::to_string(gpu);
  e.pci_bus_id = "00000000:3B:00.0";
  e.message = "Xid critical error (NVML event)";
  return e;
}

GpuEvent kernelXid(std::int64_t ts, int code, bool inferred = false) {
  GpuEvent e;
  e.timestamp_ms = ts;
  e.source = EventSource::KernelLog;
  e.kind = inferred ? EventKind::FallenOffBus : EventKind::Xid;
  e.code = inferred ? 79 : code;
  e.pci_bus_id = "00000000:3B:00.0";  // no lookup: no index or UUID
  e.message = inferred ? "GPU has fallen off the bus." : "GPU has fallen off the bus.";
  e.pid = inferred ? -1 : 1234;
  e.process = inferred ? "" : "python3";
  e.raw = "NVRM: ...";
  return e;
}

TEST(EventLog, NvmlAndKernelXidWithinWindowAreOneEvent) {
  EventBus out;
  testing::Collector published(out);
  EventLog log({}, &out);
  EXPECT_FALSE(log.add(nvmlXid(10'000, 79)).merged);
  auto r = log.add(kernelXid(12'000, 79));
  EXPECT_TRUE(r.merged);
  auto all = log.all();
  ASSERT_EQ(all.size(), 1U);
  const auto& e = all[0];
  EXPECT_EQ(e.source, EventSource::KernelLog);  // the richer text
  ASSERT_EQ(e.also_seen_by.size(), 1U);
  EXPECT_EQ(e.also_seen_by[0], EventSource::Nvml);
  EXPECT_EQ(e.pid, 1234);
  EXPECT_EQ(e.process, "python3");
  EXPECT_EQ(e.gpu_index, 2);          // from NVML
  EXPECT_EQ(e.gpu_uuid, "GPU-2");     // from NVML
  EXPECT_EQ(e.timestamp_ms, 10'000);  // the earliest
  EXPECT_EQ(published.size(), 1U);
  auto counts = log.xidCounts();
  ASSERT_EQ(counts.size(), 1U);
  EXPECT_EQ(counts[0].count, 1U);
  EXPECT_EQ(counts[0].code, 79);
}

TEST(EventLog, KernelFirstThenNvmlAlsoMerges) {
  EventLog log;
  log.add(kernelXid(10'000, 48));
  EXPECT_TRUE(log.add(nvmlXid(10'500, 48)).merged);
  auto all = log.all();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].source, EventSource::KernelLog);
  EXPECT_EQ(all[0].gpu_uuid, "GPU-2");
}

TEST(EventLog, OutsideWindowAreTwoEvents) {
  EventLog log;
  log.add(nvmlXid(10'000, 79));
  EXPECT_FALSE(log.add(kernelXid(15'001, 79)).merged);
  EXPECT_EQ(log.all().size(), 2U);
  EXPECT_EQ(log.mergedCount(), 0U);
}

// The de-duplication window (5 s) at its value and one step (1 ms) either side, both orders.
TEST(EventLog, DedupWindowBoundary) {
  ASSERT_EQ(EventLogOptions{}.window_ms, 5000);
  for (std::int64_t gap : {4999, 5000, 5001}) {
    EventLog nvmlFirst;
    nvmlFirst.add(nvmlXid(10'000, 79));
    EXPECT_EQ(nvmlFirst.add(kernelXid(10'000 + gap, 79)).merged, gap <= 5000) << gap;
    EventLog kernelFirst;
    kernelFirst.add(kernelXid(10'000, 48));
    EXPECT_EQ(kernelFirst.add(nvmlXid(10'000 + gap, 48)).merged, gap <= 5000) << gap;
    EventLog laterFirst;  // a late arrival stamped before the first
    laterFirst.add(nvmlXid(10'000 + gap, 79));
    EXPECT_EQ(laterFirst.add(kernelXid(10'000, 79)).merged, gap <= 5000) << gap;
  }
}

TEST(EventLog, SameSourceTwiceIsTwoEvents) {
  EventLog log;
  log.add(nvmlXid(10'000, 13));
  EXPECT_FALSE(log.add(nvmlXid(10'100, 13)).merged);
  EXPECT_EQ(log.all().size(), 2U);
}

TEST(EventLog, DifferentGpuOrCodeIsNotMerged) {
  EventLog log;
  log.add(nvmlXid(10'000, 79, 2));
  auto other = kernelXid(10'100, 79);
  other.pci_bus_id = "00000000:5D:00.0";
  EXPECT_FALSE(log.add(other).merged);
  EXPECT_FALSE(log.add(kernelXid(10'200, 13)).merged);
  EXPECT_EQ(log.all().size(), 3U);
}

TEST(EventLog, Xid79FollowedByFallenOffTheBusIsOneEvent) {
  EventLog log;
  log.add(kernelXid(10'000, 79));
  auto r = log.add(kernelXid(10'300, 79, /*inferred=*/true));
  EXPECT_TRUE(r.merged);
  auto all = log.all();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].kind, EventKind::Xid);
  EXPECT_EQ(all[0].code, 79);
  EXPECT_EQ(all[0].pid, 1234);
  EXPECT_TRUE(all[0].also_seen_by.empty());
  // And NVML's own Xid 79 for the same GPU joins it too.
  EXPECT_TRUE(log.add(nvmlXid(10'400, 79)).merged);
  ASSERT_EQ(log.all().size(), 1U);
  EXPECT_EQ(log.all()[0].also_seen_by.size(), 1U);
  auto counts = log.xidCounts();
  ASSERT_EQ(counts.size(), 1U);
  EXPECT_EQ(counts[0].count, 1U);
}

// Each source is named once: the NVML event that joined a kernel Xid 79 stays one entry in
// also_seen_by when the "fallen off the bus" line joins them afterwards.
TEST(EventLog, ASourceIsListedOnceWhenAThirdReportJoinsAMergedEvent) {
  EventLog log;
  log.add(kernelXid(10'000, 79));
  EXPECT_TRUE(log.add(nvmlXid(10'200, 79)).merged);
  EXPECT_TRUE(log.add(kernelXid(10'300, 79, /*inferred=*/true)).merged);
  auto all = log.all();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].source, EventSource::KernelLog);
  ASSERT_EQ(all[0].also_seen_by.size(), 1U);
  EXPECT_EQ(all[0].also_seen_by[0], EventSource::Nvml);
}

// An event's own source is not among the others that saw it, even when the caller put it there.
TEST(EventLog, AnEventsOwnSourceIsNotListedAsAlsoSeenBy) {
  EventLog log;
  GpuEvent e = nvmlXid(10'000, 13);
  e.also_seen_by = {EventSource::Nvml};
  log.add(e);
  ASSERT_EQ(log.all().size(), 1U);
  EXPECT_TRUE(log.all()[0].also_seen_by.empty());
}

TEST(EventLog, FallenOffFirstThenXidLineKeepsTheXid) {
  EventLog log;
  log.add(kernelXid(10'000, 79, true));
  EXPECT_TRUE(log.add(kernelXid(10'001, 79)).merged);
  auto all = log.all();
  ASSERT_EQ(all.size(), 1U);
  EXPECT_EQ(all[0].kind, EventKind::Xid);
  EXPECT_EQ(all[0].pid, 1234);
}

TEST(EventLog, RingIsBoundedAndSinceFilters) {
  EventLogOptions opt;
  opt.capacity = 5;
  EventLog log(opt);
  for (int i = 0; i < 8; ++i) log.add(nvmlXid(1'000'000 + i * 10'000, 13));
  auto all = log.all();
  ASSERT_EQ(all.size(), 5U);
  EXPECT_EQ(all.front().timestamp_ms, 1'030'000);
  EXPECT_EQ(log.since(1'060'000).size(), 2U);
  EXPECT_EQ(log.since(0, 1).size(), 1U);
  EXPECT_EQ(log.since(0, 1)[0].timestamp_ms, 1'070'000);
  // Counters are not bounded by the ring.
  EXPECT_EQ(log.xidCounts()[0].count, 8U);
}

// The default ring (docs/events.md: the most recent 10 000 events) at its size: 10000 events
// are all kept, the 10001st pushes out the first.
TEST(EventLog, TheDefaultRingHoldsTenThousandEvents) {
  EventLog log;
  for (int i = 0; i < 10'000; ++i) log.add(nvmlXid(1'000'000 + i * 10'000LL, 13, i % 8));
  EXPECT_EQ(log.size(), 10'000U);
  EXPECT_EQ(log.all().front().timestamp_ms, 1'000'000);
  log.add(nvmlXid(1'000'000 + 10'000 * 10'000LL, 13, 0));
  EXPECT_EQ(log.size(), 10'000U);
  EXPECT_EQ(log.all().front().timestamp_ms, 1'010'000);
}

TEST(EventLog, AttachedToABus) {
  EventBus in;
  EventLog log;
  log.attach(in);
  in.publish(nvmlXid(10'000, 79));
  in.publish(kernelXid(10'010, 79));
  EXPECT_EQ(log.all().size(), 1U);
}

TEST(EventLog, PersistedEventsSurviveARestart) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/events.jsonl";
  {
    EventLogOptions opt;
    opt.persist_path = path;
    EventLog log(opt);
    log.add(nvmlXid(10'000, 79));
    log.add(kernelXid(10'500, 79));  // merged: appended again with the same id
    log.add(nvmlXid(20'000, 13));
  }
  testing::appendFile(path, "{not json\n");
  EventLogOptions opt;
  opt.persist_path = path;
  EventLog again(opt);
  auto all = again.all();
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].source, EventSource::KernelLog);
  ASSERT_EQ(all[0].also_seen_by.size(), 1U);
  EXPECT_EQ(all[0].pid, 1234);
  EXPECT_EQ(all[1].code, 13);
  EXPECT_FALSE(again.loadError().empty());
  auto r = again.add(nvmlXid(30'000, 31));
  EXPECT_GT(r.event.id, all[1].id);
}

// The event file and the counters file in `dir`, as the agent keeps them in its data folder.
EventLogOptions filesIn(const testing::TempDir& dir) {
  EventLogOptions opt;
  opt.persist_path = dir.path() + "/events.jsonl";
  opt.counters_path = dir.path() + "/xid-counters.json";
  return opt;
}

std::uint64_t countOf(const EventLog& log, int code) {
  std::uint64_t n = 0;
  for (const auto& c : log.xidCounts())
    if (c.code == code) n += c.count;
  return n;
}

std::uintmax_t sizeOf(const std::string& path) {
  std::error_code ec;
  auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : n;
}

// events.jsonl is rotated by size, and the Xid counters count from the log's beginning across
// rotations and restarts, also for a code whose every event has rotated out of both files.
TEST(EventLog, RotatedBySizeAndCountersSurviveRotationAndRestart) {
  testing::TempDir dir;
  EventLogOptions opt = filesIn(dir);
  opt.max_bytes = 4096;
  {
    EventLog log(opt);
    for (int i = 0; i < 5; ++i) log.add(nvmlXid(1'000'000 + i * 10'000, 48));
    for (int i = 0; i < 300; ++i) {
      log.add(nvmlXid(2'000'000 + i * 10'000, 13));
      ASSERT_LE(sizeOf(opt.persist_path), opt.max_bytes) << "after event " << i;
      ASSERT_LE(sizeOf(opt.persist_path + ".1"), opt.max_bytes) << "after event " << i;
    }
    EXPECT_TRUE(std::filesystem::exists(opt.persist_path + ".1"));
    EXPECT_EQ(countOf(log, 48), 5U);
    EXPECT_EQ(countOf(log, 13), 300U);
    EXPECT_TRUE(log.loadError().empty()) << log.loadError();

    // A second reader while the first still runs sees what a crash would leave: the counters of
    // the last rotation plus the events after them in the files.
    EventLog crashed(opt);
    EXPECT_EQ(countOf(crashed, 48), 5U);
    EXPECT_EQ(countOf(crashed, 13), 300U);
  }
  // No Xid 48 is left in either file...
  std::ifstream a(opt.persist_path), b(opt.persist_path + ".1");
  std::string text((std::istreambuf_iterator<char>(a)), {});
  text.append((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(text.find("\"code\":48"), std::string::npos);
  // ...and after a restart its series is still there, and the ids go on.
  EventLog again(opt);
  EXPECT_EQ(countOf(again, 48), 5U);
  EXPECT_EQ(countOf(again, 13), 300U);
  EXPECT_EQ(again.xidTotal(), 305U);
  auto r = again.add(nvmlXid(9'000'000, 13));
  EXPECT_EQ(r.event.id, 306U);
  EXPECT_EQ(countOf(again, 13), 301U);
}

// After a restart the ring holds the events of the rotated file too, not only those written
// since the last rotation: /api/v1/events keeps showing them.
TEST(EventLog, EventsInTheRotatedFileAreBackAfterARestart) {
  testing::TempDir dir;
  EventLogOptions opt = filesIn(dir);
  opt.max_bytes = 4096;
  std::size_t n = 0;
  {
    EventLog log(opt);
    while (!std::filesystem::exists(opt.persist_path + ".1")) log.add(nvmlXid(1'000'000 + ++n * 10'000, 13));
    log.add(nvmlXid(1'000'000 + ++n * 10'000, 13));
    ASSERT_EQ(log.size(), n);
  }
  EventLog again(opt);
  EXPECT_EQ(again.size(), n);
  auto all = again.all();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().id, 1U);
  EXPECT_EQ(all.back().id, n);
}

TEST(EventLog, WithoutCountersFileCountsEverythingTheFilesHoldNotOnlyTheRing) {
  testing::TempDir dir;
  EventLogOptions opt;
  opt.persist_path = dir.path() + "/events.jsonl";
  opt.capacity = 3;
  {
    EventLog log(opt);
    for (int i = 0; i < 10; ++i) log.add(nvmlXid(1'000'000 + i * 10'000, 13));
  }
  EventLog again(opt);
  EXPECT_EQ(again.size(), 3U);
  EXPECT_EQ(countOf(again, 13), 10U);
}

TEST(EventLog, CountersAreBoundedInDistinctPairs) {
  EventLogOptions opt;
  opt.max_counters = 3;
  EventLog log(opt);
  for (int code = 1; code <= 5; ++code) log.add(nvmlXid(1'000'000 + code * 10'000, code));
  EXPECT_EQ(log.xidCounts().size(), 3U);
  EXPECT_EQ(log.xidDropped(), 2U);
  log.add(nvmlXid(2'000'000, 1));  // a pair already counted still counts
  EXPECT_EQ(countOf(log, 1), 2U);
}

// The agent runs with the default: 4096 distinct (GPU, code) pairs (docs/events.md).
TEST(EventLog, TheDefaultCountsFourThousandAndNinetySixPairs) {
  EventLog log(EventLogOptions{});
  for (int i = 0; i < 4097; ++i) log.add(nvmlXid(1'000'000 + i * 10'000, 1 + i % 64, i / 64));
  EXPECT_EQ(log.xidCounts().size(), 4096U);
  EXPECT_EQ(log.xidDropped(), 1U);
}

TEST(EventLog, JsonLineRoundTrip) {
  auto e = kernelXid(123, 79);
  e.id = 7;
  e.also_seen_by = {EventSource::Nvml};
  auto back = eventFromJsonLine(eventToJsonLine(e));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->id, 7U);
  EXPECT_EQ(back->kind, EventKind::Xid);
  EXPECT_EQ(back->pid, 1234);
  EXPECT_EQ(back->also_seen_by.size(), 1U);
  EXPECT_FALSE(eventFromJsonLine("{}").ok());
}

// An event no process is known for (NVML reports none) is written with pid -1, the value a line
// without a pid reads back as: the file has one spelling of "no process".
TEST(EventLog, AnEventWithoutAProcessIsWrittenWithPidMinusOne) {
  EXPECT_EQ(GpuEvent{}.pid, -1);
  const std::string line = eventToJsonLine(nvmlXid(123, 48));
  EXPECT_NE(line.find("\"pid\":-1,"), std::string::npos) << line;
  auto back = eventFromJsonLine(line);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->pid, -1);
}

// A counters file with more distinct pairs than max_counters (written with a larger limit, or by
// hand) loads exactly max_counters of them; one with exactly that many loads all.
TEST(EventLog, CountersFileLoadsAtMostMaxCounters) {
  testing::TempDir dir;
  EventLogOptions opt = filesIn(dir);
  {
    std::ofstream out(opt.counters_path);
    out << R"({"through_id":0,"dropped":0,"xids":[)"
        << R"({"gpu":0,"uuid":"GPU-a","code":13,"count":2,"last_ms":5},)"
        << R"({"gpu":0,"uuid":"GPU-a","code":31,"count":3,"last_ms":6},)"
        << R"({"gpu":1,"uuid":"GPU-b","code":48,"count":4,"last_ms":7},)"
        << R"({"gpu":1,"uuid":"GPU-b","code":79,"count":5,"last_ms":8}]})"
        << "\n";
  }
  opt.max_counters = 4;
  EventLog all(opt);
  EXPECT_TRUE(all.loadError().empty()) << all.loadError();
  EXPECT_EQ(all.xidCounts().size(), 4U);
  EXPECT_EQ(all.xidTotal(), 14U);
  opt.max_counters = 3;
  EventLog capped(opt);
  EXPECT_EQ(capped.xidCounts().size(), 3U);
  EXPECT_EQ(capped.xidTotal(), 9U);  // the first three in the file
  EXPECT_EQ(countOf(capped, 79), 0U);
}

// The event file is read back line by line within kMaxEventLineBytes: a line one byte longer is
// skipped without being held whole (a damaged disk can leave megabytes without a newline), one
// of exactly that length is read, and the lines around them still load.
TEST(EventLog, AnEventLineLongerThanTheBoundIsSkippedAndTheRestLoads) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/events.jsonl";
  const std::string first = eventToJsonLine([] {
    GpuEvent e = nvmlXid(10'000, 13);
    e.id = 1;
    return e;
  }());
  // A valid event whose raw text pads its line to exactly the bound (and one byte past it).
  const auto lineOfLength = [](std::size_t n, std::uint64_t id) {
    GpuEvent e = nvmlXid(20'000, 31);
    e.id = id;
    e.raw = "";
    const std::size_t base = eventToJsonLine(e).size();
    e.raw.assign(n - base, 'r');
    std::string line = eventToJsonLine(e);
    EXPECT_EQ(line.size(), n);
    return line;
  };
  testing::appendFile(path, first + "\n" + lineOfLength(kMaxEventLineBytes, 2) + "\n" +
                                lineOfLength(kMaxEventLineBytes + 1, 3) + "\n" + std::string(3 << 20, '[') + "\n");
  GpuEvent last = nvmlXid(30'000, 48);
  last.id = 4;
  testing::appendFile(path, eventToJsonLine(last) + "\n");
  EventLogOptions opt;
  opt.persist_path = path;
  EventLog log(opt);
  auto all = log.all();
  ASSERT_EQ(all.size(), 3U);
  EXPECT_EQ(all[0].id, 1U);
  EXPECT_EQ(all[1].id, 2U);
  EXPECT_EQ(all[1].raw.size(), kMaxEventLineBytes - (eventToJsonLine(all[1]).size() - all[1].raw.size()));
  EXPECT_EQ(all[2].id, 4U);
  EXPECT_EQ(all[2].code, 48);
  EXPECT_NE(log.loadError().find("2 unreadable line(s)"), std::string::npos) << log.loadError();
}

// What a line's numbers may be: whole, in their type's range, an id below 2^63. A fraction or a
// number out of range is a damaged line (nlohmann's get<int>() of 1e300 is a cast's undefined
// behaviour), never a wrapped id or GPU.
TEST(EventLog, AnEventLinesNumbersMustBeWholeAndInRange) {
  GpuEvent e = nvmlXid(10'000, 13);
  e.id = 7;
  nlohmann::json good = nlohmann::json::parse(eventToJsonLine(e));
  ASSERT_TRUE(eventFromJsonLine(good.dump()).ok());
  const auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = good;
    j[key] = std::move(v);
    return eventFromJsonLine(j.dump());
  };
  EXPECT_TRUE(with("id", kMaxEventId).ok());
  EXPECT_FALSE(with("id", kMaxEventId + 1).ok());
  EXPECT_TRUE(with("gpu", 2147483647).ok());
  EXPECT_FALSE(with("gpu", 2147483648LL).ok());
  EXPECT_TRUE(with("gpu", -2147483648LL).ok());
  EXPECT_FALSE(with("gpu", -2147483649LL).ok());
  EXPECT_FALSE(with("code", 1e300).ok());
  EXPECT_FALSE(with("code", 13.5).ok());
  EXPECT_FALSE(with("ts_ms", "10000").ok());
  EXPECT_FALSE(with("pid", 1e20).ok());
  EXPECT_TRUE(with("ts_ms", 0).ok());
  EXPECT_FALSE(with("ts_ms", -1).ok());
  EXPECT_TRUE(with("ts_ms", kMaxEventTimeMs).ok());
  EXPECT_FALSE(with("ts_ms", kMaxEventTimeMs + 1).ok());
  EXPECT_EQ(with("ts_ms", INT64_MIN).error(), "bad event line: \"ts_ms\" is not a time from 1970 to 9999");
  auto bad = with("code", 1e300);
  EXPECT_EQ(bad.error(), "bad event line: \"code\" is not a whole number in range");
  auto deep = eventFromJsonLine(R"({"id":1,"ts_ms":1,"source":"nvml","kind":"xid","also_seen_by":[[["nvml"]]]})");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error(), "bad event line: JSON nested deeper than 3");
  EXPECT_FALSE(eventFromJsonLine("[1]").ok());
}

// The counters file is read within kMaxCountersFileBytes and the parser's bounds; a damaged one
// (a directory, past the size, nested too deep, a count that is not whole) is said and ignored:
// the event log's own lines are counted instead.
TEST(EventLog, ADamagedCountersFileIsSaidAndTheEventsAreCountedInstead) {
  testing::TempDir dir;
  EventLogOptions opt = filesIn(dir);
  GpuEvent e = nvmlXid(10'000, 13);
  e.id = 1;
  testing::appendFile(opt.persist_path, eventToJsonLine(e) + "\n");
  const std::string valid = R"({"through_id":0,"dropped":0,"xids":[{"gpu":0,"uuid":"GPU-a","code":31,"count":2}]})";
  struct Case {
    std::string text;
    std::string says;
  };
  const std::vector<Case> cases = {
      {valid, ""},
      {valid + std::string(kMaxCountersFileBytes - valid.size(), ' '), ""},
      {valid + std::string(kMaxCountersFileBytes - valid.size() + 1, ' '),
       "the Xid counters is 16777217 bytes; at most 16777216"},
      {std::string(5, '[') + std::string(5, ']'), "JSON nested deeper than 4"},
      {R"({"through_id":0,"xids":[{"gpu":0,"uuid":"GPU-a","code":31,"count":2.5}]})",
       "\"count\" is not a whole number in range"},
      {R"({"through_id":9223372036854775809,"xids":[]})", "\"through_id\" is past the largest event id"},
  };
  for (const auto& c : cases) {
    std::filesystem::remove(opt.counters_path);
    testing::appendFile(opt.counters_path, c.text);
    EventLog log(opt);
    if (c.says.empty()) {
      EXPECT_TRUE(log.loadError().empty()) << log.loadError();
      EXPECT_EQ(countOf(log, 31), 2U);
      EXPECT_EQ(countOf(log, 13), 1U);
    } else {
      EXPECT_NE(log.loadError().find("ignoring unreadable Xid counters"), std::string::npos) << log.loadError();
      EXPECT_NE(log.loadError().find(c.says), std::string::npos) << log.loadError();
      EXPECT_EQ(countOf(log, 31), 0U);
      EXPECT_EQ(countOf(log, 13), 1U);
    }
  }
  std::filesystem::remove(opt.counters_path);
  std::filesystem::create_directory(opt.counters_path);
  EventLog on_dir(opt);
  EXPECT_NE(on_dir.loadError().find("the Xid counters must be a regular file (this is a directory)"), std::string::npos)
      << on_dir.loadError();
  EXPECT_EQ(countOf(on_dir, 13), 1U);
}

// Counts from a file add up without wrapping: a pair listed twice whose counts pass 2^64 stays at
// the largest count, and so does a new Xid of it.
TEST(EventLog, CountsFromTheCountersFileSaturateInsteadOfWrapping) {
  testing::TempDir dir;
  EventLogOptions opt = filesIn(dir);
  testing::appendFile(opt.counters_path,
                      R"({"through_id":0,"xids":[{"gpu":0,"uuid":"GPU-0","code":31,"count":18446744073709551615},)"
                      R"({"gpu":0,"uuid":"GPU-0","code":31,"count":2}]})");
  EventLog log(opt);
  EXPECT_TRUE(log.loadError().empty()) << log.loadError();
  EXPECT_EQ(countOf(log, 31), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(log.xidTotal(), std::numeric_limits<std::uint64_t>::max());
  log.add(nvmlXid(10'000, 31, 0));  // one more of that pair: still the largest count, not 0
  EXPECT_EQ(countOf(log, 31), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(log.xidTotal(), std::numeric_limits<std::uint64_t>::max());
}

}  // namespace
}  // namespace gw::events
