// The agent owns node state (docs/api.md, "Control socket"): the CLI changes incidents through
// the agent that serves its --data-dir, the change shows in the agent's API at once and never
// comes back; two agents never share a data folder; the socket refuses malformed requests and
// the CLI refuses a socket that neither root nor its own user serves.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "node/control_protocol.h"
#include "test_util.h"

namespace gw::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// The socket the agent logged; the line follows "listening on", so wait for it.
std::string socketOf(const AgentProcess& a) {
  static const std::regex re("control socket ([^ \n]+)\n");
  std::string path;
  eventually(
      [&] {
        std::smatch m;
        const std::string log = a.log();
        if (std::regex_search(log, m, re)) path = m[1].str();
        return !path.empty();
      },
      std::chrono::seconds(10), std::chrono::milliseconds(20));
  return path;
}

// The agent's reply to `req` on `sock`, which must be reached and answered (a refusal is a reply).
json answer(const std::string& sock, const json& req) {
  auto r = node::control::call(sock, req);
  EXPECT_TRUE(r.reached && r.error.empty()) << r.error;
  return r.body;
}

// Sends raw bytes on the socket and returns the reply line ("" when the agent closed without one).
std::string rawRequest(const std::string& path, const std::string& bytes) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

struct Agent {
  TempDir dir;
  std::string data = dir.file("data");
  std::string runtime = dir.file("run");
  std::unique_ptr<AgentProcess> proc;
  int port = 0;
  std::map<std::string, std::string> extra_env;
  std::string extra_config;  // appended to kFastAgentConfig
  std::map<std::string, std::string> env(const std::string& start) const {
    auto e = extra_env;
    e["GPUWARDEN_SIM_START"] = start;
    e["GPUWARDEN_RUNTIME_DIR"] = runtime;
    return e;
  }
  void start(const std::string& scenario, const std::string& start_at) {
    const std::string config = dir.write("agent.yaml", kFastAgentConfig + extra_config);
    proc = std::make_unique<AgentProcess>(
        std::vector<std::string>{"serve", "--simulate", scenario, "--config", config, "--data-dir", data},
        env(start_at), dir.file("agent.log"));
    port = proc->waitListening();
  }
  std::pair<int, std::string> cli(const std::string& args) const {
    return runShell("GPUWARDEN_RUNTIME_DIR=" + runtime + " " + std::string(GW_BINARY) + " " + args);
  }
};

TEST(ControlSocket, ResolveFromTheCliShowsAtOnceAndNeverComesBack) {
  Agent a;
  a.start("fault-xid-79", "27");  // GPU 3: Xid 79 and off the bus at t=30 s
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string sock = socketOf(*a.proc);
  ASSERT_FALSE(sock.empty()) << a.proc->log();
  struct stat st {};
  ASSERT_EQ(::stat(sock.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u) << std::oct << (st.st_mode & 0777);
  // The folder the agent made for it: others may enter, none but the agent may write.
  struct stat dir_st {};
  ASSERT_EQ(::stat(a.runtime.c_str(), &dir_st), 0);
  EXPECT_EQ(dir_st.st_mode & 0777, 0755u) << std::oct << (dir_st.st_mode & 0777);

  json open;
  std::int64_t id = 0;
  std::string key;
  int last_status = 0;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = httpGet(a.port, "/api/v1/incidents?state=open", {}, 2000ms);
        last_status = r.status;
        if (r.status != 200) return false;
        open = json::parse(r.body);
        for (const auto& i : open["incidents"])
          if (i["rule"] == "xid" && i["xid"] == 79) {
            id = i["id"].get<std::int64_t>();
            key = i["key"].get<std::string>();
          }
        return id != 0;
      },
      20s))
      << "port " << a.port << ", last status " << last_status << "\n"
      << open.dump(2) << a.proc->log();

  // `gpuwarden events` asks the agent over this socket: the Xid behind the incident is in the
  // answer (the default window, the last hour), and the count is that of the list.
  const std::int64_t asked = wallMsNow();
  auto ev = node::control::call(sock, json{{"op", "events"}});
  const std::int64_t answered = wallMsNow();
  ASSERT_TRUE(ev.reached && ev.error.empty()) << ev.error;
  EXPECT_GE(ev.body["result"]["since_ms"].get<std::int64_t>(), asked - 3'600'000) << ev.body.dump(2);
  EXPECT_LE(ev.body["result"]["since_ms"].get<std::int64_t>(), answered - 3'600'000) << ev.body.dump(2);
  bool xid79 = false;
  for (const auto& e : ev.body["result"]["events"]) xid79 |= e["code"] == 79;
  EXPECT_TRUE(xid79) << ev.body.dump(2);
  EXPECT_EQ(ev.body["result"]["count"], ev.body["result"]["events"].size()) << ev.body.dump(2);

  auto res = a.cli("incidents resolve " + std::to_string(id) + " --data-dir " + a.data);
  ASSERT_EQ(res.first, 0) << res.second;
  // At once, in the agent's own API, with the caller the kernel named.
  auto one = json::parse(httpGet(a.port, "/api/v1/incidents/" + std::to_string(id)).body);
  EXPECT_EQ(one["status"], "resolved") << one.dump(2);
  EXPECT_NE(one["resolved_by"].get<std::string>().find("uid " + std::to_string(::geteuid())), std::string::npos)
      << one.dump(2);

  // The Xid is still a current finding for ten minutes; it must not come back as a new incident,
  // and the store must not wedge. Several evaluation passes (200 ms each) later:
  std::this_thread::sleep_for(3s);
  auto after = json::parse(httpGet(a.port, "/api/v1/incidents?state=open").body);
  for (const auto& i : after["incidents"]) EXPECT_NE(i["key"], key) << "reopened: " << i.dump(2);
  one = json::parse(httpGet(a.port, "/api/v1/incidents/" + std::to_string(id)).body);
  EXPECT_EQ(one["status"], "resolved") << one.dump(2);
  const std::string log = a.proc->log();
  EXPECT_EQ(log.find("incident store:"), std::string::npos) << log;
  EXPECT_NE(log.find("resolved by"), std::string::npos) << log;

  // ack / show / set-healthy through the socket too.
  auto list = a.cli("--json incidents list --data-dir " + a.data);
  ASSERT_EQ(list.first, 0) << list.second;
  auto listed = json::parse(list.second.substr(list.second.find('{')));
  for (const auto& i : listed["incidents"]) EXPECT_NE(i["id"], id) << "a resolved incident is listed as open";
  auto healthy = a.cli("--json incidents set-healthy " + one["gpu_uuid"].get<std::string>() + " --data-dir " + a.data);
  ASSERT_EQ(healthy.first, 0) << healthy.second;
  auto h = json::parse(httpGet(a.port, "/api/v1/incidents?state=open").body);
  for (const auto& i : h["incidents"]) EXPECT_NE(i["gpu_uuid"], one["gpu_uuid"]) << i.dump(2);

  a.proc->signal(SIGTERM);
  ASSERT_TRUE(a.proc->wait(10s).has_value());
  EXPECT_FALSE(std::filesystem::exists(sock)) << "the socket outlived the agent";
}

