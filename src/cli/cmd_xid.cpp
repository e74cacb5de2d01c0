// gpuwarden xid scan: read a saved kernel log for Xid events and say what each calls for (the Xid
// catalog, R26).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/xid_json.h"
#include "events/line_reader.h"
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

// `j` pretty-printed as an element of the streamed "events" array (4 spaces in).
std::string indented(const json& j) {
  std::string out = "    ";
  for (char c : j.dump(2, ' ', false, json::error_handler_t::replace)) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

// Streams: each event is printed as it is read (the JSON array too), so memory stays flat however
// large the log; only the per-code summary (at most kMaxCodes entries) is kept.
int scanLog(std::istream& in, const std::string& name, bool as_json) {
  constexpr std::size_t kMaxCodes = 4096;
  std::map<std::pair<int, int>, std::size_t> per_code;  // (kind, code) -> count
  std::size_t other_codes = 0;                          // events of codes past kMaxCodes
  std::size_t total = 0;
  bool needs_action = false;
  bool first = true;
  if (as_json)
    std::cout << "{\n  \"file\": " << json(name).dump(-1, ' ', false, json::error_handler_t::replace)
              << ",\n  \"events\": [";
  auto emit = [&](const std::string& text, const json& j) {
    if (as_json) {
      std::cout << (first ? "\n" : ",\n") << indented(j);
    } else {
      std::cout << text << "\n";
    }
    first = false;
  };
  const auto scan = health::scanLogStream(in, [&](KernelEvent&& e) {
    if (e.kind == KernelEventKind::kGpuUuid) return;
    ++total;
    const std::pair<int, int> key{static_cast<int>(e.kind), e.code};
    if (auto it = per_code.find(key); it != per_code.end())
      ++it->second;
    else if (per_code.size() < kMaxCodes)
      per_code.emplace(key, 1);
    else
      ++other_codes;
    const std::string bus = e.pciBusId.empty() ? (e.device.empty() ? "-" : e.device) : e.pciBusId;
    if (e.kind == KernelEventKind::kSXid) {
      emit(fmt::format("{} {} SXid {}: NVSwitch error{}", eventTime(e), bus, e.code,
                       e.fatal ? (*e.fatal ? " (fatal)" : " (non-fatal)") : ""),
           {{"time", eventTime(e)}, {"kind", "sxid"}, {"device", bus}, {"code", e.code}, {"raw", e.raw}});
      return;
    }
    auto info = knowledge::lookupXid(e.code);
    auto action = eventAction(e, info);
    if (needsGpuAction(action)) needs_action = true;
    json j;
    if (as_json) {
      j = xidJson(info);
      j["time"] = eventTime(e);
      j["kind"] = "xid";
      j["pci_bus_id"] = e.pciBusId;
      j["action"] = knowledge::toString(action);
      j["action_text"] = knowledge::describe(action);
      j["inferred"] = e.inferred;
      if (e.pid) j["pid"] = *e.pid;
      if (!e.processName.empty()) j["process"] = e.processName;
      j["raw"] = e.raw;
    }
    emit(as_json ? std::string()
                 : fmt::format("{} {} Xid {} {}{}: {}\n    action: {}", eventTime(e), bus, e.code, info.mnemonic,
                               e.inferred ? " (inferred)" : "", info.meaning, knowledge::describe(action)),
         j);
  });
  if (as_json) {
    json summary = json::array();
    for (const auto& [k, n] : per_code)
      summary.push_back({{"kind", k.first == static_cast<int>(KernelEventKind::kSXid) ? "sxid" : "xid"},
                         {"code", k.second},
                         {"count", n}});
    json errs = json::array();
    for (const auto& m : scan.firstErrors) errs.push_back({{"line", m.lineNumber}, {"error", m.error}});
    json tail{{"lines", scan.lines},         {"summary", summary},      {"summary_other", other_codes},
              {"malformed", scan.malformed}, {"malformed_lines", errs}, {"truncated_lines", scan.truncated},
              {"needs_action", needs_action}};
    // The rest of the object: tail's members after the streamed ones ("{\n" dropped).
    std::cout << (first ? "]" : "\n  ]") << ",\n"
              << tail.dump(2, ' ', false, json::error_handler_t::replace).substr(2) << "\n";
  } else {
    std::cout << fmt::format("\nSummary: {} event{} in {} line{} of {}\n", total, total == 1 ? "" : "s", scan.lines,
                             scan.lines == 1 ? "" : "s", name);
    for (const auto& [k, n] : per_code) {
      bool sxid = k.first == static_cast<int>(KernelEventKind::kSXid);
      std::cout << fmt::format("  {} {:<4} x{}{}\n", sxid ? "SXid" : "Xid ", k.second, n,
                               sxid ? "" : fmt::format("  {}", knowledge::lookupXid(k.second).mnemonic));
    }
    if (other_codes) std::cout << fmt::format("  {} more event(s) of other codes\n", other_codes);
    if (scan.truncated)
      std::cout << fmt::format("  {} line{} longer than {} bytes cut\n", scan.truncated, scan.truncated == 1 ? "" : "s",
                               events::kMaxKernelLineBytes);
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
