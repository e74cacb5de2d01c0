// The fault knowledge base: seed 001 §5.1's quick-lookup table (R33) as entries, each with the
// symptom, likely causes, checks and actions, and whether gpuwarden detects it by itself.
// docs/knowledge-base.md is rendered from it (renderKnowledgeBaseMarkdown) and a test keeps the two
// equal. The KB sits below health/ and never names a health rule: each rule names its entry
// (health/rule_registry.cpp), so that link is written once.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "knowledge/xid_catalog.h"

namespace gw::knowledge {

struct KbEntry {
  std::string_view id;         // stable id, e.g. "no-devices"
  std::string_view symptom;    // what the operator sees, in English
  std::string_view symptomZh;  // the seed's wording, where it has one
  std::vector<std::string_view> causes;
  std::vector<std::string_view> checks;   // commands and what to look at
  std::vector<std::string_view> actions;  // in order
  // Match terms for explain(): lower-case English phrases (matched as whole words) and Chinese
  // terms (matched as substrings).
  std::vector<std::string_view> keywords;
  std::vector<int> xids;         // related Xid codes
  std::string_view requirement;  // e.g. "R33"
  std::string_view source;       // e.g. "seed 001 §5.1"
  bool autoDetectable = false;   // gpuwarden can see it without being told
  std::string_view detection;    // the signal it would use, or why it cannot
};

std::span<const KbEntry> knowledgeBase();
const KbEntry* findKbEntry(std::string_view id);

struct KbMatch {
  const KbEntry* entry = nullptr;
  int score = 0;
};

// Scores every entry by keyword overlap with free text (an error message, a symptom in English
// or Chinese) and returns the best ones, best first; empty when nothing matches.
std::vector<KbMatch> explain(std::string_view text, std::size_t maxResults = 3);

struct XidExplanation {
  XidInfo xid;                          // from the Xid catalog (generic entry if unknown)
  std::vector<const KbEntry*> related;  // knowledge-base entries that list this code
};
XidExplanation explainXid(int code);

// The one entry an Xid finding points an operator at: of the entries that list the code, the one
// whose keywords name it ("xid 79"), else the first automatically detectable one, else the first;
// null when no entry lists it. Several entries list an Xid as a clue (Xid 79 also explains "No
// devices were found"), but a finding needs the entry about the Xid itself.
const KbEntry* kbEntryForXid(int code);

// docs/knowledge-base.md, rendered from the entries. rulesFor names the health rules that detect an
// entry ("" for none yet); the KB cannot know them, so the caller that can supplies them. Without
// it the "Rule:" sentence is left out.
using RulesForEntry = std::function<std::string(const KbEntry&)>;
std::string renderKnowledgeBaseMarkdown(const RulesForEntry& rulesFor = {});

}  // namespace gw::knowledge
