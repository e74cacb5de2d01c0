// The kernel-log parser against real-world line formats (dmesg, dmesg -T, /dev/kmsg, journalctl,
// syslog, bare), the NVIDIA bodies it understands, malformed NVIDIA lines and irrelevant lines.
#include "events/kmsg_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gw::events {
namespace {

KernelEvent mustParse(std::string_view line) {
  auto r = parseKernelLine(line);
  EXPECT_TRUE(r.ok()) << "line: " << line << "\nerror: " << r.error();
  if (!r.ok()) return {};
  EXPECT_TRUE(r->has_value()) << "not an event: " << line;
  if (!r->has_value()) return {};
  return **r;
}

void expectNotEvent(std::string_view line) {
  auto r = parseKernelLine(line);
  ASSERT_TRUE(r.ok()) << "line: " << line << "\nerror: " << r.error();
  EXPECT_FALSE(r->has_value()) << "unexpected event from: " << line;
}

void expectMalformed(std::string_view line) {
  auto r = parseKernelLine(line);
  EXPECT_FALSE(r.ok()) << "expected a parse error for: " << line;
  if (!r.ok()) {
    EXPECT_NE(r.error().find("malformed"), std::string::npos) << r.error();
  }
}

// ------------------------------------------------------------------ a real driver's lines

// What a real driver (580.159.04, open module, on an H200) wrote to /dev/kmsg from load to an
// idle hour: its banner, a poison-interrupt workaround at boot and a deprecation notice. None is
// a fault, and none is malformed.
TEST(KmsgParser, ARealDriversOwnLinesAreNoEvents) {
  for (std::string_view line : {
           "4,352,443947,-;nvidia: loading out-of-tree module taints kernel.",
           "6,353,519893,-;nvidia-nvlink: Nvlink Core is being initialized, major device number 240",
           "3,354,519901,-;NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
           "(nixbld@)  ",
           "4,355,1069353,c;NVRM: gpuClearFbhubPoisonIntrForBug2924523_GA100: FBHUB Interrupt detected. Clearing it.",
           "4,356,3521831,c;NVRM: Persistence mode is deprecated and will be removed in a future release. Please "
           "use nvidia-persistenced instead.",
       })
    expectNotEvent(line);
}

// ------------------------------------------------------------------ sources and timestamps

TEST(KmsgParser, KmsgRecordXid79WithPidAndName) {
  auto ev = mustParse(
      "6,1234,5678901,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen "
      "off the bus.");
  EXPECT_EQ(ev.kind, KernelEventKind::kXid);
  EXPECT_EQ(ev.code, 79);
  EXPECT_FALSE(ev.inferred);
  EXPECT_EQ(ev.pciBusId, "00000000:3B:00.0");
  ASSERT_TRUE(ev.pid.has_value());
  EXPECT_EQ(*ev.pid, 1234);
  EXPECT_EQ(ev.processName, "python3");
  EXPECT_EQ(ev.message, "GPU has fallen off the bus.");
  ASSERT_TRUE(ev.monotonicUs.has_value());
  EXPECT_EQ(*ev.monotonicUs, 5678901U);
  ASSERT_TRUE(ev.kmsgSequence.has_value());
  EXPECT_EQ(*ev.kmsgSequence, 1234U);
  ASSERT_TRUE(ev.level.has_value());
  EXPECT_EQ(*ev.level, KernelLevel::kInfo);
  EXPECT_FALSE(ev.wallClock.has_value());
}

TEST(KmsgParser, KmsgRecordWithCallerFieldAndFacility) {
  // Newer kernels add ",caller=T1"; priority 11 = facility 1 (user), level 3 (err).
  auto ev = mustParse(
      "11,339,5140900,-,caller=T1;NVRM: Xid (PCI:0000:86:00): 48, pid=61001, name=torchrun, An "
      "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
      "partition 6, subpartition 0.");
  EXPECT_EQ(ev.code, 48);
  EXPECT_EQ(ev.pciBusId, "00000000:86:00.0");
  ASSERT_TRUE(ev.level.has_value());
  EXPECT_EQ(*ev.level, KernelLevel::kError);
  EXPECT_EQ(*ev.monotonicUs, 5140900U);
  EXPECT_EQ(*ev.kmsgSequence, 339U);
}

TEST(KmsgParser, DmesgXid13WithUnknownPidAndName) {
  auto ev = mustParse(
      "[ 1021.113355] NVRM: Xid (PCI:0000:3b:00): 13, pid='<unknown>', name=<unknown>, Graphics "
      "SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address");
  EXPECT_EQ(ev.code, 13);
  EXPECT_FALSE(ev.pid.has_value());
  EXPECT_TRUE(ev.processName.empty());
  EXPECT_EQ(ev.message, "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address");
  ASSERT_TRUE(ev.monotonicUs.has_value());
  EXPECT_EQ(*ev.monotonicUs, 1021113355U);
  EXPECT_FALSE(ev.level.has_value());
}

// A bus:device address without a domain is domain 0, as the driver's short form means.
TEST(KmsgParser, AnAddressWithoutADomainIsDomainZero) {
  auto ev = mustParse("[   12.5] NVRM: Xid (PCI:3b:00): 45, pid=1, name=a, Ch 00000001");
  EXPECT_EQ(ev.pciBusId, "00000000:3B:00.0");
  auto full = mustParse("[   12.5] NVRM: Xid (PCI:0001:3b:00): 45, pid=1, name=a, Ch 00000001");
  EXPECT_EQ(full.pciBusId, "00000001:3B:00.0");
}

TEST(KmsgParser, DmesgShortFractionIsScaledToMicroseconds) {
  auto ev = mustParse("[   12.5] NVRM: Xid (PCI:0000:3b:00): 45, pid=1, name=a, Ch 00000001");
  ASSERT_TRUE(ev.monotonicUs.has_value());
  EXPECT_EQ(*ev.monotonicUs, 12500000U);
}

// Microseconds are the clock's grain: six digits are read whole, a seventh and later are dropped.
TEST(KmsgParser, DmesgFractionPastMicrosecondsIsCutAtSixDigits) {
  auto six = mustParse("[   12.123456] NVRM: Xid (PCI:0000:3b:00): 45, pid=1, name=a, Ch 00000001");
  ASSERT_TRUE(six.monotonicUs.has_value());
  EXPECT_EQ(*six.monotonicUs, 12123456U);
  auto nine = mustParse("[   12.123456789] NVRM: Xid (PCI:0000:3b:00): 45, pid=1, name=a, Ch 00000001");
  ASSERT_TRUE(nine.monotonicUs.has_value());
  EXPECT_EQ(*nine.monotonicUs, 12123456U);
}

TEST(KmsgParser, DmesgHumanTimeWithYear) {
  auto ev = mustParse("[Sun Mar 29 19:20:37 2026] NVRM: Xid (PCI:0000:5f:00): 79, GPU has fallen off the bus.");
  EXPECT_EQ(ev.code, 79);
  EXPECT_EQ(ev.pciBusId, "00000000:5F:00.0");
  EXPECT_FALSE(ev.pid.has_value());
  EXPECT_EQ(ev.message, "GPU has fallen off the bus.");
  ASSERT_TRUE(ev.wallClock.has_value());
  EXPECT_EQ(ev.wallClock->year, 2026);
  EXPECT_EQ(ev.wallClock->month, 3);
  EXPECT_EQ(ev.wallClock->day, 29);
  EXPECT_EQ(ev.wallClock->hour, 19);
  EXPECT_EQ(ev.wallClock->minute, 20);
  EXPECT_EQ(ev.wallClock->second, 37);
  EXPECT_FALSE(ev.monotonicUs.has_value());
}

// A leap second (23:59:60, which UTC inserts) is a time the kernel can print; :61 is not.
TEST(KmsgParser, ALeapSecondIsATimeSixtyOneIsNot) {
  auto ev = mustParse("[Wed Dec 31 23:59:60 2025] NVRM: Xid (PCI:0000:5f:00): 79, GPU has fallen off the bus.");
  ASSERT_TRUE(ev.wallClock.has_value());
  EXPECT_EQ(ev.wallClock->second, 60);
  EXPECT_EQ(ev.wallClock->minute, 59);
  for (const char* line : {"[Wed Dec 31 23:59:61 2025] NVRM: Xid (PCI:0000:5f:00): 79, GPU has fallen off the bus.",
                           "[Wed Dec 31 24:00:00 2025] NVRM: Xid (PCI:0000:5f:00): 79, GPU has fallen off the bus."}) {
    auto r = parseKernelLine(line);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_FALSE(r->has_value() && (*r)->wallClock.has_value()) << line;
  }
}

TEST(KmsgParser, DmesgHumanTimeWithoutYear) {
  auto ev = mustParse(
      "[Sun Mar 29 19:20:37] NVRM: Xid (PCI:0000:5f:00): 154, GPU recovery action changed from "
      "0x0 (None) to 0x1 (GPU Reset Required)");
  ASSERT_TRUE(ev.wallClock.has_value());
  EXPECT_EQ(ev.wallClock->year, 0);
  EXPECT_EQ(ev.wallClock->day, 29);
}

TEST(KmsgParser, JournalctlShortFormat) {
  auto ev = mustParse(
      "Nov 29 10:00:01 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 31, pid=2231, "
      "name=python, Ch 00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 "
      "faulted @ 0x7f12_34560000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ");
  EXPECT_EQ(ev.code, 31);
  EXPECT_EQ(*ev.pid, 2231);
  EXPECT_EQ(ev.processName, "python");
  EXPECT_EQ(ev.message.rfind("Ch 00000010, intr 00000000. MMU Fault", 0), 0U) << ev.message;
  ASSERT_TRUE(ev.wallClock.has_value());
  EXPECT_EQ(ev.wallClock->month, 11);
  EXPECT_EQ(ev.wallClock->day, 29);
  EXPECT_EQ(ev.wallClock->hour, 10);
  EXPECT_EQ(ev.wallClock->second, 1);
  EXPECT_FALSE(ev.monotonicUs.has_value());
}

// Every month's name in a syslog stamp, January and December at the ends of the table included;
// a name that is no month gives no syslog time.
TEST(KmsgParser, SyslogStampsOfEveryMonth) {
  const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int m = 1; m <= 12; ++m) {
    const std::string line =
        std::string(months[m - 1]) +
        "  5 10:00:01 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
    auto ev = mustParse(line);
    ASSERT_TRUE(ev.wallClock.has_value()) << line;
    EXPECT_EQ(ev.wallClock->month, m) << line;
    EXPECT_EQ(ev.wallClock->day, 5) << line;
  }
  auto bad = parseKernelLine(
      "Jxn  5 10:00:01 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.");
  EXPECT_FALSE(bad.ok() && bad->has_value() && (*bad)->wallClock.has_value());
}

