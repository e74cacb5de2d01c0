// The rule registry is the one place a rule's facts live: names are unique, every knowledge-base
// link resolves, every hold's config key names the member the engine reads, and every rule can be
// switched off by name.
#include "health/rule_registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "knowledge/knowledge_base.h"

namespace gw::health {
namespace {

TEST(RuleRegistry, NamesAreUniqueAndListed) {
  std::set<std::string_view> names;
  for (const Rule* r : ruleRegistry()) {
    EXPECT_FALSE(r->info.name.empty());
    EXPECT_TRUE(names.insert(r->info.name).second) << "duplicate rule " << r->info.name;
    EXPECT_EQ(findRule(r->info.name), r);
  }
  ASSERT_EQ(ruleNames().size(), ruleRegistry().size());
  for (const auto& n : ruleNames()) EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(findRule("no_such_rule"), nullptr);
}

TEST(RuleRegistry, EveryRuleIsComplete) {
  for (const Rule* r : ruleRegistry()) {
    SCOPED_TRACE(std::string(r->info.name));
    EXPECT_NE(r->evaluate, nullptr);
    EXPECT_FALSE(r->info.fires_when.empty());
    EXPECT_EQ(r->info.config_key.empty(), r->info.hold == nullptr) << "a hold and its config key go together";
  }
}

TEST(RuleRegistry, KbLinksResolve) {
  for (const Rule* r : ruleRegistry()) {
    if (r->info.kb_id.empty()) continue;
    EXPECT_NE(knowledge::findKbEntry(r->info.kb_id), nullptr) << r->info.name << " -> " << r->info.kb_id;
  }
}

TEST(RuleRegistry, HoldKeysNameTheMemberTheEngineReads) {
  std::set<std::string_view> keys;
  for (const Rule* r : ruleRegistry())
    if (r->info.hold) keys.insert(r->info.config_key);
  std::int64_t value = 7'001;
  for (auto key : keys) {
    auto c = parseRuleConfig(std::string(key) + ": " + std::to_string(value) + "\n");
    ASSERT_TRUE(c.ok()) << key << ": " << c.error();
    for (const Rule* r : ruleRegistry()) {
      if (r->info.hold && r->info.config_key == key) {
        EXPECT_EQ((*c).*(r->info.hold), value) << r->info.name;
      }
    }
    ++value;
  }
}

TEST(RuleRegistry, EveryRuleCanBeDisabledByName) {
  for (const auto& n : ruleNames()) {
    auto c = parseRuleConfig("disabled: [" + n + "]\n");
    ASSERT_TRUE(c.ok()) << n << ": " << c.error();
    EXPECT_TRUE(c->disabled.count(n));
  }
}

// The knowledge base names no rules; its "Rule:" view comes from here, so an entry a rule points
// at always shows that rule.
TEST(RuleRegistry, KbViewShowsEveryLinkingRule) {
  for (const Rule* r : ruleRegistry()) {
    if (r->info.kb_id.empty()) continue;
    const auto* e = knowledge::findKbEntry(r->info.kb_id);
    ASSERT_NE(e, nullptr);
    EXPECT_NE(rulesForKbEntry(*e).find(r->info.name), std::string::npos) << r->info.name;
  }
  EXPECT_NE(rulesForKbEntry(*knowledge::findKbEntry("xid79-fell-off-bus")).find("xid (Xid 79)"), std::string::npos);
}

}  // namespace
}  // namespace gw::health
