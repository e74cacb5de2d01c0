// The driver's GPU list (/proc/driver/nvidia/gpus) and the minors it gives a GPU NVML cannot name.
#include "nvml/driver_gpus.h"

#include <gtest/gtest.h>

#include "../support/temp_dir.h"

namespace gw::nvml {
namespace {

std::string info(const std::string& bus, const std::string& uuid, const std::string& minor,
                 const std::string& excluded = "No") {
  // The real file's layout: a tab after the colon, columns padded with spaces and tabs.
  return "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 305\nGPU UUID: \t " + uuid +
         "\nVideo BIOS: \t 96.00.74.00.0d\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\n"
         "Bus Location: \t " +
         bus + "\nDevice Minor: \t " + minor + "\nGPU Excluded:\t " + excluded + "\n";
}

TEST(DriverGpus, BusIdsOfNvmlAndTheDriverCompareEqual) {
  EXPECT_EQ(normalBusId("00000000:18:00.0"), "0000:18:00.0");
  EXPECT_EQ(normalBusId("0000:18:00.0"), "0000:18:00.0");
  EXPECT_EQ(normalBusId("00000001:AB:1F.7"), "0001:ab:1f.7");
  EXPECT_EQ(normalBusId("18:00.0"), "");
  EXPECT_EQ(normalBusId("0000:100:00.0"), "");  // bus beyond 0xff
  EXPECT_EQ(normalBusId("0000:18:20.0"), "");   // device beyond 0x1f
  EXPECT_EQ(normalBusId("0000:18:00.8"), "");   // function beyond 7
  EXPECT_EQ(normalBusId("0000:18:00."), "");
  EXPECT_EQ(normalBusId(""), "");
}

// Each part at its largest PCI value is an address; one digit more than a domain can hold is not.
TEST(DriverGpus, BusIdPartsAtTheirLimits) {
  EXPECT_EQ(normalBusId("FFFFFFFF:FF:1F.7"), "ffffffff:ff:1f.7");
  EXPECT_EQ(normalBusId("000000000:18:00.0"), "");  // a 9-digit domain, though its value fits
}

TEST(DriverGpus, ReadsEveryGpuTheDriverHoldsButTheExcluded) {
  testsupport::TempDir root;
  const std::string d = "proc/driver/nvidia/gpus/";
  root.write(d + "0000:18:00.0/information", info("0000:18:00.0", "GPU-aaaa", "2"));
  root.write(d + "0000:2a:00.0/information", info("0000:2a:00.0", "GPU-bbbb", "0"));
  root.write(d + "0000:3a:00.0/information", info("0000:3a:00.0", "GPU-cccc", "1", "Yes"));
  root.write(d + "0000:4a:00.0/information", info("0000:4a:00.0", "GPU-dddd", "x7"));          // no minor: left out
  root.write(d + "0000:5a:00.0/information", info("0000:5a:00.0", "GPU-eeee", "255"));         // nvidiactl's
  root.write(d + "0000:6a:00.0/information", std::string(5000, 'a') + "\nDevice Minor: 9\n");  // too long
  auto g = readDriverGpus(platform::FsRoot(root.path()));
  ASSERT_TRUE(g) << g.error();
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ((*g)[0].bus_id, "0000:18:00.0");
  EXPECT_EQ((*g)[0].uuid, "GPU-aaaa");
  EXPECT_EQ((*g)[0].minor, 2);
  EXPECT_EQ((*g)[1].bus_id, "0000:2a:00.0");
  EXPECT_EQ((*g)[1].minor, 0);
}

// Minors 0..254 are GPUs (255 is nvidiactl's); a UUID longer than NVML's 96-byte buffer is not
// believed, though the GPU and its minor still count.
TEST(DriverGpus, LargestMinorAndLongestUuidAreKept) {
  testsupport::TempDir root;
  const std::string d = "proc/driver/nvidia/gpus/";
  const std::string uuid96 = "GPU-" + std::string(92, 'a');
  const std::string uuid97 = "GPU-" + std::string(93, 'b');
  root.write(d + "0000:18:00.0/information", info("0000:18:00.0", uuid96, "254"));
  root.write(d + "0000:2a:00.0/information", info("0000:2a:00.0", uuid97, "3"));
  auto g = readDriverGpus(platform::FsRoot(root.path()));
  ASSERT_TRUE(g) << g.error();
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ((*g)[0].minor, 254);
  EXPECT_EQ((*g)[0].uuid, uuid96);
  EXPECT_EQ((*g)[1].minor, 3);
  EXPECT_EQ((*g)[1].uuid, "");
}

// Only the first 4 KiB of an information file are read: a minor in its last byte counts, one a
// byte beyond does not.
TEST(DriverGpus, AnInformationFileIsReadTo4KiB) {
  testsupport::TempDir root;
  const std::string d = "proc/driver/nvidia/gpus/";
  const std::string tail = "\nDevice Minor: 8";
  root.write(d + "0000:18:00.0/information", std::string(4096 - tail.size(), 'a') + tail);
  root.write(d + "0000:2a:00.0/information", std::string(4097 - tail.size(), 'a') + tail);
  auto g = readDriverGpus(platform::FsRoot(root.path()));
  ASSERT_TRUE(g) << g.error();
  ASSERT_EQ(g->size(), 1u);
  EXPECT_EQ((*g)[0].bus_id, "0000:18:00.0");
  EXPECT_EQ((*g)[0].minor, 8);
}

TEST(DriverGpus, NoDriverIsAnEmptyListAndTooManyEntriesAnError) {
  testsupport::TempDir root;
  auto g = readDriverGpus(platform::FsRoot(root.path()));
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->empty());
  for (std::size_t i = 0; i < kMaxDriverGpus; ++i)
    root.write("proc/driver/nvidia/gpus/e" + std::to_string(i) + "/information", "Device Minor: 1\n");
  g = readDriverGpus(platform::FsRoot(root.path()));
  ASSERT_TRUE(g) << g.error();  // 64, the most that are read
  EXPECT_EQ(g->size(), 64u);
  root.write("proc/driver/nvidia/gpus/e64/information", "Device Minor: 1\n");  // the 65th
  g = readDriverGpus(platform::FsRoot(root.path()));
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().find("lists 65 entries; at most 64 are read"), std::string::npos) << g.error();
}

