#include "cli/front_route.h"

#include <algorithm>

#include "cli/smi/smi_args.h"

namespace gw::cli {
namespace {

// The global options of app.cpp that take a value as the next word.
constexpr std::string_view kValueOptions[] = {"--simulate", "--nvml-lib", "--root"};

bool takesValue(std::string_view word) {
  return std::find(std::begin(kValueOptions), std::end(kValueOptions), word) != std::end(kValueOptions);
}

bool isValueOptionWithEquals(std::string_view word) {
  const auto eq = word.find('=');
  return eq != std::string_view::npos && takesValue(word.substr(0, eq));
}

}  // namespace

Program route(std::string_view argv0, std::span<const char* const> args) {
  // A Slurm hook runs under its link's name; those commands live in the full program.
  const auto slash = argv0.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
  if (base != "gpuwarden") return Program::Full;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view word = args[i] ? std::string_view(args[i]) : std::string_view();
    if (takesValue(word)) {
      ++i;
      continue;
    }
    if (isValueOptionWithEquals(word) || word == "--json") continue;
    if (word == "--version") return Program::Front;
    const bool front =
        std::find(std::begin(kFrontCommands), std::end(kFrontCommands), word) != std::end(kFrontCommands);
    if (front && word == "smi")
      for (std::size_t j = i + 1; j < args.size(); ++j)
        if (args[j] && smi::changesSettings(args[j])) return Program::Full;
    return front ? Program::Front : Program::Full;
  }
  return Program::Full;
}

}  // namespace gw::cli
