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

std::string_view cmpText(Cmp c) {
  switch (c) {
    case Cmp::kAtLeast:
      return "≥";
    case Cmp::kAbove:
      return ">";
    case Cmp::kAtMost:
      return "≤";
    case Cmp::kBelow:
      return "<";
    case Cmp::kEqual:
      return "=";
  }
  return "?";
}

}  // namespace

std::string describeThreshold(const Threshold& t, const RuleConfig& config) {
  std::string out(cmpText(t.cmp));
  out += ' ';
  if (!t.value) return out + std::string(t.against);
  const double v = t.value(config);
  out += t.percent ? trimmed(v * 100) + " %" : trimmed(v);
  return out + std::string(t.unit);
}

std::string describeFiresWhen(std::string_view text, std::span<const Threshold> thresholds, const RuleConfig& config) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::size_t close = text.find('}', i);
    if (text[i] == '{' && close != std::string_view::npos && close > i + 1 && close - i <= 3) {
      std::size_t n = 0;
      bool digits = true;
      for (char d : text.substr(i + 1, close - i - 1)) {
        digits = digits && d >= '0' && d <= '9';
        n = n * 10 + static_cast<std::size_t>(d - '0');
      }
      if (digits && n < thresholds.size()) {
        out += describeThreshold(thresholds[n], config);
        i = close;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

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

std::string alertName(std::string_view rule) {
  if (rule.starts_with("gpu_")) rule.remove_prefix(4);
  std::string name = "Gpu";
  bool upper = true;
  for (char c : rule) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return name;
}

std::string renderRuleTableMarkdown() {
  std::string md = "| rule | alert | fires when (defaults) | severity | hold | sticky | knowledge base |\n";
  md += "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Rule* r : registry()) {
    const RuleInfo& i = r->info;
    md += "| " + std::string(i.name) + " | " + alertName(i.name) + " | " +
          describeFiresWhen(i.fires_when, i.thresholds, RuleConfig{}) + " | " + std::string(severityName(i.severity)) +
          " | " + holdText(i) + " | " + (i.sticky ? "yes" : "no") + " | ";
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

std::string renderBoundaryTableMarkdown() {
  const RuleConfig defaults;
  std::string md = "| rule | signal | fires when | step | set by | beyond it |\n";
  md += "| --- | --- | --- | --- | --- | --- |\n";
  for (const Rule* r : registry()) {
    for (const Threshold& t : r->info.thresholds) {
      const std::string step = t.percent ? trimmed(t.step * 100) + " %" : trimmed(t.step) + std::string(t.unit);
      md += "| " + std::string(r->info.name) + " | " + std::string(t.signal) + " | " + describeThreshold(t, defaults) +
            " | " + step + " | " + (t.config_key.empty() ? "fixed" : "`" + std::string(t.config_key) + "`") + " | " +
            (t.marks.empty() ? std::string(severityName(t.severity))
                             : "\"" + std::string(t.marks) + "\" in the summary") +
            " |\n";
    }
  }
  return md;
}

std::string renderKnowledgeBaseDoc() {
  return knowledge::renderKnowledgeBaseMarkdown([](const knowledge::KbEntry& e) { return rulesForKbEntry(e); });
}

}  // namespace gw::health
