#include "cli/stack_facts.h"

#include "cli/commands.h"
#include "nvml/inventory.h"

extern char** environ;

namespace gw::cli {

std::map<std::string, std::string> processEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

doctor::NvmlFacts nvmlFactsFrom(const nvml::Session& s) {
  doctor::NvmlFacts facts;
  facts.library_loaded = true;
  facts.init_return = 0;
  auto inv = nvml::readInventory(s, kCallDeadline);
  if (!inv) {
    facts.init_error = inv.error();
    return facts;
  }
  facts.driver_version = inv->driver_version;
  facts.cuda_driver_version = inv->cuda_driver_version;
  facts.nvml_version = inv->nvml_version;
  for (const auto& g : inv->gpus) {
    doctor::NvmlFacts::Gpu gpu;
    gpu.index = static_cast<int>(g.index);
    gpu.pci_bus_id = g.pci.bus_id;
    if (g.minor_number) gpu.minor = static_cast<int>(*g.minor_number);
    if (g.state == "ok") {
      gpu.name = g.name;
      if (g.compute_capability) {
        gpu.cc_major = g.compute_capability->major;
        gpu.cc_minor = g.compute_capability->minor;
      }
      gpu.persistence_mode = g.persistence.value_or(false);
      auto display = g.device.displayActive();
      gpu.display_active = display ? *display : false;
    }
    facts.gpus.push_back(std::move(gpu));
  }
  return facts;
}

}  // namespace gw::cli
