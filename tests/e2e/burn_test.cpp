// gpuwarden burn, the real binary on the simulated DGX H100. Without a CUDA part that sees the
// GPUs (this machine: no driver) it must say why and exit 3. With the stub part (a stand-in for
// libgpuwarden-cuda.so at its C ABI, loaded by the production loader) scripted per GPU, the
// whole command runs - options, NVML watcher, parallel burns, verdicts, output - on the CPU.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gw_run.h"

namespace gw::test {
namespace {

using nlohmann::json;

// The simulated DGX H100's GPUs, by NVML index (scenarios/dgx-h100.yaml).
const char* kBuses =
    "0000:18:00.0,0000:2A:00.0,0000:3A:00.0,0000:5D:00.0,0000:9A:00.0,0000:AB:00.0,0000:BA:00.0,0000:DB:00.0";

std::map<std::string, std::string> stub(const std::string& script) {
  return {{"GPUWARDEN_CUDA_PART", GW_STUB_PART}, {"GW_STUB_BUS_IDS", kBuses}, {"GW_STUB_GEMM", script}};
}

GwResult burn(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> a{"--simulate", "dgx-h100", "burn"};
  a.insert(a.end(), args.begin(), args.end());
  return runGw(a, env);
}

const json& gpu(const json& j, int index) {
  for (const auto& g : j["gpus"])
    if (g["gpu"] == index) return g;
  static const json none;
  return none;
}

std::string joined(const json& list) {
  std::string s;
  for (const auto& x : list) s += x.get<std::string>() + "\n";
  return s;
}

TEST(BurnE2E, OnTheSimulatorItCannotRunAndSaysWhy) {
  auto r = burn({"-d", "2"});
  EXPECT_EQ(r.code, 3) << describe(r);
  EXPECT_NE(r.err.find("gpuwarden: burn cannot run: "), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("the simulator's GPUs are NVML only, CUDA cannot run on them"), std::string::npos)
      << describe(r);
  EXPECT_EQ(r.out.find("OK"), std::string::npos) << describe(r);
  auto j = burn({"-d", "2", "--json"});
  EXPECT_EQ(j.code, 3) << describe(j);
  const json doc = j.json();
  EXPECT_EQ(doc["exit_code"], 3);
  EXPECT_FALSE(doc["cannot_run"].get<std::string>().empty());
  for (const auto& g : doc["gpus"]) EXPECT_EQ(g["verdict"], "not_run") << g.dump();
}

TEST(BurnE2E, AHealthyFleetIsOkAndTheLiveLinesArePlainWhenPiped) {
  auto r = burn({"-d", "2", "-p", "fp64"}, stub("ok,ok,ok,ok,ok,ok,ok,ok"));
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("result: all 8 GPU(s) OK (exit 0)"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  // One line per GPU per interval, GPUs in order, the stub's GFLOP/s, the simulator's sensors.
  std::stringstream ss(r.err);
  std::vector<std::string> lines;
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  ASSERT_GE(lines.size(), 16u) << r.err;  // at least two ticks in two seconds
  ASSERT_EQ(lines.size() % 8, 0u) << r.err;
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    EXPECT_EQ(lines[i].rfind("GPU " + std::to_string(i % 8) + " ", 0), 0u);
    EXPECT_NE(lines[i].find(" GFLOP/s"), std::string::npos);
    EXPECT_NE(lines[i].find(" W  SM "), std::string::npos);
    EXPECT_EQ(lines[i].find("-- C"), std::string::npos);
  }
  EXPECT_NE(lines.back().find("50000.0 GFLOP/s"), std::string::npos);
  EXPECT_NE(lines.back().find("100%"), std::string::npos);
  EXPECT_NE(lines.back().find("done"), std::string::npos);
}

TEST(BurnE2E, JsonNamesEachFaultyGpuAndWhy) {
  auto r = burn({"-d", "2", "-p", "fp64", "--json"}, stub("ok,miscompare,ok,checksum,ok,slow,lost,ok"));
  ASSERT_EQ(r.code, 1) << describe(r);
  EXPECT_TRUE(r.err.empty()) << r.err;  // --json: the document alone
  const json j = r.json();
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["precision"], "fp64");
  EXPECT_EQ(j["seconds_asked"], 2.0);
  EXPECT_EQ(j["cancelled"], false);
  ASSERT_EQ(j["gpus"].size(), 8u);
  for (int ok : {0, 2, 4, 7}) {
    SCOPED_TRACE(ok);
    EXPECT_EQ(gpu(j, ok)["verdict"], "ok") << gpu(j, ok).dump();
    EXPECT_TRUE(gpu(j, ok)["reasons"].empty());
    EXPECT_EQ(gpu(j, ok)["gemm"]["gflops"], 50000.0);
    EXPECT_EQ(gpu(j, ok)["gemm"]["precision"], "fp64");
    EXPECT_EQ(gpu(j, ok)["gemm"]["checksum"], "0xc0ffee0000000004");
    EXPECT_TRUE(gpu(j, ok)["watch"]["samples"].get<int>() >= 2);
    EXPECT_FALSE(gpu(j, ok)["uuid"].get<std::string>().empty());
  }
  const json& mis = gpu(j, 1);
  EXPECT_EQ(mis["verdict"], "faulty");
  EXPECT_NE(joined(mis["reasons"]).find("results differed from the first"), std::string::npos) << mis.dump();
  const json& sum = gpu(j, 3);
  EXPECT_EQ(sum["verdict"], "faulty");
  EXPECT_NE(joined(sum["reasons"]).find("differs from the majority of identical GPUs"), std::string::npos)
      << sum.dump();
  const json& slow = gpu(j, 5);
  EXPECT_EQ(slow["verdict"], "faulty");
  EXPECT_NE(joined(slow["reasons"]).find("% slower than the mean of its"), std::string::npos) << slow.dump();
  const json& lost = gpu(j, 6);
  EXPECT_EQ(lost["verdict"], "faulty");
  EXPECT_NE(joined(lost["reasons"]).find("unspecified launch failure"), std::string::npos) << lost.dump();
}

// fault-hang: from t=10 s every NVML call on GPU 5 blocks for 30 s. GPU 5 costs the burn one call
// deadline and is FAULTY (a card that does not answer NVML is not good); the others still burn.
TEST(BurnE2E, AGpuThatDoesNotAnswerNvmlIsFaultyWhileTheOthersBurn) {
  auto env = stub("ok,ok,ok,ok,ok,ok,ok,ok");
  env["GPUWARDEN_SIM_START"] = "15";
  auto r = runGw({"--simulate", "fault-hang", "burn", "-d", "1", "--json"}, env);
  ASSERT_EQ(r.code, 1) << describe(r);
  const json j = r.json();
  ASSERT_EQ(j["gpus"].size(), 8u) << j.dump();
  const json& hung = gpu(j, 5);
  EXPECT_EQ(hung["verdict"], "faulty") << hung.dump();
  EXPECT_EQ(joined(hung["reasons"]), "does not answer NVML: GPU 5 stalled: no answer from NVML within 2000 ms\n")
      << hung.dump();
  for (int ok : {0, 1, 2, 3, 4, 6, 7}) {
    SCOPED_TRACE(ok);
    EXPECT_EQ(gpu(j, ok)["verdict"], "ok") << gpu(j, ok).dump();
  }
}

TEST(BurnE2E, TheTableSaysFaultyWithTheReason) {
  auto r = burn({"-d", "1", "-p", "fp64"}, stub("ok,ok,miscompare"));
  ASSERT_EQ(r.code, 1) << describe(r);
  EXPECT_NE(r.out.find("  2    FAULTY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("       FAULTY: GEMM burn: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  0    OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: 1 GPU(s) FAULTY (exit 1)"), std::string::npos) << r.out;
}

// Two GPUs that disagree: one of them computed a wrong result and neither can be named, so the
// burn must not end in "all OK".
TEST(BurnE2E, TwoGpusThatDisagreeAreSuspectAndExitOne) {
  auto r = burn({"-d", "1", "-p", "fp64", "-i", "0,1"}, stub("ok,checksum"));
  ASSERT_EQ(r.code, 1) << describe(r);
  EXPECT_NE(r.out.find("  0    SUSPECT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  1    SUSPECT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("with no majority the wrong one cannot be named"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result: 2 GPU(s) SUSPECT"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAULTY:"), std::string::npos) << r.out;

  auto agree = burn({"-d", "1", "-p", "fp64", "-i", "0,1"}, stub("ok,ok"));
  ASSERT_EQ(agree.code, 0) << describe(agree);
  EXPECT_NE(agree.out.find("result: all 2 GPU(s) OK"), std::string::npos) << agree.out;
}

TEST(BurnE2E, DashISelectsTheGpus) {
  auto r = burn({"-d", "1", "-p", "fp64", "-i", "2,0000:9A:00.0"}, stub("ok,ok,ok,ok,ok,ok,ok,ok"));
  ASSERT_EQ(r.code, 0) << describe(r);
  std::set<std::string> seen;
  std::stringstream ss(r.err);
  for (std::string l; std::getline(ss, l);) seen.insert(l.substr(0, 5));
  EXPECT_EQ(seen, (std::set<std::string>{"GPU 2", "GPU 4"})) << r.err;
  auto j = burn({"-d", "1", "-p", "fp64", "-i", "5", "--json"}, stub("ok,ok,ok,ok,ok,ok,ok,ok"));
  ASSERT_EQ(j.code, 0) << describe(j);
  ASSERT_EQ(j.json()["gpus"].size(), 1u);
  EXPECT_EQ(j.json()["gpus"][0]["gpu"], 5);
  auto bad = burn({"-d", "1", "-i", "8"}, stub("ok"));
  EXPECT_EQ(bad.code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("-i: no GPU with index 8 (8 GPU(s) present)"), std::string::npos) << bad.err;
  auto unknown = burn({"-d", "1", "-i", "GPU-nope"}, stub("ok"));
  EXPECT_EQ(unknown.code, 2) << describe(unknown);
  EXPECT_NE(unknown.err.find("-i: no GPU matches 'GPU-nope'"), std::string::npos) << unknown.err;
}

TEST(BurnE2E, DurationOutsideItsBoundsIsAUsageError) {
  for (const char* d : {"0", "-1", "0.5", "604801", "1e12", "nan"}) {
    SCOPED_TRACE(d);
    auto r = burn({std::string("--duration=") + d});
    EXPECT_EQ(r.code, 2) << describe(r);
    EXPECT_NE(r.err.find("-d: the duration must be between 1 and 604800 seconds (one week), not "), std::string::npos)
        << r.err;
  }
  auto word = burn({"-d", "soon"});
  EXPECT_EQ(word.code, 2) << describe(word);
}

TEST(BurnE2E, UnknownPrecisionNamesTheValidOnes) {
  auto r = burn({"-d", "1", "-p", "fp8"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("--precision: unknown precision 'fp8' (valid: fp16, bf16, tf32, fp32, fp64, tensor)"),
            std::string::npos)
      << r.err;
}

TEST(BurnE2E, HelpDocumentsPrecisionsAndExitCodes) {
  auto r = runGw({"burn", "--help"});
  EXPECT_EQ(r.code, 0) << describe(r);
  for (const char* s : {"tensor: FP32 matrices on the tensor cores", "fp64: FP64 matrices", "  0  every GPU burned",
                        "  1  a GPU is FAULTY", "  2  bad arguments", "  3  could not run"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

}  // namespace
}  // namespace gw::test
