// gpuwarden smi held to a real nvidia-smi: the h200-580 scenario is the H200 (driver 580.159.04)
// that tests/e2e/fixtures/real-h200-580.159.04 was recorded on, idle, with its identity. Frames,
// widths, words and exit codes must equal what nvidia-smi printed there; only readings that move
// (time, temperature, power) are compared by shape.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "gw_run.h"

namespace gw::test {
namespace {

const std::string kFixtures = std::string(GW_SOURCE_DIR) + "/tests/e2e/fixtures/real-h200-580.159.04/";

std::string fixture(const std::string& name) {
  std::ifstream f(kFixtures + name);
  EXPECT_TRUE(f.good()) << kFixtures + name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> v;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) v.push_back(l);
  return v;
}

// Every digit as 9: a reading of the same width compares equal, a column that moved does not.
std::string digitsMasked(std::string s) {
  for (char& c : s)
    if (c >= '0' && c <= '9') c = '9';
  return s;
}

struct Node {
  TempDir dir;
  std::map<std::string, std::string> env() const {
    return {{"GPUWARDEN_SIM_STATE", dir.path() + "/sim-state"},
            {"GPUWARDEN_DATA_DIR", dir.path() + "/data"},
            {"GPUWARDEN_RUNTIME_DIR", dir.path() + "/run"}};
  }
  GwResult smi(std::vector<std::string> words) const {
    std::vector<std::string> argv{"--simulate", "h200-580", "smi"};
    argv.insert(argv.end(), words.begin(), words.end());
    return runGw(argv, env());
  }
};

TEST(SmiReal, ListIsTheRecordedOne) {
  Node n;
  auto r = n.smi({"-L"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.out, fixture("nvidia-smi-L.txt"));
}

// The 580 summary: '+' under the banner, an empty line before the processes, the wider PID.
TEST(SmiReal, SummaryHasTheRecordedFrames) {
  Node n;
  auto r = n.smi({});
  ASSERT_EQ(r.code, 0) << describe(r);
  const auto got = linesOf(r.out), want = linesOf(fixture("nvidia-smi-table.txt"));
  ASSERT_EQ(got.size(), want.size()) << r.out;
  // Line 0 is the time of day, line 9 the readings (temperature, power): same widths.
  EXPECT_TRUE(std::regex_match(got[0], std::regex(R"(\w{3} \w{3} [ 0-9]\d \d\d:\d\d:\d\d \d{4}       )"))) << got[0];
  for (std::size_t i = 1; i < want.size(); ++i) {
    if (i == 9)
      EXPECT_EQ(digitsMasked(got[i]), digitsMasked(want[i])) << "line " << i;
    else
      EXPECT_EQ(got[i], want[i]) << "line " << i;
  }
}

// A process row on a 580 driver keeps to the wider PID column the recorded header gives it: the
// PID ends where "PID" ends, the memory where "GPU Memory" ends.
TEST(SmiReal, ProcessRowsFitThe580Header) {
  Node n;
  n.dir.write("busy.yaml", "base: " + std::string(GW_SOURCE_DIR) +
                               "/scenarios/h200-580\n"
                               "defaults: {profile: H200-SXM-141GB, workload: training, persistence: true}\n"
                               "gpus:\n  - {bus_id: \"0000:00:06.0\", processes: [{pid: 4242, name: python3, "
                               "memory: 10GiB}]}\n");
  auto r = runGw({"--simulate", n.dir.path() + "/busy.yaml", "smi"}, n.env());
  ASSERT_EQ(r.code, 0) << describe(r);
  const auto want = linesOf(fixture("nvidia-smi-table.txt"));
  const std::string header = want[15];  // "|  GPU   GI   CI              PID   Type   Process name ..."
  ASSERT_NE(header.find("PID"), std::string::npos) << header;
  std::string row;
  for (const auto& l : r.lines())
    if (l.find("python3") != std::string::npos) row = l;
  ASSERT_FALSE(row.empty()) << r.out;
  EXPECT_EQ(row.size(), header.size()) << row;
  EXPECT_EQ(row.find("4242") + 4, header.find("PID") + 3) << row;
  EXPECT_EQ(row.find("MiB |") + 3, header.find("GPU Memory") + 10) << row;
}

TEST(SmiReal, TopoIsTheRecordedMatrix) {
  Node n;
  auto r = n.smi({"topo", "-m"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.out, fixture("nvidia-smi-topo.txt"));
}

// dmon's columns, widths and trailing spaces (readings compared by width); pmon of an idle GPU
// word for word.
TEST(SmiReal, DmonAndPmonAreTheRecordedOnes) {
  Node n;
  auto d = n.smi({"dmon", "-c", "3"});
  ASSERT_EQ(d.code, 0) << describe(d);
  const auto got = d.lines(), want = linesOf(fixture("nvidia-smi-dmon.txt"));
  ASSERT_EQ(got.size(), want.size()) << d.out;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(digitsMasked(got[i]), digitsMasked(want[i])) << i;
  auto p = n.smi({"pmon", "-c", "1"});
  ASSERT_EQ(p.code, 0) << describe(p);
  EXPECT_EQ(p.out, fixture("nvidia-smi-pmon.txt"));
  // Every group: 580's ccpm (confidential computing's protected memory) after bar1 and fb.
  auto all = n.smi({"dmon", "-s", "pucvmet", "-c", "2"});
  ASSERT_EQ(all.code, 0) << describe(all);
  const auto all_got = all.lines(), all_want = linesOf(fixture("nvidia-smi-dmon-s-pucvmet.txt"));
  ASSERT_EQ(all_got.size(), all_want.size()) << all.out;
  for (std::size_t i = 0; i < all_want.size(); ++i) EXPECT_EQ(digitsMasked(all_got[i]), digitsMasked(all_want[i])) << i;
  auto um = n.smi({"pmon", "-s", "um", "-c", "1"});
  ASSERT_EQ(um.code, 0) << describe(um);
  EXPECT_EQ(um.out, fixture("nvidia-smi-pmon-s-um.txt"));
}

// With MIG off, -lgip still lists every profile with all instances free and -lgipp their
// placements; -lgi and -lci say there is no MIG device, on stdout with success.
TEST(SmiReal, MigListsWithMigOffAreTheRecordedOnes) {
  Node n;
  auto lgip = n.smi({"mig", "-lgip"});
  ASSERT_EQ(lgip.code, 0) << describe(lgip);
  EXPECT_EQ(lgip.out, fixture("nvidia-smi-mig-lgip.txt"));
  auto lgipp = n.smi({"mig", "-lgipp"});
  ASSERT_EQ(lgipp.code, 0) << describe(lgipp);
  EXPECT_EQ(lgipp.out, fixture("nvidia-smi-mig-lgipp.txt"));
  auto lci = n.smi({"mig", "-lci"});
  EXPECT_EQ(lci.code, 0) << describe(lci);
  EXPECT_EQ(lci.out, fixture("nvidia-smi-mig-lci.txt"));
  auto lgi = n.smi({"mig", "-lgi"});
  EXPECT_EQ(lgi.code, 0) << describe(lgi);
  EXPECT_EQ(lgi.out, fixture("nvidia-smi-mig-lgi.txt"));
  // gpuwarden's own hint goes to stderr, where nvidia-smi's scripts do not read.
  EXPECT_NE(lgi.err.find("MIG mode is disabled on GPU 0 (00000000:00:06.0)"), std::string::npos) << lgi.err;
}

TEST(SmiReal, SettingsAnswerInTheRecordedWords) {
  Node n;
  // Refusals: nvidia-smi's words and exit code, on stdout as it printed them; nothing on stderr.
  for (const auto& [words, recorded, code] : std::vector<std::tuple<std::vector<std::string>, std::string, int>>{
           {{"-pl", "9999", "-i", "0"}, "nvidia-smi-pl-9999.txt", 2},
           {{"--query-gpu=bogus", "--format=csv"}, "nvidia-smi-bad-field.txt", 2},
           {{"--bogus"}, "nvidia-smi-bad-flag.txt", 255}}) {
    auto r = n.smi(words);
    EXPECT_EQ(r.code, code) << words[0] << "\n" << describe(r);
    EXPECT_EQ(r.out, fixture(recorded)) << words[0];
    EXPECT_TRUE(r.err.empty()) << words[0] << "\n" << r.err;
  }
  // Each set to what it already was: nvidia-smi's sentence for that, word for word, and exit 0.
  for (const auto& [words, recorded] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"-pm", "1", "-i", "0"}, "nvidia-smi-pm-same.txt"},
           {{"-c", "0", "-i", "0"}, "nvidia-smi-c-same.txt"},
           {{"-pl", "700.00", "-i", "0"}, "nvidia-smi-pl-same.txt"}}) {
    auto r = n.smi(words);
    EXPECT_EQ(r.code, 0) << words[0] << "\n" << describe(r);
    EXPECT_EQ(r.out, fixture(recorded)) << words[0];
  }
}

