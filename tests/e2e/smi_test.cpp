// gpuwarden smi against the NVML simulator, run as an operator's script runs nvidia-smi: the
// lines and widths nvidia-smi prints, its exit codes, and values that agree with discovery.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "gw_run.h"

namespace gw::test {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      v.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  v.push_back(cur);
  return v;
}

// A file recorded from a real nvidia-smi (tests/e2e/fixtures/real-h200-580.159.04), by lines.
std::vector<std::string> recorded(const std::string& name) {
  std::ifstream f(std::string(GW_SOURCE_DIR) + "/tests/e2e/fixtures/real-h200-580.159.04/" + name);
  EXPECT_TRUE(f.good()) << name;
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) v.push_back(l);
  return v;
}

GwResult runShell(const std::string& script) {
  platform::RunOptions o;
  o.timeout = std::chrono::milliseconds(60000);
  o.max_output = 16 << 20;
  platform::SystemProcessRunner runner;
  auto r = runner.run({"/bin/sh", "-c", script}, o);
  return {r.exit_code, r.out, r.err};
}

TEST(Smi, ListGpusMatchesNvidiaSmiAndDiscovery) {
  auto d = runGw({"--simulate", "dgx-h100", "discovery", "--json"});
  ASSERT_EQ(d.code, 0) << describe(d);
  auto r = runGw({"--simulate", "dgx-h100", "smi", "-L"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_EQ(lines.size(), 8u) << r.out;
  const auto j = d.json();
  for (unsigned i = 0; i < 8; ++i)
    EXPECT_EQ(lines[i], "GPU " + std::to_string(i) + ": " + j["gpus"][i]["name"].get<std::string>() +
                            " (UUID: " + j["gpus"][i]["uuid"].get<std::string>() + ")");
  // -i by index, UUID and bus id; both spellings.
  auto one = runGw({"--simulate", "dgx-h100", "smi", "-L", "--id=" + j["gpus"][2]["uuid"].get<std::string>()});
  ASSERT_EQ(one.code, 0) << describe(one);
  EXPECT_EQ(one.lines(), std::vector<std::string>{lines[2]});
  auto two = runGw({"--simulate", "dgx-h100", "smi", "-L", "-i", "1," + j["gpus"][5]["pci_bus_id"].get<std::string>()});
  EXPECT_EQ(two.lines(), (std::vector<std::string>{lines[1], lines[5]}));
}

TEST(Smi, ListGpusIndentsMigDevices) {
  auto d = runGw({"--simulate", "mig-h100", "discovery", "--json"});
  ASSERT_EQ(d.code, 0) << describe(d);
  auto r = runGw({"--simulate", "mig-h100", "smi", "-L"});
  ASSERT_EQ(r.code, 0) << describe(r);
  std::vector<std::string> expected;
  const auto j = d.json();
  for (const auto& g : j["gpus"]) {
    expected.push_back("GPU " + std::to_string(g["index"].get<int>()) + ": " + g["name"].get<std::string>() +
                       " (UUID: " + g["uuid"].get<std::string>() + ")");
    int k = 0;
    for (const auto& m : g["mig_devices"]) {
      std::string profile = m["mig_profile"].get<std::string>();
      profile.resize(std::max<std::size_t>(profile.size(), 12), ' ');
      char idx[16];
      std::snprintf(idx, sizeof idx, "%2d", k++);
      expected.push_back("  MIG " + profile + "Device " + idx + ": (UUID: " + m["uuid"].get<std::string>() + ")");
    }
  }
  EXPECT_EQ(r.lines(), expected) << r.out;
  EXPECT_NE(r.out.find("  MIG 3g.40gb     Device  0: (UUID: MIG-"), std::string::npos) << r.out;
}

TEST(Smi, SummaryTableHasNvidiaSmisWidthsAndTheScenariosValues) {
  auto r = runGw({"--simulate", "dgx-h100", "smi"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_GT(lines.size(), 10u) << r.out;
  // After the timestamp every line is 91 wide, boxes closed at columns 0, 42, 67 and 90.
  // (The blank line before the processes is nvidia-smi's 89 spaces.)
  for (std::size_t i = 1; i < lines.size(); ++i)
    if (lines[i] != std::string(89, ' ')) {
      EXPECT_EQ(lines[i].size(), 91u) << "line " << i << ": " << lines[i];
    }
  EXPECT_TRUE(
      std::regex_match(lines[2], std::regex(R"(\| NVIDIA-SMI \S+ +Driver Version: \S+ +CUDA Version: \d+\.\d+ +\|)")))
      << lines[2];
  EXPECT_EQ(lines[4], "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |");
  int gpus = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(
            lines[i], m,
            std::regex(R"(\|\s+(\d)  (NVIDIA H100 80GB HBM3) +(On|Off) +\| +(\S+) +(On|Off|N/A) \| +(\S+) \|)")))
      continue;
    ++gpus;
    EXPECT_EQ(lines[i][42], '|');
    EXPECT_EQ(lines[i][67], '|');
    // Second line: memory total and power cap from the scenario (H100: 81559 MiB, 700 W).
    EXPECT_TRUE(std::regex_search(lines[i + 1], std::regex(R"(\d+W /  700W \| +\d+MiB /  81559MiB \|)")))
        << lines[i + 1];
  }
  EXPECT_EQ(gpus, 8) << r.out;
  EXPECT_NE(r.out.find("| Processes:"), std::string::npos);
  EXPECT_NE(r.out.find("|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |"),
            std::string::npos);
}

TEST(Smi, SummaryShowsMigDevices) {
  auto r = runGw({"--simulate", "mig-h100", "smi"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("| MIG devices:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| GPU  GI  CI  MIG |"), std::string::npos) << r.out;
  for (const auto& l : r.lines())
    if (!l.empty() && (l[0] == '|' || l[0] == '+')) {
      EXPECT_EQ(l.size(), 91u) << l;
    }
}

TEST(Smi, QueryXmlParsesAndAgreesWithDiscovery) {
  TempDir dir;
  const std::string xml = dir.path() + "/log.xml";
  auto r = runGw({"--simulate", "dgx-h100", "smi", "-q", "-x", "-f", xml});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(r.out.empty()) << "-f takes the output off stdout";
  std::ifstream in(xml);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  EXPECT_NE(text.find("<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">"), std::string::npos);
  auto lint = runShell("command -v xmllint >/dev/null || exit 0; xmllint --noout '" + xml + "'");
  EXPECT_EQ(lint.code, 0) << describe(lint);
  // A standard parser reads the values nvidia-smi's element names carry.
  auto py = runShell("python3 - '" + xml +
                     "' <<'PY'\n"
                     "import sys, json, xml.etree.ElementTree as ET\n"
                     "root = ET.parse(sys.argv[1]).getroot()\n"
                     "print(json.dumps({'attached': root.findtext('attached_gpus'),\n"
                     "  'driver': root.findtext('driver_version'),\n"
                     "  'gpus': [{'id': g.get('id'), 'name': g.findtext('product_name'), 'uuid': g.findtext('uuid'),\n"
                     "            'total': g.findtext('fb_memory_usage/total'),\n"
                     "            'limit': g.findtext('gpu_power_readings/requested_power_limit'),\n"
                     "            'gen': g.findtext('pci/pci_gpu_link_info/pcie_gen/max_link_gen')}\n"
                     "           for g in root.findall('gpu')]}))\n"
                     "PY");
  ASSERT_EQ(py.code, 0) << describe(py);
  auto x = nlohmann::json::parse(py.out);
  auto d = runGw({"--simulate", "dgx-h100", "discovery", "--json"}).json();
  EXPECT_EQ(x["attached"], "8");
  EXPECT_EQ(x["driver"], d["driver_version"]);
  ASSERT_EQ(x["gpus"].size(), 8u);
  for (unsigned i = 0; i < 8; ++i) {
    const auto& g = x["gpus"][i];
    EXPECT_EQ(g["id"], d["gpus"][i]["pci_bus_id"]);
    EXPECT_EQ(g["name"], d["gpus"][i]["name"]);
    EXPECT_EQ(g["uuid"], d["gpus"][i]["uuid"]);
    EXPECT_EQ(g["total"], std::to_string(d["gpus"][i]["memory_total_mib"].get<int>()) + " MiB");
    EXPECT_EQ(g["limit"], "700.00 W");
    EXPECT_EQ(g["gen"], std::to_string(d["gpus"][i]["pcie_max_gen"].get<int>()));
  }
}

TEST(Smi, QueryTextPutsEveryColonAtColumn42AndFiltersSections) {
  auto r = runGw({"--simulate", "dgx-h100", "smi", "-q", "-i", "0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("==============NVSMI LOG=============="), std::string::npos);
  EXPECT_NE(r.out.find("    Product Name                          : NVIDIA H100 80GB HBM3\n"), std::string::npos)
      << r.out;
  for (const auto& l : r.lines())
    if (l.find(" : ") != std::string::npos) {
      EXPECT_EQ(l.find(" : "), 41u) << l;
    }
  auto m = runGw({"--simulate", "dgx-h100", "smi", "-q", "-d", "MEMORY", "-i", "0"});
  ASSERT_EQ(m.code, 0) << describe(m);
  EXPECT_NE(m.out.find("    FB Memory Usage\n        Total                             : 81559 MiB"), std::string::npos)
      << m.out;
  EXPECT_EQ(m.out.find("Product Name"), std::string::npos) << "-d MEMORY shows only memory";
}

TEST(Smi, TopoMatrixIsTabSeparated) {
  auto r = runGw({"--simulate", "dgx-h100", "smi", "topo", "-m"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_GE(lines.size(), 9u);
  // nvidia-smi underlines its header with terminal escapes, also into a pipe, and ends the row
  // with an empty column and the GPU NUMA ID (as a real 580.159.04 prints it).
  auto head = split(lines[0], '\t');
  ASSERT_EQ(head.size(), 12u) << lines[0];
  EXPECT_EQ(head[0], "");
  EXPECT_EQ(head[1], "\x1b[4mGPU0");
  EXPECT_EQ(head[8], "GPU7");
  EXPECT_EQ(head[9], "CPU Affinity");
  EXPECT_EQ(head[10], "NUMA Affinity");
  EXPECT_EQ(head[11], "GPU NUMA ID\x1b[0m");
  auto own = runGw({"--simulate", "dgx-h100", "topo", "-m"});
  ASSERT_EQ(own.code, 0) << describe(own);
  auto own_lines = own.lines();
  ASSERT_GE(own_lines.size(), 9u);
  EXPECT_EQ(own_lines[0], "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tCPU Affinity\tNUMA Affinity");
  for (int i = 0; i < 8; ++i) {
    auto row = split(lines[1 + i], '\t');
    ASSERT_EQ(row.size(), 13u) << lines[1 + i];
    EXPECT_EQ(row[0], "GPU" + std::to_string(i));
    for (int k = 0; k < 8; ++k) EXPECT_EQ(row[1 + k], i == k ? " X " : "NV18");
    EXPECT_EQ(row[11], "");
    EXPECT_EQ(row[12], "N/A");
    // gpuwarden topo -m prints the same matrix, without nvidia-smi's last two columns.
    EXPECT_EQ(own_lines[1 + i] + "\t\tN/A", lines[1 + i]);
  }
  EXPECT_NE(r.out.find("  NV#  = Connection traversing a bonded set of # NVLinks"), std::string::npos);
}

TEST(Smi, DmonAndPmonPipedHaveNvidiaSmisHeadersAndNoMarkers) {
  auto r = runGw({"--simulate", "fault-straggler", "smi", "dmon", "-c", "2"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto lines = r.lines();
  ASSERT_GE(lines.size(), 3u);
  // The header a real nvidia-smi (580.159.04) printed, word for word, trailing space too.
  const auto real = recorded("nvidia-smi-dmon.txt");
  ASSERT_GE(real.size(), 2u);
  EXPECT_EQ(lines[0], real[0]);
  EXPECT_EQ(lines[1], real[1]);
  for (std::size_t i = 2; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].find("<-"), std::string::npos) << lines[i];
    EXPECT_EQ(lines[i].size(), lines[0].size()) << lines[i];
  }
  auto own = runGw({"--simulate", "fault-straggler", "dmon", "-c", "2", "-d", "0.2"});
  ASSERT_EQ(own.code, 0) << describe(own);
  EXPECT_EQ(own.out.find("<-"), std::string::npos) << own.out;
  auto p = runGw({"--simulate", "dgx-h100", "smi", "pmon", "-c", "1"});
  ASSERT_EQ(p.code, 0) << describe(p);
  auto pl = p.lines();
  ASSERT_GE(pl.size(), 3u);
  const auto real_pmon = recorded("nvidia-smi-pmon.txt");
  ASSERT_GE(real_pmon.size(), 2u);
  EXPECT_EQ(pl[0], real_pmon[0]);
  EXPECT_EQ(pl[1], real_pmon[1]);
  // A process's row: NVML has no per-process JPEG or OFA sample, so those two cells are "-".
  EXPECT_TRUE(std::regex_match(
      pl[2], std::regex(R"(    0 +\d+     C +(\d+|-) +(\d+|-) +(\d+|-) +(\d+|-)      -      -    \S+ *)")))
      << pl[2];
}

TEST(Smi, FileIsOverwritten) {
  TempDir dir;
  const std::string path = dir.path() + "/out.txt";
  {
    std::ofstream f(path);
    f << "old content that must go\nmore\nmore\nmore\nmore\nmore\nmore\nmore\nmore\nmore\n";
  }
  auto r = runGw({"--simulate", "dgx-h100", "smi", "-L", "--filename=" + path});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(r.out.empty());
  auto direct = runGw({"--simulate", "dgx-h100", "smi", "-L"});
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), direct.out);
}

TEST(Smi, ExitCodesAreNvidiaSmis) {
  auto unknown = runGw({"--simulate", "dgx-h100", "smi", "-L", "-i", "99"});
  EXPECT_EQ(unknown.code, 6) << describe(unknown);
  EXPECT_NE(unknown.out.find("No devices were found"), std::string::npos) << unknown.out;
  auto nolib = runGw({"--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "smi", "-L"});
  EXPECT_EQ(nolib.code, 12) << describe(nolib);
  EXPECT_NE(nolib.out.find("NVIDIA-SMI couldn't find libnvidia-ml.so library"), std::string::npos) << nolib.out;
  auto bad = runGw({"--simulate", "dgx-h100", "smi", "--bogus"});
  EXPECT_EQ(bad.code, 255) << describe(bad);  // as a real 580.159.04 answered
  EXPECT_NE(bad.out.find("ERROR: Option --bogus is not recognized. Please run 'nvidia-smi -h'."), std::string::npos)
      << bad.out;
  auto settings = runGw({"--simulate", "dgx-h100", "smi", "-am", "1"});  // a setting this build does not change
  EXPECT_EQ(settings.code, 3) << describe(settings);
  auto help = runGw({"smi", "-h"});
  EXPECT_EQ(help.code, 0) << describe(help);
  EXPECT_NE(help.out.find("--query-gpu="), std::string::npos);
}

TEST(Smi, LostGpuExits15WhileTheOthersAreListed) {
  std::map<std::string, std::string> after_fault{{"GPUWARDEN_SIM_START", "60"}};
  auto r = runGw({"--simulate", "fault-gpu-lost", "smi", "-L"}, after_fault);
  EXPECT_EQ(r.code, 15) << describe(r);
  // As nvidia-smi, the lost GPU's line stands in its place in the list, on stdout.
  ASSERT_EQ(r.lines().size(), 8u) << r.out;
  EXPECT_EQ(r.lines()[3],
            "Unable to determine the device handle for GPU3: GPU is lost.  Reboot the system to recover "
            "this GPU")
      << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
  auto table = runGw({"--simulate", "fault-gpu-lost", "smi"}, after_fault);
  EXPECT_EQ(table.code, 15) << describe(table);
}

TEST(Smi, LoopRepeatsUntilInterruptedIntoTheFile) {
  TempDir dir;
  const std::string path = dir.path() + "/loop.txt";
  auto r = runShell(std::string("timeout --preserve-status -s INT 2 ") + GW_BINARY +
                    " --simulate dgx-h100 smi -q -d POWER -i 0 -lms 300 -f " + path + "; echo rc=$?");
  EXPECT_NE(r.out.find("rc=0"), std::string::npos) << describe(r);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::size_t logs = 0;
  for (auto p = text.find("NVSMI LOG"); p != std::string::npos; p = text.find("NVSMI LOG", p + 1)) ++logs;
  EXPECT_GE(logs, 2u) << text;
}

}  // namespace
}  // namespace gw::test
