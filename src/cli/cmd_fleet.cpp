// gpuwarden fleet: the fleet's picture from the Prometheus that scrapes the agents (docs/fleet.md):
// nodes, GPUs, idle and unhealthy GPUs with their findings, each job's slowest GPU against its
// peers, the top consumers.
#include <cctype>
#include <iostream>

#include "cli/commands.h"
#include "cli/printable.h"
#include "cluster/fleet.h"
#include "health/rules.h"

namespace gw::cli {
namespace {

using json = nlohmann::json;
namespace fleet = cluster::fleet;

struct Opts {
  std::string prometheus, window = "5m", naming = "auto", host_label;
  std::size_t top = 10;
  double timeout_s = 10;
};

// A PromQL duration as the range of avg_over_time: digits and one unit, short.
bool promDuration(const std::string& s) {
  if (s.empty() || s.size() > 8 || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  const std::string unit = s.substr(i);
  return unit == "s" || unit == "m" || unit == "h" || unit == "d" || unit == "w";
}

}  // namespace

void addFleet(CLI::App& app, Run& run) {
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "fleet",
      "The fleet from the Prometheus that scrapes the agents: nodes, GPUs, idle and unhealthy GPUs with their "
      "findings, each job's slowest GPU against its peers, the top consumers");
  cmd->footer(
      "Exit codes: 0 all well, 1 a straggler or a warning finding, 2 a critical or fatal GPU (or bad\n"
      "arguments), 3 Prometheus could not answer, or holds no GPU utilisation from the agents.");
  cmd->add_option("--prometheus", o->prometheus, "Prometheus' address, e.g. http://prometheus:9090")->required();
  cmd->add_option("--window", o->window, "Time the utilisation and power are averaged over (PromQL, default 5m)");
  cmd->add_option("--naming", o->naming, "The agents' metrics naming: auto (default), dcgm or native")
      ->check(CLI::IsMember({"auto", "dcgm", "native"}));
  cmd->add_option("--host-label", o->host_label,
                  "The label naming the node (default Hostname with dcgm naming, hostname with native; the agents' "
                  "metrics.host_label)");
  cmd->add_option("--top", o->top, "How many consumers to list (default 10)")->check(CLI::Range(1, 1000));
  cmd->add_option("--timeout", o->timeout_s, "Seconds to wait for each answer (default 10)")
      ->check(CLI::Range(0.1, 300.0));
  cmd->callback([&run, o]() {
    if (!promDuration(o->window)) {
      printError("--window '" + o->window + "': expected a PromQL duration such as 30s, 5m or 1h");
      run.exit_code = kExitUsage;
      return;
    }
    const auto deadline = std::chrono::milliseconds(static_cast<long long>(o->timeout_s * 1000));
    auto ask = [&](const std::string& q) { return fleet::query(o->prometheus, q, deadline); };
    fleet::Options opt;
    opt.window = o->window;
    opt.top = o->top;
    const health::RuleConfig rules;  // the node's own thresholds: idle and straggler mean the same here
    opt.idle_util_pct = rules.idle_util;
    opt.straggler_util_pct = rules.straggler_idle_util;
    opt.straggler_peer_util_pct = rules.straggler_peer_util;
    if (o->naming == "auto") {
      auto dcgm = ask("count(DCGM_FI_DEV_GPU_UTIL)");
      if (!dcgm) {
        printError(dcgm.error());
        run.exit_code = 3;
        return;
      }
      if (dcgm->empty()) {
        auto native = ask("count(gpuwarden_gpu_utilization_ratio)");
        if (!native) {
          printError(native.error());
          run.exit_code = 3;
          return;
        }
        if (native->empty()) {
          printError("Prometheus at " + o->prometheus +
                     " holds no GPU utilisation (neither DCGM_FI_DEV_GPU_UTIL nor gpuwarden_gpu_utilization_ratio): "
                     "does it scrape the agents?");
          run.exit_code = 3;
          return;
        }
        opt.naming.dcgm = false;
      }
    } else {
      opt.naming.dcgm = o->naming == "dcgm";
    }
    opt.naming.host_label = !o->host_label.empty() ? o->host_label : opt.naming.dcgm ? "Hostname" : "hostname";
    fleet::Inputs in;
    for (auto [query, into] :
         {std::pair<std::string, std::vector<fleet::Sample>*>{"gpuwarden_gpu_health == 1", &in.health},
          {"gpuwarden_gpu_finding == 1", &in.findings},
          {opt.naming.util_query(o->window), &in.util},
          {opt.naming.power_query(o->window), &in.power}}) {
      auto r = ask(query);
      if (!r) {
        printError(r.error());
        run.exit_code = 3;
        return;
      }
      *into = std::move(r).value();
    }
    const json report = fleet::buildReport(in, opt);
    if (run.ctx.options.json)
      std::cout << report.dump(2) << "\n";
    else
      std::cout << printable(fleet::renderText(report), true);  // node, job and label names from Prometheus
    int code = 0;
    for (const auto& j : report["jobs"])
      if (!j["slowest"].is_null() && j["slowest"]["straggler"].get<bool>()) code = 1;
    for (const auto& g : report["unhealthy"]) {
      const std::string st = g["state"].get<std::string>();
      if (st == "critical" || st == "fatal")
        code = 2;
      else if (code == 0)
        code = 1;
    }
    run.exit_code = code;
  });
}

}  // namespace gw::cli
