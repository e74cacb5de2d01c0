// gpuwarden history: a field's past values, asked from the agent that owns the data folder over
// its control socket (the `history` operation: the query of GET /api/v1/history, bounded to
// server::kMaxHistoryPoints points).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cli/json_read.h"
#include "platform/clock.h"

namespace gw::cli {

namespace {

using json = nlohmann::json;

// 11000 points of [ms, value] are under half a megabyte; the rest of the document is small.
constexpr std::size_t kMaxHistoryReplyBytes = 4 * 1024 * 1024;
// A long range is read from SQLite by the agent: more time than a status question.
constexpr std::chrono::milliseconds kHistoryDeadline{15000};

}  // namespace

void addHistory(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand(
      "history", "Print a field's history for one GPU, from the agent that owns --data-dir (gpuwarden serve)");
  struct Opts {
    std::string gpu, field, since = "1h", until, step, format = "csv", agg;
    std::string data_dir = node::defaultDataDir();
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--gpu", o->gpu, "GPU index or UUID")->required();
  cmd->add_option("--field", o->field, "Field: catalog key, nvidia-smi name or DCGM name (see `gpuwarden fields`)")
      ->required();
  cmd->add_option("--since", o->since, "Start: RFC3339, unix seconds, or a duration ago (1h, 30m); default 1h");
  cmd->add_option("--until", o->until, "End (same forms); default now");
  cmd->add_option("--step", o->step, "One point per step (e.g. 1m), aggregated; default every sample");
  cmd->add_option("--agg", o->agg, "Aggregation per step: avg (default), min, max, sum, count");
  cmd->add_option("--format", o->format, "csv or json")->check(CLI::IsMember({"csv", "json"}));
  cmd->add_option("--data-dir", o->data_dir,
                  std::string("Ask the agent that owns this data folder, over its control socket (default ") +
                      node::defaultDataDirHelp() + ")");
  cmd->footer(
      "Exit codes: 0 printed, 1 the agent failed to read its history, 2 a bad request (unknown field or GPU,\n"
      "bad time or step, more than 11000 points), 3 no agent owns the data folder or it could not be asked.");
  cmd->callback([&run, o]() {
    json args{{"gpu", o->gpu}, {"field", o->field}, {"since", o->since}};
    if (!o->until.empty()) args["until"] = o->until;
    if (!o->step.empty()) args["step"] = o->step;
    if (!o->agg.empty()) args["agg"] = o->agg;
    AskLimits limits;
    limits.deadline = kHistoryDeadline;
    limits.max_reply_bytes = kMaxHistoryReplyBytes;
    auto a = askAgent(o->data_dir, "history", args, limits);
    if (!agentAnswered(a, o->data_dir, "start one with `gpuwarden serve`, or give --data-dir")) {
      run.exit_code = kExitNoAgent;
      return;
    }
    if (!a.ok) {
      printError(a.refusal + (a.param.empty() ? "" : " (" + a.param + ")"));
      run.exit_code = a.code == "bad_request" || a.code == "not_found" ? kExitUsage : 1;
      return;
    }
    if (o->format == "json") {
      std::cout << jr::dump(a.result) << "\n";
      return;
    }
    const json& field = jr::object(a.result, "field");
    const std::string unit = jr::str(field, "unit");
    std::cout << "timestamp," << jr::str(field, "key", o->field) << (unit.empty() ? "" : " [" + unit + "]") << "\n";
    std::size_t skipped = 0;
    for (const auto& p : jr::array(a.result, "points")) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number()) {
        ++skipped;
        continue;
      }
      std::cout << jr::time(p[0].get<std::int64_t>()) << "," << p[1].get<double>() << "\n";
    }
    if (skipped > 0) {
      printError(std::to_string(skipped) + " point(s) of the agent's answer are not [timestamp ms, value]; skipped");
      run.exit_code = 1;
    }
  });
}

}  // namespace gw::cli