// A syslog day runs from 1 to 31: the 1st and the 31st are read, day 0 and day 32 give no time.
TEST(KmsgParser, SyslogDaysFromTheFirstToTheThirtyFirst) {
  const std::string body = " 10:00:01 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
  for (const auto& [stamp, day] : std::vector<std::pair<std::string, int>>{{"Jan  1", 1}, {"Mar 31", 31}}) {
    auto ev = mustParse(stamp + body);
    ASSERT_TRUE(ev.wallClock.has_value()) << stamp;
    EXPECT_EQ(ev.wallClock->day, day) << stamp;
  }
  for (const char* stamp : {"Jan  0", "Jan 32"}) {
    auto r = parseKernelLine(stamp + body);
    EXPECT_FALSE(r.ok() && r->has_value() && (*r)->wallClock.has_value()) << stamp;
  }
}

// A stamp's fraction is read to the microsecond: a tenth is 500000 µs, nanoseconds are cut.
TEST(KmsgParser, IsoFractionsOfOneToNineDigits) {
  const std::string body = " gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
  for (const auto& [frac, micro] : std::vector<std::pair<std::string, int>>{
           {".5", 500000}, {".12345", 123450}, {".123456", 123456}, {".1234567", 123456}, {".123456789", 123456}}) {
    auto ev = mustParse("2024-11-29T10:00:01" + frac + "+00:00" + body);
    ASSERT_TRUE(ev.wallClock.has_value()) << frac;
    EXPECT_EQ(ev.wallClock->second, 1) << frac;
    EXPECT_EQ(ev.wallClock->microsecond, micro) << frac;
  }
}

