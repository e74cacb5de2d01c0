// nvidia-smi's query views through the real binary on the simulator: `gpuwarden query` takes
// --query-gpu (and the other --query-*) as nvidia-smi does, with its names, units and formats.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "gw_run.h"

namespace {

using gw::test::describe;
using gw::test::runGw;

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at; (at = line.find(", ", start)) != std::string::npos; start = at + 2)
    out.push_back(line.substr(start, at - start));
  out.push_back(line.substr(start));
  return out;
}

struct Pinned {
  std::string name, unit;
  bool alias;
};
std::vector<Pinned> pinnedNames() {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/tests/unit/smi-query-gpu-names.txt");
  std::vector<Pinned> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    std::string unit = line.substr(tab + 1);
    out.push_back({line.substr(0, tab), unit, unit == "="});
  }
  return out;
}

// dgx-h100 fixes the product, memory, power limits, PCI ids and compute capability of its GPUs.
TEST(SmiQuery, ExactValuesFromTheScenario) {
  auto r = runGw({"--simulate", "dgx-h100", "query",
                  "--query-gpu=index,name,gpu_bus_id,memory.total,power.limit,power.min_limit,pci.domain,pci.bus,"
                  "pci.device,pci.device_id,pci.sub_device_id,compute_cap,count,clocks.max.sm,clocks.max.memory",
                  "--format=csv", "-i", "1"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0],
            "index, name, gpu_bus_id, memory.total [MiB], power.limit [W], power.min_limit [W], pci.domain, pci.bus, "
            "pci.device, pci.device_id, pci.sub_device_id, compute_cap, count, clocks.max.sm [MHz], "
            "clocks.max.memory [MHz]");
  EXPECT_EQ(lines[1],
            "1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 81559 MiB, 700.00 W, 200.00 W, 0x0000, 0x2A, 0x00, "
            "0x233010DE, 0x16C110DE, 9.0, 8, 1980 MHz, 2619 MHz");
}

// nvidia-smi's temperature.gpu.tlimit is the margin left before the maximum operating
// temperature (87 C on an H100 SXM5; slowdown is at 89 C), not a threshold itself: a real H200
// at 37 C answered 50 (tests/e2e/fixtures/real-h200-580.159.04).
TEST(SmiQuery, TlimitIsTheMarginBeforeTheMaximumOperatingTemperature) {
  auto r = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=temperature.gpu,temperature.gpu.tlimit",
                  "--format=csv,noheader"},
                 {{"GPUWARDEN_SIM_START", "600"}});
  ASSERT_EQ(r.code, 0) << describe(r);
  ASSERT_EQ(r.lines().size(), 8u) << r.out;
  for (const auto& line : r.lines()) {
    int temp = 0, margin = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d, %d", &temp, &margin), 2) << line;
    EXPECT_GT(temp, 30) << line;
    EXPECT_NEAR(temp + margin, 87, 1) << line;
  }
}

// Every name of a real driver's --help-query-gpu is accepted in one query, with nvidia-smi's header.
TEST(SmiQuery, EveryPinnedNameIsAccepted) {
  auto names = pinnedNames();
  ASSERT_GE(names.size(), 250u);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ",") + n.name;
  auto r = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=" + list, "--format=csv", "-i", "0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 2u) << r.err;
  auto header = split(lines[0]);
  auto values = split(lines[1]);
  ASSERT_EQ(header.size(), names.size());
  ASSERT_EQ(values.size(), names.size()) << lines[1];
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!names[i].alias) {
      EXPECT_EQ(header[i], names[i].unit.empty() ? names[i].name : names[i].name + " [" + names[i].unit + "]");
    }
    EXPECT_NE(values[i], "[Unknown Error]") << names[i].name;
    EXPECT_FALSE(values[i].empty()) << names[i].name;
  }
}

