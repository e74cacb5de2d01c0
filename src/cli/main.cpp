// gpuwarden-full: every command (the front, front_main.cpp, executes this program for all but the
// few it answers itself). This file only wires the commands.
#include <sys/prctl.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/smi/smi_settings.h"

namespace {

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
  CLI::App app;
  Run run;
  configureApp(app, run.ctx.options);
  // The name the process has in ps and pidof: the front's, whose place this program took.
  ::prctl(PR_SET_NAME, "gpuwarden", 0, 0, 0);

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
  addSmi(app, run);
  smi::installSettingsRunner();
  addCompletion(app, run);

  return parseAndRun(app, argc, argv, run);
}