// Minute 59 is a time, minute 60 is not (a leap second is the seconds' edge, not the minutes').
TEST(KmsgParser, DmesgHumanTimeMinuteFiftyNineIsTheLast) {
  const std::string body = " NVRM: Xid (PCI:0000:5f:00): 79, GPU has fallen off the bus.";
  auto ev = mustParse("[Wed Dec 31 23:59:00 2025]" + body);
  ASSERT_TRUE(ev.wallClock.has_value());
  EXPECT_EQ(ev.wallClock->minute, 59);
  auto r = parseKernelLine("[Wed Dec 31 23:60:00 2025]" + body);
  EXPECT_FALSE(r.ok() && r->has_value() && (*r)->wallClock.has_value());
}

// An Xid's code has up to six digits; a seventh makes the line malformed, not a different code.
TEST(KmsgParser, AnXidCodeOfSixDigitsIsReadSevenAreNot) {
  auto ev = mustParse("NVRM: Xid (PCI:0000:3b:00): 123456, pid=1, name=a, x");
  EXPECT_EQ(ev.code, 123456);
  expectMalformed("NVRM: Xid (PCI:0000:3b:00): 1234567, pid=1, name=a, x");
}

TEST(KmsgParser, SyslogWithEmbeddedDmesgStampAndOldXidFormat) {
  // Older drivers print the address without "PCI:"; syslog keeps dmesg's stamp too.
  auto ev = mustParse(
      "Nov  2 18:29:55 hostname kernel: [  966.503025] NVRM: Xid (0000:01:00): 31, Ch 0000000b, "
      "engmask 00000120, intr 10000000");
  EXPECT_EQ(ev.code, 31);
  EXPECT_EQ(ev.pciBusId, "00000000:01:00.0");
  EXPECT_FALSE(ev.pid.has_value());
  EXPECT_EQ(ev.message, "Ch 0000000b, engmask 00000120, intr 10000000");
  ASSERT_TRUE(ev.wallClock.has_value());
  EXPECT_EQ(ev.wallClock->day, 2);
  ASSERT_TRUE(ev.monotonicUs.has_value());
  EXPECT_EQ(*ev.monotonicUs, 966503025U);
}

