// gpuwarden top: an nvtop-like screen of every GPU (bars, recent history) and the processes on
// them, from the local NVML or an agent's HTTP API. The frame's layout is top_frame.h's, shared
// with --once; this file reads, keeps the history, and runs the terminal.
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/gpu_processes.h"
#include "cli/printable.h"
#include "cli/top_frame.h"
#include "platform/bounded_json.h"
#include "nvml/errors.h"
#include "fields/catalog.h"
#include "platform/deadline.h"

// Last, and as functions: its macros (move, clear, erase, timeout) would rewrite member calls.
#define NCURSES_NOMACROS
#include <curses.h>

namespace gw::cli {
namespace {

struct TopOptions {
  double delay = 1;
  bool once = false;
  int width = 120;
  std::string agent;
  std::string cacert;
};

constexpr const char* kAuthEnv = "GPUWARDEN_AGENT_AUTH";
constexpr std::size_t kMaxAnswerBytes = 8 << 20;

struct Reading {
  std::string error;  // the whole read failed (an agent that does not answer)
  std::vector<top::Gpu> gpus;
  bool processes_available = true;
  std::string processes_note;
  std::vector<top::Process> processes;
};

class Source {
 public:
  virtual ~Source() = default;
  virtual Reading read() = 0;
};

std::uint64_t nowUs() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

// The local NVML (or the simulator): each GPU read on its own thread under the call deadline.
class LocalSource : public Source {
 public:
  LocalSource(const nvml::Session* s, unsigned count, const platform::FsRoot& root)
      : s_(s), count_(count), root_(root), inflight_(std::make_shared<std::vector<std::atomic<bool>>>(count)) {}

  Reading read() override {
    Reading r;
    const std::uint64_t now = nowUs();
    auto reads = platform::runEachWithDeadline<top::Gpu>(
        count_,
        [s = s_, inflight = inflight_](std::size_t i) {
          top::Gpu g;
          g.index = static_cast<unsigned>(i);
          // Still inside the call that stalled it last time: no second thread on it.
          if ((*inflight)[i].exchange(true)) {
            g.state = "stalled: no answer";
            return g;
          }
          auto d = s->deviceByIndex(g.index);
          if (!d) {
            g.state = "lost: " + d.error();
          } else {
            g.name = d->name().value_or("");
            auto num = [&d](const char* key) -> std::optional<double> {
              const fields::Field* f = fields::findByKey(key);
              if (!f || !f->read_number) return std::nullopt;
              auto v = f->read_number(*d);
              return v ? std::optional<double>(*v) : std::nullopt;
            };
            g.util = num("gpu_util");
            g.mem_used_mib = num("fb_used");
            g.mem_total_mib = num("fb_total");
            g.temp = num("gpu_temp");
            g.power = num("power_usage");
            g.power_limit = num("enforced_power_limit");
            if (!g.power_limit) g.power_limit = num("power_limit");
            g.sm_clock = num("sm_clock");
            g.mem_clock = num("mem_clock");
            g.max_sm_clock = num("max_sm_clock");
            g.max_mem_clock = num("max_mem_clock");
            if (!g.util && !g.mem_used_mib && !g.temp) {
              if (auto u = d->utilization(); !u && nvml::isLost(u.status().nvmlCode())) g.state = "lost: " + u.error();
            }
          }
          (*inflight)[i] = false;
          return g;
        },
        kCallDeadline);
    for (unsigned i = 0; i < count_; ++i) {
      if (reads[i]) {
        r.gpus.push_back(std::move(*reads[i]));
      } else {
        top::Gpu g;
        g.index = i;
        g.state = "stalled: " + nvml::noAnswer(kCallDeadline);
        r.gpus.push_back(std::move(g));
      }
    }
    const auto procs = readGpuProcesses(
        *s_, count_, root_, since_, [](unsigned, const std::string&, const std::string&) { return true; }, false,
        kCallDeadline);
    since_ = now;
    for (const auto& gpu : procs)
      for (const auto& p : gpu.procs)
        r.processes.push_back({p.gpu, p.pid, p.user, p.graphics, p.sm, p.used_bytes, p.command});
    return r;
  }

