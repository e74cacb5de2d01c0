// What both programs (the front and gpuwarden-full, see front_route.h) put on their command line
// the same way: the description, the version and the global options.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"

namespace gw::cli {

// "gpuwarden 0.1.0": what --version prints.
const char* versionLine();

// The app with its description, --version and the global options bound to `options`.
void configureApp(CLI::App& app, GlobalOptions& options);

// Runs app.parse and turns CLI11's exceptions into the exit codes both programs give; the command's
// own exit (run.exit_code) when parsing and the callback succeed, unless its output was lost.
int parseAndRun(CLI::App& app, int argc, char** argv, const Run& run);

}  // namespace gw::cli