TEST(DriverGpus, MinorsComeByBusThenUuidThenByElimination) {
  const std::vector<DriverGpu> driver = {{"0000:18:00.0", "GPU-a", 3},
                                         {"0000:28:00.0", "GPU-b", 0},
                                         {"0000:38:00.0", "GPU-c", 1},
                                         {"0000:48:00.0", "GPU-d", 2}};
  std::vector<BoardMinor> b = {{"00000000:18:00.0", "", -1}, {"", "GPU-b", -1}, {"", "", 1}, {"", "", -1}};
  completeMinors(b, driver);
  EXPECT_EQ(b[0].minor, 3);  // by bus
  EXPECT_EQ(b[1].minor, 0);  // by UUID
  EXPECT_EQ(b[2].minor, 1);  // NVML's own
  EXPECT_EQ(b[3].minor, 2);  // the one left
  // A minor NVML gave is not handed to another board even when its bus matches.
  b = {{"00000000:18:00.0", "", -1}, {"", "", 3}};
  completeMinors(b, driver);
  EXPECT_EQ(b[0].minor, -1);
  // Two unknown boards, two free minors: nobody can tell which is whose.
  b = {{"", "", -1}, {"", "", -1}, {"", "", 3}, {"", "", 0}};
  completeMinors(b, driver);
  EXPECT_EQ(b[0].minor, -1);
  EXPECT_EQ(b[1].minor, -1);
}

}  // namespace
}  // namespace gw::nvml