TEST(KmsgParser, IsoTimestampWithZoneAndFraction) {
  auto ev = mustParse(
      "2024-11-29T10:00:01.123456+01:00 node07 kernel: NVRM: Xid (PCI:0000:3b:00): 94, pid=7, "
      "name=x, Contained: CE User Channel (0x9). RST: No, D-RST: No");
  EXPECT_EQ(ev.code, 94);
  ASSERT_TRUE(ev.wallClock.has_value());
  EXPECT_EQ(ev.wallClock->year, 2024);
  EXPECT_EQ(ev.wallClock->month, 11);
  EXPECT_EQ(ev.wallClock->microsecond, 123456);
  ASSERT_TRUE(ev.wallClock->utcOffsetMinutes.has_value());
  EXPECT_EQ(*ev.wallClock->utcOffsetMinutes, 60);
}

// A space may stand for the T (syslog's "2024-11-29 10:00:01"); a month or day out of the
// calendar is no timestamp, and the line's event is still read.
TEST(KmsgParser, IsoTimestampWithASpaceAndDatesOutOfTheCalendar) {
  auto spaced = mustParse("2024-11-29 10:00:01 node07 kernel: NVRM: Xid (PCI:0000:3b:00): 43, pid=9, name=y, Ch 1");
  ASSERT_TRUE(spaced.wallClock.has_value());
  EXPECT_EQ(spaced.wallClock->day, 29);
  EXPECT_EQ(spaced.wallClock->hour, 10);
  for (const char* date : {"2024-12-31", "2024-01-01"}) {
    auto ok = mustParse(std::string(date) + "T10:00:01Z node07 kernel: NVRM: Xid (PCI:0000:3b:00): 43, Ch 1");
    EXPECT_TRUE(ok.wallClock.has_value()) << date;
  }
  for (const char* date : {"2024-13-01", "2024-00-10", "2024-11-32", "2024-11-00"}) {
    auto bad = mustParse(std::string(date) + "T10:00:01Z node07 kernel: NVRM: Xid (PCI:0000:3b:00): 43, Ch 1");
    EXPECT_EQ(bad.code, 43) << date;
    EXPECT_FALSE(bad.wallClock.has_value()) << date;
  }
}

TEST(KmsgParser, IsoTimestampCompactZone) {
  auto ev = mustParse(
      "2024-11-29T10:00:01-0530 node07 kernel: NVRM: Xid (PCI:0000:3b:00): 43, pid=9, name=y, "
      "Ch 00000008");
  ASSERT_TRUE(ev.wallClock->utcOffsetMinutes.has_value());
  EXPECT_EQ(*ev.wallClock->utcOffsetMinutes, -330);
}

TEST(KmsgParser, RawPriorityPrefix) {
  auto ev = mustParse("<4>[   12.345678] NVRM: Xid (PCI:0000:3b:00): 45, pid=1, name=a, Ch 00000001");
  ASSERT_TRUE(ev.level.has_value());
  EXPECT_EQ(*ev.level, KernelLevel::kWarning);
  EXPECT_EQ(*ev.monotonicUs, 12345678U);
}

TEST(KmsgParser, BareLineWithTrailingCrLf) {
  const std::string line = "NVRM: Xid (0000:03:00): 14, Channel 00000001\r\n";
  auto ev = mustParse(line);
  EXPECT_EQ(ev.code, 14);
  EXPECT_EQ(ev.pciBusId, "00000000:03:00.0");
  EXPECT_EQ(ev.message, "Channel 00000001");
  EXPECT_EQ(ev.raw, "NVRM: Xid (0000:03:00): 14, Channel 00000001");
  EXPECT_FALSE(ev.monotonicUs.has_value());
  EXPECT_FALSE(ev.wallClock.has_value());
}

TEST(KmsgParser, PidWithoutNameAndRowRemapperMessage) {
  auto ev = mustParse(
      "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
      "reset gpu to activate.");
  EXPECT_EQ(ev.code, 63);
  EXPECT_EQ(ev.pciBusId, "00000000:10:1C.0");
  EXPECT_EQ(*ev.pid, 1896);
  EXPECT_TRUE(ev.processName.empty());
  EXPECT_EQ(ev.message, "Row Remapper: New row marked for remapping, reset gpu to activate.");
}

TEST(KmsgParser, ProcessNameWithSpaces) {
  auto ev = mustParse("NVRM: Xid (PCI:0000:01:00): 31, pid=4242, name=Web Content, Ch 00000003, intr 00000000");
  EXPECT_EQ(ev.processName, "Web Content");
  EXPECT_EQ(ev.message, "Ch 00000003, intr 00000000");
}

