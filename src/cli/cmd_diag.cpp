// gpuwarden diag -r 1|2|3: levelled diagnostics (R14, R27, R28) over the diag library.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cluster/slurm.h"
#include "cli/stack_facts.h"
#include "cli/diag_nvml_impl.h"
#include "diag/diag.h"
#include "doctor/doctor.h"
#include "nvml/inventory.h"
#include "node/data_dir.h"
#include "platform/atomic_file.h"
#include "platform/clock.h"

namespace gw::cli {
namespace {

// --duration: the plan's range (CLI11's PositiveNumber names its range as
// 0 to 1.8e308 and takes inf).
CLI::Validator durationSeconds() {
  return CLI::Validator(
      [](std::string& in) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(in.c_str(), &end);
        if (end != in.c_str() && *end == '\0' && diag::validDuration(v)) return {};
        return "takes seconds " + diag::durationRange() + ", not '" + in + "'";
      },
      "SECONDS");
}

diag::Verdict fromDoctor(doctor::Verdict v) {
  switch (v) {
    case doctor::Verdict::kPass:
      return diag::Verdict::Pass;
    case doctor::Verdict::kWarn:
      return diag::Verdict::Warn;
    case doctor::Verdict::kFail:
      return diag::Verdict::Fail;
    case doctor::Verdict::kSkip:
      break;
  }
  return diag::Verdict::Skip;
}

std::vector<diag::Check> deploymentChecks(Context& ctx, nvml::Session& s) {
  std::vector<diag::Check> out;
  if (!ctx.options.simulate.empty() && ctx.options.root == "/") {
    // The doctor reads the real host; against a simulated fleet its findings would be about
    // this machine, not the GPUs under test.
    diag::Check c;
    c.test = "deployment";
    c.title = "deployment checks (doctor)";
    c.verdict = diag::Verdict::Skip;
    c.summary = "skipped: simulated fleet (the doctor checks the real host: run `gpuwarden doctor`)";
    out.push_back(std::move(c));
    return out;
  }
  doctor::DoctorInput input{ctx.root(), platform::defaultProcessRunner(), nvmlFactsFrom(s), processEnvironment(), ""};
  for (const auto& d : doctor::runDoctor(input)) {
    diag::Check c;
    c.test = "deployment";
    c.title = d.title;
    c.gpu = -1;
    c.verdict = fromDoctor(d.verdict);
    c.summary = d.found;
    c.evidence.push_back(std::string(doctor::layerName(d.layer)) + ": " + d.id);
    c.action = d.fix;
    c.measured = {{"id", d.id}, {"layer", std::string(doctor::layerName(d.layer))}};
    out.push_back(std::move(c));
  }
  return out;
}

// Keeps the JSON report with the agent (served at /api/v1/diag): handed to the agent that owns
// the data folder over its control socket, or, with no agent, written there under the folder's
// lock. A data folder that is missing or not writable is skipped with a note: diag works without
// an agent.
void storeReport(const diag::DiagReport& report, const std::string& data_dir) {
  const nlohmann::json doc = diag::toJson(report);
  auto a = askAgent(data_dir, "diag.store", nlohmann::json{{"report", doc}});
  if (a.reached) {
    if (!a.ok) std::cerr << "note: report not stored (" << (a.error.empty() ? a.refusal : a.error) << ")\n";
    return;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  if (data_dir.empty() || !fs::is_directory(data_dir, ec) || ::access(data_dir.c_str(), W_OK | X_OK) != 0) {
    std::cerr << "note: report not stored (data directory " << data_dir
              << " missing or not writable; give --data-dir)\n";
    return;
  }
  auto lock = lockWithoutAgent(data_dir);
  if (!lock) {
    std::cerr << "note: report not stored (" << lock.error() << ")\n";
    return;
  }
  auto name = node::DataDir(data_dir).storeDiagReport(doc.dump(2) + "\n", report.level, platform::wallMs());
  if (!name) std::cerr << "note: report not stored (" << name.error() << ")\n";
}

bool allDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

}  // namespace

bool resolveGpuIds(nvml::Session& s, const std::string& spec, std::vector<int>& out) {
  auto sel = parseSelection(spec);
  unsigned count = s.deviceCount().value_or(0);
  for (const auto& id : sel.ids) {
    if (allDigits(id)) {
      out.push_back(std::atoi(id.c_str()));
      continue;
    }
    GpuSelection one{{id}};
    bool found = false;
    for (unsigned i = 0; i < count && !found; ++i) {
      auto d = s.deviceByIndex(i);
      if (!d) continue;
      std::string uuid = d->uuid().value_or("");
      std::string bus;
      if (auto p = d->pciInfo()) bus = p->bus_id;
      if (one.matches(i, uuid, bus)) {
        out.push_back(static_cast<int>(i));
        found = true;
      }
    }
    if (!found) {
      printError("-i: no GPU matches '" + id + "'");
      return false;
    }
  }
  return true;
}

void addDiag(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("diag", "Run levelled diagnostics on the GPUs (like dcgmi diag -r 1/2/3)");
  auto level = std::make_shared<int>(1);
  auto ids = std::make_shared<std::string>();
  auto duration = std::make_shared<double>(0);
  auto thresholds = std::make_shared<std::string>();
  auto data_dir = std::make_shared<std::string>(node::defaultDataDir());
  cmd->add_option("-r,--run", *level, "Level: 1 quick (seconds), 2 medium (~2 min), 3 long (~15 min)")
      ->required()
      ->check(CLI::IsMember({1, 2, 3}));
  cmd->add_option("-i,--id", *ids, "GPUs to test: indices, UUIDs or PCI bus ids, comma separated (default all)");
  auto* dur = cmd->add_option("--duration", *duration,
                              "Total seconds of the timed tests (memory test, GEMM burn, targeted power)")
                  ->check(durationSeconds());
  cmd->add_option("--thresholds", *thresholds, "YAML thresholds file replacing the built-in table");
  cmd->add_option(
      "--data-dir", *data_dir,
      "The agent's data directory; the JSON report is kept in its diag/ (default " + node::defaultDataDirHelp() + ")");
  cmd->footer(
      "Each level runs everything of the level below. GPU tests that cannot run (no GPU, built\n"
      "without CUDA) are reported as skipped and never fail a card; a GPU on which all of them were\n"
      "skipped is INCOMPLETE, and so is the run. See docs/diag.md.\n" +
      diag::exitCodeHelp());
  cmd->callback([&run, level, ids, duration, dur, thresholds, data_dir]() {
    auto* s = run.ctx.nvml();
    if (!s) {
      run.exit_code = run.ctx.failureExit();
      return;
    }
    diag::DiagOptions opt;
    opt.level = *level;
    if (!ids->empty() && !resolveGpuIds(*s, *ids, opt.gpus)) {
      run.exit_code = kExitUsage;
      return;
    }
    if (dur->count() > 0) opt.duration_seconds = *duration;
    opt.thresholds_path = *thresholds;
    opt.gpuwarden_version = GW_VERSION;
    Context& ctx = run.ctx;
    opt.deployment_checks = [&ctx, s]() { return deploymentChecks(ctx, *s); };
    installStopHandlers();
    opt.cancelled = [] { return stopRequested(); };

    DiagNvmlImpl nv(*s, kCallDeadline);
    diag::DiagReport report;
    if (run.ctx.options.json) {
      diag::NullProgress progress;
      report = diag::runDiag(opt, nv, nullptr, progress);
      report.node = cluster::slurm::nodeName();
      std::cout << diag::toJson(report).dump(2) << "\n";
    } else {
      diag::TextProgress progress(std::cerr, ::isatty(STDERR_FILENO) != 0);
      report = diag::runDiag(opt, nv, nullptr, progress);
      report.node = cluster::slurm::nodeName();
      std::cout << diag::renderText(report);
    }
    if (!report.error.empty())
      printError(report.error);
    else
      storeReport(report, *data_dir);
    run.exit_code = report.exitCode();
  });
}

}  // namespace gw::cli
