#include "cli/app.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "platform/deadline.h"

namespace gw::cli {

const char* versionLine() { return "gpuwarden " GW_VERSION; }

void configureApp(CLI::App& app, GlobalOptions& o) {
  app.description(
      "gpuwarden - GPU server operations: inventory, live monitoring, health, diagnostics.\n"
      "Talks to the NVIDIA driver through NVML; --simulate NAME runs on a simulated fleet instead.");
  app.name("gpuwarden");
  app.set_version_flag("--version", versionLine());
  app.require_subcommand(1);
  // Global options are accepted before or after the command name.
  app.fallthrough();
  // front_route.cpp skips these (and their values) to find the command: keep the two in step.
  app.add_option("--simulate", o.simulate,
                 "Use the NVML simulator with this scenario (name or YAML path); see `gpuwarden scenarios`")
      ->group("Global options");
  app.add_option("--nvml-lib", o.nvml_lib,
                 "Path of the NVML library (default libnvidia-ml.so.1, or $GPUWARDEN_NVML_LIB)")
      ->group("Global options");
  app.add_option("--root", o.root, "Filesystem root that /proc, /sys, /dev and /etc are read under (default /)")
      ->group("Global options");
  app.add_flag("--json", o.json, "Print JSON instead of tables")->group("Global options");
}

namespace {

// Standard output written out, or a sentence saying why not: a report lost on a full disk must not
// read as success to the script that redirected it.
bool outputWritten() {
  std::cout.flush();
  const bool stream_failed = std::cout.fail();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int why = errno;
  if (!stream_failed && !flush_failed && !std::ferror(stdout)) return true;
  // errno is only known when the last flush failed; an earlier failure left the stream marked.
  printError(std::string("cannot write standard output") +
             (why ? std::string(": ") + std::strerror(why) : std::string("; what was written is incomplete")));
  return false;
}

}  // namespace

int parseAndRun(CLI::App& app, int argc, char** argv, const Run& run) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    // Never an abort: every answer from elsewhere is read defensively, and whatever still throws
    // ends here with a sentence and the "no data" exit (for `health`: unknown, never healthy).
    printError(std::string("internal error: ") + e.what());
    return kExitNoAgent;
  }
  int exit_code = run.exit_code;
  if (!outputWritten() && exit_code == kExitOk) exit_code = run.output_lost_exit;
  // A command that gave up on a hung GPU leaves a thread inside NVML: end without tearing the
  // library down under it (which could crash or wait out the hang).
  if (platform::abandonedThreads() > 0) platform::exitProcess(exit_code);
  return exit_code;
}

}  // namespace gw::cli
