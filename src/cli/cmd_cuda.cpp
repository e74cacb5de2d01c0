// gpuwarden cuda list / cuda env: the CUDA toolkits installed side by side (R9) and the shell lines
// that select one.
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/stack_facts.h"
#include "doctor/cuda_toolkits.h"
#include "doctor/doctor.h"
#include "nvml/nvml.h"

namespace gw::cli {
namespace {

using nlohmann::json;

}  // namespace

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