 private:
  const nvml::Session* s_;
  unsigned count_;
  const platform::FsRoot& root_;
  std::shared_ptr<std::vector<std::atomic<bool>>> inflight_;
  std::uint64_t since_ = nowUs() - 1'000'000;  // NVML's process samples "since": 1 s back at first
};

// An agent's JSON API: /api/v1/gpus, then each GPU's /latest.
constexpr std::size_t kMaxAgentGpus = 1024;  // far past any node NVML serves

class AgentSource : public Source {
 public:
  // url: http[s]://[USER:PASSWORD@]HOST[:PORT][/PREFIX]
  static Result<std::unique_ptr<AgentSource>> open(const std::string& url, const std::string& cacert) {
    // One split serves the connection, the error sentences and the screen; the credentials
    // (USER:PASSWORD@, else $GPUWARDEN_AGENT_AUTH) reach only the connection.
    const auto scheme_end = url.find("://");
    const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
    std::string rest = scheme_end == std::string::npos ? url : url.substr(scheme_end + 3);
    std::string prefix;
    if (auto slash = rest.find('/'); slash != std::string::npos) {
      prefix = rest.substr(slash);
      rest = rest.substr(0, slash);
    }
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    std::string info;
    if (auto at = rest.rfind('@'); at != std::string::npos) {
      info = rest.substr(0, at);
      rest = rest.substr(at + 1);
    } else if (const char* env = std::getenv(kAuthEnv); env && *env) {
      info = env;
    }
    const std::string shown = (scheme_end == std::string::npos ? "" : scheme + "://") + rest + prefix;
    if (scheme != "http" && scheme != "https")
      return Status::Error("--agent '" + shown.substr(0, 200) + "' is not an http:// or https:// URL");
    if (rest.empty()) return Status::Error("--agent '" + shown.substr(0, 200) + "' names no host");
    const auto colon = info.find(':');
    const std::string user = info.substr(0, colon);
    const std::string password = colon == std::string::npos ? "" : info.substr(colon + 1);
    auto src = std::unique_ptr<AgentSource>(new AgentSource());
    src->shown_ = shown;
    src->prefix_ = prefix;
    src->client_ = std::make_unique<httplib::Client>(scheme + "://" + rest);
    if (!src->client_->is_valid()) return Status::Error("--agent " + src->shown_ + ": unsupported URL");
    src->client_->set_connection_timeout(2, 0);
    src->client_->set_read_timeout(3, 0);
    src->client_->set_keep_alive(true);
    if (!user.empty()) src->client_->set_basic_auth(user, password);
    if (!cacert.empty()) src->client_->set_ca_cert_path(cacert);
    return src;
  }

  const std::string& shown() const { return shown_; }

  Reading read() override {
    Reading r;
    r.processes_available = false;
    r.processes_note =
        "  processes: not in the agent's API; run gpuwarden top on the node itself for them (and for kill)";
    auto list = get("/api/v1/gpus");
    if (!list) {
      r.error = list.error();
      return r;
    }
    try {
      const auto& gpus = list->at("gpus");
      // Each GPU that is up costs one more request a frame: a list longer than any machine's is
      // refused, not walked.
      if (gpus.is_array() && gpus.size() > kMaxAgentGpus) {
        r.error = printable("the answer of " + shown_ + "/api/v1/gpus lists " + std::to_string(gpus.size()) +
                            " GPUs; at most " + std::to_string(kMaxAgentGpus) + ": is this a gpuwarden agent?");
        return r;
      }
      for (const auto& j : gpus) {
        top::Gpu g;
        g.index = platform::wholeNumber<unsigned>(j, "index");  // get<unsigned>() of 1e300: undefined
        g.name = j.value("name", "");
        const std::string state = j.value("state", "unknown");
        const nlohmann::json inv = j.contains("inventory") ? j["inventory"] : nlohmann::json();
        auto invNum = [&inv](const char* key) -> std::optional<double> {
          if (inv.is_object() && inv.contains(key) && inv[key].is_number()) return inv[key].get<double>();
          return std::nullopt;
        };
        g.mem_total_mib = invNum("memory_total_mib");
        g.power_limit = invNum("power_limit_w");
        g.max_sm_clock = invNum("max_sm_clock_mhz");
        g.max_mem_clock = invNum("max_memory_clock_mhz");
        if (state != "up") {
          const std::string reason = j.value("state_reason", "");
          g.state = state + (reason.empty() ? "" : ": " + reason);
          r.gpus.push_back(std::move(g));
          continue;
        }
        auto latest = get("/api/v1/gpus/" + std::to_string(g.index) + "/latest");
        if (!latest) {
          g.state = "no reading: " + latest.error();
          r.gpus.push_back(std::move(g));
          continue;
        }
        std::map<std::string, double> values;
        for (const auto& f : latest->at("fields"))
          if (f.at("value").is_number()) values[f.at("key").get<std::string>()] = f.at("value").get<double>();
        auto field = [&values](const char* key) -> std::optional<double> {
          auto it = values.find(key);
          return it == values.end() ? std::nullopt : std::optional<double>(it->second);
        };
        g.util = field("gpu_util");
        g.mem_used_mib = field("fb_used");
        if (auto t = field("fb_total")) g.mem_total_mib = t;
        g.temp = field("gpu_temp");
        g.power = field("power_usage");
        if (auto l = field("enforced_power_limit")) g.power_limit = l;
        g.sm_clock = field("sm_clock");
        g.mem_clock = field("mem_clock");
        if (auto m = field("max_sm_clock")) g.max_sm_clock = m;
        if (auto m = field("max_mem_clock")) g.max_mem_clock = m;
        r.gpus.push_back(std::move(g));
      }
    } catch (const std::exception& e) {  // nlohmann's shape errors, platform::wholeNumber's range
      r.error = "the answer of " + shown_ + "/api/v1/gpus is not gpuwarden's API (" + e.what() + ")";
    }
    // Another machine's words reach the screen and the --once frame only as text to show.
    r.error = printable(r.error);
    for (auto& g : r.gpus) {
      g.name = printable(g.name);
      g.state = printable(g.state);
    }
    return r;
  }