TEST(SmiQuery, FormatsFollowNvidiaSmi) {
  auto r =
      runGw({"--simulate", "dgx-h100", "query",
             "--query-gpu=timestamp,pstate,clocks_event_reasons.active,clocks_event_reasons.supported,"
             "clocks_event_reasons.sw_power_cap,clocks_throttle_reasons.gpu_idle,persistence_mode,ecc.mode.current,"
             "compute_mode,driver_model.current,utilization.gpu,retired_pages.pending,remapped_rows.pending",
             "--format=csv,noheader", "-i", "0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto v = split(r.lines().at(0));
  ASSERT_EQ(v.size(), 13u) << r.out;
  EXPECT_TRUE(std::regex_match(v[0], std::regex(R"(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\.\d{3})"))) << v[0];
  EXPECT_TRUE(std::regex_match(v[1], std::regex("P[0-9]+"))) << v[1];
  EXPECT_TRUE(std::regex_match(v[2], std::regex("0x[0-9A-F]{16}"))) << v[2];
  EXPECT_TRUE(std::regex_match(v[3], std::regex("0x[0-9A-F]{16}"))) << v[3];
  EXPECT_TRUE(v[4] == "Active" || v[4] == "Not Active") << v[4];
  EXPECT_TRUE(v[5] == "Active" || v[5] == "Not Active") << v[5];
  EXPECT_TRUE(v[6] == "Enabled" || v[6] == "Disabled") << v[6];
  EXPECT_EQ(v[7], "Enabled");
  EXPECT_EQ(v[8], "Default");
  EXPECT_EQ(v[9], "[N/A]") << "Linux has no driver model";
  EXPECT_TRUE(std::regex_match(v[10], std::regex("[0-9]+ %"))) << v[10];
  EXPECT_EQ(v[11], "No");
  EXPECT_EQ(v[12], "No");
  auto nounits = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=memory.total,power.limit,fan.speed",
                        "--format=csv,nounits", "-i", "0"});
  ASSERT_EQ(nounits.code, 0) << describe(nounits);
  EXPECT_EQ(nounits.lines().at(0), "memory.total, power.limit, fan.speed");
  EXPECT_TRUE(std::regex_match(nounits.lines().at(1), std::regex(R"(81559, 700\.00, (\[N/A\]|[0-9]+))")))
      << nounits.lines().at(1);
}

TEST(SmiQuery, UnknownFieldIsRefusedInNvidiaSmisWords) {
  auto r = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=index,xyz", "--format=csv"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("Field \"xyz\" is not a valid field to query."), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // Our keys are not nvidia-smi's names.
  auto key = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=gpu_temp", "--format=csv"});
  EXPECT_EQ(key.code, 2) << describe(key);
}

TEST(SmiQuery, LostGpuPrintsGpuIsLost) {
  auto r = runGw({"--simulate", "fault-gpu-lost", "query", "--query-gpu=index,name,timestamp,count,pci.bus_id",
                  "--format=csv,noheader"},
                 {{"GPUWARDEN_SIM_START", "60"}});
  EXPECT_EQ(r.code, 1) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 8u) << r.out;
  auto lost = split(lines[3]);
  ASSERT_EQ(lost.size(), 5u) << lines[3];
  EXPECT_EQ(lost[0], "3");
  EXPECT_EQ(lost[1], "[GPU is lost]");
  EXPECT_EQ(lost[3], "8") << "the system's facts do not need the GPU";
  EXPECT_EQ(lost[4], "[GPU is lost]");
  EXPECT_EQ(split(lines[4]).at(1), "NVIDIA H100 80GB HBM3");
}

