// gpuwarden explain: what an Xid code or a symptom means (the Xid catalog, R26, and the fault
// knowledge base, R33).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/xid_json.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/xid_catalog.h"

namespace gw::cli {
namespace {

using nlohmann::json;

json kbJson(const knowledge::KbEntry& e) {
  auto strs = [](const std::vector<std::string_view>& v) {
    json a = json::array();
    for (auto s : v) a.push_back(s);
    return a;
  };
  return {{"id", e.id},
          {"symptom", e.symptom},
          {"causes", strs(e.causes)},
          {"checks", strs(e.checks)},
          {"actions", strs(e.actions)},
          {"xids", e.xids},
          {"auto_detectable", e.autoDetectable}};
}

void printKb(const knowledge::KbEntry& e) {
  std::cout << fmt::format("{} ({})\n", e.symptom, e.id);
  std::cout << "  Likely causes:\n";
  for (auto c : e.causes) std::cout << "    - " << c << "\n";
  std::cout << "  Checks:\n";
  for (auto c : e.checks) std::cout << "    - " << c << "\n";
  std::cout << "  Actions:\n";
  int n = 1;
  for (auto a : e.actions) std::cout << fmt::format("    {}. {}\n", n++, a);
  if (!e.xids.empty()) {
    std::cout << "  Related Xids:\n";
    for (int x : e.xids) std::cout << "    - " << knowledge::xidSummaryLine(x) << "\n";
  }
}

// The first line is the catalog's summary line, the one the knowledge base quotes too.
void printXid(const knowledge::XidInfo& x) {
  std::cout << knowledge::xidSummaryLine(x.code) << "\n";
  std::cout << fmt::format("  Category: {} | severity: {}\n", knowledge::toString(x.category),
                           knowledge::toString(x.severity));
  if (x.applicationFault) std::cout << "  This is the application's fault: on its own it does not mark the GPU bad.\n";
  if (!x.note.empty()) std::cout << "  Note: " << x.note << "\n";
}

std::string knownXidList() {
  std::string s;
  for (const auto& x : knowledge::xidCatalog()) s += (s.empty() ? "" : ", ") + std::to_string(x.code);
  return s;
}

void printKnownSymptoms(std::ostream& out) {
  out << "Known symptoms (gpuwarden explain \"<symptom>\"):\n";
  for (const auto& e : knowledge::knowledgeBase()) out << fmt::format("  {:<24} {}\n", e.id, e.symptom);
  out << "Known Xid codes (gpuwarden explain xid N): " << knownXidList() << "\n";
}

}  // namespace

void addExplain(CLI::App& app, Run& run) {
  auto* explain = app.add_subcommand(
      "explain", "Explain an Xid code (explain xid 79) or a symptom (explain \"No devices were found\")");
  auto words = std::make_shared<std::vector<std::string>>();
  explain->add_option("WHAT", *words, "xid N, or the symptom / error message text")->required();
  explain->footer("Exit codes: 0 explained, 2 unknown Xid code or symptom (the known ones are listed).");
  explain->callback([&run, words]() {
    const bool as_json = run.ctx.options.json;
    if (words->size() == 2 && ((*words)[0] == "xid" || (*words)[0] == "Xid" || (*words)[0] == "XID")) {
      int code = 0;
      try {
        std::size_t used = 0;
        code = std::stoi((*words)[1], &used);
        if (used != (*words)[1].size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        printError("'" + (*words)[1] + "' is not an Xid number");
        run.exit_code = kExitUsage;
        return;
      }
      auto x = knowledge::explainXid(code);
      if (!x.xid.known) {
        printError(fmt::format("Xid {} is not in gpuwarden's catalog. Known Xid codes: {}", code, knownXidList()));
        run.exit_code = kExitUsage;
        return;
      }
      if (as_json) {
        json j = xidJson(x.xid);
        j["related"] = json::array();
        for (const auto* e : x.related) j["related"].push_back(kbJson(*e));
        std::cout << j.dump(2) << "\n";
      } else {
        printXid(x.xid);
        for (const auto* e : x.related) {
          std::cout << "\nRelated: ";
          printKb(*e);
        }
      }
      run.exit_code = kExitOk;
      return;
    }
    std::string text;
    for (const auto& w : *words) text += (text.empty() ? "" : " ") + w;
    const knowledge::KbEntry* exact = knowledge::findKbEntry(text);
    std::vector<knowledge::KbMatch> matches;
    if (exact) {
      matches.push_back({exact, 1});
    } else {
      matches = knowledge::explain(text);
    }
    if (matches.empty()) {
      printError("no known symptom matches \"" + text + "\"");
      printKnownSymptoms(std::cerr);
      run.exit_code = kExitUsage;
      return;
    }
    if (as_json) {
      json j = json::array();
      for (const auto& m : matches) {
        json e = kbJson(*m.entry);
        e["score"] = m.score;
        j.push_back(e);
      }
      std::cout << json{{"query", text}, {"matches", j}}.dump(2) << "\n";
    } else {
      bool first = true;
      for (const auto& m : matches) {
        if (!first) std::cout << "\nAlso possible: ";
        printKb(*m.entry);
        first = false;
      }
    }
    run.exit_code = kExitOk;
  });
}

}  // namespace gw::cli