 private:
  AgentSource() = default;

  Result<nlohmann::json> get(const std::string& path) {
    std::string body;
    bool too_big = false;
    auto res = client_->Get(prefix_ + path, httplib::Headers{}, [&](const char* data, std::size_t len) {
      if (body.size() + len > kMaxAnswerBytes) {
        too_big = true;
        return false;
      }
      body.append(data, len);
      return true;
    });
    if (too_big) return Status::Error(shown_ + path + ": the answer is larger than 8 MiB");
    if (!res) return Status::Error("cannot reach the agent at " + shown_ + ": " + httplib::to_string(res.error()));
    if (res->status == 401)
      return Status::Error(
          fmt::format("the agent at {} refused the credentials (HTTP 401): give them as "
                      "http://USER:PASSWORD@HOST:PORT or in {}=USER:PASSWORD",
                      shown_, kAuthEnv));
    if (res->status != 200)
      return Status::Error(
          fmt::format("the agent at {} answered HTTP {} to {}: {}", shown_, res->status, path, body.substr(0, 200)));
    // Another machine's answer: its nesting and value count are bounded before anything is built.
    auto j = platform::parseBounded(body);
    if (!j || !j->is_object())
      return Status::Error("the answer of " + shown_ + path + " is not a JSON object (" +
                           (j ? std::string("a ") + j->type_name() : j.error()) + "): is this a gpuwarden agent?");
    return std::move(j).value();
  }

  std::string shown_, prefix_;
  std::unique_ptr<httplib::Client> client_;
};

std::string clockNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char b[16];
  std::strftime(b, sizeof b, "%H:%M:%S", &tm);
  return b;
}

// What the screen shows, and what the keys change.
struct Screen {
  top::View view;
  unsigned selected_pid = 0;  // follows the process across re-sorts
  unsigned pending_kill = 0;  // waiting for y/n
  std::string read_error;     // the last read's failure, shown until a read succeeds

  void apply(Reading r, bool keep_history) {
    if (!r.error.empty()) {
      view.message = r.error;  // the last frame stays, with why it is not refreshed
      read_error = r.error;
      return;
    }
    if (!read_error.empty() && view.message == read_error) view.message.clear();
    read_error.clear();
    if (keep_history) {
      if (view.history.size() != r.gpus.size()) view.history.assign(r.gpus.size(), {});
      for (std::size_t i = 0; i < r.gpus.size(); ++i) view.history[i].push(r.gpus[i]);
    }
    view.gpus = std::move(r.gpus);
    view.processes_available = r.processes_available;
    view.processes_note = std::move(r.processes_note);
    view.processes = std::move(r.processes);
    view.clock = clockNow();
    resort();
  }

  void resort() {
    top::sortProcesses(view.processes, view.sort);
    view.selected = -1;
    for (std::size_t i = 0; i < view.processes.size(); ++i)
      if (selected_pid != 0 && view.processes[i].pid == selected_pid) view.selected = static_cast<int>(i);
  }

