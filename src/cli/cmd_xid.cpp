// gpuwarden xid scan: read a saved kernel log for Xid events and say what each calls for (the Xid
// catalog, R26).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/xid_json.h"
#include "health/log_scan.h"
#include "knowledge/xid_catalog.h"

namespace gw::cli {
namespace {

using events::KernelEvent;
using events::KernelEventKind;
using nlohmann::json;

std::string eventTime(const KernelEvent& e) {
  if (e.wallClock) {
    const auto& w = *e.wallClock;
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", w.year, w.month, w.day, w.hour, w.minute, w.second);
  }
  if (e.monotonicUs) return fmt::format("[{}.{:06}]", *e.monotonicUs / 1000000, *e.monotonicUs % 1000000);
  return "-";
}

// The action an Xid event calls for; Xid 154 carries its own recovery action.
knowledge::XidAction eventAction(const KernelEvent& e, const knowledge::XidInfo& info) {
  auto action = info.action;
  if (e.recovery) action = std::max(action, knowledge::actionForRecoveryCode(e.recovery->to));
  return action;
}

bool needsGpuAction(knowledge::XidAction a) { return a >= knowledge::XidAction::kResetGpu; }

int scanLog(std::istream& in, const std::string& name, bool as_json) {
  auto scan = health::parseLogFile(in);
  std::map<std::pair<int, int>, std::size_t> per_code;  // (kind, code) -> count
  bool needs_action = false;
  json jevents = json::array();
  std::vector<std::string> lines;
  for (const auto& e : scan.events) {
    if (e.kind == KernelEventKind::kGpuUuid) continue;
    per_code[{static_cast<int>(e.kind), e.code}]++;
    const std::string bus = e.pciBusId.empty() ? (e.device.empty() ? "-" : e.device) : e.pciBusId;
    if (e.kind == KernelEventKind::kSXid) {
      lines.push_back(fmt::format("{} {} SXid {}: NVSwitch error{}", eventTime(e), bus, e.code,
                                  e.fatal ? (*e.fatal ? " (fatal)" : " (non-fatal)") : ""));
      jevents.push_back({{"time", eventTime(e)}, {"kind", "sxid"}, {"device", bus}, {"code", e.code}, {"raw", e.raw}});
      continue;
    }
    auto info = knowledge::lookupXid(e.code);
    auto action = eventAction(e, info);
    if (needsGpuAction(action)) needs_action = true;
    lines.push_back(fmt::format("{} {} Xid {} {}{}: {}\n    action: {}", eventTime(e), bus, e.code, info.mnemonic,
                                e.inferred ? " (inferred)" : "", info.meaning, knowledge::describe(action)));
    json j = xidJson(info);
    j["time"] = eventTime(e);
    j["kind"] = "xid";
    j["pci_bus_id"] = e.pciBusId;
    j["action"] = knowledge::toString(action);
    j["action_text"] = knowledge::describe(action);
    j["inferred"] = e.inferred;
    if (e.pid) j["pid"] = *e.pid;
    if (!e.processName.empty()) j["process"] = e.processName;
    j["raw"] = e.raw;
    jevents.push_back(j);
  }
  if (as_json) {
    json summary = json::array();
    for (const auto& [k, n] : per_code)
      summary.push_back({{"kind", k.first == static_cast<int>(KernelEventKind::kSXid) ? "sxid" : "xid"},
                         {"code", k.second},
                         {"count", n}});
    json errs = json::array();
    for (const auto& m : scan.firstErrors) errs.push_back({{"line", m.lineNumber}, {"error", m.error}});
    json j{{"file", name},
           {"lines", scan.lines},
           {"events", jevents},
           {"summary", summary},
           {"malformed", scan.malformed},
           {"malformed_lines", errs},
           {"needs_action", needs_action}};
    std::cout << j.dump(2) << "\n";
  } else {
    for (const auto& l : lines) std::cout << l << "\n";
    std::size_t total = 0;
    for (const auto& [k, n] : per_code) total += n;
    std::cout << fmt::format("\nSummary: {} event{} in {} line{} of {}\n", total, total == 1 ? "" : "s", scan.lines,
                             scan.lines == 1 ? "" : "s", name);
    for (const auto& [k, n] : per_code) {
      bool sxid = k.first == static_cast<int>(KernelEventKind::kSXid);
      std::cout << fmt::format("  {} {:<4} x{}{}\n", sxid ? "SXid" : "Xid ", k.second, n,
                               sxid ? "" : fmt::format("  {}", knowledge::lookupXid(k.second).mnemonic));
    }
    if (scan.malformed) {
      std::string nums;
      for (std::size_t i = 0; i < scan.firstErrors.size() && i < 5; ++i)
        nums += (nums.empty() ? "" : ", ") + std::to_string(scan.firstErrors[i].lineNumber);
      std::cout << fmt::format("  {} malformed NVIDIA line{} skipped (line {})\n", scan.malformed,
                               scan.malformed == 1 ? "" : "s", nums);
    }
    std::cout << (needs_action
                      ? "Result: at least one Xid needs action on the GPU or node (reset, reboot or replace).\n"
                      : "Result: no Xid that needs a GPU reset, reboot or replacement.\n");
  }
  return needs_action ? 1 : 0;
}

}  // namespace

nlohmann::json xidJson(const knowledge::XidInfo& x) {
  return {{"code", x.code},
          {"known", x.known},
          {"mnemonic", x.mnemonic},
          {"meaning", x.meaning},
          {"category", knowledge::toString(x.category)},
          {"severity", knowledge::toString(x.severity)},
          {"action", knowledge::toString(x.action)},
          {"action_text", knowledge::describe(x.action)},
          {"escalation", knowledge::toString(x.escalation)},
          {"application_fault", x.applicationFault},
          {"note", x.note}};
}

void addXid(CLI::App& app, Run& run) {
  auto* xid = app.add_subcommand("xid", "Xid events in saved kernel logs");
  xid->require_subcommand(1);
  auto* scan = xid->add_subcommand("scan", "Read a saved dmesg / journalctl log and explain each NVIDIA Xid event");
  auto file = std::make_shared<std::string>();
  scan->add_option("FILE", *file, "The log file, or - for standard input")->required();
  scan->footer(
      "Exit codes: 0 no Xid that needs action, 1 an Xid needs a GPU reset, node reboot or replacement,\n"
      "2 the input could not be read.");
  scan->callback([&run, file]() {
    if (*file == "-") {
      run.exit_code = scanLog(std::cin, "standard input", run.ctx.options.json);
      return;
    }
    std::ifstream in(*file);
    if (!in) {
      printError("cannot read " + *file);
      run.exit_code = kExitUsage;
      return;
    }
    run.exit_code = scanLog(in, *file, run.ctx.options.json);
  });
}

}  // namespace gw::cli
