// gpuwarden job list|show: what each job did to each GPU of this node (docs/jobs.md), from the
// agent that owns the data folder (over its control socket) or, with no agent, from its jobs
// database read as it was last written.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cli/job_text.h"
#include "cli/json_read.h"
#include "node/data_dir.h"
#include "node/job_compare.h"
#include "node/jobs.h"
#include "node/records.h"
#include "platform/clock.h"

namespace gw::cli {
namespace {

using json = nlohmann::json;
constexpr int kExitFailed = 1;  // no such job, or the database cannot be read
// Where no agent answers, the data folder's database is read instead (a missing one is not made).
constexpr const char* kAskFailures =
    "the agent refused or could not read its store,\n"
    "3 the agent could not be asked (an untrusted socket, a malformed answer), or no agent runs and the\n"
    "folder holds no jobs database.";

// The answer of `op`: from the agent, or from the jobs database when no agent runs.
std::optional<json> ask(Run& run, const std::string& dir, const std::string& op, const json& args) {
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
  // Read-only: a data folder without jobs (a mistyped --data-dir) is said, not created.
  if (!std::filesystem::exists(node::DataDir(dir).jobsDb())) {
    printError("no agent answers for " + dir + ", and it holds no jobs database (" + node::DataDir(dir).jobsDb() + ")");
    run.exit_code = kExitNoAgent;
    return std::nullopt;
  }
  auto store = node::JobStore::open(node::DataDir(dir).jobsDb());
  if (!store) {
    printError("no agent answers for " + dir + ", and its jobs cannot be read: " + store.error());
    run.exit_code = kExitNoAgent;
    return std::nullopt;
  }
  const std::int64_t now = platform::wallMs();
  if (op == "job.list") {
    auto list = (*store)->list(static_cast<std::size_t>(args.value("limit", 100)));
    if (!list) {
      printError(list.error());
      run.exit_code = kExitFailed;
      return std::nullopt;
    }
    json arr = json::array();
    for (const auto& r : *list) arr.push_back(node::jobJson(r, now));
    return json{{"jobs", arr}};
  }
  auto r = (*store)->latest(args.value("job_id", ""));
  if (!r || !*r) {
    printError(r ? "no job " + args.value("job_id", "") + " in " + dir : r.error());
    run.exit_code = kExitFailed;
    return std::nullopt;
  }
  return node::jobJson(**r, now);
}

std::string number(const json& v, int decimals, const char* unit) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s%s", decimals, v.get<double>(), *unit ? " " : "", unit);
  return buf;
}

std::string bytes(const json& v) { return v.is_number() ? humanBytes(v.get<double>()) : "-"; }

// A job's length; "-" when the answer does not carry one.
std::string duration(const json& j) {
  const auto s = jr::number(j, "duration_s");
  return s ? humanDuration(*s) : "-";
}

void printJobLine(const json& j) {
  std::cout << jr::text(j, "job_id") << "  " << jr::text(j, "state") << "  " << jr::time(jr::integer(j, "start_ms"))
            << "  " << duration(j) << "  " << jr::array(j, "gpus").size() << " GPU(s)"
            << "  " << (jr::text(j, "user").empty() ? "-" : jr::text(j, "user")) << "  " << jr::text(j, "source")
            << "\n";
}

void printJob(const json& j) {
  std::cout << "job " << jr::text(j, "job_id") << " (run " << jr::text(j, "run") << ")  user "
            << (jr::text(j, "user").empty() ? "-" : jr::text(j, "user")) << "  source " << jr::text(j, "source")
            << "\n";
  std::cout << "  " << jr::text(j, "state") << ", started " << jr::time(jr::integer(j, "start_ms"));
  if (jr::integer(j, "end_ms")) std::cout << ", ended " << jr::time(jr::integer(j, "end_ms"));
  std::cout << " (" << duration(j) << ")\n";
  for (const auto& g : jr::array(j, "gpus")) {
    if (!g.is_object()) continue;
    std::cout << "GPU " << jr::text(g, "index") << "  " << jr::text(g, "uuid") << "  (" << jr::text(g, "samples")
              << " samples)\n";
    const json& u = jr::object(g, "utilization_pct");
    const json& t = jr::object(g, "temperature_c");
    const json& p = jr::object(g, "power_w");
    std::cout << "  energy              " << number(g.value("energy_j", json()), 0, "J")
              << (jr::text(g, "energy_source") == "power" ? " (from power samples)" : "") << "\n";
    std::cout << "  utilisation         mean " << number(u.value("mean", json()), 1, "%") << "   max "
              << number(u.value("max", json()), 0, "%") << "\n";
    std::cout << "  memory used (max)   " << bytes(g.value("memory_used_max_bytes", json())) << "\n";
    std::cout << "  temperature         mean " << number(t.value("mean", json()), 1, "C") << "   max "
              << number(t.value("max", json()), 0, "C") << "\n";
    std::cout << "  power               mean " << number(p.value("mean", json()), 1, "W") << "   max "
              << number(p.value("max", json()), 1, "W") << "\n";
    std::string throttled;
    for (const auto& [reason, secs] : jr::object(g, "throttled_s").items())
      throttled += (throttled.empty() ? "" : ", ") + reason + " " + number(secs, 1, "s");
    std::cout << "  throttled           " << (throttled.empty() ? "never" : throttled) << "\n";
    std::string xids;
    for (const auto& [code, n] : jr::object(g, "xids").items())
      xids += (xids.empty() ? "" : ", ") + ("Xid " + code) + " x" + n.dump();
    std::cout << "  Xids                " << (xids.empty() ? "none" : xids) << "\n";
    std::cout << "  ECC errors          single-bit " << number(g.value("ecc_sbe", json()), 0, "") << "   double-bit "
              << number(g.value("ecc_dbe", json()), 0, "") << "\n";
    std::cout << "  retired pages       single-bit " << number(g.value("retired_pages_sbe", json()), 0, "")
              << "   double-bit " << number(g.value("retired_pages_dbe", json()), 0, "") << "\n";
    std::cout << "  remapped rows       correctable " << number(g.value("remapped_rows_correctable", json()), 0, "")
              << "   uncorrectable " << number(g.value("remapped_rows_uncorrectable", json()), 0, "") << "\n";
    std::cout << "  PCIe replays        " << number(g.value("pcie_replays", json()), 0, "") << "\n";
    std::cout << "  PCIe traffic        tx " << bytes(g.value("pcie_tx_bytes", json())) << "   rx "
              << bytes(g.value("pcie_rx_bytes", json())) << "\n";
    std::cout << "  NVLink traffic      tx " << bytes(g.value("nvlink_tx_bytes", json())) << "   rx "
              << bytes(g.value("nvlink_rx_bytes", json())) << "\n";
  }
}

void printCompare(const json& c, const std::string& a, const std::string& b) {
  std::cout << "jobs " << a << " and " << b << ": " << jr::str(c, "summary") << "\n";
  if (jr::boolean(c, "install_changed"))
    for (const auto& ch : jr::array(c, "changes"))
      std::cout << "  install " << jr::str(ch, "what") << ": "
                << (jr::find(ch, "a") ? jr::find(ch, "a")->dump() : "null") << " -> "
                << (jr::find(ch, "b") ? jr::find(ch, "b")->dump() : "null") << "\n";
  std::cout << "  GPU (a/b)  UUID                                      clock at load a -> b    vs peers a / b\n";
  for (const auto& g : jr::array(c, "gpus")) {
    char line[256];
    std::snprintf(line, sizeof line, "  %3lld/%-3lld    %-40s  %5.0f -> %5.0f MHz (%+.1f %%)   %+.1f %% / %+.1f %%\n",
                  static_cast<long long>(jr::integer(g, "index_a")), static_cast<long long>(jr::integer(g, "index_b")),
                  jr::str(g, "uuid").c_str(), jr::number(g, "clock_a").value_or(0.0),
                  jr::number(g, "clock_b").value_or(0.0), jr::number(g, "change_pct").value_or(0.0),
                  jr::number(g, "peers_a_pct").value_or(0.0), jr::number(g, "peers_b_pct").value_or(0.0));
    std::cout << line;
  }
}

}  // namespace