// -q's lines as (label with its indentation, value); a heading has no value.
std::vector<std::pair<std::string, std::string>> logLines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& l : linesOf(text)) {
    const auto colon = l.find(" : ");
    if (colon == std::string::npos) {
      v.emplace_back(l, "");
    } else {
      std::string label = l.substr(0, colon);
      label.erase(label.find_last_not_of(' ') + 1);
      v.emplace_back(label, l.substr(colon + 3));
    }
  }
  return v;
}

// Holds a -q text to a recorded one: every line of ours is one of the real lines, in the real
// order (the lines gpuwarden does not read are left out, docs/cli.md), its colon at column 55,
// and its value the real one: digit for digit unless it is a reading that moves, "N/A" where
// gpuwarden does not read the property. Returns how many lines matched.
std::size_t expectRecordedLog(const std::string& ours, const std::string& recorded) {
  static const std::set<std::string> kMoving = {"GPU Current Temp",
                                                "GPU T.Limit Temp",
                                                "Memory Current Temp",
                                                "Average Power Draw",
                                                "Instantaneous Power Draw",
                                                "Free",
                                                "Used",
                                                "Replays Since Reset",
                                                "Tx Throughput",
                                                "Rx Throughput"};
  static const std::set<std::string> kModelled = {"Display Attached"};  // the simulator's boards have none
  const auto got = logLines(ours), want = logLines(recorded);
  for (const auto& l : linesOf(ours)) {
    if (l.find(" : ") != std::string::npos) {
      EXPECT_EQ(l.find(" : "), 54u) << l;
    }
  }
  std::size_t at = 0, matched = 0;
  for (const auto& [label, value] : got) {
    std::size_t i = at;
    while (i < want.size() && want[i].first != label) ++i;
    if (i == want.size()) {
      ADD_FAILURE() << "not in the recorded -q after its line " << at << ": '" << label << "'";
      continue;
    }
    at = i + 1;
    ++matched;
    std::string name = label;
    name.erase(0, name.find_first_not_of(' '));
    if (value == "N/A" || kModelled.count(name)) continue;
    static const std::regex kNumber(R"(\d+)");
    // ctime's shape ("Fri Dec  4 16:46:16 2026"): the day's and month's names move with the date.
    static const std::regex kStamp(R"((Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) )"
                                   R"([ 1-3]\d \d\d:\d\d:\d\d \d{4})");
    if (name == "Timestamp") {
      EXPECT_TRUE(std::regex_match(value, kStamp)) << value;
      EXPECT_TRUE(std::regex_match(want[i].second, kStamp)) << want[i].second;
    } else if (kMoving.count(name))  // a number of any width where the recorded one stood
      EXPECT_EQ(std::regex_replace(value, kNumber, "9"), std::regex_replace(want[i].second, kNumber, "9")) << label;
    else
      EXPECT_EQ(value, want[i].second) << label;
  }
  return matched;
}

