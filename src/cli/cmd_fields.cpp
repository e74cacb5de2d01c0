// gpuwarden fields: the field catalog with its DCGM, nvidia-smi and native names.
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

}  // namespace gw::cli