TEST(KmsgParser, XidWithoutMessage) {
  auto ev = mustParse("NVRM: Xid (PCI:0000:01:00): 8");
  EXPECT_EQ(ev.code, 8);
  EXPECT_TRUE(ev.message.empty());
}

TEST(KmsgParser, NonZeroDomainAndFunction) {
  auto ev = mustParse("NVRM: Xid (PCI:0002:c1:1f.3): 62, 0096(1c54) 00000000 00000000");
  EXPECT_EQ(ev.pciBusId, "00000002:C1:1F.3");
  EXPECT_EQ(ev.message, "0096(1c54) 00000000 00000000");
}

// ------------------------------------------------------------------ GPU identity, fallen off

TEST(KmsgParser, GpuAtMapsPciToUuid) {
  auto ev = mustParse("[ 1021.113344] NVRM: GPU at PCI:0000:3b:00: GPU-5b0e7d1a-9c3f-4a77-8d21-0f6e2c9b1a44");
  EXPECT_EQ(ev.kind, KernelEventKind::kGpuUuid);
  EXPECT_EQ(ev.pciBusId, "00000000:3B:00.0");
  EXPECT_EQ(ev.uuid, "GPU-5b0e7d1a-9c3f-4a77-8d21-0f6e2c9b1a44");
}

TEST(KmsgParser, FallenOffTheBusWithoutXidIsInferredXid79) {
  auto ev = mustParse("[ 3300.500210] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.");
  EXPECT_EQ(ev.kind, KernelEventKind::kXid);
  EXPECT_EQ(ev.code, 79);
  EXPECT_TRUE(ev.inferred);
  EXPECT_EQ(ev.pciBusId, "00000000:3B:00.0");
  EXPECT_EQ(ev.message, "GPU 0000:3b:00.0: GPU has fallen off the bus.");
}

TEST(KmsgParser, OlderGpuAtFallenOffTheBus) {
  auto ev = mustParse(
      "Jan 18 11:38:05 localhost kernel: [  269.516977] NVRM: GPU at 0000:01:00.0 has fallen off "
      "the bus.");
  EXPECT_EQ(ev.code, 79);
  EXPECT_TRUE(ev.inferred);
  EXPECT_EQ(ev.pciBusId, "00000000:01:00.0");
}

TEST(KmsgParser, FallenOffTheBusWithoutAddressStillReported) {
  auto ev = mustParse("NVRM: The NVIDIA GPU has fallen off the bus and is not responding");
  EXPECT_EQ(ev.code, 79);
  EXPECT_TRUE(ev.inferred);
  EXPECT_TRUE(ev.pciBusId.empty());
}

// ------------------------------------------------------------------ NVLink, Xid 154, SXid

TEST(KmsgParser, NvLink5Xid149LinkFatal) {
  auto ev = mustParse(
      "NVRM: Xid (PCI:0000:1b:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 04 (0x026001c6 "
      "0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)");
  EXPECT_EQ(ev.code, 149);
  EXPECT_EQ(ev.nvlinkUnit, "NETIR_LINK_EVT");
  ASSERT_TRUE(ev.fatal.has_value());
  EXPECT_TRUE(*ev.fatal);
  ASSERT_TRUE(ev.link.has_value());
  EXPECT_EQ(*ev.link, 4);
  ASSERT_TRUE(ev.intrInfo.has_value());
  EXPECT_EQ(*ev.intrInfo, 0x026001c6U);
  ASSERT_TRUE(ev.errorStatus.has_value());
  EXPECT_EQ(*ev.errorStatus, 0U);
}

// The NVLink5 range 144-150 leads with the unit's name; 150 is its last code, and 136 (NVLink
// before it) does not.
TEST(KmsgParser, NvLink5UnitsEndAtXid150) {
  auto last = mustParse(
      "NVRM: Xid (PCI:0000:1b:00): 150, NETIR_LINK_EVT Fatal XC0 i0 Link 07 (0x00000001 0x00000002 "
      "0x00000000 0x00000000 0x00000000 0x00000000)");
  EXPECT_EQ(last.nvlinkUnit, "NETIR_LINK_EVT");
  ASSERT_TRUE(last.link.has_value());
  EXPECT_EQ(*last.link, 7);
  auto before = mustParse("NVRM: Xid (PCI:0000:1b:00): 136, NETIR_LINK_EVT Link 03 (0x00000001 0x00000002)");
  EXPECT_TRUE(before.nvlinkUnit.empty());
}

// A pid is any value up to the largest signed 32-bit one (ten digits); past that it is not taken.
TEST(KmsgParser, APidOfTenDigitsIsReadAndOnePastTheLargestIsNot) {
  auto top = mustParse("NVRM: Xid (PCI:0000:3b:00): 13, pid=2147483647, name=x, Graphics Exception");
  ASSERT_TRUE(top.pid.has_value());
  EXPECT_EQ(*top.pid, 2147483647);
  auto past = mustParse("NVRM: Xid (PCI:0000:3b:00): 13, pid=2147483648, name=x, Graphics Exception");
  EXPECT_FALSE(past.pid.has_value());
  EXPECT_EQ(past.processName, "x");
}

