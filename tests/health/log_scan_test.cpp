// parseLogFile over a mixed real-world kernel log (tests/events/fixtures/dmesg-sample.txt).
#include "health/log_scan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

namespace gw::health {
namespace {

using events::KernelEventKind;

TEST(LogScan, FixtureLog) {
  std::ifstream in(std::string(GW_TEST_SOURCE_DIR) + "/tests/events/fixtures/dmesg-sample.txt");
  ASSERT_TRUE(in.good());
  const LogScan scan = parseLogFile(in);
  EXPECT_EQ(scan.lines, 31U);
  EXPECT_EQ(scan.malformed, 2U);
  ASSERT_EQ(scan.firstErrors.size(), 2U);
  EXPECT_EQ(scan.firstErrors[0].lineNumber, 22U);
  EXPECT_EQ(scan.firstErrors[1].lineNumber, 28U);
  EXPECT_EQ(scan.events.size() + scan.irrelevant + scan.malformed, scan.lines);

  std::map<KernelEventKind, int> byKind;
  std::map<int, int> xids;
  for (const auto& ev : scan.events) {
    ++byKind[ev.kind];
    if (ev.kind == KernelEventKind::kXid) ++xids[ev.code];
  }
  EXPECT_EQ(byKind[KernelEventKind::kGpuUuid], 1);
  EXPECT_EQ(byKind[KernelEventKind::kSXid], 2);
  EXPECT_EQ(xids[13], 2);
  EXPECT_EQ(xids[79], 2);  // the Xid line and the inferred "fallen off the bus" line
  for (int code : {31, 43, 45, 48, 62, 63, 94, 119, 144, 149, 154}) {
    EXPECT_EQ(xids[code], 1) << code;
  }
  EXPECT_EQ(scan.events.size(), 18U);

  // Every event carries its source timestamp and a normalised bus id.
  for (const auto& ev : scan.events) {
    EXPECT_TRUE(ev.monotonicUs.has_value()) << ev.raw;
    EXPECT_EQ(ev.pciBusId.size(), 16U) << ev.raw;
  }
  int inferred = 0;
  for (const auto& ev : scan.events) inferred += ev.inferred ? 1 : 0;
  EXPECT_EQ(inferred, 1);
}

TEST(LogScan, EmptyAndCrLfInput) {
  std::istringstream empty("");
  EXPECT_EQ(parseLogFile(empty).lines, 0U);
  std::istringstream crlf("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=a, DBE\r\n[ 2.0] hello\r\n");
  const LogScan scan = parseLogFile(crlf);
  EXPECT_EQ(scan.lines, 2U);
  ASSERT_EQ(scan.events.size(), 1U);
  EXPECT_EQ(scan.events[0].message, "DBE");
  EXPECT_EQ(scan.irrelevant, 1U);
}

// Every malformed line is counted, but only the first 20 are kept with their line numbers (memory
// stays bounded on a huge log): lines 1 to 20 of 50, written as a number here so that the limit
// cannot move unnoticed.
TEST(LogScan, KeepsOnlyTheFirstErrors) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "NVRM: Xid (PCI:0000:zz:00): abc\n";
  std::istringstream in(text);
  const LogScan scan = parseLogFile(in);
  EXPECT_EQ(scan.malformed, 50U);
  ASSERT_EQ(scan.firstErrors.size(), 20U);
  EXPECT_EQ(scan.firstErrors.front().lineNumber, 1U);
  EXPECT_EQ(scan.firstErrors.back().lineNumber, 20U);
  EXPECT_TRUE(scan.events.empty());
}

}  // namespace
}  // namespace gw::health
