// The fleet view's reading of Prometheus answers (cluster/fleet.h): the API's JSON as Prometheus
// writes it, bounded; and the report built from the four queries, on a three-node fleet worked
// out by hand. Against a real Prometheus scraping real agents: tests/integration/fleet_test.sh.
#include "cluster/fleet.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

namespace gw::cluster::fleet {
namespace {

using json = nlohmann::json;

TEST(FleetParse, AnInstantVectorAsPrometheusWritesIt) {
  auto v = parseVector(R"({"status":"success","data":{"resultType":"vector","result":[)"
                       R"({"metric":{"Hostname":"a","gpu":"0"},"value":[1767225600.5,"42.25"]},)"
                       R"({"metric":{"Hostname":"b","gpu":"1"},"value":[1767225600.5,"NaN"]}]}})");
  ASSERT_TRUE(v) << v.error();
  ASSERT_EQ(v->size(), 1u);  // NaN (an empty window) carries nothing
  EXPECT_EQ((*v)[0].labels.at("Hostname"), "a");
  EXPECT_EQ((*v)[0].value, 42.25);
}

TEST(FleetParse, ErrorsSayWhatIsWrong) {
  auto e = parseVector(R"({"status":"error","errorType":"bad_data","error":"parse error at char 5"})");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "Prometheus says: parse error at char 5");
  e = parseVector(R"({"status":"success","data":{"resultType":"matrix","result":[]}})");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "not an instant vector answer");
  e = parseVector(R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}})");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "a series' value 'x'");
  e = parseVector(
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}})");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "a series has a label that is not a short string");
  e = parseVector(std::string(100, '[') + std::string(100, ']'));
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("nested deeper than 8"), std::string::npos) << e.error();
  e = parseVector("<html>");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("not a Prometheus API answer"), std::string::npos) << e.error();
  std::string many = R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{)";
  for (std::size_t i = 0; i <= kMaxLabels; ++i)
    many += (i ? "," : "") + std::string("\"l") + std::to_string(i) + "\":\"v\"";
  many += R"(},"value":[1,"1"]}]}})";
  e = parseVector(many);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "a series has 65 labels; at most 64");
}

// An answer holding one series with these metric labels and this value.
std::string answerOf(const std::string& metric, const std::string& value = R"([1,"1"])") {
  return R"({"status":"success","data":{"resultType":"vector","result":[{"metric":)" + metric + R"(,"value":)" + value +
         "}]}}";
}

TEST(FleetParse, LabelsValuesAndNestingAtTheirBounds) {
  // 64 labels (kMaxLabels) are read; the 65th is refused (ErrorsSayWhatIsWrong).
  std::string labels = "{";
  for (int i = 0; i < 64; ++i) labels += (i ? "," : "") + std::string("\"l") + std::to_string(i) + "\":\"v\"";
  auto v = parseVector(answerOf(labels + "}"));
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ((*v)[0].labels.size(), 64u);
  // A label's name and value: at most 1024 bytes each (kMaxLabelBytes).
  const std::string k(1024, 'k'), val(1024, 'v');
  v = parseVector(answerOf("{\"" + k + "\":\"" + val + "\"}"));
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ((*v)[0].labels.at(k), val);
  for (const std::string& m : {"{\"" + k + "k\":\"v\"}", "{\"k\":\"" + val + "v\"}"})
    EXPECT_EQ(parseVector(answerOf(m)).error(), "a series has a label that is not a short string");
  // A value is [time, "number"], all of the string a number.
  for (const char* value : {R"([1])", R"([1,"1",2])", R"([1,1])"})
    EXPECT_EQ(parseVector(answerOf("{}", value)).error(),
              "a series of the answer is not {metric, value: [time, \"number\"]}")
        << value;
  EXPECT_EQ(parseVector(answerOf("{}", R"([1,"1x"])")).error(), "a series' value '1x'");
  // Prometheus' own reason, quoted to 300 bytes.
  EXPECT_EQ(parseVector(R"({"status":"error","error":")" + std::string(301, 'e') + "\"}").error(),
            "Prometheus says: " + std::string(300, 'e'));
  EXPECT_EQ(parseVector(R"({"status":"error"})").error(), "Prometheus says: no reason given");
  // Eight levels of nesting are parsed, nine are not.
  EXPECT_EQ(parseVector(std::string(8, '[') + std::string(8, ']')).error(), "not a Prometheus API answer: no status");
  EXPECT_NE(parseVector(std::string(9, '[') + std::string(9, ']')).error().find("nested deeper than 8"),
            std::string::npos);
}