  void step(int delta) {
    const int n = static_cast<int>(view.processes.size());
    if (n == 0) return;
    view.selected = std::clamp(view.selected < 0 ? 0 : view.selected + delta, 0, n - 1);
    selected_pid = view.processes[static_cast<std::size_t>(view.selected)].pid;
  }
};

// Why `k` cannot signal anything here, or "" when it can.
std::string killRefusal(const Context& ctx, bool agent) {
  if (agent)
    return "kill is a local-only action: the agent's API cannot signal processes; run gpuwarden top on the node "
           "(without --agent)";
  if (!ctx.options.simulate.empty())
    return "kill is refused under --simulate: the processes are simulated, not processes of this machine";
  if (ctx.options.root != "/")
    return "kill is refused with --root " + ctx.options.root + ": its process ids may belong to another PID namespace";
  return "";
}

void onKey(int ch, Screen& sc, Run& run, bool agent) {
  auto& v = sc.view;
  if (sc.pending_kill != 0) {
    const unsigned pid = sc.pending_kill;
    sc.pending_kill = 0;
    v.prompt.clear();
    if (ch != 'y' && ch != 'Y') {
      v.message = fmt::format("kill of process {} cancelled", pid);
      return;
    }
    std::string user = "-", command;
    for (const auto& p : v.processes)
      if (p.pid == pid) user = p.user, command = p.command;
    // The pid may have been reused since the list was read: signal only the same command.
    if (auto comm = run.ctx.root().readLine("/proc/" + std::to_string(pid) + "/comm");
        comm && !command.empty() && command != "-" && *comm != command) {
      v.message = fmt::format("process {} is now '{}', not '{}': not signalled", pid, *comm, command);
      return;
    }
    v.message = top::killMessage(pid, top::sendTerm(pid), user, command);
    return;
  }
  switch (ch) {
    case 'm':
    case 'M':
      v.sort = top::SortKey::Memory;
      sc.resort();
      break;
    case 's':
    case 'S':
      v.sort = top::SortKey::Sm;
      sc.resort();
      break;
    case 'c':
    case 'C':
      v.chart = top::nextMetric(v.chart);
      break;
    case KEY_UP:
      sc.step(-1);
      break;
    case KEY_DOWN:
      sc.step(+1);
      break;
    case 'k':
    case 'K': {
      if (auto why = killRefusal(run.ctx, agent); !why.empty()) {
        v.message = why;
        break;
      }
      if (v.selected < 0) {
        v.message = "select a process first (Up/Down), then k";
        break;
      }
      const auto& p = v.processes[static_cast<std::size_t>(v.selected)];
      sc.pending_kill = p.pid;
      v.prompt = fmt::format("send SIGTERM to process {} ({}, user {})? y/n", p.pid, p.command, p.user);
      break;
    }
    default:
      break;
  }
}

int runCurses(Source& src, Screen& sc, double delay, Run& run, bool agent) {
  installStopHandlers();
  if (!initscr()) {
    printError("cannot start the terminal screen (is TERM set?)");
    return kExitUsage;
  }
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
  auto next = Clock::now() + interval;
  auto draw = [&sc] {
    const auto lines = top::renderFrame(sc.view, COLS, LINES);
    erase();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      attr_t a = A_NORMAL;
      if (lines[i].style == top::Line::Style::Header) a = A_BOLD;
      if (lines[i].style == top::Line::Style::Selected) a = A_REVERSE;
      if (lines[i].style == top::Line::Style::Alert) a = A_BOLD | A_UNDERLINE;
      attrset(a);
      mvaddnstr(static_cast<int>(i), 0, lines[i].text.c_str(), COLS);
    }
    attrset(A_NORMAL);
    refresh();
  };
  draw();
  while (!stopRequested()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
    timeout(static_cast<int>(std::clamp<long long>(left, 0, 1000)));
    const int ch = getch();
    if (ch == 'q' || ch == 'Q') break;
    if (ch != ERR && ch != KEY_RESIZE) onKey(ch, sc, run, agent);
    if (Clock::now() >= next) {
      sc.apply(src.read(), true);
      next += interval;
      if (next < Clock::now()) next = Clock::now() + interval;
    } else if (ch == ERR) {
      continue;  // woke early with nothing to show
    }
    draw();
  }
  endwin();
  return kExitOk;
}

}  // namespace

