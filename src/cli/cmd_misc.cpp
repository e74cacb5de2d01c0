// Small commands: the field catalog and the simulator's scenarios.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "fields/catalog.h"

namespace gw::cli {

void addFields(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("fields", "Print the field catalog: DCGM names, nvidia-smi names, units");
  auto markdown = std::make_shared<bool>(false);
  cmd->add_flag("--markdown", *markdown, "Print docs/fields.md");
  cmd->callback([&run, markdown]() {
    if (*markdown) {
      std::cout << fields::renderMarkdown();
      return;
    }
    if (run.ctx.options.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& f : fields::all()) {
        j.push_back({{"key", f.key},
                     {"dcgm_id", f.dcgm_id},
                     {"dcgm_name", f.dcgm_name},
                     {"smi_name", f.smi_name},
                     {"native_name", f.native_name},
                     {"unit", f.unit},
                     {"type", f.type == fields::Type::Gauge     ? "gauge"
                              : f.type == fields::Type::Counter ? "counter"
                                                                : "label"},
                     {"help", f.help}});
      }
      std::cout << j.dump(2) << "\n";
      return;
    }
    for (const auto& f : fields::all()) {
      std::cout << f.key << "\t" << (f.dcgm_name.empty() ? "-" : f.dcgm_name) << "\t"
                << (f.smi_name.empty() ? "-" : f.smi_name) << "\t" << (f.unit.empty() ? "-" : f.unit) << "\t" << f.help
                << "\n";
    }
  });
}

void addSim(CLI::App& app, Run& run) {
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
