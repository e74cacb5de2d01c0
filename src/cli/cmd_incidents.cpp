// gpuwarden incidents list|show|ack|resolve|set-healthy: through the agent that owns the data
// folder (its control socket) while one runs, so the change shows in its API at once and is
// never written back over; with no agent, on the folder itself under the agent's lock.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cli/json_read.h"
#include "health/incidents.h"
#include "node/health_json.h"
#include "platform/clock.h"

namespace gw::cli {
namespace {

using json = nlohmann::json;

// Failures of this command: 1 (the operation failed: no such incident), 3 (no agent and the
// folder cannot be read or locked).
constexpr int kExitFailed = 1;

Result<std::unique_ptr<health::IncidentStore>> openStore(const std::string& dir) {
  health::IncidentConfig config;
  config.new_lifetime = false;  // an operator looking is not an agent start
  auto s = health::IncidentStore::open(node::DataDir(dir).incidentsDb(), config);
  if (!s)
    return Status::Error("cannot open the incidents in " + dir + ": " + s.error() +
                         " (give --data-dir, and run as a user who may write there)");
  return s;
}

using jr::text;

void printIncidentLine(const json& i) {
  std::cout << "#" << text(i, "id") << "  " << text(i, "opened") << "  " << text(i, "status") << "  "
            << text(i, "severity") << "  " << text(i, "rule") << "  "
            << (jr::integer(i, "gpu_index", -1) < 0 ? std::string("node")  // gpu_count, driver_mismatch
                                                    : "GPU " + text(i, "gpu_index") + " " + text(i, "gpu_uuid"))
            << "  " << text(i, "summary") << "\n";
}

void printIncident(const json& i) {
  printIncidentLine(i);
  std::cout << "  action:   " << text(i, "action") << "\n  evidence: " << text(i, "evidence") << "\n";
  if (!text(i, "kb_id").empty()) std::cout << "  kb:       " << text(i, "kb_id") << "\n";
  const bool escalated = jr::boolean(i, "escalated");
  std::cout << "  seen " << text(i, "occurrences") << " time(s), last " << jr::time(jr::integer(i, "last_seen_ms"))
            << (escalated ? ", escalated (recurred across agent restarts)" : "") << "\n";
  if (!text(i, "resolved_by").empty()) std::cout << "  resolved by " << text(i, "resolved_by") << "\n";
  if (const json* c = jr::find(i, "context")) std::cout << "  context:  " << jr::dump(*c, -1) << "\n";
}

// One operation: through the agent when it answers, else `local` on the folder. `write` ops take
// the folder's lock first. Returns the result document or prints the error and sets the exit code.
template <typename Local>
std::optional<json> perform(Run& run, const std::string& dir, const std::string& op, const json& args, bool write,
                            Local local) {
  auto a = askAgent(dir, op, args);
  if (a.reached) {
    if (!a.error.empty()) {
      printError(a.error);
      run.exit_code = kExitNoAgent;
      return std::nullopt;
    }
    if (!a.ok) {
      printError(a.refusal);
      run.exit_code = kExitFailed;
      return std::nullopt;
    }
    return std::move(a.result);
  }
  // A mistyped --data-dir must not read as "no open incidents" (nor leave a new folder and an
  // empty database behind): with no agent, the incidents are those an agent left in the folder.
  const std::string db = node::DataDir(dir).incidentsDb();
  if (struct stat st{}; ::stat(db.c_str(), &st) != 0) {
    const int err = errno;
    printError("no agent answers for " + dir + " and it holds no incidents (" + db + ": " + std::strerror(err) +
               "); give the agent's --data-dir");
    run.exit_code = kExitNoDriver;
    return std::nullopt;
  }
  std::unique_ptr<node::DataDirLock> lock;
  if (write) {
    auto l = lockWithoutAgent(dir);
    if (!l) {
      printError(l.error());
      run.exit_code = kExitNoDriver;
      return std::nullopt;
    }
    lock = std::move(l).value();
  }
  auto store = openStore(dir);
  if (!store) {
    printError(store.error());
    run.exit_code = kExitNoDriver;
    return std::nullopt;
  }
  Result<json> r = local(**store);
  if (!r) {
    printError(r.error());
    run.exit_code = kExitFailed;
    return std::nullopt;
  }
  return std::move(r).value();
}

std::string caller() { return "uid " + std::to_string(::geteuid()) + " pid " + std::to_string(::getpid()) + " (cli)"; }

}  // namespace

void addIncidents(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand(
      "incidents", "List, show, acknowledge and resolve health incidents (through the agent that owns --data-dir)");
  cmd->require_subcommand(1);
  auto dir = std::make_shared<std::string>(node::defaultDataDir());
  const std::string dir_help = std::string("The agent's data directory (default ") + node::defaultDataDirHelp() + ")";
  cmd->add_option("--data-dir", *dir, dir_help);

  auto all = std::make_shared<bool>(false);
  auto* list = cmd->add_subcommand("list", "Unresolved incidents (--all: every incident, newest first)");
  list->add_flag("--all", *all, "Include resolved incidents");
  list->add_option("--data-dir", *dir, dir_help);
  list->callback([&run, dir, all]() {
    auto r =
        perform(run, *dir, "incidents.list", json{{"all", *all}}, false, [&](health::IncidentStore& s) -> Result<json> {
          json arr = json::array();
          for (const auto& i : *all ? s.recent(1000) : s.unresolved()) arr.push_back(node::incidentJson(i, false));
          return json{{"incidents", arr}};
        });
    if (!r) return;
    const json& incidents = jr::array(*r, "incidents");
    if (run.ctx.options.json) {
      std::cout << jr::dump(json{{"incidents", incidents}}) << "\n";
      return;
    }
    if (incidents.empty()) std::cout << (*all ? "no incidents\n" : "no open incidents\n");
    for (const auto& i : incidents)
      if (i.is_object()) printIncidentLine(i);
  });

  auto id = std::make_shared<std::int64_t>(0);
  struct Verb {
    const char* name;
    const char* help;
    const char* op;
    const char* done;
  };
  for (const Verb v : {Verb{"show", "Show one incident with its context", "incidents.show", ""},
                       Verb{"ack", "Acknowledge one incident", "incidents.ack", "acknowledged"},
                       Verb{"resolve", "Resolve one incident", "incidents.resolve", "resolved"}}) {
    auto* sub = cmd->add_subcommand(v.name, v.help);
    sub->add_option("id", *id, "Incident id")->required();
    sub->add_option("--data-dir", *dir, dir_help);
    sub->callback([&run, dir, id, v]() {
      const std::string op = v.op;
      auto r = perform(run, *dir, op, json{{"id", *id}}, op != "incidents.show",
                       [&](health::IncidentStore& s) -> Result<json> {
                         const auto now = platform::wallMs();
                         if (op == "incidents.ack") {
                           if (Status st = s.acknowledge(*id, now); !st) return st;
                         } else if (op == "incidents.resolve") {
                           if (Status st = s.resolve(*id, now, "operator " + caller()); !st) return st;
                         }
                         auto i = s.get(*id);
                         if (!i) return Status::Error("no incident " + std::to_string(*id) + " in " + *dir);
                         return node::incidentJson(*i, op == "incidents.show");
                       });
      if (!r) return;
      if (op == "incidents.show") {
        if (run.ctx.options.json)
          std::cout << jr::dump(*r) << "\n";
        else
          printIncident(*r);
        return;
      }
      if (run.ctx.options.json)
        std::cout << jr::dump(*r) << "\n";
      else
        std::cout << "incident " << *id << " " << v.done << "\n";
    });
  }

  auto uuid = std::make_shared<std::string>();
  auto* sh =
      cmd->add_subcommand("set-healthy", "Resolve every unresolved incident of a GPU (it was repaired or replaced)");
  sh->add_option("uuid", *uuid, "GPU UUID")->required();
  sh->add_option("--data-dir", *dir, dir_help);
  sh->callback([&run, dir, uuid]() {
    auto r = perform(run, *dir, "incidents.set_healthy", json{{"uuid", *uuid}}, true,
                     [&](health::IncidentStore& s) -> Result<json> {
                       auto n = s.markHealthy(*uuid, platform::wallMs(), "mark-healthy by " + caller());
                       if (!n) return n.status();
                       return json{{"resolved", *n}};
                     });
    if (!r) return;
    if (run.ctx.options.json)
      std::cout << jr::dump(*r) << "\n";
    else
      std::cout << jr::integer(*r, "resolved") << " incident(s) of " << *uuid << " resolved\n";
  });

  // One meaning for every subcommand, each of which shows it in its own --help.
  for (auto* sub : cmd->get_subcommands([](CLI::App*) { return true; }))
    sub->footer(
        "Exit codes: 0 done, 1 the operation failed (no such incident), 3 the agent could not be asked (an untrusted "
        "socket or answer), or no agent runs and the data folder could not be read or locked.");
}

}  // namespace gw::cli
