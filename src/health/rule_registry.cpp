#include "health/rule_registry.h"

#include <algorithm>
#include <vector>

#include "knowledge/xid_catalog.h"

namespace gw::health {
namespace {

const std::vector<const Rule*>& registry() {
  static const std::vector<const Rule*> all = [] {
    std::vector<const Rule*> v;
    for (auto family : {thermalRules(), powerRules(), memoryRules(), linkRules(), workloadRules(), stateRules()})
      for (const Rule& r : family) v.push_back(&r);
    return v;
  }();
  return all;
}

std::string holdText(const RuleInfo& info) {
  if (!info.hold) return "—";
  const std::int64_t ms = RuleConfig{}.*(info.hold);
  if (ms == 0) return "0";
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + " min";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  return std::to_string(ms) + " ms";
}

}  // namespace

std::span<const Rule* const> ruleRegistry() { return registry(); }

const Rule* findRule(std::string_view name) {
  for (const Rule* r : registry())
    if (r->info.name == name) return r;
  return nullptr;
}

const std::vector<std::string>& ruleNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Rule* r : registry()) v.emplace_back(r->info.name);
    return v;
  }();
  return names;
}

std::string rulesForKbEntry(const knowledge::KbEntry& entry) {
  std::string out;
  auto add = [&](std::string_view s) {
    if (!out.empty()) out += ", ";
    out += s;
  };
  for (const Rule* r : registry()) {
    if (r->scope == RuleScope::kXid) {
      // The xid rule points at the entry about each code, so the codes say which entries it serves.
      std::string codes;
      for (const knowledge::XidInfo& x : knowledge::xidCatalog())
        if (knowledge::kbEntryForXid(x.code) == &entry) codes += (codes.empty() ? "" : ", ") + std::to_string(x.code);
      if (!codes.empty()) add(std::string(r->info.name) + " (Xid " + codes + ")");
    } else if (!r->info.kb_id.empty() && r->info.kb_id == entry.id) {
      add(r->info.name);
    }
  }
  return out;
}

std::string renderRuleTableMarkdown() {
  std::string md = "| rule | fires when (defaults) | severity | hold | sticky | knowledge base |\n";
  md += "| --- | --- | --- | --- | --- | --- |\n";
  for (const Rule* r : registry()) {
    const RuleInfo& i = r->info;
    md += "| " + std::string(i.name) + " | " + std::string(i.fires_when) + " | " +
          std::string(severityName(i.severity)) + " | " + holdText(i) + " | " + (i.sticky ? "yes" : "no") + " | ";
    if (r->scope == RuleScope::kXid)
      md += "the entry about the code";
    else if (i.kb_id.empty())
      md += "—";
    else
      md += "[" + std::string(i.kb_id) + "](knowledge-base.md#" + std::string(i.kb_id) + ")";
    md += " |\n";
  }
  return md;
}

std::string renderKnowledgeBaseDoc() {
  return knowledge::renderKnowledgeBaseMarkdown([](const knowledge::KbEntry& e) { return rulesForKbEntry(e); });
}

}  // namespace gw::health
