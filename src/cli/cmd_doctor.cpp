// gpuwarden doctor: the stack layer checks (R1, R6-R13). The doctor works without NVML: a missing
// driver is a finding it explains.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/stack_facts.h"
#include "doctor/doctor.h"

namespace gw::cli {
namespace {

using nlohmann::json;

// What NVML says, gathered quietly: a failure to load or initialise is recorded, not printed.
// Returns false only for a usage error (a bad --simulate), which has already been explained.
bool gatherNvmlFacts(Context& ctx, doctor::NvmlFacts& facts) {
  nvml::Session* s = ctx.tryNvml();
  if (!s) {
    const Status& st = ctx.nvmlStatus();
    if (ctx.failureExit() == kExitUsage) {
      printError(st.message());
      return false;
    }
    if (st.nvmlCode() == NVML_ERROR_LIBRARY_NOT_FOUND) {
      // Could not load the library (or find the simulator): nvmlInit was never attempted.
      facts.library_loaded = false;
      facts.load_error = st.message();
      facts.init_return = -1;
    } else {
      facts.library_loaded = true;
      facts.init_return = st.nvmlCode();
      facts.init_error = st.message();
    }
    return true;
  }
  facts = nvmlFactsFrom(*s);
  return true;
}

bool colorWanted(const std::map<std::string, std::string>& env) {
  return ::isatty(STDOUT_FILENO) && env.find("NO_COLOR") == env.end();
}

}  // namespace

void addDoctor(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("doctor", "Check every layer of the GPU stack and say which one is wrong");
  auto binary = std::make_shared<std::string>();
  cmd->add_option("--binary", *binary,
                  "Also check that this application binary carries GPU code for these GPUs and that the driver "
                  "supports the CUDA runtime it needs");
  cmd->footer(
      "Layers, bottom up: hardware, kernel driver, CUDA driver, toolkit, libraries, framework, application,\n"
      "plus container/system checks. Works without a driver: a missing driver is reported, not an error.\n"
      "Exit codes: 0 all checks passed, 1 at least one warning, 2 at least one failure (or bad arguments).");
  cmd->callback([&run, binary]() {
    doctor::NvmlFacts facts;
    if (!gatherNvmlFacts(run.ctx, facts)) {
      run.exit_code = kExitUsage;
      return;
    }
    auto env = processEnvironment();
    doctor::DoctorInput input{run.ctx.root(), platform::defaultProcessRunner(), facts, env, *binary};
    auto checks = doctor::runDoctor(input);
    if (run.ctx.options.json) {
      std::cout << doctor::toJson(checks).dump(2) << "\n";
    } else {
      std::cout << doctor::renderText(checks, colorWanted(env), doctor::localeIsUtf8(env));
    }
    run.exit_code = doctor::exitCodeFor(checks);
  });
}

}  // namespace gw::cli