TEST(ControlSocket, TwoAgentsNeverShareADataFolderAndEachCliFindsItsOwn) {
  Agent a, b;
  a.start("dgx-h100", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  b.runtime = a.runtime;  // one runtime folder, as on a real machine
  b.start("dgx-h200", "0");
  ASSERT_GT(b.port, 0) << b.proc->log();
  EXPECT_NE(socketOf(*a.proc), socketOf(*b.proc));
  for (Agent* x : {&a, &b}) {
    auto r = node::control::call(socketOf(*x->proc), json{{"op", "ping"}});
    ASSERT_TRUE(r.reached && r.error.empty()) << r.error;
    EXPECT_EQ(r.body["result"]["data_dir"], x->data);
    EXPECT_EQ(r.body["result"]["pid"], x->proc->pid());
  }
  // A second agent on a's folder is refused, naming the holder.
  AgentProcess second({"serve", "--simulate", "dgx-h100", "--listen", "127.0.0.1:0", "--data-dir", a.data}, a.env("0"),
                      a.dir.file("second.log"));
  auto rc = second.wait(20s);
  ASSERT_TRUE(rc.has_value()) << second.log();
  EXPECT_NE(*rc, 0);
  EXPECT_NE(second.log().find("in use by another gpuwarden process (pid " + std::to_string(a.proc->pid())),
            std::string::npos)
      << second.log();
}

TEST(ControlSocket, ReloadAsksTheAgentAndABadFileIsRefused) {
  Agent a;
  a.start("dgx-h100", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_FALSE(socketOf(*a.proc).empty());
  // A good change: the metric names.
  a.dir.write("agent.yaml", std::string(kFastAgentConfig) + "metrics:\n  naming: native\n");
  auto ok = a.cli("reload --data-dir " + a.data);
  EXPECT_EQ(ok.first, 0) << ok.second;
  EXPECT_NE(ok.second.find("configuration reloaded from"), std::string::npos) << ok.second;
  EXPECT_TRUE(eventually(
      [&] { return httpGet(a.port, "/metrics").body.find("gpuwarden_gpu_temperature") != std::string::npos; }, 5s))
      << "the native naming did not take effect";
  EXPECT_NE(a.proc->log().find("reload requested by uid"), std::string::npos) << a.proc->log();
  // A bad file: refused with the reason, exit 1, the agent keeps running on the old one.
  a.dir.write("agent.yaml", "sampling:\n  fast_interval: soon\n");
  auto bad = a.cli("reload --data-dir " + a.data);
  EXPECT_EQ(bad.first, 1) << bad.second;
  EXPECT_NE(bad.second.find("fast_interval"), std::string::npos) << bad.second;
  EXPECT_EQ(httpGet(a.port, "/healthz").status, 200);
  // No agent on a folder: exit 3, said plainly.
  auto none = a.cli("reload --data-dir " + a.dir.file("elsewhere"));
  EXPECT_EQ(none.first, 3) << none.second;
  EXPECT_NE(none.second.find("no agent owns"), std::string::npos) << none.second;
}

TEST(ControlSocket, MalformedRequestsGetAnErrorAndTheAgentStaysUp) {
  Agent a;
  a.start("dgx-h100", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string sock = socketOf(*a.proc);
  ASSERT_FALSE(sock.empty()) << a.proc->log();
  auto code = [](const std::string& reply) {
    auto j = json::parse(reply, nullptr, false);
    return j.is_object() && j.value("ok", true) == false ? j.value("code", std::string()) : "not an error: " + reply;
  };
  EXPECT_EQ(code(rawRequest(sock, "not json\n")), "bad_request");
  EXPECT_EQ(code(rawRequest(sock, "[1,2]\n")), "bad_request");
  EXPECT_EQ(code(rawRequest(sock, std::string(2 << 20, '[') + "\n")), "bad_request");  // over the size limit
  // The limit is 1 MiB (a diag report fits): a request of exactly that is read whole and answered,
  // and the refusal of a larger one names the bound.
  const std::string head = R"({"op":"nope","args":{"pad":")", tail = R"("}})";
  const std::string mib = head + std::string((1u << 20) - head.size() - tail.size(), 'a') + tail;
  ASSERT_EQ(mib.size(), 1u << 20);
  EXPECT_EQ(code(rawRequest(sock, mib + "\n")), "unknown_op");
  const json big = json::parse(rawRequest(sock, std::string(2 << 20, 'a') + "\n"), nullptr, false);
  EXPECT_EQ(big.value("error", std::string()), "request larger than 1048576 bytes") << big.dump();
  EXPECT_EQ(code(rawRequest(sock, std::string(1000, '[') + std::string(1000, ']') + "\n")), "bad_request");  // depth
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"nope"})"
                                  "\n")),
            "unknown_op");
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"incidents.resolve"})"
                                  "\n")),
            "bad_request");
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"incidents.resolve","args":{"id":"7"}})"
                                  "\n")),
            "bad_request");
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"incidents.resolve","args":{"id":424242}})"
                                  "\n")),
            "not_found");
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"ping","args":[]})"
                                  "\n")),
            "bad_request");
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"events","args":{"since_ms":"x"}})"
                                  "\n")),
            "bad_request");
  // Numbers past their type are refused, not wrapped (2^64-1 is not incident -1, nor a time before 1970).
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"incidents.resolve","args":{"id":18446744073709551615}})"
                                  "\n")),
            "bad_request");
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"events","args":{"since_ms":18446744073709551615}})"
                                  "\n")),
            "bad_request");
  const json wrapped = answer(sock, {{"op", "diag.store"}, {"args", {{"report", {{"level", 4294967297LL}}}}}});
  EXPECT_EQ(wrapped.value("error", ""), "args.report is not a diag report: level: must be an integer")
      << wrapped.dump();
  // A diag report handed over by `gpuwarden diag` is of level 1, 2 or 3: stored and listed at 3,
  // refused at 0 and 4 (a level-4 file would never be listed).
  for (int level : {0, 4}) {
    const json r = answer(sock, {{"op", "diag.store"}, {"args", {{"report", {{"level", level}}}}}});
    EXPECT_EQ(r.value("code", ""), "bad_request") << level << ": " << r.dump();
    EXPECT_EQ(r.value("error", ""), "report level must be 1, 2 or 3") << r.dump();
  }
  const json stored = answer(sock, {{"op", "diag.store"}, {"args", {{"report", {{"level", 3}}}}}});
  ASSERT_TRUE(stored.value("ok", false)) << stored.dump();
  const std::string name = stored["result"]["name"].get<std::string>();
  EXPECT_TRUE(name.ends_with("-r3.json")) << name;
  const json listed = json::parse(httpGet(a.port, "/api/v1/diag").body, nullptr, false);
  EXPECT_NE(listed.dump().find(name), std::string::npos) << listed.dump(2);
  // A request with no newline is cut off after the 2 s budget with an error, not held forever.
  EXPECT_EQ(code(rawRequest(sock, R"({"op":"ping")")), "bad_request");
  auto ping = node::control::call(sock, json{{"op", "ping"}});
  ASSERT_TRUE(ping.reached && ping.error.empty()) << ping.error << a.proc->log();
  EXPECT_TRUE(ping.body["ok"].get<bool>());
  EXPECT_EQ(httpGet(a.port, "/healthz").status, 200);
}

