// gpuwarden reload: the agent that owns --data-dir re-reads its configuration file, as on SIGHUP,
// but asked by name over the control socket (no pid to find, and the caller is recorded).
#include <iostream>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cli/json_read.h"

namespace gw::cli {

void addReload(CLI::App& app, Run& run) {
  auto* cmd =
      app.add_subcommand("reload", "Make the agent that owns --data-dir re-read its configuration file (like SIGHUP)");
  auto dir = std::make_shared<std::string>(node::defaultDataDir());
  cmd->add_option("--data-dir", *dir,
                  std::string("The agent's data directory (default ") + node::defaultDataDirHelp() + ")");
  cmd->footer(
      "Exit codes: 0 reloaded, 1 the agent refused the file (it keeps the running configuration; the\n"
      "reason is printed), 3 no agent owns the data directory or it could not be asked.");
  cmd->callback([&run, dir]() {
    auto a = askAgent(*dir, "config.reload");
    if (!agentAnswered(a, *dir)) {
      run.exit_code = kExitNoAgent;
      return;
    }
    if (!a.ok) {
      printError("reload refused, the agent keeps its running configuration: " + a.refusal);
      run.exit_code = 1;
      return;
    }
    std::cout << "configuration reloaded from " << jr::str(a.result, "source", "?") << "\n";
  });
}

}  // namespace gw::cli