// The XML's element paths, one per line's opening tag, in order.
std::vector<std::string> xmlPaths(const std::string& xml) {
  std::vector<std::string> paths, stack;
  static const std::regex kOpen(R"(^\t*<([A-Za-z_]+)[ >].*)"), kClose(R"(^\t*</([A-Za-z_]+)>$)");
  std::smatch m;
  for (const auto& l : linesOf(xml)) {
    if (std::regex_match(l, m, kClose)) {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    if (!std::regex_match(l, m, kOpen)) continue;
    std::string path;
    for (const auto& s : stack) path += "/" + s;
    paths.push_back(path + "/" + m[1].str());
    if (l.find("</") == std::string::npos) stack.push_back(m[1].str());
  }
  return paths;
}

// 580's log (-q): the recorded labels, indentation, 55-column colons and values.
TEST(SmiReal, QueryLogIsTheRecordedTree) {
  Node n;
  auto r = n.smi({"-q"});
  ASSERT_EQ(r.code, 0) << describe(r);
  // 257 lines recorded; the ones left are properties gpuwarden does not read (docs/cli.md).
  EXPECT_GE(expectRecordedLog(r.out, fixture("nvidia-smi-q.txt")), 218u);
  auto d = n.smi({"-q", "-d", "PERFORMANCE,TEMPERATURE,POWER,ECC,PAGE_RETIREMENT,ROW_REMAPPER"});
  ASSERT_EQ(d.code, 0) << describe(d);
  EXPECT_GE(expectRecordedLog(d.out, fixture("nvidia-smi-q-d-perf-temp-power-ecc.txt")), 75u);
}

// 580's XML (-q -x): DTD v13, and every element ours writes is one the real one wrote, at the same
// place and in the same order.
TEST(SmiReal, QueryXmlHasTheRecordedElements) {
  Node n;
  auto r = n.smi({"-q", "-x"});
  ASSERT_EQ(r.code, 0) << describe(r);
  const auto recorded = fixture("nvidia-smi-qx.txt");
  EXPECT_EQ(linesOf(r.out).at(1), linesOf(recorded).at(1));  // <!DOCTYPE … nvsmi_device_v13.dtd>
  const auto got = xmlPaths(r.out), want = xmlPaths(recorded);
  std::size_t at = 0;
  for (const auto& p : got) {
    std::size_t i = at;
    while (i < want.size() && want[i] != p) ++i;
    EXPECT_LT(i, want.size()) << "not in the recorded XML after element " << at << ": " << p;
    if (i < want.size()) at = i + 1;
  }
  EXPECT_GE(got.size(), 215u);  // of the 269 recorded: the rest are not read (docs/cli.md)
  // A value: the recorded display_mode sentence, the power state inside the power readings.
  EXPECT_NE(r.out.find("<display_mode>Requested functionality has been deprecated</display_mode>"), std::string::npos);
  EXPECT_NE(r.out.find("<gpu_power_readings>\n\t\t\t<power_state>P0</power_state>"), std::string::npos) << r.out;
}

// --query-gpu, every name of the real --help-query-gpu in one query: each value as the real
// driver printed it, except readings that move (compared by shape) and the properties gpuwarden
// does not read or models otherwise, each named here with why (docs/cli.md "Against a real
// nvidia-smi"). A name that starts to match stays checked by the loop anyway.
TEST(SmiReal, QueryGpuValuesAreTheRecordedOnes) {
  const std::map<std::string, std::string> moving = {
      {"timestamp", R"(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3})"},
      {"temperature.gpu", R"(\d+)"},
      {"temperature.gpu.tlimit", R"(\d+)"},
      {"temperature.memory", R"(\d+)"},
      {"power.draw", R"(\d+\.\d\d W)"},
      {"power.draw.average", R"(\d+\.\d\d W)"},
      {"power.draw.instant", R"(\d+\.\d\d W)"},
      // nvidia-smi's MiB do not add up to the total (143156 free + 616 reserved of 143771):
      // its rounding of the byte counts is not known, so free is off by one.
      {"memory.free", R"(14315[56] MiB)"},
  };
  // Not read by gpuwarden (no NVML call of ours answers it yet), or answered otherwise by the
  // simulator than by this VM's H200.
  const std::set<std::string> not_modelled = {"display_attached", "remapped_rows.correctable_inactive",
                                              "remapped_rows.uncorrectable_inactive"};
  const std::regex not_modelled_family(R"(clocks_event_reasons_counters\..*|platform\..*)");
  std::vector<std::pair<std::string, std::string>> recorded;
  for (const auto& line : linesOf(fixture("query-gpu-each-field.tsv"))) {
    const auto tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    recorded.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  ASSERT_GE(recorded.size(), 190u);
  std::string names;
  for (const auto& [name, value] : recorded) names += (names.empty() ? "" : ",") + name;
  Node n;
  auto r = n.smi({"--query-gpu=" + names, "--format=csv,noheader"});
  ASSERT_EQ(r.code, 0) << describe(r);
  ASSERT_EQ(r.lines().size(), 1u) << r.out;
  std::vector<std::string> got;
  const std::string row = r.lines()[0];
  for (std::size_t at = 0;;) {
    const auto comma = row.find(", ", at);
    got.push_back(row.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  ASSERT_EQ(got.size(), recorded.size()) << row;
  std::size_t exact = 0;
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    const auto& [name, want] = recorded[i];
    if (auto m = moving.find(name); m != moving.end()) {
      EXPECT_TRUE(std::regex_match(got[i], std::regex(m->second))) << name << ": " << got[i];
      EXPECT_TRUE(std::regex_match(want, std::regex(m->second))) << name << " (recorded): " << want;
    } else if (!not_modelled.count(name) && !std::regex_match(name, not_modelled_family)) {
      EXPECT_EQ(got[i], want) << name;
      ++exact;
    }
  }
  // The identity, limits, clocks, modes, PCIe, ECC totals, row remapping, MIG mode...
  EXPECT_GE(exact, 175u);
}

}  // namespace
}  // namespace gw::test
