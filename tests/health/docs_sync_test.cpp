// docs/xid.md and docs/knowledge-base.md are rendered from the tables; they must not drift.
// Regenerate after changing a table: GW_UPDATE_DOCS=1 ctest -R DocsInSync
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "knowledge/knowledge_base.h"
#include "knowledge/xid_catalog.h"

namespace gw::knowledge {
namespace {

void checkDoc(const std::string& relative, const std::string& rendered) {
  const std::string path = std::string(GW_TEST_SOURCE_DIR) + "/" + relative;
  const char* update = std::getenv("GW_UPDATE_DOCS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    out << rendered;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path << " is missing; run GW_UPDATE_DOCS=1 ctest -R DocsInSync";
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_TRUE(buf.str() == rendered) << relative
                                     << " is out of date with its table; run GW_UPDATE_DOCS=1 ctest -R DocsInSync";
}

TEST(DocsInSync, XidCatalog) { checkDoc("docs/xid.md", renderXidCatalogMarkdown()); }

TEST(DocsInSync, KnowledgeBase) { checkDoc("docs/knowledge-base.md", renderKnowledgeBaseMarkdown()); }

TEST(DocsInSync, RenderingsMentionEveryEntry) {
  const std::string xid = renderXidCatalogMarkdown();
  for (const XidInfo& x : xidCatalog()) {
    EXPECT_NE(xid.find("| " + std::to_string(x.code) + " | `" + std::string(x.mnemonic)), std::string::npos) << x.code;
  }
  const std::string kb = renderKnowledgeBaseMarkdown();
  for (const KbEntry& e : knowledgeBase()) {
    EXPECT_NE(kb.find("## " + std::string(e.id)), std::string::npos) << e.id;
  }
}

}  // namespace
}  // namespace gw::knowledge
