// The CLI trusts only its agent (docs/api.md, "Control socket"): the real `gpuwarden` binary
// against a fake control server that answers what each test tells it to. A socket served by a
// stranger, in a folder anyone can write, or that is not a socket is refused and named; an answer
// nested 100000 deep, of the wrong types, 300 MB long or trickled byte by byte ends the command
// with a sentence, exit 3, within the deadline and in bounded memory, never "healthy". And
// `gpuwarden history` goes through the socket of a real agent, with the HTTP API's answers and
// refusals.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "node/control_protocol.h"
#include "node/data_dir.h"
#include "test_util.h"

namespace gw::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// One connection at a time: reads the request line, then answers as answers.json (read again for
// every connection) says for its op: {"raw": TEXT} sends TEXT, {"huge": MB} streams a reply of MB
// megabytes, {"trickle": TEXT} sends TEXT one byte every 50 ms (until the client goes away).
constexpr const char* kFakeAgent = R"(
import json, os, socket, sys, time
sock, ready, answers = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX)
s.bind(sock); s.listen(8)
open(ready, "w").close()
while True:
    c, _ = s.accept()
    try:
        req = b""
        while not req.endswith(b"\n") and len(req) < 1 << 20:
            chunk = c.recv(65536)
            if not chunk: break
            req += chunk
        op = json.loads(req)["op"]
        a = json.load(open(answers)).get(op, {"raw": json.dumps({"ok": False, "error": "no answer for " + op})})
        if "raw" in a:
            c.sendall((a["raw"] + "\n").encode())
        elif "huge" in a:
            c.sendall(b'{"ok": true, "result": {"status": "healthy", "exit_code": 0, "pad": "')
            block = b"a" * (1 << 20)
            for _ in range(a["huge"]): c.sendall(block)
            c.sendall(b'"}}\n')
        elif "trickle" in a:
            for ch in a["trickle"].encode():
                c.sendall(bytes([ch])); time.sleep(0.05)
    except Exception:
        pass
    c.close()
)";

// A finished (or killed) run of the CLI: exit code, output (stdout and stderr), wall time, and
// its peak resident memory from wait4.
struct Measured {
  int rc = -1;
  std::string out;
  double seconds = 0;
  long max_rss_kb = 0;
  bool killed = false;
};

Measured runMeasured(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                     const std::string& out_path, std::chrono::milliseconds timeout = 30s) {
  Measured m;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = spawnGpuwarden(args, env, out_path, O_TRUNC);
  if (pid < 0) return m;
  int st = 0;
  rusage ru{};
  for (;;) {
    pid_t w = ::wait4(pid, &st, WNOHANG, &ru);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() - t0 > timeout) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &st, 0, &ru);
      m.killed = true;
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  m.max_rss_kb = ru.ru_maxrss;
  m.out = readFile(out_path);
  return m;
}

std::string describe(const Measured& m) {
  return "exit " + std::to_string(m.rc) + (m.killed ? " (killed at the timeout)" : "") + " after " +
         std::to_string(m.seconds) + " s, peak RSS " + std::to_string(m.max_rss_kb / 1024) + " MiB:\n" + m.out;
}

// A data folder, a runtime folder and, on demand, a fake agent on the folder's socket name.
struct Stage {
  TempDir dir;
  std::string data = dir.file("data");
  std::string runtime = dir.file("run");
  std::string answers = dir.file("answers.json");
  std::string socket;
  std::string fake_pid;

