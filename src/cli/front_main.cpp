// bin/gpuwarden: the front. It answers the commands scripts run in loops (front_route.h) with a
// small set of shared libraries, and executes gpuwarden-full, in this same process, for the rest.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/front_route.h"

namespace {

// Beside the front in a build tree; <prefix>/libexec when installed (deploy/CMakeLists.txt). Both
// keep ../lib/gpuwarden and ../share/gpuwarden where the full program looks for its parts.
std::vector<std::string> fullProgramCandidates() {
  if (const char* env = std::getenv("GPUWARDEN_FULL"); env && *env) return {env};
  const std::string dir = gw::cli::executableDirectory();
  return {dir + "/gpuwarden-full",
          (std::filesystem::path(dir) / ".." / "libexec" / "gpuwarden-full").lexically_normal()};
}

[[noreturn]] void runFullProgram(char** argv) {
  std::string tried;
  for (const auto& path : fullProgramCandidates()) {
    // argv stays as it was: argv[0] keeps a Slurm hook's name, which picks that hook's command.
    ::execv(path.c_str(), argv);
    tried += (tried.empty() ? "" : ", ") + path + " (" + std::strerror(errno) + ")";
  }
  gw::cli::printError("cannot run the full program gpuwarden-full: tried " + tried +
                      "; reinstall gpuwarden or set GPUWARDEN_FULL");
  std::_Exit(gw::cli::kExitNoDriver);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gw::cli;
  const std::span<const char* const> args(const_cast<const char* const*>(argv) + (argc > 0 ? 1 : 0),
                                          argc > 0 ? static_cast<std::size_t>(argc - 1) : 0);
  if (route(argc > 0 ? argv[0] : "", args) == Program::Full) runFullProgram(argv);
  // `gpuwarden --version` alone, the probe scripts and package checks run, before the command
  // line's tables are built (most of what is left of its start-up); what CLI11 would print.
  if (args.size() == 1 && std::strcmp(args[0], "--version") == 0) {
    std::fputs(versionLine(), stdout);
    std::fputc('\n', stdout);
    return std::fflush(stdout) == 0 ? kExitOk : 1;  // a failed write, as coreutils say it
  }
  CLI::App app;
  Run run;
  configureApp(app, run.ctx.options);
  addQuery(app, run);
  addSmi(app, run);
  return parseAndRun(app, argc, argv, run);
}
