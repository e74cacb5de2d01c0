// Invariants of the Xid catalog and the vendor facts operators rely on.
#include "knowledge/xid_catalog.h"

#include "../support/pinned_lines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace gw::knowledge {
namespace {

TEST(XidCatalog, HasAtLeast45CodesIncludingTheRequiredOnes) {
  EXPECT_GE(xidCatalog().size(), 45U);
  const int required[] = {8,   13,  31,  32,  38,  43,  44,  45,  48,  56,  57,  58,  61,  62,  63,
                          64,  65,  68,  69,  73,  74,  79,  80,  81,  92,  94,  95,  109, 110, 119,
                          120, 121, 122, 123, 124, 140, 143, 144, 145, 146, 147, 148, 149, 150, 154};
  for (int code : required) {
    EXPECT_TRUE(isKnownXid(code)) << "missing Xid " << code;
    EXPECT_EQ(lookupXid(code).code, code);
  }
}

TEST(XidCatalog, EveryEntryIsComplete) {
  std::set<int> seen;
  int previous = -1;
  for (const XidInfo& x : xidCatalog()) {
    SCOPED_TRACE(x.code);
    EXPECT_TRUE(seen.insert(x.code).second) << "duplicate";
    EXPECT_GT(x.code, previous) << "table not sorted";
    previous = x.code;
    EXPECT_TRUE(x.known);
    EXPECT_FALSE(x.mnemonic.empty());
    EXPECT_FALSE(x.meaning.empty());
    EXPECT_EQ(x.meaning.back(), '.') << "meaning should be one sentence: " << x.meaning;
    EXPECT_NE(x.category, XidCategory::kUnknown);
    EXPECT_GE(x.escalation, x.action) << "escalation must not be lighter than the action";
    // Lookup by code returns the same entry.
    const XidInfo y = lookupXid(x.code);
    EXPECT_EQ(y.mnemonic, x.mnemonic);
    EXPECT_EQ(y.action, x.action);
  }
}

TEST(XidCatalog, EveryCategoryIsUsed) {
  std::set<XidCategory> used;
  for (const XidInfo& x : xidCatalog()) used.insert(x.category);
  for (auto c : {XidCategory::kApplication, XidCategory::kDriver, XidCategory::kMemory, XidCategory::kNvLink,
                 XidCategory::kBus, XidCategory::kThermal, XidCategory::kFirmware, XidCategory::kHardware}) {
    EXPECT_TRUE(used.count(c)) << toString(c);
  }
}

TEST(XidCatalog, ApplicationFaultsNeverMarkTheGpuBadOnTheirOwn) {
  for (int code : {13, 31, 43, 45, 68, 109}) {
    const XidInfo x = lookupXid(code);
    EXPECT_TRUE(x.applicationFault) << code;
    EXPECT_LE(x.severity, XidSeverity::kWarning) << code;
  }
  for (int code : {48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140, 149}) {
    EXPECT_FALSE(lookupXid(code).applicationFault) << code;
  }
  for (const XidInfo& x : xidCatalog()) {
    if (x.applicationFault) {
      EXPECT_LE(x.action, XidAction::kResetGpu) << x.code;
    }
  }
}

TEST(XidCatalog, Xid79FellOffTheBus) {
  const XidInfo x = lookupXid(79);
  EXPECT_EQ(x.mnemonic, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS");
  EXPECT_NE(x.meaning.find("fallen off the bus"), std::string_view::npos);
  EXPECT_EQ(x.category, XidCategory::kBus);
  EXPECT_EQ(x.severity, XidSeverity::kFatal);
  // Vendor: immediate RESTART_BM (reboot the node), investigatory CONTACT_SUPPORT (RMA).
  EXPECT_EQ(x.action, XidAction::kRebootNode);
  EXPECT_EQ(x.escalation, XidAction::kDrainAndReplace);
  EXPECT_EQ(x.vendorImmediate, "RESTART_BM");
}

TEST(XidCatalog, Xid48IsDoubleBitEcc) {
  const XidInfo x = lookupXid(48);
  EXPECT_NE(x.mnemonic.find("DBE"), std::string_view::npos);
  EXPECT_NE(x.meaning.find("Double-bit"), std::string_view::npos);
  EXPECT_EQ(x.category, XidCategory::kMemory);
  EXPECT_EQ(x.action, XidAction::kResetGpu);
  EXPECT_EQ(x.escalation, XidAction::kDrainAndReplace);
  EXPECT_EQ(x.severity, XidSeverity::kCritical);
}

TEST(XidCatalog, Xid63And64AreRowRemapping) {
  const XidInfo event = lookupXid(63);
  const XidInfo failure = lookupXid(64);
  EXPECT_EQ(event.category, XidCategory::kMemory);
  EXPECT_EQ(failure.category, XidCategory::kMemory);
  EXPECT_NE(event.meaning.find("remapping"), std::string_view::npos);
  EXPECT_NE(failure.meaning.find("remapping"), std::string_view::npos);
  EXPECT_EQ(event.action, XidAction::kNone);  // vendor: IGNORE; reset when convenient
  EXPECT_EQ(failure.action, XidAction::kResetGpu);
  EXPECT_EQ(failure.escalation, XidAction::kDrainAndReplace);
  EXPECT_GT(failure.severity, event.severity);
}

TEST(XidCatalog, ContainedAndUncontainedEcc) {
  EXPECT_EQ(lookupXid(94).action, XidAction::kRestartApp);
  EXPECT_EQ(lookupXid(95).action, XidAction::kResetGpu);
  EXPECT_GT(lookupXid(95).severity, lookupXid(94).severity);
}

TEST(XidCatalog, GspAndNvLinkFamilies) {
  for (int code : {119, 120}) EXPECT_EQ(lookupXid(code).category, XidCategory::kFirmware);
  for (int code = 144; code <= 150; ++code) {
    EXPECT_EQ(lookupXid(code).category, XidCategory::kNvLink) << code;
  }
  EXPECT_EQ(lookupXid(74).category, XidCategory::kNvLink);
  EXPECT_EQ(lookupXid(154).action, XidAction::kNone);  // the action comes from the line
}

TEST(XidCatalog, UnknownCodesReturnAGenericEntry) {
  for (int code : {0, 1, 9999, -1, 255, 256, 100000}) {
    const XidInfo x = lookupXid(code);
    EXPECT_FALSE(x.known) << code;
    EXPECT_FALSE(isKnownXid(code)) << code;
    EXPECT_EQ(x.code, code);
    EXPECT_EQ(x.category, XidCategory::kUnknown);
    EXPECT_NE(x.meaning.find("not in gpuwarden's catalog"), std::string_view::npos);
  }
}

TEST(XidCatalog, RecoveryActionCodes) {
  EXPECT_EQ(actionForRecoveryCode(0), XidAction::kNone);
  EXPECT_EQ(actionForRecoveryCode(1), XidAction::kResetGpu);
  EXPECT_EQ(actionForRecoveryCode(2), XidAction::kRebootNode);
  EXPECT_EQ(actionForRecoveryCode(4), XidAction::kResetGpu);
}

TEST(XidCatalog, Strings) {
  EXPECT_EQ(toString(XidCategory::kBus), "pcie-power");
  EXPECT_EQ(toString(XidAction::kDrainAndReplace), "drain-and-replace");
  EXPECT_EQ(toString(XidSeverity::kFatal), "fatal");
  EXPECT_FALSE(describe(XidAction::kResetGpu).empty());
}

// diag and other one-line mentions take the headline; it must be a clause of the meaning, not empty.
TEST(XidCatalog, HeadlinesAreShortClauses) {
  EXPECT_EQ(headline(lookupXid(79)), "GPU has fallen off the bus");
  EXPECT_EQ(headline(lookupXid(64)), "Row remapping (or page retirement) failed");
  EXPECT_EQ(headline(lookupXid(4242)), "");
  for (const XidInfo& x : xidCatalog()) {
    const auto h = headline(x);
    EXPECT_FALSE(h.empty()) << x.code;
    EXPECT_EQ(x.meaning.substr(0, h.size()), h) << x.code;
    EXPECT_NE(h.back(), '.') << x.code;
  }
}

// Every entry's facts as NVIDIA's catalog gives them (code, mnemonic, the vendor's resolution
// buckets) and as gpuwarden judges them (category, actions, severity, application fault, legacy),
// pinned in xid-catalog.tsv. A changed fact must be a deliberate edit of that file, checked against
// NVIDIA's catalog: nothing regenerates it. docs/xid.md is rendered from the same table.
std::string factsLine(const XidInfo& x) {
  std::string l = std::to_string(x.code);
  for (std::string_view f : {x.mnemonic, toString(x.category), toString(x.action), toString(x.escalation),
                             toString(x.severity), std::string_view(x.applicationFault ? "app" : "-"),
                             std::string_view(x.legacy ? "legacy" : "-"), x.vendorImmediate, x.vendorInvestigatory}) {
    l += '\t';
    l += f;
  }
  return l;
}

TEST(XidCatalog, EveryEntrysFactsArePinned) {
  std::vector<std::string> got;
  for (const auto& x : xidCatalog()) got.push_back(factsLine(x));
  testsupport::expectLinesAsPinned(std::string(GW_TEST_SOURCE_DIR) + "/tests/knowledge/xid-catalog.tsv", got);
}

}  // namespace
}  // namespace gw::knowledge
