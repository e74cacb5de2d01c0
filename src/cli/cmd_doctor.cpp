// gpuwarden doctor / cuda list / cuda env: the stack layer checks (R1, R6-R13) and the side-by-side
// CUDA toolkits (R9). The doctor works without NVML: a missing driver is a finding it explains.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/stack_facts.h"
#include "doctor/cuda_toolkits.h"
#include "doctor/doctor.h"
#include "nvml/inventory.h"

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
  cmd->add_option("--binary", *binary, "Also check that this application binary carries GPU code for these GPUs");
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

void addCuda(CLI::App& app, Run& run) {
  auto* cuda = app.add_subcommand("cuda", "CUDA toolkits installed side by side");
  cuda->require_subcommand(1);

  auto* list = cuda->add_subcommand(
      "list", "List the installed CUDA toolkits and which one PATH, LD_LIBRARY_PATH and /usr/local/cuda select");
  list->footer("Exit codes: 0 listed (also when none is installed).");
  list->callback([&run]() {
    doctor::NvmlFacts facts;
    if (auto* s = run.ctx.tryNvml()) {
      if (auto v = s->cudaDriverVersion()) facts.cuda_driver_version = *v;
    }
    auto env = processEnvironment();
    doctor::DoctorInput input{run.ctx.root(), platform::defaultProcessRunner(), facts, env, ""};
    auto report = doctor::inspectToolkits(input);
    if (run.ctx.options.json) {
      json j;
      j["cuda_driver_version"] =
          facts.cuda_driver_version ? json(nvml::cudaVersionString(facts.cuda_driver_version)) : json(nullptr);
      j["toolkits"] = json::array();
      for (const auto& t : report.toolkits) {
        j["toolkits"].push_back({{"path", t.path},
                                 {"version", t.version},
                                 {"full_version", t.full_version},
                                 {"version_source", t.version_source},
                                 {"has_nvcc", t.has_nvcc},
                                 {"is_default", t.is_default},
                                 {"selected_by_path", t.selected_by_path},
                                 {"selected_by_ld", t.selected_by_ld}});
      }
      const auto& sel = report.selection;
      j["selection"] = {{"default_link", sel.default_link},
                        {"path_nvcc", sel.path_nvcc},
                        {"path_nvcc_version", sel.path_nvcc_version},
                        {"ld_cudart", sel.ld_cudart},
                        {"ld_cudart_version", sel.ld_cudart_version}};
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << doctor::renderToolkitList(report, facts.cuda_driver_version);
    }
    run.exit_code = kExitOk;
  });

  auto* envcmd = cuda->add_subcommand("env", "Print the shell lines that switch this shell to CUDA toolkit VERSION");
  auto version = std::make_shared<std::string>();
  envcmd->add_option("VERSION", *version, "Toolkit version, e.g. 12.1 or 12.1.105")->required();
  envcmd->footer(
      "Use as: eval \"$(gpuwarden cuda env 12.1)\"\nExit codes: 0 printed, 2 that version is not installed.");
  envcmd->callback([&run, version]() {
    doctor::NvmlFacts facts;
    auto env = processEnvironment();
    doctor::DoctorInput input{run.ctx.root(), platform::defaultProcessRunner(), facts, env, ""};
    auto lines = doctor::envLinesFor(*version, input);
    if (!lines) {
      printError(lines.error());
      run.exit_code = kExitUsage;
      return;
    }
    if (run.ctx.options.json) {
      std::cout << json{{"version", *version}, {"lines", *lines}}.dump(2) << "\n";
    } else {
      for (const auto& l : *lines) std::cout << l << "\n";
    }
    run.exit_code = kExitOk;
  });
}

}  // namespace gw::cli