void addJob(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand(
      "job", "Per-job GPU accounting: what each job (Slurm, a dcgm-exporter job map) did to each GPU of this node");
  cmd->require_subcommand(1);
  auto dir = std::make_shared<std::string>(node::defaultDataDir());
  const std::string dir_help = std::string("The agent's data directory (default ") + node::defaultDataDirHelp() + ")";
  cmd->add_option("--data-dir", *dir, dir_help);

  auto limit = std::make_shared<std::size_t>(50);
  auto* list = cmd->add_subcommand("list", "Jobs on this node, newest first (running ones included)");
  list->add_option("--data-dir", *dir, dir_help);
  list->add_option("--limit", *limit, "At most this many (default 50)")->check(CLI::Range(1, 10000));
  list->footer(std::string("Exit codes: 0 listed (also when there are none), 1 ") + kAskFailures);
  list->callback([&run, dir, limit]() {
    auto r = ask(run, *dir, "job.list", json{{"limit", *limit}});
    if (!r) return;
    const json& jobs = jr::array(*r, "jobs");
    if (run.ctx.options.json) {
      std::cout << jr::dump(json{{"jobs", jobs}}) << "\n";
      return;
    }
    if (jobs.empty()) std::cout << "no jobs recorded\n";
    for (const auto& j : jobs)
      if (j.is_object()) printJobLine(j);
  });

  auto pair = std::make_shared<std::vector<std::string>>();
  auto* cmp = cmd->add_subcommand(
      "compare",
      "Two jobs' fingerprints: tell a driver regression (the same GPUs slower under a new install) from "
      "ageing hardware (one GPU slower than its peers in both)");
  cmp->footer(
      "Exit codes: 0 no difference, 1 a difference (or no such job), 3 not comparable (no GPU ran at load\n"
      "in both), or the agent could not be asked.");
  cmp->add_option("ids", *pair, "Job ids A B (the earlier first)")->required()->expected(2);
  cmp->add_option("--data-dir", *dir, dir_help);
  cmp->callback([&run, dir, pair]() {
    auto a = ask(run, *dir, "job.show", json{{"job_id", (*pair)[0]}});
    if (!a) return;
    auto b = ask(run, *dir, "job.show", json{{"job_id", (*pair)[1]}});
    if (!b) return;
    const json c = node::compareJobs(*a, *b);
    if (run.ctx.options.json)
      std::cout << jr::dump(c) << "\n";
    else
      printCompare(c, (*pair)[0], (*pair)[1]);
    const std::string v = jr::str(c, "verdict");
    run.exit_code = v == "no_difference" ? 0 : v == "not_comparable" ? 3 : 1;
  });

  auto id = std::make_shared<std::string>();
  auto* show = cmd->add_subcommand("show",
                                   "One job: per GPU energy, utilisation, memory, temperature, power, "
                                   "throttling, Xids, ECC, retired pages, PCIe replays and traffic");
  show->add_option("id", *id, "Job id (Slurm's SLURM_JOB_ID)")->required();
  show->footer(std::string("Exit codes: 0 shown, 1 no such job, or ") + kAskFailures);
  show->add_option("--data-dir", *dir, dir_help);
  show->callback([&run, dir, id]() {
    auto r = ask(run, *dir, "job.show", json{{"job_id", *id}});
    if (!r) return;
    if (run.ctx.options.json)
      std::cout << jr::dump(*r) << "\n";
    else
      printJob(*r);
  });
}

