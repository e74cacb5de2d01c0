// gpuwarden pmon: processes on each GPU with their utilisation and memory (R22), in nvidia-smi
// pmon's columns (`gpuwarden smi pmon` prints the same through runPmon).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/gpu_processes.h"
#include "cli/views.h"
#include "nvml/errors.h"

namespace gw::cli {
namespace {

// nvidia-smi pmon's layout: "# gpu" then the pid (11 wide, its header one wider, as nvidia-smi
// prints it), the type (6) and each metric 7 wide, then four spaces and the command (15 at most).
constexpr std::size_t kCommandWidth = 15;

struct Metric {
  const char* name;
  const char* unit;
};
// jpg and ofa as nvidia-smi 580 prints them; NVML's per-process samples have no such engines, so
// their cells are always "-".
constexpr Metric kUtil[] = {{"sm", "%"}, {"mem", "%"}, {"enc", "%"}, {"dec", "%"}, {"jpg", "%"}, {"ofa", "%"}};
// ccpm (confidential computing's protected memory) as 580 prints it; NVML gives no per-process
// figure for it, so its cells are "-" too.
constexpr Metric kMem[] = {{"fb", "MB"}, {"ccpm", "MB"}};

}  // namespace

int runPmon(Context& ctx, const PmonOptions& o, std::ostream& out, std::ostream& err) {
  int exit_code = kExitOk;
  auto devices = ctx.devices(&exit_code);
  if (!devices) return exit_code;
  nvml::Session* s = devices->session;
  const unsigned count = devices->count;
  const GpuSelection sel = parseSelection(o.ids);
  if (!o.json) {
    std::string h1 = "# gpu         pid   type", h2 = "# Idx           #    C/G";
    for (char g : o.groups) {
      if (g == 'u')
        for (const auto& m : kUtil) {
          h1 += fmt::format("{:>7}", m.name);
          h2 += fmt::format("{:>7}", m.unit);
        }
      if (g == 'm')
        for (const auto& m : kMem) {
          h1 += fmt::format("{:>7}", m.name);
          h2 += fmt::format("{:>7}", m.unit);
        }
    }
    out << h1 << "    command \n" << h2 << "    name \n";
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
  for (int n = 0; o.count == 0 || n < o.count; ++n) {
    if (n > 0 && !sleepInterruptible(o.delay)) break;
    nlohmann::json sample = nlohmann::json::array();
    std::uint64_t now = nowUs();
    // Each GPU read on its own thread under the call deadline; a hung one is reported, not waited for.
    const auto reads = readGpuProcesses(
        *s, count, ctx.root(), since,
        [sel](unsigned i, const std::string& uuid, const std::string& bus) { return sel.matches(i, uuid, bus); },
        !sel.empty(), kCallDeadline);
    // A GPU that did not answer: a line of its own on a terminal, a note on `err` for a pipe
    // (where nvidia-smi's parsers expect only rows).
    auto note = [&](unsigned i, const std::string& what) {
      any_error = true;
      if (o.json) return;
      if (o.markers)
        out << fmt::format("{:>5} GPU {}\n", i, what);
      else
        err << fmt::format("gpuwarden: GPU {} {}\n", i, what);
    };
    for (unsigned i = 0; i < count; ++i) {
      const GpuProcessRead& r = reads[i];
      if (r.stalled) {
        note(i, "stalled: " + nvml::noAnswer(kCallDeadline));
        continue;
      }
      if (!r.matched) continue;
      if (!r.lost.empty()) {
        note(i, "is lost: " + r.lost);
        continue;
      }
      auto row = [&](const std::string& pid, const std::string& type, const GpuProcess* p) {
        std::string line = fmt::format("{:>5}{:>11}{:>6}", i, pid, type);
        auto pct = [](const std::optional<unsigned>& v) -> std::string { return v ? std::to_string(*v) : "-"; };
        for (char g : o.groups) {
          if (g == 'u') {
            for (const auto& v : {p ? pct(p->sm) : "-", p ? pct(p->mem) : "-", p ? pct(p->enc) : "-",
                                  p ? pct(p->dec) : "-", std::string("-"), std::string("-")})
              line += fmt::format("{:>7}", v);
          }
          if (g == 'm') line += fmt::format("{:>7}{:>7}", p ? std::to_string(p->used_bytes / (1024 * 1024)) : "-", "-");
        }
        const std::string command = p ? p->command.substr(0, kCommandWidth) : "-";
        // The command padded to 15, as the real 580 pads its "-" of an idle GPU.
        out << line << "    " << fmt::format("{:<{}}", command, kCommandWidth) << "\n";
      };
      if (r.procs.empty() && !o.json) row("-", "-", nullptr);
      for (const auto& p : r.procs) {
        if (o.json) {
          auto num = [](const std::optional<unsigned>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
          sample.push_back({{"gpu", i},
                            {"pid", p.pid},
                            {"type", p.graphics ? "G" : "C"},
                            {"sm", num(p.sm)},
                            {"mem", num(p.mem)},
                            {"enc", num(p.enc)},
                            {"dec", num(p.dec)},
                            {"fb_mb", p.used_bytes / (1024 * 1024)},
                            {"command", p.command}});
        } else {
          row(std::to_string(p.pid), p.graphics ? "G" : "C", &p);
        }
      }
    }
    since = now;
    if (o.json) out << sample.dump() << "\n";
    out.flush();
    if (!out) break;  // a full disk or a closed file: said once, by the caller
  }
  return any_error ? kExitPartial : kExitOk;
}

void addPmon(CLI::App& app, Run& run) {
  auto o = std::make_shared<PmonOptions>();
  auto* cmd = app.add_subcommand(
      "pmon", "Processes on each GPU with SM/memory utilisation and memory used, like nvidia-smi pmon");
  cmd->add_option("-c,--count", o->count, "Stop after COUNT samples (default: until interrupted)");
  cmd->add_option("-d,--delay", o->delay, "Seconds between samples (default 1)");
  cmd->add_option("-i,--id", o->ids, "GPUs to show: indexes, UUIDs or PCI bus ids");
  cmd->add_option("-s,--select", o->groups, "Metric groups: u utilisation, m memory (default um)");
  cmd->footer(kInventoryExitCodes);
  cmd->callback([&run, o]() {
    for (char g : o->groups)
      if (g != 'u' && g != 'm') {
        printError(fmt::format("unknown metric group '{}' in -s (valid: um)", g));
        run.exit_code = kExitUsage;
        return;
      }
    o->json = run.ctx.options.json;
    o->markers = stdoutIsTerminal();
    run.exit_code = runPmon(run.ctx, *o, std::cout, std::cerr);
  });
}

}  // namespace gw::cli
