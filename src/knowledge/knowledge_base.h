// The fault knowledge base: seed 001 §5.1's quick-lookup table (R33) as entries, each with the
// symptom, likely causes, checks and actions, and whether gpuwarden detects it by itself.
// docs/knowledge-base.md is rendered from it (renderKnowledgeBaseMarkdown) and a test keeps the two
// equal.
#pragma once

#include <cstddef>
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
  std::string_view rule;         // the health rule that detects it; empty until one exists
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

// docs/knowledge-base.md, rendered from the entries.
std::string renderKnowledgeBaseMarkdown();

}  // namespace gw::knowledge