TEST(ControlSocket, TheCliRefusesASocketServedBySomeoneElse) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to serve a socket as another user";
  Agent a;
  a.start("fault-ecc-dbe", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string sock = socketOf(*a.proc);
  a.proc->signal(SIGTERM);
  ASSERT_TRUE(a.proc->wait(10s).has_value());
  // Someone else (nobody) binds the agent's socket name and answers "healthy".
  ::chmod(a.dir.path().c_str(), 0755);
  ::chmod(a.runtime.c_str(), 01777);
  const std::string fake = a.dir.write("fake.py", R"(
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(4)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept(); c.recv(65536)
    c.sendall((json.dumps({"ok": True, "result": {"status": "healthy", "exit_code": 0, "gpus": []}}) + "\n").encode())
    c.close()
)");
  const std::string ready = a.runtime + "/ready";
  const std::string cmd = "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 " + fake + " " + sock +
                          " " + ready + " >/dev/null 2>&1 & echo $!";
  auto started = runShell(cmd);
  const std::string pid = started.second.substr(0, started.second.find('\n'));
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(ready); }, 10s)) << started.second;
  auto r = a.cli("--json health --data-dir " + a.data);
  runShell("kill " + pid);
  EXPECT_EQ(r.first, 3) << r.second;  // unknown, never "healthy"
  EXPECT_NE(r.second.find("refusing the control socket"), std::string::npos) << r.second;
}

}  // namespace
}  // namespace gw::test

