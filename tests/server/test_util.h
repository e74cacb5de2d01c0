// Helpers of the agent tests: a scratch directory, the real gpuwarden binary run in the
// background (its log read for the bound port), HTTP requests and a small exposition parser.
#pragma once

#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/temp_dir.h"

extern char** environ;

namespace gw::test {

// A scratch directory named gw-server-test-*, removed at the end of the test.
// An agent configuration for tests: any free port, fast sampling, quick flushes.
constexpr const char* kFastAgentConfig = R"(
listen: 127.0.0.1:0
sampling:
  fast_interval: 200ms
  slow_interval: 1s
  call_deadline: 500ms
history:
  flush_interval: 500ms
)";

class TempDir : public testsupport::TempDir {
 public:
  TempDir() : testsupport::TempDir("gw-server-test") {}
};

inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command line (stderr folded into the output): exit code, output.
inline std::pair<int, std::string> runShell(const std::string& command) {
  std::string cmd = command + " 2>&1";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int st = ::pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// Runs the gpuwarden binary through the shell (stderr folded into the output): exit code, output.
inline std::pair<int, std::string> runCli(const std::string& args) {
  return runShell(std::string(GW_BINARY) + " " + args);
}

// Starts the gpuwarden binary with `args`, the environment plus `env`, stdout and stderr into
// `out_path` (opened with O_WRONLY | O_CREAT | `open_flags`); the pid, or -1.
inline pid_t spawnGpuwarden(std::vector<std::string> args, const std::map<std::string, std::string>& env,
                            const std::string& out_path, int open_flags) {
  std::vector<std::string> argv{GW_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string s(*e);
    if (!env.count(s.substr(0, s.find('=')))) envs.push_back(s);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | open_flags, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  if (posix_spawn(&pid, GW_BINARY, &fa, nullptr, cargv.data(), cenv.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// `gpuwarden serve …` in the background, stdout and stderr into a log file.
class AgentProcess {
 public:
  AgentProcess(std::vector<std::string> args, std::map<std::string, std::string> env, std::string log_path)
      : log_(std::move(log_path)) {
    pid_ = spawnGpuwarden(args, env, log_, O_APPEND);
  }
  ~AgentProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  std::string log() const { return readFile(log_); }

  // The port from "listening on 127.0.0.1:PORT" in the log; 0 on timeout or exit.
  int waitListening(std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
    auto end = std::chrono::steady_clock::now() + timeout;
    std::regex re("listening on [^ \n]*:([0-9]+)");
    while (std::chrono::steady_clock::now() < end) {
      std::smatch m;
      std::string l = log();
      if (std::regex_search(l, m, re)) return std::stoi(m[1]);
      if (exitedNow()) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return 0;
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  // Exit status after waiting at most `timeout`; nullopt if still running.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      if (exitedNow()) return status_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

 private:
  bool exitedNow() {
    if (exited_) return true;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      exited_ = true;
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    return exited_;
  }
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = -1;
};

// The simulator's file clock (GPUWARDEN_SIM_CLOCK=file:PATH) for an agent in another process: the
// test moves simulated time by rewriting the file, and waits for the agent's states; nothing races
// wall time. The simulator re-reads the file at most every 10 ms and never goes backwards. The
// number is written whole (a temporary renamed over the file), so no read sees half of it.
// How many times `needle` occurs in `text` (a log line said once, a reply not sent twice).
inline std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class SimClockFile {
 public:
  SimClockFile(std::string path, double t) : path_(std::move(path)) { set(t); }
  void set(double t) const {
    const std::string tmp = path_ + ".tmp";
    std::ofstream(tmp) << t << "\n";
    std::filesystem::rename(tmp, path_);
  }
  // The value of GPUWARDEN_SIM_CLOCK.
  std::string env() const { return "file:" + path_; }

 private:
  std::string path_;
};

// Wall milliseconds since the epoch: the clock of the agent's sample times (`last_sample_ms`).
inline std::int64_t wallMsNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct HttpResult {
  int status = 0;  // 0: no answer
  std::string body;
  httplib::Headers headers;
  double seconds = 0;
};

inline HttpResult httpGet(int port, const std::string& path, const httplib::Headers& headers = {},
                          std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(timeout);
  cli.set_read_timeout(timeout);
  cli.set_decompress(false);
  auto t0 = std::chrono::steady_clock::now();
  auto r = cli.Get(path, headers);
  HttpResult out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r) return out;
  out.status = r->status;
  out.body = r->body;
  out.headers = r->headers;
  return out;
}

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses the sample lines of a text exposition (no escapes inside label values needed here).
inline std::vector<Sample> parseExposition(const std::string& text) {
  std::vector<Sample> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    std::size_t i = line.find_first_of("{ ");
    s.name = line.substr(0, i);
    if (i != std::string::npos && line[i] == '{') {
      std::size_t close = line.find('}', i);
      std::string body = line.substr(i + 1, close - i - 1);
      std::regex re("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");
      for (std::sregex_iterator it(body.begin(), body.end(), re), e; it != e; ++it) s.labels[(*it)[1]] = (*it)[2];
      i = close + 1;
    }
    std::stringstream rest(line.substr(i));
    std::string v;
    rest >> v;
    s.value = std::stod(v);
    out.push_back(std::move(s));
  }
  return out;
}

inline std::vector<Sample> select(const std::vector<Sample>& all, const std::string& name,
                                  const std::map<std::string, std::string>& labels = {}) {
  std::vector<Sample> out;
  for (const auto& s : all) {
    if (s.name != name) continue;
    bool ok = true;
    for (const auto& [k, v] : labels)
      if (!s.labels.count(k) || s.labels.at(k) != v) ok = false;
    if (ok) out.push_back(s);
  }
  return out;
}

// Polls `pred` until true or timeout.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every = std::chrono::milliseconds(100)) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(every);
  }
  return pred();
}

}  // namespace gw::test
