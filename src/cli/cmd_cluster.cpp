// gpuwarden cluster diag: `gpuwarden diag` on every node as one Slurm job step (srun, one task per
// node, each given all of its node's GPUs), the JSON reports gathered from srun's labelled output,
// one table for the fleet, and with --drain the nodes that failed drained (docs/slurm.md).
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/printable.h"
#include "cli/json_read.h"
#include "cluster/cluster_diag.h"
#include "cluster/slurm.h"
#include "platform/process_runner.h"

namespace gw::cli {
namespace {

using json = nlohmann::json;

struct Opts {
  int level = 1;
  std::string nodes, partition, srun = "srun", sinfo = "sinfo", scontrol = "scontrol", command = "gpuwarden";
  bool drain = false;
  int timeout_min = 0;  // 0: by level
};

// The nodes to test and their GPU counts: those of --nodes (or of the partition) that can run a
// job now. A named node that cannot (drained, down) gets a row saying so: srun would wait for it.
Result<std::map<std::string, unsigned>> nodesToTest(const Opts& o, platform::ProcessRunner& runner,
                                                    std::vector<cluster::NodeDiag>& untestable) {
  std::vector<std::string> argv{o.sinfo, "-h", "-N", "-o", "%N|%G|%t"};
  if (!o.partition.empty()) argv.insert(argv.end(), {"-p", o.partition});
  if (!o.nodes.empty()) argv.insert(argv.end(), {"-n", o.nodes});
  platform::RunOptions ro;
  ro.timeout = std::chrono::seconds(30);
  auto r = runner.run(argv, ro);
  if (r.not_found) return Status::Error(o.sinfo + " not found (is slurm-client installed?)");
  if (r.exit_code != 0) return Status::Error("sinfo failed: " + r.err.substr(0, 300));
  auto listed = cluster::nodesFromSinfo(r.out, !o.nodes.empty());
  std::map<std::string, unsigned> out = std::move(listed.usable);
  untestable.insert(untestable.end(), listed.untestable.begin(), listed.untestable.end());
  if (out.empty() && untestable.empty())
    return Status::Error("sinfo lists no node to test" + (o.nodes.empty() ? "" : " among " + o.nodes));
  return out;
}

}  // namespace

void addCluster(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("cluster", "Cluster-wide operations through the scheduler (Slurm)");
  cmd->require_subcommand(1);
  auto o = std::make_shared<Opts>();
  auto* d = cmd->add_subcommand(
      "diag",
      "Run `gpuwarden diag -r N` on every node (or --nodes) as one Slurm job step, one task per node with all of "
      "its GPUs; print one table for the fleet; --drain drains the nodes that failed");
  d->footer(
      "Exit codes: 0 every node passed, 1 a node failed, 2 no node to test, or sinfo or srun could not run,\n"
      "4 a node incomplete or without a report.");
  d->add_option("-r,--level", o->level, "Diagnostic level 1-3 (default 1)")->check(CLI::Range(1, 3));
  d->add_option("--nodes", o->nodes, "Slurm node list (e.g. gpu[01-16]); default every usable node");
  d->add_option("-p,--partition", o->partition, "Slurm partition");
  d->add_flag("--drain", o->drain, "Drain each node that failed (reason \"gpuwarden: diag -r N failed: ...\")");
  d->add_option("--command", o->command, "The gpuwarden on the nodes (default: gpuwarden from their PATH)");
  d->add_option("--srun", o->srun, "The srun program (default: srun from PATH)");
  d->add_option("--sinfo", o->sinfo, "The sinfo program (default: sinfo from PATH)");
  d->add_option("--scontrol", o->scontrol, "The scontrol program (default: scontrol from PATH)");
  d->add_option("--timeout", o->timeout_min, "Minutes before the step is cancelled (default by level: 10, 30, 120)")
      ->check(CLI::Range(1, 1440));
  d->callback([&run, o]() {
    auto& runner = platform::defaultProcessRunner();
    std::vector<cluster::NodeDiag> rows;
    auto nodes = nodesToTest(*o, runner, rows);
    if (!nodes) {
      printError(nodes.error());
      run.exit_code = 2;
      return;
    }
    // One step per GPU count: srun gives every task the same --gres, and a node must get all of
    // its GPUs (with ConstrainDevices a task sees only what it was given).
    std::map<unsigned, std::vector<std::string>> groups;
    for (const auto& [name, gpus] : *nodes) groups[gpus].push_back(name);
    const int minutes = o->timeout_min ? o->timeout_min : (o->level == 1 ? 10 : o->level == 2 ? 30 : 120);
    std::string srun_error;
    for (const auto& [gpus, names] : groups) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
      std::vector<std::string> argv{o->srun,
                                    "--label",
                                    "--job-name=gpuwarden-diag",
                                    "--exclusive",
                                    "--nodelist=" + list,
                                    "--nodes=" + std::to_string(names.size()),
                                    "--ntasks-per-node=1",
                                    "--time=" + std::to_string(minutes)};
      if (gpus > 0) argv.push_back("--gres=gpu:" + std::to_string(gpus));
      if (!o->partition.empty()) argv.push_back("--partition=" + o->partition);
      argv.insert(argv.end(), {o->command, "diag", "-r", std::to_string(o->level), "--json"});
      if (!run.ctx.options.simulate.empty()) argv.insert(argv.end(), {"--simulate", run.ctx.options.simulate});
      platform::RunOptions ro;
      ro.timeout = std::chrono::minutes(minutes + 2);
      ro.max_output = 64 << 20;
      auto r = runner.run(argv, ro);
      if (r.not_found) {
        printError(o->srun + " not found (is slurm-client installed?)");
        run.exit_code = 2;
        return;
      }
      auto tasks = cluster::splitLabelledOutput(r.out);
      // Task k runs on the k-th node of the step's node list (sorted, as sinfo gave them); the report
      // names its node too.
      for (std::size_t k = 0; k < names.size(); ++k) {
        auto it = tasks.find(static_cast<int>(k));
        cluster::NodeDiag row = cluster::readNodeReport(it == tasks.end() ? std::string() : it->second, names[k]);
        if (it == tasks.end())
          row.error = "srun gave no output for this node" + (r.err.empty() ? "" : ": " + r.err.substr(0, 200));
        rows.push_back(std::move(row));
      }
      if (r.exit_code != 0 && r.exit_code != 1 && r.exit_code != 4 && tasks.size() <= 1)
        srun_error = "srun failed (exit " + std::to_string(r.exit_code) + "): " + r.err.substr(0, 300);
    }
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
    json doc = cluster::fleetJson(rows, o->level);
    json drained = json::array();
    if (o->drain) {
      cluster::slurm::Scontrol sc(runner, o->scontrol);
      for (const auto& row : rows) {
        if (row.overall != "fail") continue;
        const std::string reason = cluster::slurm::cleanReason(
            cluster::slurm::kDrainReasonPrefix + ("diag -r " + std::to_string(o->level) + " failed: ") +
            (row.failed.empty() ? std::string("see its report") : row.failed.front()));
        Status st = sc.drain(row.node, reason);
        drained.push_back(
            {{"node", row.node}, {"reason", reason}, {"ok", st.ok()}, {"error", st.ok() ? "" : st.message()}});
      }
      doc["drained"] = drained;
    }
    if (!srun_error.empty()) doc["error"] = srun_error;
    if (run.ctx.options.json) {
      std::cout << jr::dump(doc) << "\n";
    } else {
      std::cout << printable(cluster::fleetTable(rows), true);  // each node's report, as srun brought it
      for (const auto& n : drained)
        std::cout << (n["ok"].get<bool>() ? "drained " : "could not drain ")
                  << printable(n["node"].get<std::string>() + ": " +
                               (n["ok"].get<bool>() ? n["reason"].get<std::string>() : n["error"].get<std::string>()))
                  << "\n";
      if (!srun_error.empty()) printError(srun_error);
    }
    run.exit_code = srun_error.empty() ? doc["exit_code"].get<int>() : 2;
  });
}

}  // namespace gw::cli