namespace gw::test {
namespace {

// Waits for a state of the agent. Only a failure takes this long; a sanitizer build on a machine
// shared with other test runs has needed more than 10 s for the first labelled sample.
constexpr auto kLoadedBound = std::chrono::seconds(60);

// The job operations as a prolog, an epilog and a hostile caller use them; the agent's /metrics
// carries hpc_job exactly while the job runs.
TEST(ControlSocketJobs, StartShowEndAndTheLabelInBetween) {
  Agent a;
  a.start("dgx-h100", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string sock = socketOf(*a.proc);
  ASSERT_FALSE(sock.empty()) << a.proc->log();
  auto call = [&](const json& req) { return answer(sock, req); };
  auto code = [&](const json& req) {
    const json b = call(req);
    return b.value("ok", true) ? "ok" : b.value("code", std::string("?")) + ": " + b.value("error", std::string());
  };
  // A prolog runs once the agent has judged its GPUs (before that a GPU's state is "unknown").
  ASSERT_TRUE(eventually(
      [&] {
        const json h = json::parse(httpGet(a.port, "/api/v1/health").body, nullptr, false);
        return h.is_object() && h.value("status", "") == "healthy";
      },
      kLoadedBound))
      << a.proc->log();
  // Slurm's GPU 0 is the GPU with minor 0: NVML's GPU 2 in dgx-h100.
  json started = call({{"op", "job.start"},
                       {"args",
                        {{"job_id", "4711"},
                         {"gpus", {"0"}},
                         {"numbering", "slurm"},
                         {"user", "alice"},
                         {"uid", 1001},
                         {"source", "slurm"},
                         {"refuse_unhealthy", true}}}});
  ASSERT_TRUE(started.value("ok", false)) << started.dump();
  EXPECT_EQ(started["result"]["gpus"][0]["index"], 2);
  EXPECT_EQ(started["result"]["gpus"][0]["state"], "healthy");
  EXPECT_EQ(started["result"]["already_running"], false);
  EXPECT_EQ(started["result"]["job"]["state"], "running");
  // The field series come with the first sampling pass after the start: wait for the temperature's.
  static const std::regex temp_line("\nDCGM_FI_DEV_GPU_TEMP\\{[^\n]*hpc_job=\"4711\"\\}");
  std::string page;
  eventually(
      [&] {
        page = httpGet(a.port, "/metrics").body;
        return std::regex_search(page, temp_line);
      },
      kLoadedBound, std::chrono::milliseconds(50));
  std::size_t with = 0;
  for (std::size_t p = 0; (p = page.find("DCGM_FI_DEV_GPU_TEMP{", p)) != std::string::npos; ++p) {
    const std::string line = page.substr(p, page.find('\n', p) - p);
    if (line.find("hpc_job=") == std::string::npos) continue;
    ++with;
    EXPECT_NE(line.find("gpu=\"2\""), std::string::npos) << line;
    EXPECT_NE(line.find("DCGM_FI_DRIVER_VERSION=\"550.54.15\",hpc_job=\"4711\"}"), std::string::npos) << line;
  }
  EXPECT_EQ(with, 1u);
  // The prolog again: the same job. Other GPUs: refused.
  EXPECT_EQ(
      call({{"op", "job.start"},
            {"args", {{"job_id", "4711"}, {"gpus", {"0"}}, {"numbering", "slurm"}}}})["result"]["already_running"],
      true);
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "4711"}, {"gpus", {1}}}}}),
            "failed: job 4711 is already running on other GPUs");
  // What a hostile or broken caller sends.
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"gpus", {0}}}}}), "bad_request: args.job_id (a string) is required");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x"}}}}),
            "bad_request: args.gpus (a list of GPU indexes or UUIDs) is required");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x"}, {"gpus", {0}}, {"numbring", "slurm"}}}}),
            "bad_request: unknown argument 'numbring'");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x y"}, {"gpus", {0}}}}}).substr(0, 8), "failed: ");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", std::string(65, 'x')}, {"gpus", {0}}}}}),
            "failed: the job id is longer than 64 bytes");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x"}, {"gpus", {8}}}}}),
            "not_found: no GPU 8 on this node");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x"}, {"gpus", {{{"a", 1}}}}}}}),
            "bad_request: args.gpus holds something that is neither a number nor a string");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x"}, {"gpus", json(std::vector<int>(65, 0))}}}}),
            "bad_request: args.gpus lists more than 64 GPUs");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x"}, {"gpus", {0}}, {"uid", -1}}}}),
            "bad_request: args.uid must be a user id");
  EXPECT_EQ(code({{"op", "job.start"}, {"args", {{"job_id", "x"}, {"gpus", {0}}, {"source", "dcgm-map"}}}}),
            "bad_request: args.source must be \"slurm\" or \"api\"");
  EXPECT_EQ(code({{"op", "job.show"}, {"args", {{"job_id", std::string(100000, 'x')}}}}), "not_found: no such job");
  // An id of exactly 64 bytes is a valid id: looked up, not refused unseen.
  EXPECT_EQ(code({{"op", "job.show"}, {"args", {{"job_id", std::string(64, 'x')}}}}),
            "not_found: no job " + std::string(64, 'x') + " on this node");
  EXPECT_EQ(code({{"op", "job.list"}, {"args", {{"limit", 0}}}}),
            "bad_request: args.limit must be an integer from 1 to 10000");
  // Both edges of the page size docs/api.md gives: 10000 is a page, one more is refused.
  EXPECT_EQ(code({{"op", "job.list"}, {"args", {{"limit", 10000}}}}), "ok");
  EXPECT_EQ(code({{"op", "job.list"}, {"args", {{"limit", 10001}}}}),
            "bad_request: args.limit must be an integer from 1 to 10000");
  EXPECT_EQ(code({{"op", "records.list"}, {"args", {{"kind", "other"}}}}),
            "bad_request: args.kind must be \"install\" or \"setting\"");
  // A few samples into the job (the agent samples every 200 ms here).
  eventually(
      [&] {
        const json shown = call({{"op", "job.show"}, {"args", {{"job_id", "4711"}}}});
        return shown.value("ok", false) && shown["result"]["gpus"][0].value("samples", 0) >= 5;
      },
      kLoadedBound, std::chrono::milliseconds(100));
  // The CLI sees it, then the epilog ends it.
  auto [rc, out] = a.cli("job list --data-dir " + a.data);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out.substr(0, 14), "4711  running ") << out;
  json ended = call({{"op", "job.end"}, {"args", {{"job_id", "4711"}, {"leftovers", true}}}});
  ASSERT_TRUE(ended.value("ok", false)) << ended.dump();
  EXPECT_EQ(ended["result"]["job"]["state"], "ended");
  EXPECT_EQ(ended["result"]["kill_leftovers"], false);
  EXPECT_EQ(ended["result"]["leftovers"]["simulated"], true);
  ASSERT_EQ(ended["result"]["leftovers"]["processes"].size(), 1u);  // dgx-h100's training process
  EXPECT_EQ(ended["result"]["leftovers"]["processes"][0]["index"], 2);
  EXPECT_EQ(code({{"op", "job.end"}, {"args", {{"job_id", "4711"}}}}), "not_found: job 4711 is not running");
  eventually([&] { return httpGet(a.port, "/metrics").body.find("hpc_job=") == std::string::npos; }, kLoadedBound,
             std::chrono::milliseconds(50));
  EXPECT_EQ(httpGet(a.port, "/metrics").body.find("hpc_job="), std::string::npos);
  auto [rc2, shown] = a.cli("job show 4711 --json --data-dir " + a.data);
  ASSERT_EQ(rc2, 0) << shown;
  const json j = json::parse(shown);
  EXPECT_EQ(j["user"], "alice");
  EXPECT_EQ(j["gpus"][0]["index"], 2);
  // Training on an NVSwitch machine moves data over NVLink, and the PCIe counters run too.
  EXPECT_GT(j["gpus"][0]["nvlink_tx_bytes"].get<double>(), 0) << shown;
  EXPECT_GT(j["gpus"][0]["nvlink_rx_bytes"].get<double>(), 0) << shown;
  EXPECT_GT(j["gpus"][0]["pcie_rx_bytes"].get<double>(), 0) << shown;
  EXPECT_TRUE(j["fingerprint"]["install"]["install_record"].is_number_integer());
  EXPECT_EQ(j["fingerprint"]["install"]["driver_version"], "550.54.15");
  EXPECT_EQ(httpGet(a.port, "/healthz").status, 200);
}

