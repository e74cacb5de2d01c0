// gpuwarden slurm gres|healthcheck|prolog|epilog (docs/slurm.md): the node's gres.conf, Slurm's
// HealthCheckProgram (drains on a critical finding, resumes only its own drains), and the
// Prolog= / Epilog= that tell the agent which job runs on which GPU.
//
// Slurm runs Prolog=, Epilog= and HealthCheckProgram= without arguments, so the binary also
// answers to the names gpuwarden-slurm-prolog, gpuwarden-slurm-epilog and
// gpuwarden-slurm-healthcheck (links to it; see main.cpp), and these commands take their data
// folder from $GPUWARDEN_DATA_DIR when --data-dir is not given.
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cli/json_read.h"
#include "cluster/slurm.h"
#include "node/data_dir.h"
#include "nvml/inventory.h"

namespace gw::cli {
namespace {

using json = nlohmann::json;
namespace slurm = cluster::slurm;

// The first critical finding of a verdict, as one line: "GPU 3 xid_fatal: ...".
std::string firstCritical(const json& r) {
  auto line = [](const json& f, const std::string& where) {
    return where + jr::str(f, "rule") + ": " + jr::str(f, "summary");
  };
  for (const auto& g : jr::array(r, "gpus"))
    for (const auto& f : jr::array(g, "findings"))
      if (f.is_object() && (jr::str(f, "severity") == "critical" || jr::str(f, "severity") == "fatal"))
        return line(f, "GPU " + std::to_string(jr::integer(g, "index")) + " ");
  for (const auto& f : jr::array(r, "node_findings"))
    if (f.is_object() && (jr::str(f, "severity") == "critical" || jr::str(f, "severity") == "fatal"))
      return line(f, "");
  return jr::str(r, "status", "critical");
}

void addGres(CLI::App& slurm_cmd, Run& run) {
  auto node = std::make_shared<std::string>();
  auto* cmd = slurm_cmd.add_subcommand(
      "gres",
      "Print gres.conf for this node (one line per GPU: Type from the model, File=/dev/nvidiaN, Cores= its "
      "NUMA-local cores; MIG instances with their capability devices) and the slurm.conf Gres= part");
  cmd->add_option("--node", *node, "The node's name in slurm.conf (default: the short host name)");
  cmd->footer(kInventoryExitCodes);
  cmd->callback([&run, node]() {
    auto* s = run.ctx.nvml();
    if (!s) {
      run.exit_code = run.ctx.failureExit();
      return;
    }
    auto inv = nvml::readInventory(*s, kCallDeadline);
    if (!inv) {
      printError(inv.error());
      run.exit_code = kExitNoDriver;
      return;
    }
    slurm::GresInput in;
    in.node = slurm::nodeName(*node);
    in.cores = slurm::logicalCores(run.ctx.root());
    in.mig_minors = slurm::migMinors(run.ctx.root());
    bool partial = false;
    for (const auto& g : inv->gpus) {
      if (g.state != "ok") partial = true;
      slurm::GresGpu gg;
      gg.index = g.index;
      gg.model = g.name;
      gg.minor = g.minor_number ? static_cast<long>(*g.minor_number) : -1;
      gg.cpus = g.cpus;
      gg.mig = g.mig_enabled.value_or(false);
      for (const auto& m : g.mig_devices) gg.slices.push_back({m.profile, m.gpu_instance_id, m.compute_instance_id});
      in.gpus.push_back(std::move(gg));
    }
    const std::string text = slurm::renderGresConf(in);
    if (run.ctx.options.json)
      std::cout << jr::dump(json{{"node", in.node}, {"gres_conf", text}}) << "\n";
    else
      std::cout << text;
    run.exit_code = partial ? kExitPartial : kExitOk;
  });
}

void addHealthcheck(CLI::App& slurm_cmd, Run& run) {
  struct Opts {
    std::string data_dir, node, scontrol = "scontrol", config;
    bool standalone = false, dry_run = false;
    double seconds = kStandaloneCheckSeconds;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = slurm_cmd.add_subcommand(
      "healthcheck",
      "Slurm's HealthCheckProgram: judge the node (through the agent, else standalone); drain it on a critical "
      "finding with reason \"gpuwarden: ...\"; resume it when healthy again, but only if gpuwarden drained it");
  cmd->footer(
      "Exit codes: 0 healthy, 1 warning, 2 critical (drained), 3 unknown, or scontrol could not read or\n"
      "change the node (nothing changed).");
  cmd->add_option("--data-dir", o->data_dir, "The agent's data directory (default " + node::defaultDataDirHelp() + ")");
  cmd->add_option("--node", o->node, "The node's name in Slurm (default $SLURMD_NODENAME, else the short host name)");
  cmd->add_option("--scontrol", o->scontrol, "The scontrol program (default: scontrol from PATH)");
  cmd->add_flag("--standalone", o->standalone, "Judge here (sample NVML for --seconds) instead of asking the agent");
  cmd->add_option("--seconds", o->seconds,
                  fmt::format("Standalone sampling time (default {:g})", kStandaloneCheckSeconds))
      ->check(CLI::Range(0.5, 60.0));
  cmd->add_option("--config", o->config, "Standalone: the agent configuration whose health: section judges");
  cmd->add_flag("--dry-run", o->dry_run, "Say what would be done; change nothing");
  cmd->callback([&run, o]() {
    installStopHandlers();
    const std::string dir = o->data_dir.empty() ? node::defaultDataDir() : o->data_dir;
    const bool local = o->standalone || !run.ctx.options.simulate.empty() || !run.ctx.options.nvml_lib.empty();
    const NodeHealth h = nodeHealth(run, dir, local, o->seconds, o->config);
    const int verdict = h.exitCode();
    const std::string name = slurm::nodeName(o->node);
    slurm::Scontrol sc(platform::defaultProcessRunner(), o->scontrol);
    json out{{"node", name}, {"health", verdict}, {"source", h.source}};
    if (!h.unknown.empty()) out["unknown"] = h.unknown;
    auto state = sc.showNode(name);
    if (!state) {
      // Without the node's state no decision is safe: nothing is changed.
      out["error"] = state.error();
      out["action"] = "none";
      if (run.ctx.options.json)
        std::cout << jr::dump(out) << "\n";
      else
        printError(state.error() + "; nothing changed");
      run.exit_code = 3;
      return;
    }
    const std::string finding = verdict == 2 ? firstCritical(h.report) : "";
    const slurm::HealthDecision d = slurm::decideHealthAction(verdict, finding, *state);
    out["state"] = state->state;
    out["reason"] = state->reason;
    out["action"] = d.action == slurm::HealthAction::Drain    ? "drain"
                    : d.action == slurm::HealthAction::Resume ? "resume"
                                                              : "none";
    out["why"] = d.why;
    Status st = Status::Ok();
    if (!o->dry_run) {
      if (d.action == slurm::HealthAction::Drain) st = sc.drain(name, d.reason);
      if (d.action == slurm::HealthAction::Resume) st = sc.resume(name);
    }
    if (!st) out["error"] = st.message();
    if (run.ctx.options.json) {
      out["dry_run"] = o->dry_run;
      std::cout << jr::dump(out) << "\n";
    } else {
      std::cout << "node " << name << ": " << d.why
                << (o->dry_run && d.action != slurm::HealthAction::None ? " (dry run)" : "") << "  ["
                << (h.source.empty() ? "no verdict" : h.source) << "]\n";
      if (!h.unknown.empty()) std::cout << "  no verdict: " << h.unknown << "\n";
      if (!st) printError(st.message());
    }
    run.exit_code = st ? verdict : 3;
  });
}

// What a prolog / epilog prints goes to slurmd's log; it must stay short and name the job.
void say(const std::string& job, const std::string& text) {
  std::cerr << "gpuwarden: job " << job << ": " << text << "\n";
}

void addProlog(CLI::App& slurm_cmd, Run& run) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = slurm_cmd.add_subcommand(
      "prolog",
      "Slurm's Prolog=: tell the agent that $SLURM_JOB_ID starts on $SLURM_JOB_GPUS (or $CUDA_VISIBLE_DEVICES); "
      "refuse the job (exit 1: Slurm drains the node and requeues the job) when one of its GPUs is critical. "
      "Needs no NVML; with no agent running it lets the job through");
  cmd->footer(
      "Exit codes: 0 the job may start (also when no agent answers: monitoring being down must not stop the\n"
      "cluster), 1 refused: one of its GPUs is critical or lost, or which GPUs it holds cannot be told\n"
      "(Slurm drains the node and requeues the job), 2 no job in the environment (SLURM_JOB_ID, or its\n"
      "GPU list, is missing or malformed).");
  cmd->add_option("--data-dir", *dir, "The agent's data directory (default " + node::defaultDataDirHelp() + ")");
  cmd->callback([&run, dir]() {
    auto env = slurm::jobFromEnv([](const char* n) { return std::getenv(n); });
    if (!env) {
      printError(env.error());
      run.exit_code = kExitUsage;
      return;
    }
    if (env->gpus.empty()) return;  // a job without GPUs: nothing to watch
    json args{{"job_id", env->job_id},
              {"gpus", env->gpus},
              {"numbering", "slurm"},
              {"source", "slurm"},
              {"refuse_unhealthy", true}};
    if (!env->user.empty()) args["user"] = env->user;
    if (env->uid >= 0) args["uid"] = env->uid;
    AskLimits limits;
    limits.deadline = std::chrono::milliseconds(2000);
    const std::string d = dir->empty() ? node::defaultDataDir() : *dir;
    auto a = askAgent(d, "job.start", args, limits);
    if (!a.reached || !a.error.empty()) {
      // Monitoring being down must not stop the cluster: the job runs, unaccounted.
      say(env->job_id, "not recorded: " + (a.error.empty() ? "no agent answers for " + d : a.error));
      return;
    }
    if (!a.ok) {
      if (a.code == "gpu_unhealthy" || a.code == "gpu_unmapped") {
        say(env->job_id, "refused: " + a.refusal);
        run.exit_code = 1;
        return;
      }
      say(env->job_id, "not recorded: " + a.refusal);
      return;
    }
    if (run.ctx.options.json) std::cout << jr::dump(a.result) << "\n";
  });
}

void addEpilog(CLI::App& slurm_cmd, Run& run) {
  struct Opts {
    std::string data_dir;
    bool kill = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = slurm_cmd.add_subcommand(
      "epilog",
      "Slurm's Epilog=: tell the agent that $SLURM_JOB_ID ended, and report processes still holding its GPUs; "
      "kill them with --kill or jobs.epilog_kill_leftovers (exit 1, so Slurm drains the node, when some survive)");
  cmd->add_option("--data-dir", o->data_dir, "The agent's data directory (default " + node::defaultDataDirHelp() + ")");
  cmd->add_flag("--kill", o->kill, "Kill leftover processes (SIGTERM, then SIGKILL after 2 s)");
  cmd->footer(
      "Exit codes: 0 recorded, or nothing to do (also when no agent answers), 1 leftover processes survived\n"
      "SIGKILL (Slurm drains the node), 2 no job in the environment (SLURM_JOB_ID missing or malformed).");
  cmd->callback([&run, o]() {
    auto env = slurm::jobFromEnv([](const char* n) { return std::getenv(n); });
    if (!env) {
      printError(env.error());
      run.exit_code = kExitUsage;
      return;
    }
    if (env->gpus.empty()) return;
    AskLimits limits;
    limits.deadline = std::chrono::milliseconds(4000);  // the agent reads each GPU's processes
    const std::string d = o->data_dir.empty() ? node::defaultDataDir() : o->data_dir;
    auto a = askAgent(d, "job.end", json{{"job_id", env->job_id}, {"leftovers", true}}, limits);
    if (!a.reached || !a.error.empty()) {
      say(env->job_id, "end not recorded: " + (a.error.empty() ? "no agent answers for " + d : a.error));
      return;
    }
    if (!a.ok) {
      if (a.code != "not_found") say(env->job_id, "end not recorded: " + a.refusal);
      return;  // not running: a prolog that did not record it, or an epilog run twice
    }
    if (run.ctx.options.json) std::cout << jr::dump(a.result) << "\n";
    const json& left = jr::object(a.result, "leftovers");
    if (!jr::str(left, "error").empty()) say(env->job_id, "leftover processes not checked: " + jr::str(left, "error"));
    const bool simulated = jr::boolean(left, "simulated");
    const bool kill = o->kill || jr::boolean(a.result, "kill_leftovers");
    std::vector<int> alive;
    for (const auto& p : jr::array(left, "processes")) {
      const auto pid = static_cast<int>(jr::integer(p, "pid"));
      say(env->job_id, "process " + std::to_string(pid) + " still holds GPU " +
                           std::to_string(jr::integer(p, "index")) + " (" + jr::str(p, "uuid") + ", " +
                           std::to_string(jr::integer(p, "used_bytes") >> 20) + " MiB)");
      if (pid > 1) alive.push_back(pid);
    }
    if (alive.empty() || !kill) return;
    if (simulated) {
      say(env->job_id, "leftover processes not killed: the GPUs are simulated, their pids are not this host's");
      return;
    }
    const auto outcome = slurm::killLeftovers(alive, std::chrono::seconds(2));
    for (int p : outcome.killed) say(env->job_id, "process " + std::to_string(p) + " killed (SIGKILL)");
    if (!outcome.survivors.empty()) {
      say(env->job_id,
          std::to_string(outcome.survivors.size()) + " leftover process(es) survived SIGKILL: the GPU is not clean");
      run.exit_code = 1;
    }
  });
}

}  // namespace

void addSlurm(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("slurm", "Slurm integration: gres.conf, HealthCheckProgram, Prolog and Epilog");
  cmd->require_subcommand(1);
  addGres(*cmd, run);
  addHealthcheck(*cmd, run);
  addProlog(*cmd, run);
  addEpilog(*cmd, run);
}

}  // namespace gw::cli
