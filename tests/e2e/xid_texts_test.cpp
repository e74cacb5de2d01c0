// The Xid texts agree everywhere (issue 11): `gpuwarden explain xid N` (text and --json), the
// knowledge base (its entries, as explain prints them, and docs/knowledge-base.md) and
// docs/xid.md all say what the Xid catalog says, because each is derived from it. The knowledge
// base's own prose names only the Xids it lists, so prose and list cannot drift apart either.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gw_run.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/xid_catalog.h"

namespace gw::test {
namespace {

using knowledge::KbEntry;

std::string readSource(const std::string& relative) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool lists(const KbEntry& e, int code) { return std::find(e.xids.begin(), e.xids.end(), code) != e.xids.end(); }

// The section of docs/knowledge-base.md for one entry: from its heading to the next one.
std::string kbSection(const std::string& md, std::string_view id) {
  const std::string head = "\n## " + std::string(id) + "\n";
  const auto b = md.find(head);
  if (b == std::string::npos) return "";
  const auto e = md.find("\n## ", b + head.size());
  return md.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

TEST(XidTexts, ExplainKnowledgeBaseAndDocsAgreeForEveryCode) {
  const std::string xid_md = readSource("docs/xid.md");
  const std::string kb_md = readSource("docs/knowledge-base.md");
  ASSERT_FALSE(xid_md.empty());
  ASSERT_FALSE(kb_md.empty());
  int related_seen = 0;
  for (const auto& x : knowledge::xidCatalog()) {
    const std::string n = std::to_string(x.code);
    SCOPED_TRACE("Xid " + n);
    const std::string line = knowledge::xidSummaryLine(x.code);
    // The summary line is the catalog's meaning and actions, word for word.
    EXPECT_EQ(line.rfind("Xid " + n + " (" + std::string(x.mnemonic) + "): " + std::string(x.meaning) +
                             " Action: " + std::string(knowledge::describe(x.action)),
                         0),
              0u)
        << line;

    auto text = runGw({"explain", "xid", n});
    ASSERT_EQ(text.code, 0) << describe(text);
    EXPECT_EQ(text.out.substr(0, text.out.find('\n')), line);
    // docs/xid.md: the code's row carries the same meaning and actions.
    const std::string row_start = "\n| " + n + " | `" + std::string(x.mnemonic) + "` | ";
    const auto r = xid_md.find(row_start);
    ASSERT_NE(r, std::string::npos) << "docs/xid.md has no row for Xid " << n;
    const std::string row = xid_md.substr(r + 1, xid_md.find('\n', r + 1) - r - 1);
    std::string meaning(x.meaning);
    for (std::size_t p = 0; (p = meaning.find('|', p)) != std::string::npos; p += 2) meaning.insert(p, "\\");
    EXPECT_NE(row.find(" | " + meaning + " | "), std::string::npos) << row;
    EXPECT_NE(row.find(" | " + std::string(knowledge::toString(x.action)) + " | " +
                       std::string(knowledge::toString(x.escalation)) + " | "),
              std::string::npos)
        << row;

    // Each knowledge-base entry that lists the code quotes the same line, in explain's output and
    // in the entry's section of docs/knowledge-base.md.
    for (const KbEntry& e : knowledge::knowledgeBase()) {
      if (!lists(e, x.code)) continue;
      ++related_seen;
      SCOPED_TRACE(std::string(e.id));
      EXPECT_NE(text.out.find("\nRelated: " + std::string(e.symptom)), std::string::npos) << text.out;
      EXPECT_NE(text.out.find("    - " + line + "\n"), std::string::npos) << text.out;
      EXPECT_NE(kbSection(kb_md, e.id).find("\n- " + line + "\n"), std::string::npos) << kbSection(kb_md, e.id);
    }
  }
  EXPECT_GE(related_seen, 10);  // the KB relates Xids 13, 31, 48, 63, 64, 79, 92, 94, 95, 140, ...
}

// --json carries the catalog's fields as they are (one code is enough: xidJson copies them).
TEST(XidTexts, ExplainJsonIsTheCatalogs) {
  const auto x = knowledge::lookupXid(63);
  auto js = runGw({"--json", "explain", "xid", "63"});
  ASSERT_EQ(js.code, 0) << describe(js);
  const auto j = js.json();
  EXPECT_EQ(j["meaning"], std::string(x.meaning));
  EXPECT_EQ(j["action_text"], std::string(knowledge::describe(x.action)));
  EXPECT_EQ(j["escalation"], std::string(knowledge::toString(x.escalation)));
  ASSERT_FALSE(j["related"].empty());
}

// Where an entry's prose names an Xid ("Xid 79", "Xid 63/64", "Xid 48/92/94/95"), that code is
// in its list, so explain shows the catalog's line for it; "Xid N: text" quotes the headline.
TEST(XidTexts, KnowledgeBaseProseNamesOnlyTheXidsItLists) {
  const std::regex mention(R"([Xx][Ii][Dd]s?\s+(\d+(?:\s*[/,]\s*\d+)*)(:\s*([^.;(]*))?)");
  const std::regex number(R"(\d+)");
  int mentions = 0;
  for (const KbEntry& e : knowledge::knowledgeBase()) {
    std::vector<std::string_view> texts = {e.symptom, e.detection};
    for (const auto* list : {&e.causes, &e.checks, &e.actions}) texts.insert(texts.end(), list->begin(), list->end());
    for (std::string_view t : texts) {
      const std::string s(t);
      for (auto it = std::sregex_iterator(s.begin(), s.end(), mention); it != std::sregex_iterator(); ++it) {
        const std::string codes = (*it)[1];
        for (auto c = std::sregex_iterator(codes.begin(), codes.end(), number); c != std::sregex_iterator(); ++c) {
          ++mentions;
          const int code = std::stoi(c->str());
          EXPECT_TRUE(lists(e, code)) << e.id << " names Xid " << code << " in \"" << s << "\" but does not list it";
        }
        if ((*it)[3].matched && codes.find_first_of("/,") == std::string::npos) {
          const std::string said = (*it)[3];
          const std::string headline(knowledge::headline(knowledge::lookupXid(std::stoi(codes))));
          EXPECT_EQ(said.substr(0, headline.size()), headline) << e.id << ": \"" << s << "\"";
        }
      }
    }
  }
  EXPECT_GE(mentions, 5);
}

}  // namespace
}  // namespace gw::test