void addRecords(CLI::App& app, Run& run) {
  struct Opts {
    std::string data_dir = node::defaultDataDir(), kind;
    std::size_t limit = 50;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "records",
      "The node's records, newest first: install states (driver, CUDA, cuDNN, frameworks, VBIOS, serials) "
      "with what changed, and settings changed through gpuwarden");
  cmd->add_option("--data-dir", o->data_dir,
                  std::string("The agent's data directory (default ") + node::defaultDataDirHelp() + ")");
  cmd->add_option("--kind", o->kind, "Only this kind: install or setting")
      ->check(CLI::IsMember({"install", "setting"}));
  cmd->add_option("--limit", o->limit, "At most this many (default 50)")->check(CLI::Range(1, 10000));
  cmd->footer(
      "Exit codes: 0 listed (also when there are none), 1 the agent refused or could not read its store,\n"
      "3 the agent could not be asked, or no agent runs and the folder holds no records database.");
  cmd->callback([&run, o]() {
    json args{{"limit", o->limit}};
    if (!o->kind.empty()) args["kind"] = o->kind;
    json records;
    auto a = askAgent(o->data_dir, "records.list", args);
    if (a.reached) {
      if (!a.error.empty() || !a.ok) {
        printError(a.error.empty() ? a.refusal : a.error);
        run.exit_code = a.error.empty() ? kExitFailed : kExitNoAgent;
        return;
      }
      records = jr::array(a.result, "records");
    } else {
      if (!std::filesystem::exists(node::DataDir(o->data_dir).recordsDb())) {
        printError("no agent answers for " + o->data_dir + ", and it holds no records (" +
                   node::DataDir(o->data_dir).recordsDb() + ")");
        run.exit_code = kExitNoAgent;
        return;
      }
      auto store = node::RecordStore::open(node::DataDir(o->data_dir).recordsDb());
      if (!store) {
        printError("no agent answers for " + o->data_dir + ", and its records cannot be read: " + store.error());
        run.exit_code = kExitNoAgent;
        return;
      }
      auto list = (*store)->list(o->limit, o->kind);
      if (!list) {
        printError(list.error());
        run.exit_code = kExitFailed;
        return;
      }
      records = json::array();
      for (const auto& r : *list) records.push_back(node::recordJson(r));
    }
    if (run.ctx.options.json) {
      std::cout << jr::dump(json{{"records", records}}) << "\n";
      return;
    }
    if (records.empty()) std::cout << "no records\n";
    for (const auto& r : records)
      if (r.is_object())
        std::cout << "#" << jr::text(r, "id") << "  " << jr::time(jr::integer(r, "time_ms")) << "  "
                  << jr::str(r, "kind") << "  " << jr::str(r, "who") << "  " << jr::str(r, "summary") << "\n";
  });
}

}  // namespace gw::cli