Sample gpu(const std::string& node, const std::string& index, double value,
           std::map<std::string, std::string> more = {}) {
  Sample s;
  s.labels = {{"Hostname", node}, {"gpu", index}, {"UUID", "GPU-" + node + index}, {"modelName", "NVIDIA H100"}};
  for (auto& [k, v] : more) s.labels[k] = v;
  s.value = value;
  return s;
}

TEST(FleetReport, ThreeNodesWorkedOutByHand) {
  Inputs in;
  // node-a: GPU 1 fatal (Xid 79 class) with its finding; node-c: GPU 1 warned about, healthy.
  for (const char* node : {"node-a", "node-b", "node-c"})
    for (const char* i : {"0", "1"}) {
      const bool fatal = std::string(node) == "node-a" && std::string(i) == "1";
      in.health.push_back(gpu(node, i, 1, {{"state", fatal ? "fatal" : "healthy"}}));
    }
  in.findings.push_back(gpu("node-a", "1", 1, {{"rule", "gpu_lost"}, {"severity", "fatal"}}));
  in.findings.push_back(gpu("node-c", "1", 1, {{"rule", "thermal_slowdown"}, {"severity", "warning"}}));
  // Job 17 on node-a GPU 0 and node-b GPUs 0, 1 (node-b GPU 1 the straggler); job 18 shares
  // node-b GPU 0; node-c's GPUs are idle (GPU 1 at exactly idle_util: still idle), node-a GPU 1
  // reports nothing (lost). A MIG series counts for nothing.
  in.util = {gpu("node-a", "0", 95, {{"hpc_job", "17"}}),
             gpu("node-b", "0", 90, {{"hpc_job", "17,18"}}),
             gpu("node-b", "1", 4, {{"hpc_job", "17"}}),
             gpu("node-c", "0", 0),
             gpu("node-c", "1", 2),
             gpu("node-c", "0", 50, {{"GPU_I_ID", "1"}, {"UUID", "GPU-node-c0"}})};
  in.power = {gpu("node-a", "0", 650), gpu("node-b", "0", 600), gpu("node-b", "1", 120), gpu("node-c", "0", 70),
              gpu("node-c", "1", 71)};
  Options o;
  o.window = "1m";
  o.top = 1;
  const json r = buildReport(in, o);
  EXPECT_EQ(r["totals"], (json{{"nodes", 3}, {"gpus", 6}, {"idle", 2}, {"unhealthy", 1}}));
  EXPECT_EQ(r["nodes"], json::parse(R"([{"node":"node-a","gpus":2,"idle":0,"unhealthy":1},
                                        {"node":"node-b","gpus":2,"idle":0,"unhealthy":0},
                                        {"node":"node-c","gpus":2,"idle":2,"unhealthy":0}])"));
  ASSERT_EQ(r["unhealthy"].size(), 2u);
  EXPECT_EQ(r["unhealthy"][0], json::parse(R"({"node":"node-a","gpu":"1","uuid":"GPU-node-a1","model":"NVIDIA H100",
                                             "state":"fatal","findings":[{"rule":"gpu_lost","severity":"fatal"}]})"));
  EXPECT_EQ(r["unhealthy"][1]["state"], "healthy");
  EXPECT_EQ(r["unhealthy"][1]["findings"][0]["rule"], "thermal_slowdown");
  EXPECT_EQ(r["idle"], json::parse(R"([{"node":"node-c","gpu":"0","uuid":"GPU-node-c0","utilization_pct":0.0},
                                       {"node":"node-c","gpu":"1","uuid":"GPU-node-c1","utilization_pct":2.0}])"));
  ASSERT_EQ(r["jobs"].size(), 2u);
  const json& j17 = r["jobs"][0];
  EXPECT_EQ(j17["job"], "17");
  EXPECT_EQ(j17["label"], "hpc_job");
  EXPECT_EQ(j17["nodes"], 2);
  EXPECT_EQ(j17["gpus"], 3);
  EXPECT_EQ(j17["utilization_pct"], 63.0);  // (95 + 90 + 4) / 3
  EXPECT_EQ(j17["power_w"], 1370.0);
  EXPECT_EQ(j17["slowest"], json::parse(R"({"node":"node-b","gpu":"1","uuid":"GPU-node-b1","utilization_pct":4.0,
                                          "peers_median_pct":92.5,"straggler":true})"));
  const json& j18 = r["jobs"][1];
  EXPECT_EQ(j18["gpus"], 1);
  EXPECT_TRUE(j18["slowest"].is_null());  // one GPU: no peers to be slow against
  ASSERT_EQ(r["top"].size(), 1u);
  EXPECT_EQ(r["top"][0]["job"], "17");
  const std::string text = renderText(r);
  EXPECT_NE(text.find("3 node(s), 6 GPU(s): 2 idle, 1 unhealthy (mean over 1m)"), std::string::npos) << text;
  EXPECT_NE(text.find("node-a GPU 1 GPU-node-a1: fatal: gpu_lost (fatal)"), std::string::npos) << text;
  EXPECT_NE(text.find("node-b GPU 1: 4.0 / 92.5  STRAGGLER"), std::string::npos) << text;
  // A label value with control characters (from whatever Prometheus scraped) prints tamed.
  in.health[0].labels["Hostname"] = "evil\x1b[2J\nnode";
  const std::string tamed = renderText(buildReport(in, o));
  EXPECT_NE(tamed.find("evil?[2J?node"), std::string::npos) << tamed;
  EXPECT_EQ(tamed.find('\x1b'), std::string::npos);
}

