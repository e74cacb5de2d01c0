// gpuwarden history: a field's past values, asked from the running agent (GET /api/v1/history).
#include <httplib.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/url_encode.h"
#include "platform/clock.h"
#include "server/api_params.h"

namespace gw::cli {

namespace {}  // namespace

void addHistory(CLI::App& app, Run& run) {
  auto* cmd =
      app.add_subcommand("history", "Print a field's history for one GPU, from the running agent (gpuwarden serve)");
  struct Opts {
    std::string gpu, field, since = "1h", until, step, format = "csv", agent = "http://127.0.0.1:9400", agg;
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
  cmd->add_option("--agent", o->agent, "Agent URL (default http://127.0.0.1:9400)");
  cmd->callback([&run, o]() {
    std::string path =
        "/api/v1/history?gpu=" + urlEncode(o->gpu) + "&field=" + urlEncode(o->field) + "&since=" + urlEncode(o->since);
    if (!o->until.empty()) path += "&until=" + urlEncode(o->until);
    if (!o->step.empty()) path += "&step=" + urlEncode(o->step);
    if (!o->agg.empty()) path += "&agg=" + urlEncode(o->agg);
    std::unique_ptr<httplib::Client> cli;
    try {
      cli = std::make_unique<httplib::Client>(o->agent);
    } catch (const std::exception& e) {
      printError("--agent " + o->agent + ": " + e.what());
      run.exit_code = kExitUsage;
      return;
    }
    if (!cli->is_valid()) {
      printError("--agent " + o->agent + ": not a valid URL (expected http://HOST:PORT)");
      run.exit_code = kExitUsage;
      return;
    }
    cli->set_connection_timeout(std::chrono::seconds(3));
    cli->set_read_timeout(std::chrono::seconds(30));
    auto res = cli->Get(path);
    if (!res) {
      printError("no agent answers at " + o->agent + " (" + httplib::to_string(res.error()) +
                 "); start one with `gpuwarden serve`, or point --agent at it");
      run.exit_code = kExitNoDriver;
      return;
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(res->body);
    } catch (const std::exception&) {
      printError("the agent at " + o->agent + " answered HTTP " + std::to_string(res->status) +
                 " with something that is not JSON");
      run.exit_code = 1;
      return;
    }
    if (res->status != 200) {
      std::string field = j.value("field", "");
      printError(j.value("error", "HTTP " + std::to_string(res->status)) + (field.empty() ? "" : " (" + field + ")"));
      run.exit_code = res->status >= 400 && res->status < 500 ? kExitUsage : 1;
      return;
    }
    if (o->format == "json") {
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::string unit = j["field"].value("unit", "");
    std::cout << "timestamp," << j["field"].value("key", o->field) << (unit.empty() ? "" : " [" + unit + "]") << "\n";
    for (const auto& p : j["points"]) {
      std::cout << platform::formatRfc3339(p[0].get<std::int64_t>()) << "," << p[1].get<double>() << "\n";
    }
  });
}

}  // namespace gw::cli
