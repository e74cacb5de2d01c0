// gpuwarden scenarios: the simulator scenarios that --simulate NAME accepts.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"

namespace gw::cli {

void addScenarios(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("scenarios", "List the simulator scenarios that --simulate NAME accepts");
  cmd->callback([&run]() {
    auto names = listScenarios();
    if (run.ctx.options.json) {
      std::cout << nlohmann::json(names).dump() << "\n";
      return;
    }
    for (const auto& n : names) std::cout << n << "\n";
  });
}

}  // namespace gw::cli