  Stage() {
    std::filesystem::create_directories(data);
    std::filesystem::create_directories(runtime);
    ::chmod(runtime.c_str(), 0755);
    ::setenv("GPUWARDEN_RUNTIME_DIR", runtime.c_str(), 1);
    socket = node::DataDir(data).controlSocket();
    ::unsetenv("GPUWARDEN_RUNTIME_DIR");
    setAnswers(json::object());
  }
  ~Stage() {
    if (!fake_pid.empty()) runShell("kill " + fake_pid);
  }
  void setAnswers(const json& a) const { dir.write("answers.json", a.dump()); }
  // Starts the fake agent; `as` is a setpriv prefix to run it as someone else.
  bool startFake(const std::string& as = "") {
    const std::string script = dir.write("fake_agent.py", kFakeAgent);
    ::chmod(script.c_str(), 0644);
    ::chmod(answers.c_str(), 0644);
    const std::string ready = runtime + "/ready";  // where the fake may write, whoever it runs as
    auto started = runShell(as + "/usr/bin/python3 " + script + " " + socket + " " + ready + " " + answers + " >" +
                            dir.file("fake.log") + " 2>&1 & echo $!");
    fake_pid = started.second.substr(0, started.second.find('\n'));
    return eventually([&] { return std::filesystem::exists(ready); }, 10s);
  }
  Measured cli(const std::vector<std::string>& args, std::chrono::milliseconds timeout = 30s) const {
    return runMeasured(args, {{"GPUWARDEN_RUNTIME_DIR", runtime}}, dir.file("cli.out"), timeout);
  }
};

std::string healthy() {
  return json{{"ok", true}, {"result", {{"status", "healthy"}, {"exit_code", 0}, {"gpus", json::array()}}}}.dump();
}

// What every refused or broken answer must look like from `health`: exit 3, "unknown", never healthy.
void expectUnknown(const Measured& m, const std::string& reason) {
  EXPECT_EQ(m.rc, 3) << describe(m);
  EXPECT_NE(m.out.find("status: unknown"), std::string::npos) << describe(m);
  EXPECT_EQ(m.out.find("status: healthy"), std::string::npos) << describe(m);
  EXPECT_NE(m.out.find(reason), std::string::npos) << "want \"" << reason << "\" in\n" << describe(m);
}

TEST(CliTrust, ASocketServedByAStrangerIsRefusedAndNamed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to serve a socket as another user";
  Stage s;
  ::chmod(s.dir.path().c_str(), 0755);
  ::chmod(s.runtime.c_str(), 01777);  // sticky: anyone may bind a name, no one may replace another's
  s.setAnswers({{"health", {{"raw", healthy()}}},
                {"history", {{"raw", R"({"ok":true,"result":{"points":[]}})"}}},
                {"incidents.list", {{"raw", R"({"ok":true,"result":{"incidents":[]}})"}}},
                {"config.reload", {{"raw", R"({"ok":true,"result":{"source":"x"}})"}}},
                {"events", {{"raw", R"({"ok":true,"result":{"events":[]}})"}}}});
  ::chmod(s.answers.c_str(), 0644);
  ASSERT_TRUE(s.startFake("setpriv --reuid=65534 --regid=65534 --clear-groups ")) << readFile(s.dir.file("fake.log"));
  const std::string named = "refusing the control socket " + s.socket + ": it is served by uid 65534";
  const std::string pid = "pid " + s.fake_pid;
  auto h = s.cli({"health", "--data-dir", s.data});
  expectUnknown(h, named);
  EXPECT_NE(h.out.find(pid), std::string::npos) << describe(h);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"history", "--gpu", "0", "--field", "gpu_temp", "--data-dir", s.data},
        std::vector<std::string>{"incidents", "list", "--data-dir", s.data},
        std::vector<std::string>{"reload", "--data-dir", s.data},
        std::vector<std::string>{"events", "--data-dir", s.data}}) {
    auto m = s.cli(args);
    EXPECT_EQ(m.rc, 3) << args[0] << ": " << describe(m);
    EXPECT_NE(m.out.find(named), std::string::npos) << args[0] << ": " << describe(m);
    EXPECT_NE(m.out.find(pid), std::string::npos) << args[0] << ": " << describe(m);
  }
  // The stranger owns the data folder: then it is the agent this folder trusts, and is believed.
  ASSERT_EQ(::chown(s.data.c_str(), 65534, 65534), 0);
  auto owner = s.cli({"health", "--data-dir", s.data});
  EXPECT_EQ(owner.rc, 0) << describe(owner);
  EXPECT_NE(owner.out.find("status: healthy"), std::string::npos) << describe(owner);
}

