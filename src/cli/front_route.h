// Which program answers a command line: the small front (`bin/gpuwarden`) or the full one
// (`gpuwarden-full`, which the front executes in its place).
//
// Why two: the full program links everything the agent needs (TLS, HTTP, SQLite, gRPC for the
// kubelet, libsystemd: about 70 shared libraries), and the dynamic loader alone made every start
// cost ~5 ms. The commands scripts call in loops (`smi`, `query`, `--version`) need only NVML, which
// is opened at run time, so the front answers them with the C++ runtime and fmt alone; everything
// else is one execv() away (docs/install.md, "Two programs").
#pragma once

#include <span>
#include <string_view>

namespace gw::cli {

enum class Program { Front, Full };

// The commands the front answers itself. The full program registers them too (its --help lists
// every command, and a front that sends a line on is never wrong, only slower).
inline constexpr std::string_view kFrontCommands[] = {"query", "smi"};

// Decides from the arguments after argv[0]: the global options that take a value are skipped
// with it; the first other word picks. `--version` first is the front's; anything unknown,
// `--help`, a bare program name or a Slurm hook name (argv[0]) goes to the full program, and so
// does an `smi` line that changes a setting (-pm, -pl, ...: smi_args.h changesSettings), which
// needs the agent's control socket and the records database the front does not link.
Program route(std::string_view argv0, std::span<const char* const> args);

}  // namespace gw::cli
