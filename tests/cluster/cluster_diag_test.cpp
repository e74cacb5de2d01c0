// What `cluster diag` reads: srun's labelled output, sinfo's GRES column, and a node's report.
#include <gtest/gtest.h>

#include "cluster/cluster_diag.h"

namespace gw::cluster {
namespace {

TEST(ClusterDiag, LabelledOutputSplitsByTask) {
  const std::string out =
      " 0: {\n 1: {\n 0:   \"level\": 1\n10: x\n 0: }\nsrun: error: gwnode9: task 2: Exited with exit code 2\n"
      "12x: not a label\n";
  auto t = splitLabelledOutput(out);
  EXPECT_EQ(t[0], "{\n  \"level\": 1\n}\n");
  EXPECT_EQ(t[1], "{\n");
  EXPECT_EQ(t[10], "x\n");
  EXPECT_EQ(t[-1], "srun: error: gwnode9: task 2: Exited with exit code 2\n12x: not a label\n");
  auto bounded = splitLabelledOutput("0: aaaa\n0: bbbb\n0: cccc\n", 6);
  EXPECT_EQ(bounded[0], "aaaa\nbbbb\n");  // stops growing once past the bound
}

TEST(ClusterDiag, LabelsAreAtMostSixWideAndOneSpaceFollowsTheColon) {
  auto t = splitLabelledOutput("123456: six\n1234567: seven\n     7:x\n8: \n9:  two spaces\n");
  EXPECT_EQ(t[123456], "six\n");
  EXPECT_EQ(t[-1], "1234567: seven\n");
  EXPECT_EQ(t[7], "x\n");
  EXPECT_EQ(t[8], "\n");
  EXPECT_EQ(t[9], " two spaces\n");
}

TEST(ClusterDiag, ATaskStopsGrowingAtItsBound) {
  // Exactly at the bound: nothing more is taken.
  EXPECT_EQ(splitLabelledOutput("0: aaaa\n0: bbbb\n", 5)[0], "aaaa\n");
  // The default bound is 8 MiB a task: nine lines of 1 MiB keep eight.
  std::string out;
  for (int i = 0; i < 9; ++i) out += "0: " + std::string((1 << 20) - 1, 'x') + "\n";
  EXPECT_EQ(splitLabelledOutput(out)[0].size(), std::size_t{8} << 20);
}

TEST(ClusterDiag, GpuCountFromSinfo) {
  EXPECT_EQ(gpuCountFromGres("gpu:h100:8(S:0-1)"), 8u);
  EXPECT_EQ(gpuCountFromGres("gpu:a100:4,gpu:t4:2"), 6u);
  EXPECT_EQ(gpuCountFromGres("gpu:2"), 2u);
  EXPECT_EQ(gpuCountFromGres("(null)"), 0u);
  EXPECT_EQ(gpuCountFromGres("mps:100,gpu:h100:1"), 1u);
  EXPECT_EQ(gpuCountFromGres("gpu:h100:x"), 0u);
}

TEST(ClusterDiag, ANodesRowFromItsReport) {
  const std::string report = R"({"level": 1, "node": "gpu07", "seconds": 1.5, "overall": "fail", "cuda": "ready",
    "gpus": [{"index": 0, "name": "H100", "verdict": "pass"}, {"index": 5, "name": "H100", "verdict": "fail"}],
    "checks": [{"test": "ecc", "gpu": 0, "verdict": "warn", "summary": "1 corrected"},
               {"test": "retired_pages", "gpu": 5, "verdict": "fail", "summary": "70 retired pages"}]})";
  auto row = readNodeReport("note: report not stored\n" + report, "task-0");
  EXPECT_EQ(row.node, "gpu07");
  EXPECT_EQ(row.overall, "fail");
  EXPECT_EQ(row.exit_code, 1);
  EXPECT_EQ(row.gpus, 2u);
  EXPECT_EQ(row.failed,
            (std::vector<std::string>{"GPU 5: retired_pages: 70 retired pages", "GPU 0: ecc: 1 corrected"}));
  auto none = readNodeReport("slurmstepd: error: execve(): gpuwarden: No such file or directory\n", "gwnode3");
  EXPECT_EQ(none.node, "gwnode3");
  EXPECT_EQ(none.overall, "no report");
  EXPECT_EQ(none.error, "slurmstepd: error: execve(): gpuwarden: No such file or directory");
  // Without a report, the first line of the output says why, cut at 200 bytes.
  EXPECT_EQ(readNodeReport(std::string(201, 'e') + "\nsecond line", "gwnode3").error, std::string(200, 'e'));
  EXPECT_EQ(readNodeReport("", "gwnode3").error, "no output");
  auto wrong = readNodeReport(R"({"level": "x"})", "gwnode3");
  EXPECT_EQ(wrong.overall, "no report");
  EXPECT_NE(wrong.error.find("not a diag report: "), std::string::npos);
  // A node's output is not trusted: its nesting is bounded before anything is built (64 levels
  // are a document, 65 are refused), and a brace that opens no object says so.
  const std::string deep64 = "{\"x\": " + std::string(63, '[') + std::string(63, ']') + "}";
  EXPECT_EQ(readNodeReport(deep64, "gwnode3").error.find("the report is not a JSON object"), std::string::npos);
  auto deep = readNodeReport("{\"x\": " + std::string(64, '[') + std::string(64, ']') + "}", "gwnode3");
  EXPECT_EQ(deep.overall, "no report");
  EXPECT_EQ(deep.error, "the report is not a JSON object: JSON nested deeper than 64");
  auto cut = readNodeReport("note: report not stored\n{\"level\": 1,", "gwnode3");
  EXPECT_EQ(cut.overall, "no report");
  EXPECT_TRUE(cut.error.starts_with("the report is not a JSON object: not JSON: ")) << cut.error;
}

