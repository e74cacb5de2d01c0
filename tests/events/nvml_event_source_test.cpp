// NvmlEventSource on the NVML simulator with a manual clock: events arrive when their fault time
// comes, on the right GPU, with its UUID.
#include "events/nvml_event_source.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "events_test_util.h"
#include "nvml/nvml.h"

namespace gw::events {
namespace {

using testing::Collector;
using testing::TempDir;
using testing::waitFor;

class NvmlEventSourceTest : public ::testing::Test {
 protected:
  std::unique_ptr<nvml::Session> openSim(const std::string& faults) {
    const std::string path = dir_.path() + "/scenario.yaml";
    std::ofstream(path) << "base: " << GW_SCENARIO_DIR << "/dgx-h100.yaml\nfaults:\n" << faults;
    ::setenv("GPUWARDEN_SIM_SCENARIO", path.c_str(), 1);
    ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
    ::unsetenv("GPUWARDEN_SIM_START");
    auto s = nvml::Session::open({GW_NVML_SIM_PATH});
    EXPECT_TRUE(s.ok()) << s.error();
    if (!s.ok()) return nullptr;
    EXPECT_NE(s.value()->api().gwSimSetTime, nullptr);
    return std::move(s).value();
  }
  static std::vector<GpuEvent> ofKind(const std::vector<GpuEvent>& all, EventKind k) {
    std::vector<GpuEvent> out;
    for (const auto& e : all) {
      if (e.kind == k) out.push_back(e);
    }
    return out;
  }
  TempDir dir_;
};

// Clock-change events are not asked for by default: a real H200 under a burn sent 24 a second,
// which would fill the event log with what the sampled clocks already show.
TEST(NvmlEventSourceOptions, FaultsAndPStatesAreAskedForNotClockChanges) {
  const NvmlEventSourceOptions o;
  EXPECT_EQ(o.types & nvmlEventTypeClock, 0u);
  EXPECT_EQ(o.types, nvmlEventTypeXidCriticalError | nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError |
                         nvmlEventTypePState);
}

TEST_F(NvmlEventSourceTest, XidArrivesAtItsTimeOnItsGpuWithUuid) {
  auto session = openSim("  - {type: xid, gpu: 2, at: 5, code: 79}\n");
  ASSERT_NE(session, nullptr);
  EventBus bus;
  Collector got(bus);
  NvmlEventSource src(*session, bus, {});
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  EXPECT_EQ(src.stats().registered.size(), 8U);

  session->api().gwSimSetTime(4.9);
  // Nothing is due before t=5: give the thread a few wait rounds to be sure.
  const auto waits0 = src.stats().waits;
  ASSERT_TRUE(waitFor([&] { return src.stats().waits >= waits0 + 3; }));
  EXPECT_TRUE(ofKind(got.events(), EventKind::Xid).empty());

  session->api().gwSimSetTime(5.0);
  ASSERT_TRUE(waitFor([&] { return !ofKind(got.events(), EventKind::Xid).empty(); }));
  // No second delivery after more wait rounds.
  const auto waits1 = src.stats().waits;
  ASSERT_TRUE(waitFor([&] { return src.stats().waits >= waits1 + 3; }));
  auto xids = ofKind(got.events(), EventKind::Xid);
  ASSERT_EQ(xids.size(), 1U);
  EXPECT_EQ(xids[0].code, 79);
  EXPECT_EQ(xids[0].gpu_index, 2);
  EXPECT_EQ(xids[0].source, EventSource::Nvml);
  auto dev = session->deviceByIndex(2);
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ(xids[0].gpu_uuid, dev->uuid().value_or(""));
  EXPECT_EQ(xids[0].pci_bus_id, "00000000:3A:00.0");
  EXPECT_TRUE(src.healthy());

  // stop() returns with the thread joined (how long it takes is no functional property here).
  src.stop();
  EXPECT_FALSE(src.running());
}

TEST_F(NvmlEventSourceTest, DoubleBitEccFault) {
  auto session = openSim("  - {type: ecc_dbe, gpu: 4, at: 3, count: 1}\n");
  ASSERT_NE(session, nullptr);
  EventBus bus;
  Collector got(bus);
  NvmlEventSource src(*session, bus, {});
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  session->api().gwSimSetTime(3.5);
  ASSERT_TRUE(waitFor([&] { return !ofKind(got.events(), EventKind::EccDoubleBit).empty(); }));
  auto dbe = ofKind(got.events(), EventKind::EccDoubleBit);
  ASSERT_EQ(dbe.size(), 1U);
  EXPECT_EQ(dbe[0].gpu_index, 4);
  EXPECT_FALSE(dbe[0].gpu_uuid.empty());
  EXPECT_TRUE(ofKind(got.events(), EventKind::Xid).empty());
}

TEST_F(NvmlEventSourceTest, StopsPromptlyAndRestarts) {
  auto session = openSim("  - {type: xid, gpu: 0, at: 2, code: 13}\n");
  ASSERT_NE(session, nullptr);
  EventBus bus;
  Collector got(bus);
  NvmlEventSource src(*session, bus, {});
  ASSERT_TRUE(src.start().ok());
  src.stop();
  src.stop();  // idempotent
  ASSERT_TRUE(src.start().ok());
  session->api().gwSimSetTime(2.0);
  ASSERT_TRUE(waitFor([&] { return !ofKind(got.events(), EventKind::Xid).empty(); }));
  EXPECT_EQ(ofKind(got.events(), EventKind::Xid)[0].code, 13);
}

TEST_F(NvmlEventSourceTest, DriverGoneMakesItUnhealthy) {
  auto session = openSim("  - {type: xid, gpu: 0, at: 2, code: 13}\n");
  ASSERT_NE(session, nullptr);
  EventBus bus;
  NvmlEventSource src(*session, bus, {});
  ASSERT_TRUE(src.start().ok());
  // Simulate the driver going away under the source: shut NVML down behind the session's back.
  session->api().nvmlShutdown();
  ASSERT_TRUE(waitFor([&] { return !src.healthy(); }));
  EXPECT_FALSE(src.lastError().empty());
  ASSERT_TRUE(waitFor([&] { return !src.running(); }));
  src.stop();
  ASSERT_TRUE(session->reinit().ok());
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  EXPECT_TRUE(src.healthy());
  // The error was the stopped run's: a source that listens again says nothing is wrong.
  EXPECT_EQ(src.lastError(), "");
}

// An event set made before the library was re-initialised on another machine is refused
// (INVALID_ARGUMENT): like a driver that went away, the source stops and says so instead of
// retrying a set that can never answer again.
TEST_F(NvmlEventSourceTest, ASetFromBeforeAReinitStopsTheSource) {
  auto session = openSim("  - {type: xid, gpu: 0, at: 2, code: 13}\n");
  ASSERT_NE(session, nullptr);
  EventBus bus;
  NvmlEventSourceOptions o;
  o.thread = false;
  NvmlEventSource src(*session, bus, o);
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  src.drain();
  ASSERT_TRUE(src.healthy()) << src.lastError();
  const std::string other = dir_.path() + "/other.yaml";
  std::ofstream(other) << "base: " << GW_SCENARIO_DIR << "/dgx-h100.yaml\nfaults:\n"
                       << "  - {type: xid, gpu: 1, at: 3, code: 13}\n";
  ::setenv("GPUWARDEN_SIM_SCENARIO", other.c_str(), 1);
  ASSERT_TRUE(session->reinit().ok());
  src.drain();
  EXPECT_FALSE(src.healthy());
  EXPECT_NE(src.lastError().find("nvmlEventSetWait"), std::string::npos) << src.lastError();
  EXPECT_EQ(src.stats().errors, 1u);
}

// A GPU that fell off the bus before the source started is named as lost, not registered, and
// the other seven are still listened to; a GPU the owner skips is named as skipped.
TEST_F(NvmlEventSourceTest, ALostGpuIsNamedAndTheOthersAreStillRegistered) {
  auto session = openSim("  - {type: fall_off_bus, gpu: 3, at: 0}\n");
  ASSERT_NE(session, nullptr);
  session->api().gwSimSetTime(1.0);
  EventBus bus;
  NvmlEventSourceOptions o;
  o.thread = false;
  o.skip = [](unsigned i) { return i == 5; };
  NvmlEventSource src(*session, bus, o);
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  const auto st = src.stats();
  EXPECT_EQ(st.lost, std::vector<int>{3});
  EXPECT_EQ(st.skipped, std::vector<int>{5});
  EXPECT_EQ(st.registered, (std::vector<int>{0, 1, 2, 4, 6, 7}));
}

// The wait counter counts wait calls from zero: a source started without a thread has made none
// before its owner's first drain.
TEST_F(NvmlEventSourceTest, WaitsCountFromZero) {
  auto session = openSim("  - {type: xid, gpu: 0, at: 2, code: 13}\n");
  ASSERT_NE(session, nullptr);
  EventBus bus;
  NvmlEventSourceOptions o;
  o.thread = false;
  NvmlEventSource src(*session, bus, o);
  ASSERT_TRUE(src.start().ok()) << src.lastError();
  EXPECT_EQ(src.stats().waits, 0u);
  EXPECT_EQ(src.stats().events, 0u);
}

}  // namespace
}  // namespace gw::events