void addTop(CLI::App& app, Run& run) {
  auto o = std::make_shared<TopOptions>();
  auto* cmd = app.add_subcommand("top", "Live screen of every GPU and its processes, like nvtop (q quits)");
  cmd->add_option("-d,--delay", o->delay, "Seconds between refreshes (default 1)");
  cmd->add_flag("--once", o->once, "Print one frame as plain text (no terminal control) and exit");
  cmd->add_option("--width", o->width, "Columns of the --once frame (default 120)");
  cmd->add_option("--agent", o->agent,
                  "Read an agent's HTTP API instead of the local NVML: http[s]://[USER:PASSWORD@]HOST:PORT "
                  "(or the credentials in $GPUWARDEN_AGENT_AUTH=USER:PASSWORD)");
  cmd->add_option("--cacert", o->cacert, "CA certificate (PEM) an https agent's certificate is checked against");
  cmd->footer(
      "Screen: one row per GPU with utilisation and memory bars, temperature, power/limit and SM/memory clocks;\n"
      "a history chart per GPU of the last minutes (kept in memory; c picks utilisation, memory, temperature,\n"
      "power, SM clock or memory clock); the processes on the GPUs (pid, user, GPU, type, SM %, memory, command).\n"
      "Keys: q quit, m/s sort processes by memory/SM %, c next chart, Up/Down select a process, k kill it\n"
      "(SIGTERM, after y to confirm; local NVML only, not with --agent, --simulate or --root).\n"
      "Examples:\n"
      "  gpuwarden top                                 # this node's GPUs, refreshed every second\n"
      "  gpuwarden top --simulate dgx-h100 -d 2        # the simulator, every 2 s\n"
      "  gpuwarden top --agent http://node1:9400       # another node through its agent\n"
      "  gpuwarden top --once --width 100              # one plain-text frame for a script\n"
      "Exit codes: 0 ok, 1 (--once) a GPU did not answer, 2 bad arguments or no terminal, 3 no NVML or the\n"
      "agent cannot be reached.");
  cmd->callback([&run, o]() {
    if (!(o->delay > 0)) {
      printError("-d must be a positive number of seconds");
      run.exit_code = kExitUsage;
      return;
    }
    if (o->width < top::kMinWidth) {
      printError(fmt::format("--width must be at least {}", top::kMinWidth));
      run.exit_code = kExitUsage;
      return;
    }
    const bool agent = !o->agent.empty();
    if (agent && (!run.ctx.options.simulate.empty() || !run.ctx.options.nvml_lib.empty())) {
      printError("--agent reads another node's agent; it does not go with --simulate or --nvml-lib");
      run.exit_code = kExitUsage;
      return;
    }
    const char* term = std::getenv("TERM");
    if (!o->once && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) || !term || !*term)) {
      printError("top needs a terminal; use --once for one plain-text frame");
      run.exit_code = kExitUsage;
      return;
    }
    std::unique_ptr<Source> src;
    Screen sc;
    sc.view.interval_s = o->delay;
    if (agent) {
      auto a = AgentSource::open(o->agent, o->cacert);
      if (!a) {
        printError(a.error());
        run.exit_code = kExitUsage;
        return;
      }
      sc.view.source = "agent " + (*a)->shown();
      src = std::move(a).value();
    } else {
      auto devices = run.ctx.devices(&run.exit_code);
      if (!devices) return;
      nvml::Session* s = devices->session;
      const unsigned count = devices->count;
      sc.view.source = run.ctx.options.simulate.empty() ? "local" : "simulated " + run.ctx.options.simulate;
      src = std::make_unique<LocalSource>(s, count, run.ctx.root());
    }
    Reading first = src->read();
    if (!first.error.empty()) {
      printError(first.error);
      run.exit_code = kExitNoAgent;
      return;
    }
    if (o->once) {
      sc.apply(std::move(first), false);
      for (const auto& line : top::renderFrame(sc.view, o->width, 0)) std::cout << line.text << "\n";
      std::cout.flush();
      bool all_up = true;
      for (const auto& g : sc.view.gpus) all_up = all_up && g.state == "up";
      run.exit_code = all_up ? kExitOk : kExitPartial;
      return;
    }
    sc.apply(std::move(first), true);
    run.exit_code = runCurses(*src, sc, o->delay, run, agent);
  });
}

}  // namespace gw::cli