TEST(CliTrust, ASocketAnyoneCouldHaveReplacedIsRefused) {
  Stage s;
  s.setAnswers({{"health", {{"raw", healthy()}}}});
  ASSERT_TRUE(s.startFake());
  // Believed where it is (the control case: this user's socket in this user's folder)...
  auto good = s.cli({"health", "--data-dir", s.data});
  ASSERT_EQ(good.rc, 0) << describe(good);
  // ...but not in a folder everyone may write without the sticky bit,
  ::chmod(s.runtime.c_str(), 0777);
  expectUnknown(s.cli({"health", "--data-dir", s.data}),
                "refusing the control socket " + s.socket + ": its folder " + s.runtime +
                    " is writable by everyone (mode 0777) without the sticky bit");
  ::chmod(s.runtime.c_str(), 01777);
  EXPECT_EQ(s.cli({"health", "--data-dir", s.data}).rc, 0);
  ::chmod(s.runtime.c_str(), 0755);
  // ...nor through a symbolic link to it, nor when the name is a plain file.
  const std::string real = s.runtime + "/real.sock";
  ASSERT_EQ(::rename(s.socket.c_str(), real.c_str()), 0);
  std::filesystem::create_symlink(real, s.socket);
  expectUnknown(s.cli({"health", "--data-dir", s.data}), "it is a symbolic link, not a socket");
  std::filesystem::remove(s.socket);
  s.dir.write("run/" + std::filesystem::path(s.socket).filename().string(), "{}");
  auto file = s.cli({"reload", "--data-dir", s.data});
  EXPECT_EQ(file.rc, 3) << describe(file);
  EXPECT_NE(file.out.find("refusing the control socket " + s.socket + ": it is not a socket"), std::string::npos)
      << describe(file);
}

// Peak memory of the CLI against an answer that breaks a bound, over its peak against a plain
// answer (the sanitizer build alone takes ~230 MiB): the 16 MiB reply cap and a parsed tree of at
// most 1048576 values fit; holding a 300 MB answer (as text, then parsed) would not.
constexpr long kExtraRssKb = 128 * 1024;

