// End to end: the real gpuwarden binary on each shipped scenario, through the simulator library
// loaded exactly as production loads libnvidia-ml.so.1.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <vector>

#include "gw_run.h"

namespace gw::test {
namespace {

// The shipped DGX H100's minor numbers (scenarios/dgx-h100.yaml): the driver's probe order, which
// differs from NVML's PCI-ordered index for every GPU.
constexpr unsigned kDgxMinor[8] = {2, 3, 0, 1, 6, 7, 4, 5};

TEST(Discovery, DgxH100ListsEightGpusWithSpecs) {
  auto r = runGw({"--simulate", "dgx-h100", "discovery", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["gpu_count"], 8);
  ASSERT_EQ(j["gpus"].size(), 8u);
  EXPECT_FALSE(j["driver_version"].get<std::string>().empty());
  EXPECT_TRUE(std::regex_match(j["cuda_driver_version"].get<std::string>(), std::regex("1[0-9]\\.[0-9]")));
  std::set<std::string> uuids, buses;
  for (const auto& g : j["gpus"]) {
    EXPECT_EQ(g["state"], "ok");
    EXPECT_EQ(g["name"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(g["memory_total_mib"], 81559);
    EXPECT_EQ(g["sm_count"], 132);
    EXPECT_EQ(g["compute_capability"], "9.0");
    EXPECT_EQ(g["architecture"], "Hopper");
    EXPECT_EQ(g["memory_bus_width_bits"], 5120);
    EXPECT_NEAR(g["peak_memory_bandwidth_gbs"].get<double>(), 3352, 5);
    EXPECT_EQ(g["pcie_max_gen"], 5);
    EXPECT_EQ(g["pcie_max_width"], 16);
    EXPECT_EQ(g["nvlink_links"], 18);
    EXPECT_EQ(g["nvlink_active"], 18);
    EXPECT_EQ(g["power_limit_w"], 700);
    EXPECT_EQ(g["pci_device_id"], "0x2330");
    EXPECT_EQ(g["mig_enabled"], false);
    uuids.insert(g["uuid"].get<std::string>());
    buses.insert(g["pci_bus_id"].get<std::string>());
    EXPECT_TRUE(std::regex_match(g["uuid"].get<std::string>(),
                                 std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
        << g["uuid"];
  }
  EXPECT_EQ(uuids.size(), 8u) << "UUIDs are distinct";
  EXPECT_EQ(buses.size(), 8u) << "bus ids are distinct";
  for (unsigned i = 0; i < 8; ++i) {
    const auto& g = j["gpus"][i];
    EXPECT_EQ(g["index"], i);
    EXPECT_EQ(g["minor_number"], kDgxMinor[i]) << g.dump();
    EXPECT_EQ(g["device_node"], "/dev/nvidia" + std::to_string(kDgxMinor[i])) << g.dump();
  }
  EXPECT_EQ(j["gpus"][0]["numa_nodes"], nlohmann::json::array({0}));
  EXPECT_EQ(j["gpus"][7]["numa_nodes"], nlohmann::json::array({1}));
}

TEST(Discovery, TextOutputExplainsTheCudaVersion) {
  auto r = runGw({"--simulate", "dgx-h200", "discovery", "-v"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("not an installed toolkit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(r.out.find("GPU 7:"), std::string::npos);
  EXPECT_EQ(r.out.find("GPU 8:"), std::string::npos);
  EXPECT_NE(r.out.find("CPU affinity"), std::string::npos) << "-v adds affinity";
}

TEST(Discovery, MigInstancesAreDevicesWithTheirParent) {
  auto r = runGw({"--simulate", "mig-a100", "discovery", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["gpus"].size(), 2u);
  const auto& g0 = j["gpus"][0];
  EXPECT_EQ(g0["name"], "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g0["mig_enabled"], true);
  ASSERT_EQ(g0["mig_devices"].size(), 4u);
  std::multiset<std::string> profiles;
  for (const auto& m : g0["mig_devices"]) {
    profiles.insert(m["mig_profile"].get<std::string>());
    EXPECT_EQ(m["parent_index"], 0);
    EXPECT_EQ(m["parent_uuid"], g0["uuid"]);
    EXPECT_EQ(m["uuid"].get<std::string>().rfind("MIG-", 0), 0u) << m["uuid"];
    EXPECT_GT(m["sm_count"].get<int>(), 0);
  }
  EXPECT_EQ(profiles, (std::multiset<std::string>{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"}));
  EXPECT_EQ(j["gpus"][1]["mig_enabled"], false);
  EXPECT_TRUE(j["gpus"][1]["mig_devices"].empty());
}

// A MIG device whose attributes cannot be read (nvmlDeviceGetAttributes_v2 failing, as on drivers
// that answer NOT_SUPPORTED there) still has its memory, from its own memory info, in MiB.
TEST(Discovery, AMigDevicesMemoryComesFromItsMemoryInfoWhenItsAttributesFail) {
  TempDir dir;
  auto plain = runGw({"--simulate", "mig-a100", "discovery", "--json"});
  ASSERT_EQ(plain.code, 0) << describe(plain);
  std::map<std::string, int> memory;
  const auto before = plain.json();
  for (const auto& m : before["gpus"][0]["mig_devices"]) memory[m["uuid"]] = m["memory_total_mib"];
  ASSERT_EQ(memory.size(), 4u);
  const std::string scenario =
      scenarioWithFaults(dir, "mig-a100", {"{type: call_error, call: nvmlDeviceGetAttributes_v2, error: 3}"});
  auto r = runGw({"--simulate", scenario, "discovery", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  const auto j = r.json();
  ASSERT_EQ(j["gpus"][0]["mig_devices"].size(), 4u) << j.dump(2);
  for (const auto& m : j["gpus"][0]["mig_devices"]) {
    EXPECT_EQ(m["memory_total_mib"], memory[m["uuid"]]) << m.dump(2);
    EXPECT_GE(m["memory_total_mib"].get<int>(), 9000) << m.dump(2);  // 1g.10gb and up
    EXPECT_FALSE(m.contains("sm_count") && m["sm_count"].is_number() && m["sm_count"].get<int>() > 0)
        << "the attributes were not read: " << m.dump(2);
  }
}

// NVML opens but cannot count its GPUs: each command that lists them says why on stderr and exits
// 3 (no data), printing nothing a script could take for an empty node.
TEST(Discovery, AGpuCountNvmlRefusesIsSaidAndExitsThree) {
  TempDir dir;
  const std::string scenario =
      scenarioWithFaults(dir, "dgx-h100", {"{type: call_error, call: nvmlDeviceGetCount_v2, error: 999}"});
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{"discovery"}, {"slurm", "gres", "--node", "n1"}}) {
    std::vector<std::string> argv{"--simulate", scenario};
    argv.insert(argv.end(), words.begin(), words.end());
    auto r = runGw(argv);
    EXPECT_EQ(r.code, 3) << words[0] << ": " << describe(r);
    EXPECT_EQ(r.err, "gpuwarden: nvmlDeviceGetCount: Unknown Error (the driver gave no reason)\n")
        << words[0] << ": " << describe(r);
    EXPECT_EQ(r.out, "") << words[0];
  }
}

TEST(Discovery, VerboseTextNamesEachGpusDeviceNode) {
  auto r = runGw({"--simulate", "dgx-h100", "discovery", "-v"});
  ASSERT_EQ(r.code, 0) << describe(r);
  // GPU 0's block names /dev/nvidia2, GPU 2's /dev/nvidia0.
  const auto gpu0 = r.out.find("GPU 0:"), gpu1 = r.out.find("GPU 1:"), gpu2 = r.out.find("GPU 2:");
  ASSERT_NE(gpu2, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(gpu0, gpu1 - gpu0).find("device /dev/nvidia2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(gpu2, r.out.find("GPU 3:") - gpu2).find("device /dev/nvidia0\n"), std::string::npos) << r.out;
}

// pcie-mixed caps GPU 3 (an RTX 4090, default 450 W) at 312.5 W: NVML says 312500 mW, and every
// place that shows the limit keeps the half watt.
TEST(Discovery, PowerLimitKeepsItsFraction) {
  auto j = runGw({"--simulate", "pcie-mixed", "discovery", "--json"});
  ASSERT_EQ(j.code, 0) << describe(j);
  const auto g3 = j.json()["gpus"][3];
  EXPECT_EQ(g3["power_limit_w"].get<double>(), 312.5) << g3.dump();
  EXPECT_EQ(g3["power_default_limit_w"].get<double>(), 450) << g3.dump();
  auto t = runGw({"--simulate", "pcie-mixed", "discovery", "-v"});
  ASSERT_EQ(t.code, 0) << describe(t);
  EXPECT_NE(t.out.find("| 312.5 W limit |"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("| 450 W limit |"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("power limit range 150-600 W, default 450 W"), std::string::npos) << t.out;
  auto q = runGw({"--simulate", "pcie-mixed", "query",
                  "--query-gpu=index,power.limit,enforced.power.limit,power.default_limit,power.min_limit",
                  "--format=csv,noheader", "-i", "3"});
  ASSERT_EQ(q.code, 0) << describe(q);
  EXPECT_EQ(q.out, "3, 312.50 W, 312.50 W, 450.00 W, 150.00 W\n");
  auto n = runGw(
      {"--simulate", "pcie-mixed", "query", "--query-gpu=power.limit", "--format=csv,noheader,nounits", "-i", "3"});
  ASSERT_EQ(n.code, 0) << describe(n);
  EXPECT_EQ(n.out, "312.50\n");
}

// Two PCI domains with the same bus numbers in each (l40s-pci-domains): NVML's 8-digit domain in
// every bus id, nothing merged or mixed up, and the PCIe topology follows the domains' sockets.
TEST(Discovery, GpusInTwoPciDomains) {
  auto r = runGw({"--simulate", "l40s-pci-domains", "discovery", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  const auto gpus = r.json()["gpus"];
  ASSERT_EQ(gpus.size(), 8u);
  const char* want[8] = {"00000000:18:00.0", "00000000:1A:00.0", "00000000:3A:00.0", "00000000:3C:00.0",
                         "00000001:18:00.0", "00000001:1A:00.0", "00000001:3A:00.0", "00000001:3C:00.0"};
  std::set<std::string> uuids;
  for (unsigned i = 0; i < 8; ++i) {
    EXPECT_EQ(gpus[i]["pci_bus_id"], want[i]) << gpus[i].dump();
    EXPECT_EQ(gpus[i]["numa_nodes"], nlohmann::json::array({i < 4 ? 0 : 1})) << gpus[i].dump();
    EXPECT_EQ(gpus[i]["minor_number"], i) << "no minor: given, the driver numbered them in PCI order";
    uuids.insert(gpus[i]["uuid"].get<std::string>());
  }
  EXPECT_EQ(uuids.size(), 8u);

  auto q = runGw({"--simulate", "l40s-pci-domains", "query", "--query-gpu=index,pci.bus_id", "--format=csv,noheader"});
  ASSERT_EQ(q.code, 0) << describe(q);
  ASSERT_EQ(q.lines().size(), 8u) << q.out;
  EXPECT_EQ(q.lines()[0], "0, 00000000:18:00.0");
  EXPECT_EQ(q.lines()[4], "4, 00000001:18:00.0");
  // Selecting by bus id finds the GPU of that domain, not its namesake on bus 0x18 of domain 0.
  for (const char* id : {"00000001:18:00.0", "0001:18:00.0"}) {
    auto one =
        runGw({"--simulate", "l40s-pci-domains", "query", "--query-gpu=index", "--format=csv,noheader", "-i", id});
    ASSERT_EQ(one.code, 0) << describe(one);
    EXPECT_EQ(one.out, "4\n") << id;
  }

  auto t = runGw({"--simulate", "l40s-pci-domains", "topo", "-m", "--json"});
  ASSERT_EQ(t.code, 0) << describe(t);
  const auto rows = t.json()["gpus"];
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[0]["links"][1], "PIX");
  EXPECT_EQ(rows[0]["links"][2], "NODE");
  EXPECT_EQ(rows[4]["links"][5], "PIX");
  EXPECT_EQ(rows[4]["links"][6], "NODE");
  for (int a = 0; a < 4; ++a)
    for (int b = 4; b < 8; ++b) {
      EXPECT_EQ(rows[a]["links"][b], "SYS") << a << "," << b;
      EXPECT_EQ(rows[b]["links"][a], "SYS") << b << "," << a;
    }
  EXPECT_EQ(rows[0]["numa_affinity"], "0");
  EXPECT_EQ(rows[4]["numa_affinity"], "1");
}

TEST(Discovery, EveryShippedScenarioLoads) {
  for (const char* s : {"dgx-h100", "dgx-h200", "pcie-mixed", "mig-a100", "l40s-pci-domains"}) {
    auto r = runGw({"--simulate", s, "discovery", "--json"});
    EXPECT_EQ(r.code, 0) << s << "\n" << describe(r);
  }
  auto list = runGw({"scenarios", "--json"});
  ASSERT_EQ(list.code, 0) << describe(list);
  auto names = list.json();
  for (const char* s : {"dgx-h100", "dgx-h200", "pcie-mixed", "mig-a100"})
    EXPECT_NE(std::find(names.begin(), names.end(), s), names.end()) << s;
}

TEST(Discovery, PcieMixedHasTwoModelsOnTwoNumaNodes) {
  auto r = runGw({"--simulate", "pcie-mixed", "discovery", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["gpus"].size(), 4u);
  std::set<std::string> models;
  std::set<int> numa;
  for (const auto& g : j["gpus"]) {
    models.insert(g["name"].get<std::string>());
    for (int n : g["numa_nodes"]) numa.insert(n);
    EXPECT_EQ(g["nvlink_links"], 0);
  }
  EXPECT_EQ(models.size(), 2u);
  EXPECT_EQ(numa, (std::set<int>{0, 1}));
}

TEST(Query, CsvNoHeaderPrintsOneLinePerGpu) {
  auto r = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=index,name,memory.total,utilization.gpu",
                  "--format=csv,noheader"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 8u) << r.out;
  for (int i = 0; i < 8; ++i) {
    std::regex row(std::to_string(i) + ", NVIDIA H100 80GB HBM3, 81559 MiB, [0-9]+ %");
    EXPECT_TRUE(std::regex_match(lines[i], row)) << lines[i];
  }
}

// Counts print as nvidia-smi prints them, whole numbers: fault-retired-pages retires 40 + 24 pages
// on GPU 5 at 30 s.
TEST(Query, CountsPrintAsWholeNumbers) {
  auto r = runGw({"--simulate", "fault-retired-pages", "query",
                  "--query-gpu=index,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,"
                  "ecc.errors.uncorrected.volatile.total,pcie.link.gen.current",
                  "--format=csv,noheader", "-i", "5"},
                 {{"GPUWARDEN_SIM_START", "40"}});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.out, "5, 40, 24, 0, 5\n");
}

TEST(Query, HeaderUnitsAndNoUnits) {
  // Ten minutes into the training run the GPUs have warmed up.
  auto r = runGw({"--simulate", "dgx-h100", "query",
                  "--query-gpu=index,memory.used,power.draw,temperature.gpu,pstate,pcie.link.gen.current",
                  "--format=csv,nounits", "-i", "2"},
                 {{"GPUWARDEN_SIM_START", "600"}});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0], "index, memory.used, power.draw, temperature.gpu, pstate, pcie.link.gen.current");
  std::regex row("2, [0-9]+, [0-9]+\\.[0-9]{2}, [0-9]+, P[0-9]+, [0-9]");
  EXPECT_TRUE(std::regex_match(lines[1], row)) << lines[1];
  // A training H100 draws well above idle power, is warm, and holds most of its memory.
  double mem = 0, power = 0, temp = 0;
  ASSERT_EQ(std::sscanf(lines[1].c_str(), "2, %lf, %lf, %lf", &mem, &power, &temp), 3);
  EXPECT_GT(mem, 40000);
  EXPECT_GT(power, 100);
  EXPECT_LE(power, 700);
  EXPECT_GT(temp, 35);
  EXPECT_LT(temp, 90);
  auto h =
      runGw({"--simulate", "dgx-h100", "query", "--query-gpu=memory.total,power.limit", "--format=csv", "-i", "0"});
  ASSERT_EQ(h.code, 0) << describe(h);
  EXPECT_EQ(h.lines().at(0), "memory.total [MiB], power.limit [W]");
  EXPECT_EQ(h.lines().at(1), "81559 MiB, 700.00 W");
}

// nvidia-smi's own wording, which scripts may match (issue 15).
TEST(Query, UnknownFieldIsAnErrorInNvidiaSmisWords) {
  auto r = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=index,temprature.gpu", "--format=csv"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("Field \"temprature.gpu\" is not a valid field to query."), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "nothing half-printed";
}

TEST(Query, SelectionByUuidAndHelp) {
  auto all = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=index,uuid", "--format=csv,noheader"});
  ASSERT_EQ(all.code, 0) << describe(all);
  std::string line5 = all.lines().at(5);
  std::string uuid = line5.substr(line5.find(", ") + 2);
  auto one = runGw({"--simulate", "dgx-h100", "query", "--query-gpu=index", "--format=csv,noheader", "-i", uuid});
  ASSERT_EQ(one.code, 0) << describe(one);
  EXPECT_EQ(one.out, "5\n");
  auto help = runGw({"query", "--help-query-gpu"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("utilization.gpu"), std::string::npos);
  EXPECT_NE(help.out.find("pcie.link.gen.current"), std::string::npos);
}

TEST(Query, LoopRepeats) {
  auto r = runGw({"--simulate", "pcie-mixed", "query", "--query-gpu=index,power.draw", "--format=csv,noheader", "-l",
                  "0.2", "-c", "3"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.lines().size(), 12u) << r.out;  // 3 rounds x 4 GPUs
}

TEST(Dmon, ThreeSamplesGiveThreeRowsPerGpu) {
  auto r = runGw({"--simulate", "dgx-h100", "dmon", "-c", "3", "-d", "0.1"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_GE(lines.size(), 2u);
  EXPECT_TRUE(
      std::regex_search(lines[0], std::regex("# gpu +pwr +gtemp +mtemp +sm +mem +enc +dec +jpg +ofa +mclk +pclk")))
      << lines[0];
  std::map<int, int> rows;
  for (std::size_t i = 2; i < lines.size(); ++i) rows[std::stoi(lines[i])]++;
  ASSERT_EQ(rows.size(), 8u) << r.out;
  for (const auto& [gpu, n] : rows) EXPECT_EQ(n, 3) << "GPU " << gpu;
}

TEST(Dmon, JsonGroupsAndStragglerFlag) {
  auto r = runGw({"--simulate", "pcie-mixed", "dmon", "-s", "pumt", "-c", "2", "-d", "0.1", "--format", "json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 2u) << r.out;
  auto s = nlohmann::json::parse(lines[1]);
  ASSERT_EQ(s["gpus"].size(), 4u);
  for (const char* col : {"pwr", "gtemp", "sm", "fb", "rxpci", "txpci"}) EXPECT_TRUE(s["gpus"][0].contains(col)) << col;
  EXPECT_FALSE(s["gpus"][0].contains("mclk")) << "group c not selected";
  auto bad = runGw({"--simulate", "pcie-mixed", "dmon", "-s", "pz", "-c", "1"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown metric group 'z'"), std::string::npos) << bad.err;
}

TEST(Pmon, ProcessesWithCommandNamesFromProcUnderTheRoot) {
  auto r = runGw({"--simulate", "dgx-h100", "pmon", "-c", "1", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto procs = nlohmann::json::parse(r.lines().at(0));
  ASSERT_GE(procs.size(), 8u) << "one training process per GPU";
  // A fixture /proc that names the first process differently proves the command comes from the root.
  TempDir root;
  unsigned pid = procs[0]["pid"];
  root.write("proc/" + std::to_string(pid) + "/comm", "fixture-trainer\n");
  auto r2 = runGw({"--simulate", "dgx-h100", "--root", root.path(), "pmon", "-c", "1"});
  ASSERT_EQ(r2.code, 0) << describe(r2);
  EXPECT_NE(r2.out.find("fixture-trainer"), std::string::npos) << r2.out;
  EXPECT_TRUE(std::regex_search(r2.out, std::regex("# gpu +pid +type +sm +mem +enc +dec +jpg +ofa +fb +ccpm +command")))
      << r2.out;
  for (const auto& p : procs) {
    EXPECT_GT(p["fb_mb"].get<unsigned>(), 1000u) << p.dump();
    EXPECT_EQ(p["type"], "C");
  }
}

TEST(Topo, NvSwitchGivesNv18BetweenSxmGpus) {
  auto r = runGw({"--simulate", "dgx-h100", "topo", "-m", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["gpus"].size(), 8u);
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 8; ++k) EXPECT_EQ(j["gpus"][i]["links"][k], i == k ? "X" : "NV18") << i << "," << k;
  EXPECT_TRUE(j["warnings"].empty());
  auto text = runGw({"--simulate", "dgx-h100", "topo", "-m"});
  EXPECT_NE(text.out.find("NV#  = Connection traversing a bonded set of # NVLinks"), std::string::npos);
  // nvidia-smi's tab-separated row, its own cell written " X ".
  EXPECT_NE(text.out.find("\nGPU0\t X \tNV18\tNV18\t"), std::string::npos) << text.out;
}

TEST(Topo, PcieMixedShowsSysAcrossNumaNodes) {
  auto r = runGw({"--simulate", "pcie-mixed", "topo", "-m", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto j = r.json();
  const auto& g = j["gpus"];
  EXPECT_EQ(g[0]["links"][1], "PIX");
  EXPECT_EQ(g[2]["links"][3], "PXB");
  for (int a : {0, 1})
    for (int b : {2, 3}) {
      EXPECT_EQ(g[a]["links"][b], "SYS") << a << "," << b;
      EXPECT_EQ(g[b]["links"][a], "SYS") << b << "," << a;
    }
  EXPECT_NE(g[0]["numa_affinity"], g[2]["numa_affinity"]);
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_NE(j["warnings"][0].get<std::string>().find("crosses the CPU"), std::string::npos);
  auto text = runGw({"--simulate", "pcie-mixed", "topo", "-m"});
  EXPECT_NE(text.out.find("\nGPU0\t X \tPIX\tSYS\tSYS\t"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("NUMA Affinity"), std::string::npos);
}

TEST(Fields, MarkdownMatchesTheCommittedDoc) {
  auto r = runGw({"fields", "--markdown"});
  ASSERT_EQ(r.code, 0);
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/docs/fields.md");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(r.out, ss.str());
}

}  // namespace
}  // namespace gw::test