// job.list without a limit answers the newest 100 runs (docs/api.md), so a node that has run
// many jobs answers a page, not its whole history; a limit asks for more.
// A GPU the sampler has lost is refused to a prolog even while the rules have not judged it (here
// a gpu_lost hold of an hour keeps its health "unknown"): before, such a job ran on a GPU that is
// gone. The healthy GPU beside it still takes jobs, and a caller that does not ask for refusals
// is not refused.
TEST(ControlSocketJobs, ALostGpuIsRefusedBeforeTheRulesHaveJudgedIt) {
  Agent a;
  a.extra_config = "health:\n  lost_hold_ms: 3600000\n";
  a.start("fault-gpu-lost", "40");  // GPU 3 lost from the start
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string sock = socketOf(*a.proc);
  ASSERT_FALSE(sock.empty()) << a.proc->log();
  json gpu3;
  ASSERT_TRUE(eventually(
      [&] {
        const json h = json::parse(httpGet(a.port, "/api/v1/health").body, nullptr, false);
        if (!h.is_object() || !h.contains("gpus")) return false;
        for (const auto& g : h["gpus"])
          if (g.value("index", -1) == 3) gpu3 = g;
        return gpu3.value("gpu_state", "") == "lost";
      },
      kLoadedBound))
      << a.proc->log();
  EXPECT_EQ(gpu3.value("state", ""), "unknown") << gpu3.dump();
  const auto start = [&](const std::string& id, int gpu, bool refuse) {
    return answer(sock,
                  {{"op", "job.start"}, {"args", {{"job_id", id}, {"gpus", {gpu}}, {"refuse_unhealthy", refuse}}}});
  };
  const json refused = start("21", 3, true);
  ASSERT_FALSE(refused.value("ok", true)) << refused.dump();
  EXPECT_EQ(refused.value("code", ""), "gpu_unhealthy");
  const std::string why = refused.value("error", "");
  EXPECT_EQ(why.rfind("GPU 3", 0), 0u) << why;
  EXPECT_NE(why.find(" is lost (unknown to the rules so far)"), std::string::npos) << why;
  EXPECT_TRUE(start("22", 2, true).value("ok", false));
  EXPECT_TRUE(start("23", 3, false).value("ok", false));
}