TEST(KmsgParser, NvLink5Xid144Nonfatal) {
  auto ev = mustParse(
      "NVRM: Xid (PCI:0000:01:00): 144, SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 "
      "0x00000000 0x00000000 0x00000000 0x00000000)");
  EXPECT_EQ(ev.nvlinkUnit, "SAW_MVB");
  ASSERT_TRUE(ev.fatal.has_value());
  EXPECT_FALSE(*ev.fatal);
  EXPECT_EQ(*ev.link, 0);
  EXPECT_EQ(*ev.intrInfo, 1U);
  EXPECT_EQ(*ev.errorStatus, 8U);
}

TEST(KmsgParser, NvLink5Xid145WithNvLinkPrefix) {
  auto ev = mustParse(
      "NVRM: Xid (PCI:0000:1b:00): 145, NVLink: Link 5 RLW_REMAP Non-fatal error (0x00000082 "
      "0x00000004)");
  EXPECT_EQ(ev.code, 145);
  EXPECT_TRUE(ev.nvlinkUnit.empty());
  EXPECT_EQ(*ev.link, 5);
  ASSERT_TRUE(ev.fatal.has_value());
  EXPECT_FALSE(*ev.fatal);
  EXPECT_EQ(*ev.intrInfo, 0x82U);
  EXPECT_EQ(*ev.errorStatus, 4U);
}

// Which codes are NVLink Xids (their link is read) is a fact of NVIDIA's catalog: 74, 136,
// 144-150 and 155; the codes around them are not, even with the same words in the message.
TEST(KmsgParser, LinkDetailsOnlyOnNvLinkCodes) {
  for (int code : {73, 74, 135, 136, 137, 143, 144, 147, 150, 151, 154, 155, 156}) {
    const bool nvlink = code == 74 || code == 136 || (code >= 144 && code <= 150) || code == 155;
    auto ev = mustParse("NVRM: Xid (PCI:0000:1b:00): " + std::to_string(code) +
                        ", NVLink: Link 5 RLW_REMAP Non-fatal error (0x00000082 0x00000004)");
    EXPECT_EQ(ev.code, code);
    EXPECT_EQ(ev.link.has_value(), nvlink) << "Xid " << code;
    if (nvlink && ev.link) {
      EXPECT_EQ(*ev.link, 5) << "Xid " << code;
    }
  }
}

// NVLink5's Xids 144-150 open with the unit that raised them (SAW_MVB, RLW_REMAP ...); the other
// NVLink Xids do not, so the same first word is no unit there.
TEST(KmsgParser, TheUnitIsReadOnXids144To150Only) {
  for (int code : {74, 136, 143, 144, 147, 150, 151, 155}) {
    auto ev = mustParse("NVRM: Xid (PCI:0000:01:00): " + std::to_string(code) +
                        ", SAW_MVB Nonfatal XC0 i0 Link 0 (0x00000001 0x00000008 0x00000000 0x00000000)");
    EXPECT_EQ(ev.code, code);
    EXPECT_EQ(ev.nvlinkUnit, code >= 144 && code <= 150 ? "SAW_MVB" : "") << "Xid " << code;
  }
}

TEST(KmsgParser, Xid74NvLinkFatalOnLink) {
  auto ev = mustParse(
      "NVRM: Xid (PCI:0000:8a:00): 74, pid=3381, name=python, NVLink: fatal error detected on "
      "link 8(0x0, 0x0, 0x80000, 0x0, 0x0, 0x0, 0x0)");
  EXPECT_EQ(ev.code, 74);
  EXPECT_EQ(*ev.link, 8);
  EXPECT_TRUE(*ev.fatal);
  EXPECT_EQ(*ev.intrInfo, 0U);
  EXPECT_EQ(*ev.errorStatus, 0U);
}

// "link" and "fatal" are words only where no letter or digit touches them on either side: a
// register named link0x3 is not link 0, "fatalistic" is not "fatal" (so "Nonfatal" decides), and a
// word that ends the line still counts.
TEST(KmsgParser, AWordRunIntoLettersOrDigitsIsNotThatWord) {
  auto ev = mustParse(
      "NVRM: Xid (PCI:0000:8a:00): 74, pid=3381, name=python, NVLink: link0x3 fatalistic Nonfatal "
      "error detected on link 8(0x0, 0x0, 0x80000, 0x0, 0x0, 0x0, 0x0)");
  ASSERT_TRUE(ev.link.has_value());
  EXPECT_EQ(*ev.link, 8);
  ASSERT_TRUE(ev.fatal.has_value());
  EXPECT_FALSE(*ev.fatal);
  auto end = mustParse("NVRM: Xid (PCI:0000:8a:00): 74, pid=3381, name=python, NVLink: error is fatal");
  ASSERT_TRUE(end.fatal.has_value());
  EXPECT_TRUE(*end.fatal);
}