TEST(CliTrust, HostileAnswersEndWithASentenceInTimeAndBoundedMemory) {
  Stage s;
  ASSERT_TRUE(s.startFake());
  s.setAnswers({{"health", {{"raw", healthy()}}}});
  const Measured plain = s.cli({"health", "--data-dir", s.data});
  ASSERT_EQ(plain.rc, 0) << describe(plain);
  ASSERT_NE(plain.out.find("status: healthy"), std::string::npos) << describe(plain);
  std::cout << "[ measured ] a plain answer: peak RSS " << plain.max_rss_kb / 1024 << " MiB\n";
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string many = "[0";
  for (int i = 0; i < (1 << 20); ++i) many += ",0";
  many += "]";
  struct Case {
    std::string name;
    json answer;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"100000 deep", {{"raw", R"({"ok":true,"result":{"gpus":)" + deep + "}}"}}, "JSON nested deeper than 64"},
      {"100000 deep, bare", {{"raw", deep}}, "JSON nested deeper than 64"},
      {"a million values", {{"raw", R"({"ok":true,"result":{"gpus":)" + many + "}}"}}, "more than 1048576 values"},
      {"300 MB", {{"huge", 300}}, "the agent's reply is larger than 16777216 bytes"},
      // ~150 s of trickle at one byte every 50 ms: 30 times the CLI's 5 s deadline.
      {"trickled",
       {{"trickle", std::string(3000, ' ') + healthy()}},
       "the agent did not answer within the deadline of 5000 ms"},
      {"not JSON", {{"raw", "healthy"}}, "not a control reply: not JSON"},
      {"ok not a boolean",
       {{"raw", R"({"ok":"yes","result":{"status":"healthy","exit_code":0}})"}},
       "an object with a boolean \"ok\""},
      {"result not an object", {{"raw", R"({"ok":true,"result":[0]})"}}, "its result is not an object"},
      {"wrong types", {{"raw", R"({"ok":true,"result":{"exit_code":"x","gpus":5}})"}}, "status: unknown"},
      {"wrong types everywhere",
       {{"raw",
         R"({"ok":true,"result":{"status":7,"exit_code":0.5,"reason":[],"gpus":[5,{"index":"x",)"
         R"("findings":[1,{"severity":{},"xid":"y"}]}],"node_findings":{"a":1},"open_incidents":[1,{"id":"y"}]}})"}},
       "status: unknown"},
      {"refusal of the wrong type",
       {{"raw", R"({"ok":false,"error":5,"code":[]})"}},
       "the agent refused: the agent refused without a reason"},
  };
  for (const auto& c : cases) {
    s.setAnswers({{"health", c.answer}});
    auto m = s.cli({"health", "--data-dir", s.data});
    SCOPED_TRACE(c.name);
    expectUnknown(m, c.reason);
    // Ended by its own bounds (the reason names the one), not killed at the 30 s bound of
    // s.cli: a bound on failure only, 6x the CLI's 5 s deadline and a fifth of the trickle.
    EXPECT_FALSE(m.killed) << describe(m);
    EXPECT_LT(m.max_rss_kb, plain.max_rss_kb + kExtraRssKb) << describe(m);
    std::cout << "[ measured ] " << c.name << ": exit " << m.rc << " in " << m.seconds << " s, peak RSS "
              << m.max_rss_kb / 1024 << " MiB\n";
  }
  // The same bounds hold with --json: the reason in the document, exit 3.
  s.setAnswers({{"health", {{"raw", R"({"ok":true,"result":{"exit_code":"x","gpus":5}})"}}}});
  auto j = s.cli({"--json", "health", "--data-dir", s.data});
  EXPECT_EQ(j.rc, 3) << describe(j);
  auto doc = json::parse(j.out, nullptr, false);
  EXPECT_TRUE(doc.is_object()) << describe(j);
}

TEST(CliTrust, EveryCommandReadsAWrongTypedAnswerWithoutDying) {
  Stage s;
  ASSERT_TRUE(s.startFake());
  s.setAnswers(
      {{"incidents.list",
        {{"raw", R"({"ok":true,"result":{"incidents":[5,{"id":"x","gpu_index":[],"escalated":"no"},{"id":3}]}})"}}},
       {"incidents.show",
        {{"raw",
          R"({"ok":true,"result":{"id":[1],"last_seen_ms":-9223372036854775808,"escalated":1,"context":"x","occurrences":{}}})"}}},
       {"incidents.ack", {{"raw", R"({"ok":false,"error":{"x":1}})"}}},
       {"incidents.set_healthy", {{"raw", R"({"ok":true,"result":{"resolved":"all"}})"}}},
       {"events",
        {{"raw", R"({"ok":true,"result":{"events":[7,{"ts_ms":"x","code":"y","gpu":[],"source":5,"message":"m"}]}})"}}},
       {"config.reload", {{"raw", R"({"ok":true,"result":{"source":5}})"}}},
       {"history",
        {{"raw", R"({"ok":true,"result":{"field":7,"points":[[1,"x"],5,[null,null],[9223372036854775807,1.5]]}})"}}}});
  struct Case {
    std::vector<std::string> args;
    int rc;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"incidents", "list", "--data-dir", s.data}, 0, "#3 "},
      {{"incidents", "show", "1", "--data-dir", s.data}, 0, "context:  \"x\""},
      {{"incidents", "ack", "1", "--data-dir", s.data}, 1, "the agent refused without a reason"},
      {{"incidents", "set-healthy", "GPU-1", "--data-dir", s.data}, 0, "0 incident(s) of GPU-1 resolved"},
      {{"events", "--data-dir", s.data}, 0, "  GPU -1   m"},
      {{"reload", "--data-dir", s.data}, 0, "configuration reloaded from ?"},
      {{"history", "--gpu", "0", "--field", "gpu_temp", "--data-dir", s.data},
       1,
       "3 point(s) of the agent's answer are not [timestamp ms, value]"},
  };
  for (const auto& c : cases) {
    auto m = s.cli(c.args);
    EXPECT_EQ(m.rc, c.rc) << c.args[0] << " " << c.args[1] << ": " << describe(m);
    EXPECT_NE(m.out.find(c.says), std::string::npos) << "want \"" << c.says << "\" in\n" << describe(m);
    EXPECT_EQ(m.out.find("internal error"), std::string::npos) << describe(m);
  }
}