// nvidia-smi's exit through smi: 15 for a GPU fallen off the bus, 255 for one that did not answer
// (the same rule as -L and the summary), and the hung GPU's row still there with its index.
TEST(SmiQuery, LostIs15AndHungIs255LikeTheOtherViews) {
  auto lost = runGw({"--simulate", "fault-gpu-lost", "smi", "--query-gpu=index", "--format=csv,noheader"},
                    {{"GPUWARDEN_SIM_START", "60"}});
  EXPECT_EQ(lost.code, 15) << describe(lost);
  auto hung = runGw({"--simulate", "fault-hang", "smi", "--query-gpu=index,name", "--format=csv,noheader"},
                    {{"GPUWARDEN_SIM_START", "15"}});
  EXPECT_EQ(hung.code, 255) << describe(hung);
  auto lines = hung.lines();
  ASSERT_EQ(lines.size(), 8u) << hung.out;
  EXPECT_EQ(lines[5], "5, [N/A]");
  auto list = runGw({"--simulate", "fault-hang", "smi", "-L"}, {{"GPUWARDEN_SIM_START", "15"}});
  EXPECT_EQ(list.code, hung.code) << describe(list);
  // The monitors say the same: 255 for the GPU that did not answer, 15 for the one lost.
  auto pmon = runGw({"--simulate", "fault-hang", "smi", "pmon", "-c", "1"}, {{"GPUWARDEN_SIM_START", "15"}});
  EXPECT_EQ(pmon.code, 255) << describe(pmon);
  auto dmon = runGw({"--simulate", "fault-gpu-lost", "smi", "dmon", "-c", "1"}, {{"GPUWARDEN_SIM_START", "60"}});
  EXPECT_EQ(dmon.code, 15) << describe(dmon);
}

