// The one list of health rules. RuleEngine evaluates it, parseRuleConfig validates `disabled:`
// against it, ruleNames() lists it, and docs/health.md's rule table and the "Rule:" lines of
// docs/knowledge-base.md are rendered from it; tests keep the docs equal to the renderings.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "health/rule.h"
#include "knowledge/knowledge_base.h"

namespace gw::health {

// Every rule, family by family.
std::span<const Rule* const> ruleRegistry();
const Rule* findRule(std::string_view name);

// The name both alert routes give a rule's findings, the agent's own sinks and Prometheus over
// deploy/prometheus/gpuwarden-rules.yml, so that Alertmanager takes them for one alert: "Gpu" and
// the rule's name in PascalCase, without its own "gpu_" ("thermal_slowdown" -> "GpuThermalSlowdown",
// "gpu_lost" -> "GpuLost").
std::string alertName(std::string_view rule);
// The severity of an Xid finding of this code before the repeat escalation: the catalog's, and info
// for an application fault (which never marks a GPU bad on its own).
Severity xidSeverity(int code);

// The rules whose findings point at a knowledge-base entry, comma-separated ("" for none): those
// naming it, and "xid (Xid 79)" for the codes whose Xid findings point at it.
std::string rulesForKbEntry(const knowledge::KbEntry& entry);

// docs/health.md's rule table (the part between its rule-table markers).
std::string renderRuleTableMarkdown();
// docs/health.md's boundary table: every threshold of every rule with its default and step.
std::string renderBoundaryTableMarkdown();
// docs/knowledge-base.md: the knowledge base with the rules that detect each entry.
std::string renderKnowledgeBaseDoc();

}  // namespace gw::health