TEST(FleetReport, AStragglerNeedsBusyPeersAndAnIdleGpuHasNoJob) {
  Inputs in;
  // Peers at 49 % (below straggler_peer_util 50): the slowest is named, not a straggler.
  in.util = {gpu("a", "0", 49, {{"hpc_job", "5"}}), gpu("a", "1", 49, {{"hpc_job", "5"}}),
             gpu("a", "2", 5, {{"hpc_job", "5"}}), gpu("a", "3", 0, {{"pod", "trainer-0"}, {"namespace", "ml"}})};
  const json r = buildReport(in, Options{});
  ASSERT_EQ(r["jobs"].size(), 2u);
  EXPECT_EQ(r["jobs"][0]["slowest"]["gpu"], "2");
  EXPECT_FALSE(r["jobs"][0]["slowest"]["straggler"].get<bool>());
  EXPECT_EQ(r["jobs"][1]["job"], "ml/trainer-0");
  EXPECT_EQ(r["jobs"][1]["label"], "pod");
  EXPECT_EQ(r["totals"]["idle"], 0);  // GPU 3 sits at 0 % but a pod holds it
  in.util[0].value = in.util[1].value = 50;
  in.util[2].value = 5.1;  // just above straggler_idle_util
  EXPECT_FALSE(buildReport(in, Options{})["jobs"][0]["slowest"]["straggler"].get<bool>());
  in.util[2].value = 5;
  EXPECT_TRUE(buildReport(in, Options{})["jobs"][0]["slowest"]["straggler"].get<bool>());
}

TEST(FleetReport, AnOddMedianRoundingIdleAndTheTopTen) {
  Inputs in;
  // Peers 10, 20, 60, 80, 90 of the slowest: an odd count's median is the middle one.
  in.util = {gpu("a", "0", 1.5, {{"hpc_job", "7"}}),
             gpu("a", "1", 10, {{"hpc_job", "7"}}),
             gpu("a", "2", 20, {{"hpc_job", "7"}}),
             gpu("a", "3", 60, {{"hpc_job", "7"}}),
             gpu("a", "4", 80, {{"hpc_job", "7"}}),
             gpu("a", "5", 90, {{"hpc_job", "7"}}),
             gpu("b", "0", 2.05)};  // just above idle_util (2 %), no job: not idle
  // Eleven more jobs, one GPU each, job 1xx drawing xx W: the top ten are 101 to 110.
  for (int i = 0; i <= 10; ++i) {
    in.util.push_back(gpu("c", std::to_string(i), 50, {{"hpc_job", std::to_string(100 + i)}}));
    in.power.push_back(gpu("c", std::to_string(i), i));
  }
  const json r = buildReport(in, Options{});
  ASSERT_EQ(r["jobs"].size(), 12u);
  const json& j7 = r["jobs"].back();
  EXPECT_EQ(j7["job"], "7");
  EXPECT_EQ(j7["utilization_pct"], 43.6);  // 261.5 / 6 = 43.583... to one decimal
  EXPECT_EQ(j7["slowest"]["peers_median_pct"], 60.0);
  EXPECT_EQ(r["totals"]["idle"], 0);
  ASSERT_EQ(r["top"].size(), 10u);
  EXPECT_EQ(r["top"][0]["job"], "110");
  EXPECT_EQ(r["top"][9]["job"], "101");
  // DEL is a control character too; a space is not.
  in.util[6].labels["Hostname"] = "b\x7f b\x1f";
  EXPECT_NE(renderText(buildReport(in, Options{})).find("b? b?"), std::string::npos);
}

