// gpuwarden pmon: processes on each GPU with their utilisation and memory (R22).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/gpu_processes.h"

namespace gw::cli {
namespace {

struct PmonOptions {
  int count = 0;
  double delay = 1;
  std::string ids;
};

}  // namespace

void addPmon(CLI::App& app, Run& run) {
  auto o = std::make_shared<PmonOptions>();
  auto* cmd = app.add_subcommand(
      "pmon", "Processes on each GPU with SM/memory utilisation and memory used, like nvidia-smi pmon");
  cmd->add_option("-c,--count", o->count, "Stop after COUNT samples (default: until interrupted)");
  cmd->add_option("-d,--delay", o->delay, "Seconds between samples (default 1)");
  cmd->add_option("-i,--id", o->ids, "GPUs to show: indexes, UUIDs or PCI bus ids");
  cmd->callback([&run, o]() {
    auto devices = run.ctx.devices(&run.exit_code);
    if (!devices) return;
    nvml::Session* s = devices->session;
    const unsigned count = devices->count;
    const GpuSelection sel = parseSelection(o->ids);
    const bool json = run.ctx.options.json;
    if (!json) {
      std::cout << fmt::format("# {:>3} {:>8} {:>4} {:>4} {:>4} {:>4} {:>4} {:>8}  {}\n", "gpu", "pid", "type", "sm",
                               "mem", "enc", "dec", "fb", "command");
      std::cout << fmt::format("# {:>3} {:>8} {:>4} {:>4} {:>4} {:>4} {:>4} {:>8}  {}\n", "Idx", "#", "C/G", "%", "%",
                               "%", "%", "MB", "name");
    }
    installStopHandlers();
    bool any_error = false;
    // Utilisation samples are asked for "since the last look", one second back the first time.
    auto nowUs = [] {
      return static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count());
    };
    std::uint64_t since = nowUs() - 1'000'000;
    for (int n = 0; o->count == 0 || n < o->count; ++n) {
      if (n > 0 && !sleepInterruptible(o->delay)) break;
      nlohmann::json sample = nlohmann::json::array();
      std::uint64_t now = nowUs();
      // Each GPU read on its own thread under the call deadline; a hung one is reported, not waited for.
      const auto reads = readGpuProcesses(
          *s, count, run.ctx.root(), since,
          [sel](unsigned i, const std::string& uuid, const std::string& bus) { return sel.matches(i, uuid, bus); },
          !sel.empty(), kCallDeadline);
      for (unsigned i = 0; i < count; ++i) {
        const GpuProcessRead& r = reads[i];
        if (r.stalled) {
          any_error = true;
          if (!json)
            std::cout << fmt::format("  {:>3} GPU stalled: no answer within {} ms\n", i, kCallDeadline.count());
          continue;
        }
        if (!r.matched) continue;
        if (!r.lost.empty()) {
          any_error = true;
          if (!json) std::cout << fmt::format("  {:>3} GPU is lost: {}\n", i, r.lost);
          continue;
        }
        if (r.procs.empty() && !json) {
          std::cout << fmt::format("  {:>3} {:>8} {:>4} {:>4} {:>4} {:>4} {:>4} {:>8}  {}\n", i, "-", "-", "-", "-",
                                   "-", "-", "-", "-");
        }
        for (const auto& p : r.procs) {
          auto pct = [](const std::optional<unsigned>& v) -> std::string { return v ? std::to_string(*v) : "-"; };
          auto num = [](const std::optional<unsigned>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
          unsigned long long mb = p.used_bytes / (1024 * 1024);
          if (json) {
            sample.push_back({{"gpu", i},
                              {"pid", p.pid},
                              {"type", p.graphics ? "G" : "C"},
                              {"sm", num(p.sm)},
                              {"mem", num(p.mem)},
                              {"enc", num(p.enc)},
                              {"dec", num(p.dec)},
                              {"fb_mb", mb},
                              {"command", p.command}});
          } else {
            std::cout << fmt::format("  {:>3} {:>8} {:>4} {:>4} {:>4} {:>4} {:>4} {:>8}  {}\n", i, p.pid,
                                     p.graphics ? "G" : "C", pct(p.sm), pct(p.mem), pct(p.enc), pct(p.dec), mb,
                                     p.command);
          }
        }
      }
      since = now;
      if (json) std::cout << sample.dump() << "\n";
      std::cout.flush();
    }
    run.exit_code = any_error ? kExitPartial : kExitOk;
  });
}

}  // namespace gw::cli
