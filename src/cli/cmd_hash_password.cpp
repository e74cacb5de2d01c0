// gpuwarden hash-password: a bcrypt hash for basic_auth_users in the web configuration
// (docs/config.md, "Web configuration"). The password is read from standard input, never from
// the command line, where other users could read it in /proc.
#include <unistd.h>

#include <iostream>
#include <string>

#include "cli/commands.h"
#include "server/basic_auth.h"

namespace gw::cli {

void addHashPassword(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("hash-password",
                                 "Print a bcrypt hash of the password read from standard input, for basic_auth_users");
  auto cost = std::make_shared<int>(10);
  cmd->add_option("--cost", *cost, "bcrypt cost, 4..31 (each step doubles the work; default 10)")
      ->check(CLI::Range(4, 31));
  cmd->footer(
      "Example:\n"
      "  printf '%s' 's3cret' | gpuwarden hash-password\n"
      "  then in the web configuration:  basic_auth_users: {prometheus: <the hash>}\n"
      "The first line of standard input is the password (without its newline).\n"
      "Exit codes: 0 printed, 1 no hash could be made (a NUL in the password, no bcrypt in libcrypt, no\n"
      "randomness for the salt), 2 no password on standard input.");
  cmd->callback([&run, cost]() {
    if (::isatty(STDIN_FILENO)) std::cerr << "password: " << std::flush;
    std::string password;
    std::getline(std::cin, password);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    if (password.empty()) {
      printError("no password on standard input");
      run.exit_code = kExitUsage;
      return;
    }
    auto hash = server::bcryptHash(password, *cost);
    if (!hash) {
      printError(hash.error());
      run.exit_code = 1;
      return;
    }
    std::cout << *hash << "\n";
  });
}

}  // namespace gw::cli
