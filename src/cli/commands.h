// Each command registers itself on the CLI11 app; its callback stores the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "collect/sampler.h"

#include <nlohmann/json.hpp>

namespace gw::cli {

// The bound on one GPU's reads in a command (the agent's call deadline).
inline constexpr std::chrono::milliseconds kCallDeadline = collect::kDefaultCallDeadline;

struct Run {
  Context ctx;
  int exit_code = kExitOk;
  // The exit of a command that did its work but whose standard output could not be written (a full
  // disk, a closed file) and that would have exited 0; smi sets nvidia-smi's own.
  int output_lost_exit = kExitPartial;
};

void addDiscovery(CLI::App& app, Run& run);
void addQuery(CLI::App& app, Run& run);
void addDmon(CLI::App& app, Run& run);
void addPmon(CLI::App& app, Run& run);
void addTopo(CLI::App& app, Run& run);
void addFields(CLI::App& app, Run& run);
void addScenarios(CLI::App& app, Run& run);
void addServe(CLI::App& app, Run& run);
void addHashPassword(CLI::App& app, Run& run);  // bcrypt for the web configuration
void addReload(CLI::App& app, Run& run);
void addHistory(CLI::App& app, Run& run);
void addDoctor(CLI::App& app, Run& run);
void addCuda(CLI::App& app, Run& run);
void addXid(CLI::App& app, Run& run);  // xid scan
void addExplain(CLI::App& app, Run& run);
void addDiag(CLI::App& app, Run& run);
void addBurn(CLI::App& app, Run& run);  // burn (cmd_burn.cpp)
void addHealth(CLI::App& app, Run& run);
void addIncidents(CLI::App& app, Run& run);
void addEvents(CLI::App& app, Run& run);
void addJob(CLI::App& app, Run& run);         // job list|show|compare
void addSlurm(CLI::App& app, Run& run);       // slurm gres|healthcheck|prolog|epilog
void addCluster(CLI::App& app, Run& run);     // cluster diag
void addFleet(CLI::App& app, Run& run);       // fleet (over Prometheus)
void addRecords(CLI::App& app, Run& run);     // records (cmd_job.cpp)
void addCompletion(CLI::App& app, Run& run);  // completion bash
void addTop(CLI::App& app, Run& run);         // top (nvtop-like screen)
void addSmi(CLI::App& app, Run& run);         // smi: nvidia-smi's command line (cli/smi/)

// The node's health verdict (node::Monitor::healthReport's document): from the agent that owns
// data_dir when one answers (and `standalone` is false), else from a standalone run of the same
// monitor for `seconds` (judging with config_path's health: section when given). `unknown` says
// why there is no verdict; the agent's refusal or an unreadable answer is unknown, never healthy.
// How long a standalone check watches when --seconds is not given (`health`, `slurm healthcheck`).
inline constexpr double kStandaloneCheckSeconds = 3;
struct NodeHealth {
  nlohmann::json report;
  std::string source;    // "agent DIR" or "standalone, 3.0 s" (the time it watched)
  std::string unknown;   // non-empty: no verdict
  int exitCode() const;  // 0 healthy, 1 warning, 2 critical, 3 unknown
};
NodeHealth nodeHealth(Run& run, const std::string& data_dir, bool standalone, double seconds,
                      const std::string& config_path);

// Parses "-i 0,2,GPU-xxxx,00000000:18:00.0" into a predicate over GPU index/UUID/bus id.
struct GpuSelection {
  std::vector<std::string> ids;
  bool empty() const { return ids.empty(); }
  bool matches(unsigned index, const std::string& uuid, const std::string& bus_id) const;
};
GpuSelection parseSelection(const std::string& spec);
// -i 0,2,GPU-xxxx,00000000:18:00.0 -> NVML indices (diag, burn). Plain indices pass through (the
// command checks the range); a UUID or bus id that matches no GPU prints an error, returns false.
bool resolveGpuIds(nvml::Session& s, const std::string& spec, std::vector<int>& out);

// Sleeps for `seconds`, waking early on SIGINT/SIGTERM; returns false when interrupted.
bool sleepInterruptible(double seconds);
void installStopHandlers();
bool stopRequested();

}  // namespace gw::cli