TEST(KmsgParser, Xid154RecoveryAction) {
  auto ev = mustParse(
      "[ 3300.500260] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 "
      "(None) to 0x2 (Node Reboot Required)");
  EXPECT_EQ(ev.code, 154);
  ASSERT_TRUE(ev.recovery.has_value());
  EXPECT_EQ(ev.recovery->from, 0);
  EXPECT_EQ(ev.recovery->fromLabel, "None");
  EXPECT_EQ(ev.recovery->to, 2);
  EXPECT_EQ(ev.recovery->toLabel, "Node Reboot Required");
}

TEST(KmsgParser, SXidNonFatal) {
  auto ev = mustParse(
      "[ 3500.000001] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 "
      "egress non-posted PRIV error (First)");
  EXPECT_EQ(ev.kind, KernelEventKind::kSXid);
  EXPECT_EQ(ev.device, "nvidia-nvswitch0");
  EXPECT_EQ(ev.pciBusId, "00000000:05:00.0");
  EXPECT_EQ(ev.code, 12028);
  ASSERT_TRUE(ev.fatal.has_value());
  EXPECT_FALSE(*ev.fatal);
  EXPECT_EQ(*ev.link, 32);
  EXPECT_EQ(ev.message, "Non-fatal, Link 32 egress non-posted PRIV error (First)");
  EXPECT_EQ(*ev.monotonicUs, 3500000001U);
}

TEST(KmsgParser, SXidFatalFromKmsg) {
  auto ev = mustParse(
      "4,1001,99999,-;nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 20034, Fatal, Link 28 LTSSM "
      "Fault Up");
  EXPECT_EQ(ev.kind, KernelEventKind::kSXid);
  EXPECT_EQ(ev.device, "nvidia-nvswitch2");
  EXPECT_EQ(ev.pciBusId, "00000000:C4:00.0");
  EXPECT_TRUE(*ev.fatal);
  EXPECT_EQ(*ev.link, 28);
  EXPECT_EQ(*ev.level, KernelLevel::kWarning);
  EXPECT_EQ(*ev.monotonicUs, 99999U);
}

TEST(KmsgParser, SXidSeverityContinuationLine) {
  auto ev = mustParse(
      "nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 10002, Severity 5 Engine instance 00 Sub-engine "
      "instance 00");
  EXPECT_EQ(ev.code, 10002);
  EXPECT_FALSE(ev.fatal.has_value());
  EXPECT_FALSE(ev.link.has_value());
}

// Which marker comes first decides the body: a process may be named anything, "SXid" included,
// and the line is still the NVRM Xid it starts as (not an SXid of a device called "name=").
TEST(KmsgParser, AnXidLineThatMentionsSXidLaterIsStillAnXid) {
  auto ev = mustParse("NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=SXid poller, Graphics Exception");
  EXPECT_EQ(ev.kind, KernelEventKind::kXid);
  EXPECT_EQ(ev.code, 13);
  EXPECT_EQ(ev.pciBusId, "00000000:3B:00.0");
  ASSERT_TRUE(ev.pid.has_value());
  EXPECT_EQ(*ev.pid, 4242);
  EXPECT_EQ(ev.processName, "SXid poller");
  EXPECT_EQ(ev.message, "Graphics Exception");
}

// ------------------------------------------------------------------ malformed NVIDIA lines

TEST(KmsgParser, MalformedBadPciAddress) { expectMalformed("NVRM: Xid (PCI:0000:zz:00): abc"); }

TEST(KmsgParser, MalformedMissingNumber) {
  expectMalformed("[ 1.0] NVRM: Xid (PCI:0000:3b:00): abc, pid=1, name=x, oops");
}

TEST(KmsgParser, MalformedNumberGluedToText) {
  expectMalformed("NVRM: Xid (PCI:0000:3b:00): 79abc, GPU has fallen off the bus.");
}

TEST(KmsgParser, MalformedMissingColonOrParen) {
  expectMalformed("NVRM: Xid (PCI:0000:3b:00) 79, missing colon");
  expectMalformed("NVRM: Xid PCI:0000:3b:00: 79, missing paren");
  expectMalformed("NVRM: Xid (PCI:0000:3b:00: 79, no close");
}

TEST(KmsgParser, MalformedTruncatedLines) {
  expectMalformed("NVRM: Xid (");
  expectMalformed("NVRM: Xid (PCI:0000:3b:00");
  expectMalformed("NVRM: Xid (PCI:0000:3b:00):");
  expectMalformed("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): ");
}

