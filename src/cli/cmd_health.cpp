// gpuwarden health: the node's health verdict, from the agent that owns the data folder (over its
// control socket, trusted only as agent_link.h says), or from a short standalone run of the same
// monitor the agent runs. Exit 0 healthy, 1 warning, 2 critical, 3 unknown: a
// Nagios check or a scheduler's health program. See docs/cli.md and docs/health.md.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cli/json_read.h"
#include "node/control_protocol.h"
#include "node/monitor.h"
#include "nvml/nvml.h"
#include "server/config.h"

namespace gw::cli {

namespace {

using json = nlohmann::json;

using jr::integer;
using jr::str;

void printFinding(const json& f, const std::string& indent) {
  if (!f.is_object()) return;
  std::cout << indent << "[" << str(f, "severity") << "] " << str(f, "rule");
  if (integer(f, "xid") != 0) std::cout << " (Xid " << integer(f, "xid") << ")";
  std::cout << ": " << str(f, "summary") << "\n";
  if (!str(f, "evidence").empty()) std::cout << indent << "    evidence: " << str(f, "evidence") << "\n";
  if (!str(f, "action").empty()) std::cout << indent << "    action:   " << str(f, "action") << "\n";
}

// The verdict document (node::Monitor::healthReport's shape), printed; returns its exit code. A
// document from elsewhere is read defensively: a wrong type is "unknown", never a crash.
int printReport(const json& r, bool as_json, const std::string& source) {
  std::int64_t code = integer(r, "exit_code", 3);
  if (code < 0 || code > 3) code = 3;
  if (as_json) {
    json j = r;
    j["source"] = source;
    std::cout << jr::dump(j) << "\n";
    return static_cast<int>(code);
  }
  for (const auto& g : jr::array(r, "gpus")) {
    if (!g.is_object()) continue;
    // A GPU NVML cannot read (stalled, lost, down) says so: its state alone would be a bare "unknown".
    const std::string reading = str(g, "gpu_state");
    std::cout << "GPU " << integer(g, "index") << "  " << str(g, "uuid") << "  " << str(g, "name") << "  "
              << str(g, "state") << (reading.empty() || reading == "up" ? "" : "  (NVML: " + reading + ")") << "\n";
    for (const auto& f : jr::array(g, "findings")) printFinding(f, "  ");
  }
  for (const auto& f : jr::array(r, "node_findings")) printFinding(f, "node ");
  const auto open = jr::array(r, "open_incidents");
  if (!open.empty()) {
    std::cout << open.size() << " open incident(s):\n";
    for (const auto& i : open)
      if (i.is_object()) {
        const std::int64_t gpu = integer(i, "gpu_index", -1);  // -1: about the node (gpu_count, driver_mismatch)
        std::cout << "  #" << integer(i, "id") << " [" << str(i, "severity") << "] " << str(i, "rule") << " "
                  << (gpu < 0 ? std::string("node") : "GPU " + std::to_string(gpu)) << ": " << str(i, "summary")
                  << " -> " << str(i, "action") << "\n";
      }
  }
  const std::string status = str(r, "status");
  std::cout << "status: " << (status.empty() ? "unknown" : status);
  if (!str(r, "reason").empty()) std::cout << " (" << str(r, "reason") << ")";
  std::cout << "  [" << source << "]\n";
  return static_cast<int>(code);
}

int unknownExit(const std::string& reason, bool as_json) {
  if (as_json) {
    std::cout << json{{"status", "unknown"}, {"exit_code", 3}, {"reason", reason}, {"gpus", json::array()}}.dump(2)
              << "\n";
  } else {
    std::cout << "status: unknown (" << reason << ")\n";
  }
  return 3;
}

}  // namespace

// The monitor the agent runs, without a data folder, for `seconds`, judging with the `health:`
// section of the agent's configuration file when one is given.
static Result<json> standaloneHealthReport(Run& run, double seconds, const std::string& config_path) {
  health::RuleConfig rules;
  if (!config_path.empty()) {
    auto cfg = server::loadConfig(config_path);
    if (!cfg) return cfg.status();
    rules = cfg->health;
  }
  // The GPU count and the fabric registration are exact facts, held in the agent only to ride out a
  // driver reload or a boot. A check shorter than the hold could never report a GPU missing after a
  // reboot, or nvidia-fabricmanager not running: the cases it is for.
  if (static_cast<double>(rules.gpu_count_hold_ms) > seconds * 1000) rules.gpu_count_hold_ms = 0;
  if (static_cast<double>(rules.fabric_hold_ms) > seconds * 1000) rules.fabric_hold_ms = 0;
  auto target = resolveNvmlTarget(run.ctx.options);
  if (!target) return target.status();
  if (!target->scenario.empty()) ::setenv("GPUWARDEN_SIM_SCENARIO", target->scenario.c_str(), 1);
  const std::string library = target->library;
  node::MonitorOptions mo;
  mo.opener = [library]() { return nvml::Session::open({library}); };
  mo.sampler.fast_interval = std::chrono::milliseconds(500);
  mo.sampler.slow_interval = std::chrono::milliseconds(1000);
  mo.sampler.fields = health::RuleEngine::requiredFields();
  mo.root = run.ctx.options.root;
  mo.interval = std::chrono::milliseconds(500);
  mo.process_interval = std::chrono::hours(1);  // once, at the first evaluation
  mo.nvml_retry = std::chrono::hours(1);        // a check reports what it finds, it does not wait
  mo.log = false;
  mo.rules = std::move(rules);
  auto m = node::Monitor::create(mo);
  if (!m) return m.status();
  (*m)->start();
  // Without NVML (no library, a driver mismatch, a GPU gone) waiting adds nothing: NVML is not tried
  // again within a check, and the findings possible without it need no time. A node with no driver
  // is told so at once, not after --seconds.
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  while (std::chrono::steady_clock::now() < end && !stopRequested() && (*m)->sampler())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*m)->evaluateNow(false);
  json r = (*m)->healthReport();
  r.erase("open_incidents");  // standalone keeps none
  const std::string error = (*m)->samplerError();
  if (!(*m)->sampler() && r["node_findings"].empty()) return Status::Error(error);
  (*m)->stop();
  return r;
}

