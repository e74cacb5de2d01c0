// gpuwarden reload: the agent that owns --data-dir re-reads its configuration file, as on SIGHUP,
// but asked by name over the control socket (no pid to find, and the caller is recorded).
#include <iostream>

#include "cli/agent_link.h"
#include "cli/commands.h"

namespace gw::cli {

void addReload(CLI::App& app, Run& run) {
  auto* cmd =
      app.add_subcommand("reload", "Make the agent that owns --data-dir re-read its configuration file (like SIGHUP)");
  auto dir = std::make_shared<std::string>(node::kDefaultDataDir);
  cmd->add_option("--data-dir", *dir,
                  std::string("The agent's data directory (default ") + node::kDefaultDataDir + ")");
  cmd->footer(
      "Exit codes: 0 reloaded, 1 the agent refused the file (it keeps the running configuration; the\n"
      "reason is printed), 3 no agent owns the data directory or it could not be asked.");
  cmd->callback([&run, dir]() {
    auto reply = askAgent(*dir, "config.reload");
    if (!reply.reached) {
      printError("no agent owns " + *dir + " (its control socket " + node::DataDir(*dir).controlSocket() +
                 " does not answer)");
      run.exit_code = kExitNoDriver;
      return;
    }
    if (!reply.error.empty()) {
      printError(reply.error);
      run.exit_code = kExitNoDriver;
      return;
    }
    if (!reply.body.value("ok", false)) {
      printError("reload refused, the agent keeps its running configuration: " +
                 reply.body.value("error", std::string("?")));
      run.exit_code = 1;
      return;
    }
    const auto& result = reply.body["result"];
    std::cout << "configuration reloaded from "
              << (result.is_object() ? result.value("source", std::string("?")) : std::string("?")) << "\n";
  });
}

}  // namespace gw::cli