TEST(KmsgParser, MalformedOversizedNumbers) {
  expectMalformed("NVRM: Xid (PCI:0000:3b:00): 99999999999999999999999, x");
  expectMalformed("NVRM: Xid (PCI:123456789:3b:00): 79, domain too long");
  expectMalformed("NVRM: Xid (PCI:0000:3b:00.9): 79, bad function");
}

TEST(KmsgParser, MalformedGpuAtLine) {
  expectMalformed("NVRM: GPU at PCI:zzzz: GPU-1234");
  expectMalformed("NVRM: GPU at PCI:0000:3b:00: GPU-xyz!");
  // The UUID's every character after "GPU-" is hex or '-', the first one too.
  expectMalformed("NVRM: GPU at PCI:0000:3b:00: GPU-x5b0e7d1a-9c3f-4a77-8d21-0f6e2c9b1a44");
  // The shortest UUID taken is "GPU-" and eight characters.
  auto ev = mustParse("NVRM: GPU at PCI:0000:3b:00: GPU-12345678");
  EXPECT_EQ(ev.uuid, "GPU-12345678");
  expectMalformed("NVRM: GPU at PCI:0000:3b:00: GPU-1234567");
}

// ------------------------------------------------------------------ not events

TEST(KmsgParser, IrrelevantKernelLines) {
  expectNotEvent("");
  expectNotEvent("[    0.000000] Linux version 6.1.0-18-amd64 (gcc-12) #1 SMP PREEMPT_DYNAMIC");
  expectNotEvent("[ 3300.500100] pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received");
  expectNotEvent("6,1000,123,-;usb 1-1: new high-speed USB device number 2 using xhci_hcd");
  expectNotEvent(" SUBSYSTEM=pci");
  expectNotEvent(" DEVICE=+pci:0000:3b:00.0");
  expectNotEvent("[    4.601234] nvidia-nvlink: Nvlink Core is being initialized");
  expectNotEvent("[    5.100200] nvidia-uvm: Loaded the UVM driver, major device number 237.");
  EXPECT_FALSE(mightBeNvidiaEvent("e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps"));
}

TEST(KmsgParser, NvrmLinesThatAreNotEvents) {
  expectNotEvent("[ 4.7] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22");
  expectNotEvent("NVRM: GPU Board Serial Number: 1322321043914");
  expectNotEvent("NVRM: GPU0 nvAssertOkFailedNoLog: Assertion failed: Reset required");
  expectNotEvent("NVRM: os_pci_init_handle: invalid context!");
  expectNotEvent("NVRM: Xidious is not a word");
  expectNotEvent("NVRM: Xid");
  expectNotEvent("NVRM: GPU at PCI:0000:3b:00: something else");
  EXPECT_TRUE(mightBeNvidiaEvent("NVRM: anything"));
  EXPECT_TRUE(mightBeNvidiaEvent("x SXid y"));
}

// ------------------------------------------------------------------ PCI normalisation

TEST(KmsgParser, NormalizePciBusId) {
  EXPECT_EQ(normalizePciBusId("0000:3b:00").value_or(""), "00000000:3B:00.0");
  EXPECT_EQ(normalizePciBusId("PCI:0000:3B:00.0").value_or(""), "00000000:3B:00.0");
  EXPECT_EQ(normalizePciBusId("00000000:3b:00.0").value_or(""), "00000000:3B:00.0");
  EXPECT_EQ(normalizePciBusId("3b:00.0").value_or(""), "00000000:3B:00.0");
  EXPECT_EQ(normalizePciBusId("1:2:3.4").value_or(""), "00000001:02:03.4");
  EXPECT_FALSE(normalizePciBusId("0000:3b").has_value());
  EXPECT_FALSE(normalizePciBusId("0000:3g:00").has_value());
  EXPECT_FALSE(normalizePciBusId("0000:3b:00.8").has_value());
  EXPECT_FALSE(normalizePciBusId("0000:3b:20").has_value());  // device > 0x1f
  EXPECT_FALSE(normalizePciBusId("123456789:00:00.0").has_value());
  EXPECT_FALSE(normalizePciBusId("").has_value());
  EXPECT_FALSE(normalizePciBusId("0000:3b:00.0 trailing").has_value());
  // Bus and device are two hex digits at most, the function one digit from 0 to 7.
  EXPECT_EQ(normalizePciBusId("0000:3b:00.7").value_or(""), "00000000:3B:00.7");
  EXPECT_EQ(normalizePciBusId("0000:ff:1f.0").value_or(""), "00000000:FF:1F.0");
  for (const char* bad : {"0000:13b:00", "13b:00", "3b:001", "0000:3b:001", "0000:3b:00.07", "3b:00.07"}) {
    EXPECT_FALSE(normalizePciBusId(bad).has_value()) << bad;
  }
}

TEST(KmsgParser, ToStrings) {
  EXPECT_EQ(toString(KernelEventKind::kSXid), "sxid");
  EXPECT_EQ(toString(KernelLevel::kError), "err");
}

}  // namespace
}  // namespace gw::events