// The agent of the HTTP tests, with its socket in a folder of the test's own.
struct RealAgent {
  TempDir dir;
  std::string data = dir.file("data");
  std::string runtime = dir.file("run");
  std::unique_ptr<AgentProcess> proc;
  int port = 0;
  explicit RealAgent(const std::string& scenario) {
    const std::string config = dir.write("agent.yaml", kFastAgentConfig);
    proc = std::make_unique<AgentProcess>(
        std::vector<std::string>{"serve", "--simulate", scenario, "--config", config, "--data-dir", data},
        std::map<std::string, std::string>{{"GPUWARDEN_RUNTIME_DIR", runtime}}, dir.file("agent.log"));
    port = proc->waitListening();
  }
  std::pair<int, std::string> cli(const std::string& args) const {
    return runShell("GPUWARDEN_RUNTIME_DIR=" + runtime + " " + std::string(GW_BINARY) + " " + args);
  }
  std::string socket() const {
    ::setenv("GPUWARDEN_RUNTIME_DIR", runtime.c_str(), 1);
    std::string s = node::DataDir(data).controlSocket();
    ::unsetenv("GPUWARDEN_RUNTIME_DIR");
    return s;
  }
};

TEST(HistoryCli, ThroughTheControlSocketWithTheHttpAnswersAndRefusals) {
  RealAgent a("dgx-h100");
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_TRUE(eventually(
      [&] {
        auto r = httpGet(a.port, "/api/v1/history?gpu=0&field=gpu_temp&since=1m");
        return r.status == 200 && json::parse(r.body)["points"].size() >= 3;
      },
      20s))
      << a.proc->log();
  const std::string dd = " --data-dir " + a.data;
  auto [rc, csv] = a.cli("history --gpu 0 --field gpu_temp --since 1m" + dd);
  EXPECT_EQ(rc, 0) << csv;
  EXPECT_EQ(csv.rfind("timestamp,gpu_temp [C]\n", 0), 0u) << csv;
  EXPECT_GE(std::count(csv.begin(), csv.end(), '\n'), 4) << csv;
  EXPECT_TRUE(std::regex_search(csv, std::regex("\n20[0-9-]+T[0-9:.]+Z,[0-9.]+\n"))) << csv;

  // JSON: the document of GET /api/v1/history for the same query.
  auto [rc2, js] = a.cli(
      "history --gpu 0 --field power.draw --since 2024-01-01T00:00:00Z --until 2024-01-01T01:00:00Z "
      "--step 1m --agg max --format json" +
      dd);
  ASSERT_EQ(rc2, 0) << js;
  auto cli_doc = json::parse(js);
  auto http_doc = json::parse(httpGet(a.port,
                                      "/api/v1/history?gpu=0&field=power.draw&since=2024-01-01T00:00:00Z"
                                      "&until=2024-01-01T01:00:00Z&step=1m&agg=max")
                                  .body);
  EXPECT_EQ(cli_doc, http_doc);
  EXPECT_EQ(cli_doc["field"]["key"], "power_usage");
  EXPECT_EQ(cli_doc["step_ms"], 60000);
  EXPECT_EQ(cli_doc["agg"], "max");
  auto [rc3, recent] = a.cli("history --gpu 0 --field power.draw --since 1m --step 1s --format json" + dd);
  ASSERT_EQ(rc3, 0) << recent;
  EXPECT_FALSE(json::parse(recent)["points"].empty()) << recent;

  // Refusals: the HTTP API's words, exit 2.
  struct Bad {
    std::string cli, http, param;
  };
  for (const Bad& b :
       {Bad{"--gpu 0 --field nope", "gpu=0&field=nope", "field"},
        Bad{"--gpu 0 --field name", "gpu=0&field=name", "field"},
        Bad{"--gpu 0 --field gpu_temp --step often", "gpu=0&field=gpu_temp&step=often", "step"},
        Bad{"--gpu 0 --field gpu_temp --since 30d --step 1ms", "gpu=0&field=gpu_temp&since=30d&step=1ms", "step"},
        Bad{"--gpu 0 --field gpu_temp --since yesterday", "gpu=0&field=gpu_temp&since=yesterday", "since"},
        Bad{"--gpu 0 --field gpu_temp --agg median", "gpu=0&field=gpu_temp&agg=median", "agg"},
        Bad{"--gpu 99 --field gpu_temp", "gpu=99&field=gpu_temp", "gpu"}}) {
    auto http = httpGet(a.port, "/api/v1/history?" + b.http);
    ASSERT_GE(http.status, 400) << b.http;
    const std::string message = json::parse(http.body)["error"].get<std::string>();
    auto [brc, out] = a.cli("history " + b.cli + dd);
    EXPECT_EQ(brc, 2) << b.cli << ": " << out;
    EXPECT_NE(out.find(message + " (" + b.param + ")"), std::string::npos)
        << b.cli << ": want \"" << message << "\" in " << out;
  }

  // The op itself: an integer GPU index is accepted, a wrong type or an unknown argument is not.
  auto r = node::control::call(a.socket(), json{{"op", "history"}, {"args", {{"gpu", 0}, {"field", "gpu_temp"}}}});
  ASSERT_TRUE(r.reached && r.error.empty()) << r.error;
  EXPECT_TRUE(r.body["ok"].get<bool>()) << r.body.dump();
  EXPECT_EQ(r.body["result"]["gpu"]["index"], 0) << r.body.dump();
  for (const json& args : {json{{"gpu", "0"}, {"field", 5}},
                           json{{"gpu", "0"}, {"field", "gpu_temp"}, {"colour", "red"}}, json{{"field", "gpu_temp"}}}) {
    auto bad = node::control::call(a.socket(), json{{"op", "history"}, {"args", args}});
    ASSERT_TRUE(bad.reached && bad.error.empty()) << bad.error;
    EXPECT_EQ(bad.body["ok"], false) << args.dump();
    EXPECT_EQ(bad.body["code"], "bad_request") << bad.body.dump();
  }

  // No agent on a folder: exit 3, said plainly.
  auto [rc4, none] = a.cli("history --gpu 0 --field gpu_temp --data-dir " + a.dir.file("elsewhere"));
  EXPECT_EQ(rc4, 3) << none;
  EXPECT_NE(none.find("no agent owns " + a.dir.file("elsewhere")), std::string::npos) << none;
  // The HTTP client is gone from the CLI: --agent is not an option any more.
  auto [rc5, old] = a.cli("history --gpu 0 --field gpu_temp --agent http://127.0.0.1:" + std::to_string(a.port));
  EXPECT_EQ(rc5, 2) << old;
  auto [rc6, old_health] = a.cli("health --agent http://127.0.0.1:" + std::to_string(a.port));
  EXPECT_EQ(rc6, 2) << old_health;
}

}  // namespace
}  // namespace gw::test