// sinfo's nodes: only idle, mix and alloc with no flag can take the step now; a named node that
// cannot gets a row with its state and its flag's meaning (a node that does not answer would hold
// srun up); a node listed once per partition is one node.
TEST(ClusterDiag, NodesFromSinfoAreUsableOnlyInAPlainRunnableState) {
  const std::string out =
      "n01|gpu:h100:8(S:0-1)|idle\n"
      "n02|gpu:h100:8|mix\n"
      "n03|gpu:h100:4|alloc\n"
      "n01|gpu:h100:8(S:0-1)|idle\n"  // n01 again, from a second partition
      "n04|gpu:h100:8|drain\n"
      "n05|gpu:h100:8|idle*\n"
      "n06|gpu:h100:8|idle~\n"
      "n07|gpu:h100:8|mix-\n"
      "n08|gpu:h100:8|down*\n"
      "n08|gpu:h100:8|down*\n"
      "n09|gpu:h100:8|alloc#\n"
      "n10|gpu:h100:8|drng\n"
      "n11|gpu:h100:8|idle@\n"
      "|(null)|idle\n"
      "n12|(null)|idle\n";
  const auto named = nodesFromSinfo(out, true);
  EXPECT_EQ(named.usable, (std::map<std::string, unsigned>{{"n01", 8}, {"n02", 8}, {"n03", 4}, {"n12", 0}}));
  std::vector<std::string> rows;
  for (const auto& r : named.untestable) {
    EXPECT_EQ(r.overall, "no report");
    rows.push_back(r.node + ": " + r.error);
  }
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "n04: not tested: the node is drain",
                      "n05: not tested: the node is idle* (not responding)",
                      "n06: not tested: the node is idle~ (powered down)",
                      "n07: not tested: the node is mix- (planned for a pending job)",
                      "n08: not tested: the node is down* (not responding)",
                      "n09: not tested: the node is alloc# (powering up)",
                      "n10: not tested: the node is drng",
                      "n11: not tested: the node is idle@ (to be rebooted)",
                  }));
  // Not named (the whole partition): the nodes that cannot run are left out without a row.
  const auto all = nodesFromSinfo(out, false);
  EXPECT_EQ(all.usable, named.usable);
  EXPECT_TRUE(all.untestable.empty());
  EXPECT_TRUE(nodesFromSinfo("", true).usable.empty());
}

TEST(ClusterDiag, FleetExitAndSummary) {
  NodeDiag pass{"a", "pass", 0, 8, {}, ""}, inc{"b", "incomplete", 4, 8, {}, ""}, bad{"c", "fail", 1, 8, {"x"}, ""},
      none{"d", "no report", 2, 0, {}, "no output"};
  EXPECT_EQ(fleetJson({pass}, 1)["exit_code"], 0);
  EXPECT_EQ(fleetJson({pass, inc}, 1)["exit_code"], 4);
  EXPECT_EQ(fleetJson({pass, none}, 1)["exit_code"], 4);
  EXPECT_EQ(fleetJson({inc, bad, none}, 1)["exit_code"], 1);
  EXPECT_EQ(fleetJson({pass, inc, bad, none}, 2)["summary"],
            (nlohmann::json{{"nodes", 4}, {"pass", 1}, {"warn", 0}, {"fail", 1}, {"incomplete", 1}, {"no_report", 1}}));
  // Each node's row; "error" only where there is one.
  EXPECT_EQ(fleetJson({pass, none}, 1)["nodes"], nlohmann::json::parse(R"([
    {"node": "a", "overall": "pass", "exit_code": 0, "gpus": 8, "findings": []},
    {"node": "d", "overall": "no report", "exit_code": 2, "gpus": 0, "findings": [], "error": "no output"}])"));
}

TEST(ClusterDiag, TheTableAlignsOnTheLongestNodeName) {
  NodeDiag pass{"a", "pass", 0, 8, {}, ""}, bad{"c", "fail", 1, 8, {"GPU 5: ecc: 70", "GPU 0: ecc: 1"}, ""},
      none{"d", "no report", 2, 0, {}, "no output"}, one{"e", "warn", 0, 1024, {"GPU 3: pcie: x8"}, ""};
  EXPECT_EQ(fleetTable({pass, bad, none, one}),
            "NODE  VERDICT     GPUS  FIRST FINDING\n"
            "a     pass        8     \n"
            "c     fail        8     GPU 5: ecc: 70 (+1 more)\n"
            "d     no report   0     no output\n"
            "e     warn        1024  GPU 3: pcie: x8\n"
            "4 node(s): 1 pass, 1 warn, 1 fail, 0 incomplete, 1 without a report\n");
  pass.node = "gwnode10";
  EXPECT_EQ(fleetTable({pass}),
            "NODE      VERDICT     GPUS  FIRST FINDING\n"
            "gwnode10  pass        8     \n"
            "1 node(s): 1 pass, 0 warn, 0 fail, 0 incomplete, 0 without a report\n");
}

}  // namespace
}  // namespace gw::cluster
