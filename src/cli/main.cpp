// gpuwarden: one program that sees every GPU in the machine. This file only wires the commands.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "platform/deadline.h"

namespace {

constexpr const char* kDescription =
    "gpuwarden - GPU server operations: inventory, live monitoring, health, diagnostics.\n"
    "Talks to the NVIDIA driver through NVML; --simulate NAME runs on a simulated fleet instead.";

}  // namespace

int main(int argc, char** argv) {
  using namespace gw::cli;
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
  addHealth(app, run);
  addIncidents(app, run);
  addEvents(app, run);

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