TEST(ControlSocketJobs, TheListIsTheNewestHundredUnlessALimitSaysOtherwise) {
  Agent a;
  a.start("dgx-h100", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string sock = socketOf(*a.proc);
  ASSERT_FALSE(sock.empty()) << a.proc->log();
  auto call = [&](const json& req) { return answer(sock, req); };
  for (int i = 0; i < 101; ++i) {
    const json started = call({{"op", "job.start"}, {"args", {{"job_id", "job-" + std::to_string(i)}, {"gpus", {0}}}}});
    ASSERT_TRUE(started.value("ok", false)) << i << ": " << started.dump();
  }
  const json page = call({{"op", "job.list"}, {"args", json::object()}});
  ASSERT_TRUE(page.value("ok", false)) << page.dump();
  EXPECT_EQ(page["result"]["jobs"].size(), 100u);
  const json more = call({{"op", "job.list"}, {"args", {{"limit", 101}}}});
  ASSERT_TRUE(more.value("ok", false)) << more.dump();
  EXPECT_EQ(more["result"]["jobs"].size(), 101u);
  const json newest = call({{"op", "job.list"}, {"args", {{"limit", 1}}}});
  ASSERT_TRUE(newest.value("ok", false)) << newest.dump();
  ASSERT_EQ(newest["result"]["jobs"].size(), 1u);
  EXPECT_EQ(newest["result"]["jobs"][0]["job_id"], "job-100");
  // A job's owner is any user id from root's 0 to 2^32-1; past it is no user.
  for (const auto& [uid, want] : std::vector<std::pair<std::int64_t, std::string>>{
           {0, ""}, {4294967295LL, ""}, {4294967296LL, "args.uid must be a user id"}}) {
    const json r =
        call({{"op", "job.start"}, {"args", {{"job_id", "uid-" + std::to_string(uid)}, {"gpus", {1}}, {"uid", uid}}}});
    if (want.empty()) {
      ASSERT_TRUE(r.value("ok", false)) << uid << ": " << r.dump();
      EXPECT_EQ(r["result"]["job"]["uid"], uid);
    } else {
      EXPECT_EQ(r.value("code", ""), "bad_request") << r.dump();
      EXPECT_EQ(r.value("error", ""), want) << r.dump();
    }
  }
}

// `gpuwarden smi -pl` with an agent running: the agent applies the change with its own NVML
// (the simulator it holds), its own view shows it, and the setting record names the caller the
// kernel named, with the value before and after.
TEST(ControlSocketSettings, SmiPowerLimitGoesThroughTheAgentAndIsRecorded) {
  Agent a;
  a.start("dgx-h100", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_FALSE(socketOf(*a.proc).empty()) << a.proc->log();
  auto limit = [&]() -> double {
    auto r = httpGet(a.port, "/api/v1/gpus/0/latest");
    if (r.status != 200) return -1;
    const json latest = json::parse(r.body);
    for (const auto& f : latest["fields"])
      if (f["key"] == "power_limit") return f["value"].get<double>();
    return -1;
  };
  ASSERT_TRUE(eventually([&] { return limit() > 0; }, 20s)) << a.proc->log();
  const double before = limit();
  ASSERT_NE(before, 250.0);
  const std::string env = "GPUWARDEN_DATA_DIR=" + a.data + " ";
  // The CLI finds the agent through the data folder it was given: the same runtime folder and
  // GPUWARDEN_DATA_DIR.
  auto [rc2, out2] = runShell("GPUWARDEN_RUNTIME_DIR=" + a.runtime + " " + env + std::string(GW_BINARY) +
                              " --simulate dgx-h100 smi -i 0 -pl 250");
  ASSERT_EQ(rc2, 0) << out2 << a.proc->log();
  EXPECT_NE(out2.find("was set to 250.00 W from"), std::string::npos) << out2;
  EXPECT_NE(out2.find("All done."), std::string::npos) << out2;
  // Recorded: nvidia-smi's sentences only, no note of gpuwarden's (such as "not recorded").
  EXPECT_EQ(out2.find("gpuwarden"), std::string::npos) << out2;
  EXPECT_TRUE(eventually([&] { return limit() == 250.0; }, 20s)) << "agent's power_limit " << limit();
  EXPECT_NE(a.proc->log().find("setting changed by uid " + std::to_string(::geteuid())), std::string::npos)
      << a.proc->log();

  auto [rc3, recs] = a.cli("--json records --kind setting --data-dir " + a.data);
  ASSERT_EQ(rc3, 0) << recs;
  const json r = json::parse(recs)["records"];
  ASSERT_EQ(r.size(), 1u) << recs;
  EXPECT_EQ(r[0]["kind"], "setting");
  EXPECT_NE(r[0]["who"].get<std::string>().find("uid " + std::to_string(::geteuid())), std::string::npos) << recs;
  char before_text[32];
  std::snprintf(before_text, sizeof before_text, "%.2f W", before);
  EXPECT_EQ(r[0]["changes"][0]["before"], before_text) << recs;
  EXPECT_EQ(r[0]["changes"][0]["after"], "250.00 W") << recs;

  // Out of range through the agent: nvidia-smi's message and exit, nothing recorded.
  auto [rc4, out4] = runShell("GPUWARDEN_RUNTIME_DIR=" + a.runtime + " " + env + std::string(GW_BINARY) +
                              " --simulate dgx-h100 smi -i 0 -pl 5000");
  EXPECT_EQ(rc4, 2) << out4;
  EXPECT_NE(out4.find("is not a valid power limit which should be between"), std::string::npos) << out4;
  // A command line for real GPUs is not applied to the simulator the agent holds.
  auto [rc5, out5] =
      runShell("GPUWARDEN_RUNTIME_DIR=" + a.runtime + " " + env + std::string(GW_BINARY) + " smi -i 0 -pl 300");
  EXPECT_EQ(rc5, 2) << out5;
  EXPECT_NE(out5.find("this agent drives the simulator"), std::string::npos) << out5;
  EXPECT_EQ(limit(), 250.0);
}

// A GPU that hangs in the setter inside the agent: the agent stops at that GPU's deadline and
// says so, and smi waits for that answer (it once gave up after 5 s and said "nothing was
// changed" while the agent had changed GPU 0). The agent's control thread is free again after.
TEST(ControlSocketSettings, ASetterHangInTheAgentIsAnsweredByTheAgentAtItsDeadline) {
  Agent a;
  const std::string scenario = a.dir.write(
      "setter-hang.yaml", "base: " + std::string(GW_SOURCE_DIR) +
                              "/scenarios/dgx-h100\nfaults:\n  - {type: hang, gpu: 1, at: 0, duration: 3600, "
                              "seconds: 60, call: nvmlDeviceSetPersistenceMode}\n");
  a.start(scenario, "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_FALSE(socketOf(*a.proc).empty()) << a.proc->log();
  const std::string smi = "GPUWARDEN_RUNTIME_DIR=" + a.runtime + " GPUWARDEN_DATA_DIR=" + a.data + " " +
                          std::string(GW_BINARY) + " --simulate " + scenario + " smi ";
  auto [rc, out] = runShell(smi + "-pm 0");
  EXPECT_EQ(rc, 255) << out << a.proc->log();
  EXPECT_NE(out.find("Disabled persistence mode for GPU 00000000:18:00.0."), std::string::npos) << out;
  EXPECT_NE(out.find("Unable to change the setting of GPU 00000000:2A:00.0: no answer from NVML within 10000 ms; "
                     "whether it changed is unknown"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("nothing was changed"), std::string::npos) << out;
  auto [rc2, again] = runShell(smi + "-i 0 -pm 1");
  EXPECT_EQ(rc2, 0) << again << a.proc->log();
  EXPECT_NE(again.find("Enabled persistence mode for GPU 00000000:18:00.0."), std::string::npos) << again;
  auto [rc3, recs] = a.cli("--json records --kind setting --data-dir " + a.data);
  ASSERT_EQ(rc3, 0) << recs;
  const json r = json::parse(recs)["records"];
  // GPU 0's two changes, and GPU 1's unanswered one, tried with its outcome unknown.
  ASSERT_EQ(r.size(), 3u) << recs;
  int known = 0, unknown = 0;
  for (const auto& rec : r) {
    if (rec["state"].value("outcome", "") == "unknown") {
      ++unknown;
      EXPECT_EQ(rec["state"]["bus_id"], "00000000:2A:00.0") << recs;
    } else {
      ++known;
      EXPECT_EQ(rec["state"]["bus_id"], "00000000:18:00.0") << recs;
    }
  }
  EXPECT_EQ(known, 2) << recs;
  EXPECT_EQ(unknown, 1) << recs;
}

// smi mig's changes take the settings' route: the agent creates the instances with its own NVML
// session and records them with the layout before and after. The CLI and the agent share the
// simulator's state file, as both would share the driver on a real node.
TEST(ControlSocketSettings, SmiMigGoesThroughTheAgentAndIsRecorded) {
  Agent a;
  const std::string state = a.dir.file("sim-state");
  a.extra_env = {{"GPUWARDEN_SIM_STATE", state}};
  a.start("mig-h100", "0");  // GPU 0: 2g at gi 3, 1g at gi 9, 3g at gi 2; one compute slice free
  ASSERT_GT(a.port, 0) << a.proc->log();
  ASSERT_FALSE(socketOf(*a.proc).empty()) << a.proc->log();
  const std::string env = "GPUWARDEN_RUNTIME_DIR=" + a.runtime + " GPUWARDEN_DATA_DIR=" + a.data +
                          " GPUWARDEN_SIM_STATE=" + state + " " + std::string(GW_BINARY) + " --simulate mig-h100 ";
  auto [rc, out] = runShell(env + "smi mig -cgi 19 -C -i 0");
  ASSERT_EQ(rc, 0) << out << a.proc->log();
  EXPECT_NE(out.find("Successfully created GPU instance ID 10 on GPU  0 using profile MIG 1g.10gb (ID 19)\n"
                     "Successfully created compute instance ID  0 on GPU  0 GPU instance ID 10 using profile MIG "
                     "1g.10gb (ID  0)\n"),
            std::string::npos)
      << out;
  EXPECT_TRUE(eventually(
      [&] { return a.proc->log().find("setting changed by uid " + std::to_string(::geteuid())) != std::string::npos; },
      10s))
      << a.proc->log();
  // The list runs in the CLI itself and reads what the agent made.
  auto [rc2, lgi] = runShell(env + "smi mig -lgi -i 0");
  ASSERT_EQ(rc2, 0) << lgi;
  EXPECT_NE(lgi.find("|   0  MIG 1g.10gb            19        10          3:1"), std::string::npos) << lgi;
  // No room is left: the agent answers nvidia-smi's sentence and exit.
  auto [rc3, full] = runShell(env + "smi mig -cgi 19 -i 0");
  EXPECT_EQ(rc3, 23) << full;
  EXPECT_NE(full.find("Insufficient Resources"), std::string::npos) << full;

  auto [rc4, recs] = a.cli("--json records --kind setting --data-dir " + a.data);
  ASSERT_EQ(rc4, 0) << recs;
  const json r = json::parse(recs)["records"];
  ASSERT_EQ(r.size(), 1u) << recs;
  EXPECT_EQ(r[0]["state"]["flag"], "mig -cgi") << recs;
  EXPECT_EQ(r[0]["changes"][0]["what"], "mig.layout") << recs;
  EXPECT_EQ(r[0]["changes"][0]["before"],
            "GI 2 MIG 3g.40gb at 4:4 (CI 0); GI 3 MIG 2g.20gb at 0:2 (CI 0); GI 9 MIG 1g.10gb at 2:1 (CI 0)")
      << recs;
  EXPECT_NE(r[0]["changes"][0]["after"].get<std::string>().find("GI 10 MIG 1g.10gb at 3:1 (CI 0)"), std::string::npos)
      << recs;
}

// Anyone but root is refused by the agent, by uid, and nothing changes: the agent runs as root and
// would otherwise lend a local user its privilege. The socket is opened to everyone here so that
// the request reaches the agent (its 0660 mode alone would stop the connection first).
TEST(ControlSocketSettings, AnotherUserIsRefusedByUid) {
  // The suite runs as root with util-linux's setpriv (scripts/setup; tests/allowed_skips.txt).
  ASSERT_EQ(::geteuid(), 0u) << "this test runs the CLI as another uid, which needs root";
  ASSERT_EQ(::access("/usr/bin/setpriv", X_OK), 0) << "setpriv (util-linux) is missing";
  Agent a;
  a.start("dgx-h100", "0");
  ASSERT_GT(a.port, 0) << a.proc->log();
  const std::string sock = socketOf(*a.proc);
  ASSERT_FALSE(sock.empty()) << a.proc->log();
  ASSERT_EQ(::chmod(a.dir.path().c_str(), 0755), 0);
  ASSERT_EQ(::chmod(a.runtime.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(sock.c_str(), 0666), 0);
  auto [rc, out] = runShell("GPUWARDEN_RUNTIME_DIR=" + a.runtime + " GPUWARDEN_DATA_DIR=" + a.data +
                            " setpriv --reuid 65534 --regid 65534 --clear-groups " + std::string(GW_BINARY) +
                            " --simulate dgx-h100 smi -i 0 -pl 250");
  EXPECT_EQ(rc, 4) << out;
  EXPECT_NE(out.find("Insufficient Permissions"), std::string::npos) << out;
  EXPECT_NE(out.find("the agent's control socket refused: uid 65534 is not allowed to change GPU settings"),
            std::string::npos)
      << out;
  EXPECT_TRUE(
      eventually([&] { return a.proc->log().find("settings change refused for uid 65534") != std::string::npos; }, 10s))
      << a.proc->log();
  EXPECT_EQ(a.proc->log().find("setting changed by"), std::string::npos) << a.proc->log();
}

}  // namespace
}  // namespace gw::test
