// gpuwarden pmon: processes on each GPU with their utilisation and memory (R22).
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "platform/deadline.h"

namespace gw::cli {
namespace {

struct PmonOptions {
  int count = 0;
  double delay = 1;
  std::string ids;
};

// The command name as the kernel knows it, read under the filesystem root; NVML's name when the
// process is not visible there (another PID namespace, a container).
std::string commandName(Context& ctx, const nvml::Session& s, unsigned pid) {
  if (auto comm = ctx.root().readLine("/proc/" + std::to_string(pid) + "/comm"); comm && !comm->empty()) return *comm;
  if (auto n = s.processName(pid); n && !n->empty()) {
    std::string name = *n;
    if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    return name;
  }
  return "-";
}

}  // namespace

void addPmon(CLI::App& app, Run& run) {
  auto o = std::make_shared<PmonOptions>();
  auto* cmd = app.add_subcommand(
      "pmon", "Processes on each GPU with SM/memory utilisation and memory used, like nvidia-smi pmon");
  cmd->add_option("-c,--count", o->count, "Stop after COUNT samples (default: until interrupted)");
  cmd->add_option("-d,--delay", o->delay, "Seconds between samples (default 1)");
  cmd->add_option("-i,--id", o->ids, "GPUs to show: indexes, UUIDs or PCI bus ids");
  cmd->callback([&run, o]() {
    auto* s = run.ctx.nvml();
    if (!s) {
      run.exit_code = run.ctx.failureExit();
      return;
    }
    auto count = s->deviceCount();
    if (!count) {
      printError(count.error());
      run.exit_code = kExitNoDriver;
      return;
    }
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
      struct Read {
        bool matched = false;
        std::string lost;  // why the GPU is lost, when it is
        std::vector<nvml::ProcessInfo> procs;
        std::map<unsigned, nvml::ProcessUtil> util;
      };
      auto reads = platform::runEachWithDeadline<Read>(
          *count,
          [s, sel, since](std::size_t idx) {
            const unsigned i = static_cast<unsigned>(idx);
            Read r;
            auto d = s->deviceByIndex(i);
            if (!d) {
              r.matched = sel.empty() || sel.matches(i, "", "");
              r.lost = d.error();
              return r;
            }
            std::string uuid, bus;
            if (!sel.empty()) {
              uuid = d->uuid().value_or("");
              if (auto p = d->pciInfo()) bus = p->bus_id;
            }
            if (!sel.matches(i, uuid, bus)) return r;
            r.matched = true;
            auto procs = d->computeProcesses();
            if (!procs) {
              if (nvml::isLost(procs.status().nvmlCode())) r.lost = procs.error();
              return r;
            }
            r.procs = std::move(procs).value();
            if (auto g = d->graphicsProcesses()) r.procs.insert(r.procs.end(), g->begin(), g->end());
            if (auto u = d->processUtilization(since))
              for (const auto& p : *u) r.util[p.pid] = p;
            return r;
          },
          kCallDeadline);
      for (unsigned i = 0; i < *count; ++i) {
        if (!reads[i]) {
          any_error = true;
          if (!json)
            std::cout << fmt::format("  {:>3} GPU stalled: no answer within {} ms\n", i, kCallDeadline.count());
          continue;
        }
        const Read& r = *reads[i];
        if (!r.matched) continue;
        if (!r.lost.empty()) {
          any_error = true;
          if (!json) std::cout << fmt::format("  {:>3} GPU is lost: {}\n", i, r.lost);
          continue;
        }
        const auto* procs = &r.procs;
        const auto& util = r.util;
        if (procs->empty() && !json) {
          std::cout << fmt::format("  {:>3} {:>8} {:>4} {:>4} {:>4} {:>4} {:>4} {:>8}  {}\n", i, "-", "-", "-", "-",
                                   "-", "-", "-", "-");
        }
        for (const auto& p : *procs) {
          auto u = util.find(p.pid);
          auto pct = [&](unsigned nvml::ProcessUtil::*m) -> std::string {
            return u == util.end() ? "-" : std::to_string(u->second.*m);
          };
          std::string name = commandName(run.ctx, *s, p.pid);
          unsigned long long mb = p.used_bytes / (1024 * 1024);
          if (json) {
            sample.push_back({{"gpu", i},
                              {"pid", p.pid},
                              {"type", p.graphics ? "G" : "C"},
                              {"sm", u == util.end() ? nlohmann::json(nullptr) : nlohmann::json(u->second.sm)},
                              {"mem", u == util.end() ? nlohmann::json(nullptr) : nlohmann::json(u->second.mem)},
                              {"enc", u == util.end() ? nlohmann::json(nullptr) : nlohmann::json(u->second.enc)},
                              {"dec", u == util.end() ? nlohmann::json(nullptr) : nlohmann::json(u->second.dec)},
                              {"fb_mb", mb},
                              {"command", name}});
          } else {
            std::cout << fmt::format("  {:>3} {:>8} {:>4} {:>4} {:>4} {:>4} {:>4} {:>8}  {}\n", i, p.pid,
                                     p.graphics ? "G" : "C", pct(&nvml::ProcessUtil::sm), pct(&nvml::ProcessUtil::mem),
                                     pct(&nvml::ProcessUtil::enc), pct(&nvml::ProcessUtil::dec), mb, name);
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
