// docs/xid.md, docs/knowledge-base.md and the rule table in docs/health.md are rendered from the
// tables; they must not drift. Regenerate after changing a table: GW_UPDATE_DOCS=1 ctest -R DocsInSync
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "health/rule_registry.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/xid_catalog.h"

namespace gw::health {
namespace {

using knowledge::KbEntry;
using knowledge::knowledgeBase;
using knowledge::renderXidCatalogMarkdown;
using knowledge::xidCatalog;
using knowledge::XidInfo;

bool updating() {
  const char* update = std::getenv("GW_UPDATE_DOCS");
  return update != nullptr && std::string(update) == "1";
}

std::string readDoc(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void writeDoc(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out.good()) << "cannot write " << path;
  out << text;
}

void checkDoc(const std::string& relative, const std::string& rendered) {
  const std::string path = std::string(GW_TEST_SOURCE_DIR) + "/" + relative;
  if (updating()) {
    writeDoc(path, rendered);
    return;
  }
  ASSERT_TRUE(std::ifstream(path).good()) << path << " is missing; run GW_UPDATE_DOCS=1 ctest -R DocsInSync";
  EXPECT_TRUE(readDoc(path) == rendered) << relative
                                         << " is out of date with its table; run GW_UPDATE_DOCS=1 ctest -R DocsInSync";
}

// A rendered part of a hand-written doc, between two marker lines.
void checkDocSection(const std::string& relative, const std::string& begin, const std::string& end,
                     const std::string& rendered) {
  const std::string path = std::string(GW_TEST_SOURCE_DIR) + "/" + relative;
  const std::string doc = readDoc(path);
  const auto b = doc.find(begin + "\n");
  const auto e = doc.find(end, b);
  ASSERT_NE(b, std::string::npos) << relative << " lacks the marker " << begin;
  ASSERT_NE(e, std::string::npos) << relative << " lacks the marker " << end;
  const std::size_t from = b + begin.size() + 1;
  if (updating()) {
    writeDoc(path, doc.substr(0, from) + rendered + doc.substr(e));
    return;
  }
  EXPECT_TRUE(doc.substr(from, e - from) == rendered)
      << relative << "'s rendered part is out of date; run GW_UPDATE_DOCS=1 ctest -R DocsInSync";
}

TEST(DocsInSync, XidCatalog) { checkDoc("docs/xid.md", renderXidCatalogMarkdown()); }

TEST(DocsInSync, KnowledgeBase) { checkDoc("docs/knowledge-base.md", renderKnowledgeBaseDoc()); }

TEST(DocsInSync, RuleTable) {
  checkDocSection("docs/health.md", "<!-- rule-table: begin -->", "<!-- rule-table: end -->",
                  renderRuleTableMarkdown());
}

TEST(DocsInSync, BoundaryTable) {
  checkDocSection("docs/health.md", "<!-- boundary-table: begin -->", "<!-- boundary-table: end -->",
                  renderBoundaryTableMarkdown());
}

TEST(DocsInSync, ConfigKeyTable) {
  checkDocSection("docs/health.md", "<!-- config-table: begin -->", "<!-- config-table: end -->",
                  renderConfigKeyTableMarkdown());
}

TEST(DocsInSync, RenderingsMentionEveryEntry) {
  const std::string xid = renderXidCatalogMarkdown();
  for (const XidInfo& x : xidCatalog()) {
    EXPECT_NE(xid.find("| " + std::to_string(x.code) + " | `" + std::string(x.mnemonic)), std::string::npos) << x.code;
  }
  const std::string kb = renderKnowledgeBaseDoc();
  for (const KbEntry& e : knowledgeBase()) {
    EXPECT_NE(kb.find("## " + std::string(e.id)), std::string::npos) << e.id;
  }
  const std::string rules = renderRuleTableMarkdown();
  for (const auto& name : ruleNames()) EXPECT_NE(rules.find("| " + name + " |"), std::string::npos) << name;
}

}  // namespace
}  // namespace gw::health