TEST(SmiQuery, SelectionByBusIdAndJson) {
  auto r = runGw(
      {"--simulate", "dgx-h100", "query", "--query-gpu=index", "--format=csv,noheader", "-i", "00000000:9A:00.0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.out, "4\n");
  auto none = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=index", "--format=csv", "-i", "17"});
  EXPECT_EQ(none.code, 2) << describe(none);
  auto j = runGw({"--simulate", "dgx-h100", "--json", "query", "--query-gpu=index,memory.total", "-i", "0"});
  ASSERT_EQ(j.code, 0) << describe(j);
  EXPECT_EQ(j.out, "[{\"index\":\"0\",\"memory.total\":\"81559 MiB\"}]\n");
}

// Each GPU of dgx-h100 runs one python3 holding 70 GiB.
TEST(SmiQuery, ComputeApps) {
  auto r =
      runGw({"--simulate", "dgx-h100", "query",
             "--query-compute-apps=gpu_bus_id,pid,process_name,used_gpu_memory,gpu_name", "--format=csv", "-i", "0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0], "gpu_bus_id, pid, process_name, used_gpu_memory [MiB], gpu_name");
  EXPECT_EQ(lines[1], "00000000:18:00.0, 41001, python3, 71680 MiB, NVIDIA H100 80GB HBM3");
  auto help = runGw({"query", "--help-query-compute-apps"});
  EXPECT_NE(help.out.find("\"used_gpu_memory\" or \"used_memory\""), std::string::npos) << help.out;
}

// fault-retired-pages retires 40 single-bit and 24 double-bit pages on GPU 5 at 30 s.
TEST(SmiQuery, RetiredPagesAndRemappedRows) {
  auto r = runGw(
      {"--simulate", "fault-retired-pages", "query",
       "--query-retired-pages=gpu_uuid,retired_pages.address,retired_pages.cause", "--format=csv,noheader", "-i", "5"},
      {{"GPUWARDEN_SIM_START", "40"}});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 64u) << r.out;
  int sbe = 0, dbe = 0;
  for (const auto& l : lines) {
    auto v = split(l);
    ASSERT_EQ(v.size(), 3u) << l;
    EXPECT_TRUE(std::regex_match(v[1], std::regex("0x[0-9a-f]{16}"))) << l;
    sbe += v[2] == "Single Bit ECC";
    dbe += v[2] == "Double Bit ECC";
  }
  EXPECT_EQ(sbe, 40);
  EXPECT_EQ(dbe, 24);
  auto rr = runGw({"--simulate", "fault-row-remap-pending", "query",
                   "--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,"
                   "remapped_rows.pending,remapped_rows.failure",
                   "--format=csv", "-i", "6"},
                  {{"GPUWARDEN_SIM_START", "40"}});
  ASSERT_EQ(rr.code, 0) << describe(rr);
  ASSERT_EQ(rr.lines().size(), 2u) << rr.out;
  EXPECT_EQ(rr.lines()[0],
            "gpu_bus_id, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, "
            "remapped_rows.failure");
  EXPECT_EQ(rr.lines()[1], "00000000:BA:00.0, 1, 0, 1, 0");
}

// The driver's recovery action (field 230) as nvidia-smi names it: None until the Xid 154 at 30 s,
// then Reset on GPU 2 alone; SRAM's status, the addressing mode and C2C beside it.
TEST(SmiQuery, RecoveryActionAndSramStatusAreRead) {
  const std::string q =
      "--query-gpu=index,gpu_recovery_action,ecc.errors.uncorrected.aggregate.sram.parity,"
      "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded,addressing_mode,c2c.mode";
  auto before = runGw({"--simulate", "fault-recovery-action", "query", q, "--format=csv,noheader", "-i", "1,2"},
                      {{"GPUWARDEN_SIM_START", "20"}});
  ASSERT_EQ(before.code, 0) << describe(before);
  EXPECT_EQ(before.out, "1, None, 0, No, None, Disabled\n2, None, 0, No, None, Disabled\n");
  auto after = runGw({"--simulate", "fault-recovery-action", "query", q, "--format=csv,noheader", "-i", "1,2"},
                     {{"GPUWARDEN_SIM_START", "40"}});
  ASSERT_EQ(after.code, 0) << describe(after);
  EXPECT_EQ(after.out, "1, None, 0, No, None, Disabled\n2, Reset, 0, No, None, Disabled\n");
  // SRAM's status is Hopper's: an A100 answers N/A for it, as for the SRAM location of its counters.
  auto ampere = runGw({"--simulate", "mig-a100", "query",
                       "--query-gpu=ecc.errors.uncorrected.aggregate.sram.l2,gpu_recovery_action",
                       "--format=csv,noheader", "-i", "0"});
  ASSERT_EQ(ampere.code, 0) << describe(ampere);
  EXPECT_EQ(ampere.out, "[N/A], None\n");
}

// The NVSwitch fabric registration: completed and healthy on a DGX H100 in nvidia-smi's words, "Not
// Started" once nvidia-fabricmanager stops (the completed-only facts then N/A), and a bare N/A for a
// board on no fabric, as the recorded PCIe H200 printed it (SmiReal holds that one to the recording).
TEST(SmiQuery, FabricRegistrationAndHealth) {
  const std::string q =
      "--query-gpu=index,fabric.state,fabric.status,fabric.cliqueId,fabric.clusterUuid,fabric.health.summary,"
      "fabric.health.bandwidth,fabric.health.route_recovery_in_progress,fabric.health.route_unhealthy,"
      "fabric.health.access_timeout_recovery,fabric.health.incorrect_configuration,fabric.health.partition_assigned";
  auto before = runGw({"--simulate", "fault-fabric-manager", "query", q, "--format=csv,noheader", "-i", "0,5"},
                      {{"GPUWARDEN_SIM_START", "10"}});
  ASSERT_EQ(before.code, 0) << describe(before);
  EXPECT_EQ(before.out,
            "0, Completed, Success, 0, 00000000-0000-0000-0000-000000000000, Healthy, Full, False, False, False, None, "
            "N/A\n"
            "5, Completed, Success, 0, 00000000-0000-0000-0000-000000000000, Limited Capacity, Degraded, False, False, "
            "False, None, N/A\n");
  auto after = runGw({"--simulate", "fault-fabric-manager", "query", q, "--format=csv,noheader", "-i", "5"},
                     {{"GPUWARDEN_SIM_START", "40"}});
  ASSERT_EQ(after.code, 0) << describe(after);
  EXPECT_EQ(after.out, "5, Not Started, N/A, N/A, N/A, Healthy, Full, False, False, False, None, N/A\n");
  auto pcie = runGw({"--simulate", "h200-580", "query", q, "--format=csv,noheader", "-i", "0"});
  ASSERT_EQ(pcie.code, 0) << describe(pcie);
  EXPECT_EQ(pcie.out, "0, N/A, N/A, N/A, N/A, N/A, N/A, N/A, N/A, N/A, N/A, N/A\n");
}

}  // namespace