// A Prometheus on a loopback port, under the path prefix /prom: answers the query API with what the
// test sets, and keeps the query it was asked.
struct FakePrometheus {
  httplib::Server server;
  std::thread thread;
  int port = 0;
  std::string asked;
  int status = 200;
  std::string body;
  std::chrono::milliseconds delay{0};

  FakePrometheus() {
    server.Get("/prom/api/v1/query", [this](const httplib::Request& req, httplib::Response& res) {
      asked = req.get_param_value("query");
      std::this_thread::sleep_for(delay);
      res.status = status;
      res.set_content(body, "application/json");
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~FakePrometheus() {
    server.stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port) + "/prom"; }
};

// An answer of many series: `n` with no labels and the value 1.
std::string answerOfSeries(std::size_t n) {
  std::string s = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (std::size_t i = 0; i < n; ++i) s += (i ? "," : "") + std::string(R"({"metric":{},"value":[1,"1"]})");
  return s + "]}}";
}

// The answer's two bounds at their value and one past: 32 MiB of text (JSON's trailing blanks make
// a valid answer of any size) and 200000 series.
TEST(FleetParse, AnswerSizeAndSeriesCountAtTheirLimits) {
  std::string at = answerOf("{}");
  at.resize(kMaxAnswerBytes, ' ');
  auto v = parseVector(at);
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ(v->size(), 1u);
  at += ' ';
  EXPECT_EQ(parseVector(at).error(), "the answer is 33554433 bytes; at most 33554432 are read");
  v = parseVector(answerOfSeries(kMaxSamples));
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ(v->size(), 200000u);
  EXPECT_EQ(parseVector(answerOfSeries(kMaxSamples + 1)).error(), "200001 series; at most 200000");
}

TEST(FleetQuery, AsksTheQueryApiAndSaysWhatWentWrong) {
  using std::chrono::milliseconds;
  FakePrometheus p;
  p.body = answerOf(R"({"Hostname":"a"})", R"([1,"7"])");
  // Characters a query string must escape arrive whole; trailing slashes of the URL are dropped.
  const std::string q = "sum by (Hostname) (x{a=\"b c\"} + 1) & y # z%";
  auto v = query(p.url() + "//", q, milliseconds(1500));
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ((*v)[0].value, 7);
  EXPECT_EQ(p.asked, q);
  // A bad query: 400 or 422 with Prometheus' reason; any other status is an HTTP error.
  p.body = R"({"status":"error","error":"parse error"})";
  for (int code : {400, 422}) {
    p.status = code;
    EXPECT_EQ(query(p.url(), "q", milliseconds(1500)).error(), "q: Prometheus says: parse error") << code;
  }
  p.status = 503;
  EXPECT_EQ(query(p.url(), "q", milliseconds(1500)).error(), "q: HTTP 503 from " + p.url());
  // An answer of exactly 32 MiB is read whole; one byte more is cut off as it arrives.
  p.status = 200;
  p.body = answerOf(R"({"Hostname":"a"})", R"([1,"7"])");
  p.body.resize(kMaxAnswerBytes, ' ');
  v = query(p.url(), "q", milliseconds(5000));
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ((*v)[0].value, 7);
  p.body.assign((std::size_t{32} << 20) + 1, ' ');
  EXPECT_EQ(query(p.url(), "q", milliseconds(5000)).error(), "q: the answer is larger than 33554432 bytes");
  // The deadline, its seconds and their fraction both.
  p.body = answerOf("{}");
  p.delay = milliseconds(2500);
  const auto start = std::chrono::steady_clock::now();
  v = query(p.url(), "q", milliseconds(1300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2200));
  ASSERT_FALSE(v);
  EXPECT_TRUE(v.error().starts_with("cannot ask " + p.url() + ": ")) << v.error();
  EXPECT_EQ(query("https://prom:9090", "q", milliseconds(100)).error(),
            "--prometheus https://prom:9090: https is not supported here; give an http:// address");
  EXPECT_EQ(query("prom:9090", "q", milliseconds(100)).error(),
            "--prometheus 'prom:9090' is not an http:// or https:// URL");
}

}  // namespace
}  // namespace gw::cluster::fleet
