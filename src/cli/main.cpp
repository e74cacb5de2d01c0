// gpuwarden: one program that sees every GPU in the machine. This file only wires the commands.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "platform/deadline.h"

namespace {

constexpr const char* kDescription =
    "gpuwarden - GPU server operations: inventory, live monitoring, health, diagnostics.\n"
    "Talks to the NVIDIA driver through NVML; --simulate NAME runs on a simulated fleet instead.";

// Slurm runs Prolog=, Epilog= and HealthCheckProgram= without arguments: a link to the binary
// under one of these names runs that command (docs/slurm.md).
constexpr std::pair<const char*, const char*> kSlurmNames[] = {{"gpuwarden-slurm-prolog", "prolog"},
                                                               {"gpuwarden-slurm-epilog", "epilog"},
                                                               {"gpuwarden-slurm-healthcheck", "healthcheck"}};

}  // namespace

int main(int argc, char** argv) {
  using namespace gw::cli;
  std::vector<char*> args(argv, argv + argc);
  {
    const std::string_view self = argc > 0 ? std::string_view(argv[0]) : std::string_view();
    const std::string_view base = self.substr(self.rfind('/') == std::string_view::npos ? 0 : self.rfind('/') + 1);
    static char kSlurm[] = "slurm";
    for (const auto& [name, command] : kSlurmNames)
      if (base == name) {
        args.insert(args.begin() + 1, {kSlurm, const_cast<char*>(command)});
        break;
      }
    argc = static_cast<int>(args.size());
    argv = args.data();
  }
  CLI::App app{kDescription, "gpuwarden"};
  app.set_version_flag("--version", std::string("gpuwarden ") + GW_VERSION);
  app.require_subcommand(1);
  // Global options are accepted before or after the command name.
  app.fallthrough();
  Run run;
  auto& o = run.ctx.options;
  app.add_option("--simulate", o.simulate,
                 "Use the NVML simulator with this scenario (name or YAML path); see `gpuwarden scenarios`")
      ->group("Global options");
  app.add_option("--nvml-lib", o.nvml_lib,
                 "Path of the NVML library (default libnvidia-ml.so.1, or $GPUWARDEN_NVML_LIB)")
      ->group("Global options");
  app.add_option("--root", o.root, "Filesystem root that /proc, /sys, /dev and /etc are read under (default /)")
      ->group("Global options");
  app.add_flag("--json", o.json, "Print JSON instead of tables")->group("Global options");

  addDiscovery(app, run);
  addQuery(app, run);
  addDmon(app, run);
  addPmon(app, run);
  addTopo(app, run);
  addFields(app, run);
  addScenarios(app, run);
  addServe(app, run);
  addHashPassword(app, run);
  addReload(app, run);
  addHistory(app, run);
  addDoctor(app, run);
  addCuda(app, run);
  addXid(app, run);
  addExplain(app, run);
  addDiag(app, run);
  addBurn(app, run);
  addHealth(app, run);
  addIncidents(app, run);
  addEvents(app, run);
  addJob(app, run);
  addSlurm(app, run);
  addCluster(app, run);
  addFleet(app, run);
  addRecords(app, run);
  addTop(app, run);
  addCompletion(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    // Never an abort: every answer from elsewhere is read defensively, and whatever still throws
    // ends here with a sentence and the "no data" exit (for `health`: unknown, never healthy).
    printError(std::string("internal error: ") + e.what());
    return kExitNoAgent;
  }
  // A command that gave up on a hung GPU leaves a thread inside NVML: end without tearing the
  // library down under it (which could crash or wait out the hang).
  if (gw::platform::abandonedThreads() > 0) gw::platform::exitProcess(run.exit_code);
  return run.exit_code;
}