NodeHealth nodeHealth(Run& run, const std::string& data_dir, bool standalone, double seconds,
                      const std::string& config_path) {
  NodeHealth h;
  if (!standalone) {
    auto a = askAgent(data_dir, "health");
    if (a.reached) {
      // An agent that cannot be asked, or whose answer is not a verdict, is "unknown": never a
      // fallback to a verdict of our own, never "healthy".
      if (!a.ok)
        h.unknown = a.error.empty() ? "the agent refused: " + a.refusal : a.error;
      else
        h.report = std::move(a.result);
      h.source = "agent " + data_dir;
      return h;
    }
  }
  const auto started = std::chrono::steady_clock::now();
  auto r = standaloneHealthReport(run, seconds, config_path);
  if (!r) {
    h.unknown = r.error();
    return h;
  }
  h.report = std::move(r).value();
  // The time it watched, which is shorter than --seconds when NVML could not be read.
  const std::chrono::duration<double> watched = std::chrono::steady_clock::now() - started;
  char secs[16];
  std::snprintf(secs, sizeof secs, "%.1f", std::min(watched.count(), seconds));
  h.source = std::string("standalone, ") + secs + " s";
  return h;
}

int NodeHealth::exitCode() const {
  if (!unknown.empty()) return 3;
  std::int64_t code = integer(report, "exit_code", 3);
  return code < 0 || code > 3 ? 3 : static_cast<int>(code);
}

void addHealth(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand(
      "health",
      "Health verdict: per-GPU state and findings with actions; exit 0 healthy, 1 warning, 2 critical, 3 unknown");
  struct Opts {
    std::string data_dir = node::defaultDataDir();
    bool standalone = false;
    double seconds = kStandaloneCheckSeconds;
    std::string config;
  };
  cmd->footer(
      "Exit codes: 0 healthy, 1 warning, 2 critical or fatal, 3 unknown (NVML cannot be opened, or the agent could "
      "not be asked: the reason is printed). A driver/library version mismatch is a critical driver_mismatch "
      "finding (2), not unknown.");
  auto o = std::make_shared<Opts>();
  cmd->add_option("--data-dir", o->data_dir,
                  std::string("Ask the agent that owns this data folder, over its control socket (default ") +
                      node::defaultDataDirHelp() + ")");
  cmd->add_flag("--standalone", o->standalone, "Do not ask an agent: sample NVML here for --seconds and judge");
  cmd->add_option("--seconds", o->seconds,
                  fmt::format("Standalone sampling time in seconds (default {:g})", kStandaloneCheckSeconds))
      ->check(CLI::Range(0.5, 600.0));
  cmd->add_option("--config", o->config,
                  "Standalone: judge with the health: section of this agent configuration file (thresholds, "
                  "disabled rules, expected_gpus, workload classes)");
  cmd->callback([&run, o]() {
    installStopHandlers();
    const bool as_json = run.ctx.options.json;
    // An explicit --simulate or --nvml-lib names the NVML to judge: always standalone.
    const bool local = o->standalone || !run.ctx.options.simulate.empty() || !run.ctx.options.nvml_lib.empty();
    if (!local && !o->config.empty()) {
      // The agent judges with its own file; a second one here would be silently ignored.
      printError("--config is for a standalone check (--standalone, --simulate or --nvml-lib)");
      run.exit_code = 3;
      return;
    }
    if (!o->config.empty())
      if (auto cfg = server::loadConfig(o->config); !cfg) {
        printError(cfg.error());  // a bad file is the caller's mistake: said on stderr, as everywhere
        run.exit_code = 3;
        return;
      }
    const NodeHealth h = nodeHealth(run, o->data_dir, local, o->seconds, o->config);
    run.exit_code = h.unknown.empty() ? printReport(h.report, as_json, h.source) : unknownExit(h.unknown, as_json);
  });
}

}  // namespace gw::cli
