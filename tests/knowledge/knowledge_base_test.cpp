// The fault knowledge base: entries are complete, and explain() finds the right one.
#include "knowledge/knowledge_base.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace gw::knowledge {
namespace {

std::string top(std::string_view text) {
  auto matches = explain(text);
  return matches.empty() ? std::string("(none)") : std::string(matches.front().entry->id);
}

TEST(KnowledgeBase, EntriesAreComplete) {
  EXPECT_GE(knowledgeBase().size(), 12U);
  std::set<std::string_view> ids;
  for (const KbEntry& e : knowledgeBase()) {
    SCOPED_TRACE(std::string(e.id));
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate id";
    EXPECT_FALSE(e.symptom.empty());
    EXPECT_FALSE(e.causes.empty());
    EXPECT_FALSE(e.checks.empty());
    EXPECT_FALSE(e.actions.empty());
    EXPECT_FALSE(e.keywords.empty());
    EXPECT_FALSE(e.detection.empty());
    EXPECT_NE(e.requirement.find('R'), std::string_view::npos);
    for (int code : e.xids) EXPECT_TRUE(isKnownXid(code)) << code;
    for (auto kw : e.keywords) {
      for (char c : kw) EXPECT_FALSE(c >= 'A' && c <= 'Z') << "keywords are lower-case: " << kw;
    }
  }
}

TEST(KnowledgeBase, SeedTableRowsArePresent) {
  for (auto id : {"no-devices", "oom-free-memory", "bus-error-shm", "hot-and-loud", "fans-not-spinning", "one-gpu-idle",
                  "nan-irreproducible", "xid79-fell-off-bus", "xid63-row-remap", "driver-lib-mismatch",
                  "no-kernel-image", "driver-too-old", "ecc-rising"}) {
    EXPECT_NE(findKbEntry(id), nullptr) << id;
  }
  EXPECT_EQ(findKbEntry("no-such-entry"), nullptr);
}

TEST(KnowledgeBase, ExplainErrorMessages) {
  EXPECT_EQ(top("No devices were found"), "no-devices");
  EXPECT_EQ(top("nvidia-smi: No devices were found"), "no-devices");
  EXPECT_EQ(top("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"), "oom-free-memory");
  EXPECT_EQ(top("CUDA out of memory"), "oom-free-memory");
  EXPECT_EQ(top("Bus error (core dumped)"), "bus-error-shm");
  EXPECT_EQ(top("ERROR: Unexpected bus error encountered in worker. This might be caused by "
                "insufficient shared memory (shm)."),
            "bus-error-shm");
  EXPECT_EQ(top("Failed to initialize NVML: Driver/library version mismatch"), "driver-lib-mismatch");
  EXPECT_EQ(top("CUDA error: no kernel image is available for execution on the device"), "no-kernel-image");
  EXPECT_EQ(top("CUDA driver version is insufficient for CUDA runtime version"), "driver-too-old");
  EXPECT_EQ(top("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."), "xid79-fell-off-bus");
  EXPECT_EQ(top("xid 63 row remapper"), "xid63-row-remap");
  EXPECT_EQ(top("ECC errors keep rising, uncorrectable count up"), "ecc-rising");
  EXPECT_EQ(top("loss is nan after 300 steps"), "nan-irreproducible");
  EXPECT_EQ(top("fans not spinning"), "fans-not-spinning");
  EXPECT_EQ(top("one GPU stuck at 0% utilization while the others are busy"), "one-gpu-idle");
}

TEST(KnowledgeBase, ExplainChineseSymptoms) {
  EXPECT_EQ(top("服务器又掉卡了"), "xid79-fell-off-bus");
  EXPECT_EQ(top("显存不足"), "oom-free-memory");
  EXPECT_EQ(top("风扇狂转但温度仍高"), "hot-and-loud");
  EXPECT_EQ(top("开机后GPU风扇不转"), "fans-not-spinning");
  EXPECT_EQ(top("多卡任务时某张卡利用率归零"), "one-gpu-idle");
  EXPECT_EQ(top("训练中途Bus error"), "bus-error-shm");
}

// Each entry's heading gives the seed's Chinese wording beside the English symptom where the
// entry has one, and nothing (no empty brackets) where it has none.
TEST(KnowledgeBase, MarkdownHeadingsCarryTheChineseSymptomWhereThereIsOne) {
  const std::string md = renderKnowledgeBaseMarkdown();
  EXPECT_NE(
      md.find("\n## hot-and-loud\n\n**Fans run at full speed but the GPU stays hot** (系统风扇狂转但温度仍高)\n\n"),
      std::string::npos);
  EXPECT_NE(
      md.find("\n## driver-lib-mismatch\n\n**\"Failed to initialize NVML: Driver/library version mismatch\"**\n\n"),
      std::string::npos);
  EXPECT_EQ(md.find("** ()"), std::string::npos);
}

TEST(KnowledgeBase, ExplainNothingAndLimits) {
  EXPECT_TRUE(explain("").empty());
  EXPECT_TRUE(explain("hello world").empty());
  EXPECT_LE(explain("gpu hot fan temperature ecc nan oom bus error xid 79", 2).size(), 2U);
  auto all = explain("gpu hot fan temperature ecc nan oom bus error xid 79", 100);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GE(all[i - 1].score, all[i].score);
  // Whole words only: "room" does not mean out-of-memory.
  for (const auto& m : explain("the server room")) EXPECT_NE(m.entry->id, "oom-free-memory");
}

// A keyword is a whole word: a digit, a letter or '_' beside it makes it part of a longer word
// ("oom9", "zoom"), while punctuation just past those ranges ('/', ':', '`', '{') ends it.
TEST(KnowledgeBase, KeywordsMatchOnlyAtWordBoundaries) {
  for (const char* text : {"oom0", "oom9", "oomz", "ooma", "oom_", "0oom", "9oom", "zoom", "aoom", "_oom"})
    EXPECT_EQ(top(text), "(none)") << text;
  for (const char* text : {"oom/", "oom:", "oom`", "oom{", "/oom", ":oom", "`oom", "{oom"})
    EXPECT_EQ(top(text), "oom-free-memory") << text;
}

// A keyword weighs one plus its spaces (a phrase of n words weighs n), a non-ASCII keyword 2: a
// Chinese word says as much as a two-word English phrase.
TEST(KnowledgeBase, KeywordWeights) {
  auto score = [](std::string_view text, std::string_view id) {
    for (const auto& m : explain(text, 10))
      if (m.entry->id == id) return m.score;
    return 0;
  };
  EXPECT_EQ(score("sigbus", "bus-error-shm"), 1);
  EXPECT_EQ(score("bus error", "bus-error-shm"), 2);
  EXPECT_EQ(score("掉卡", "xid79-fell-off-bus"), 2);
  EXPECT_EQ(score("fan stopped", "fans-not-spinning"), 2);
  EXPECT_EQ(score("fan stopped", "hot-and-loud"), 1);
}

TEST(KnowledgeBase, ExplainXidUsesTheCatalog) {
  auto e79 = explainXid(79);
  EXPECT_TRUE(e79.xid.known);
  EXPECT_EQ(e79.xid.action, XidAction::kRebootNode);
  bool found = false;
  for (const KbEntry* e : e79.related) found = found || e->id == "xid79-fell-off-bus";
  EXPECT_TRUE(found);

  auto e63 = explainXid(63);
  ASSERT_FALSE(e63.related.empty());
  found = false;
  for (const KbEntry* e : e63.related) found = found || e->id == "xid63-row-remap";
  EXPECT_TRUE(found);

  auto unknown = explainXid(4242);
  EXPECT_FALSE(unknown.xid.known);
  EXPECT_TRUE(unknown.related.empty());
}

// An Xid finding points at the entry about the code, not at one that lists it as a clue.
TEST(KnowledgeBase, EntryForXidIsTheOneAboutIt) {
  auto id = [](int code) {
    const KbEntry* e = kbEntryForXid(code);
    return e ? std::string(e->id) : std::string("(none)");
  };
  EXPECT_EQ(id(79), "xid79-fell-off-bus");
  EXPECT_EQ(id(63), "xid63-row-remap");
  EXPECT_EQ(id(64), "xid63-row-remap");
  EXPECT_EQ(id(48), "ecc-rising");
  EXPECT_EQ(id(95), "ecc-rising");
  EXPECT_EQ(id(4242), "(none)");
  for (const KbEntry& e : knowledgeBase()) {
    for (int code : e.xids) {
      const KbEntry* chosen = kbEntryForXid(code);
      ASSERT_NE(chosen, nullptr) << code;
      EXPECT_NE(std::find(chosen->xids.begin(), chosen->xids.end(), code), chosen->xids.end()) << code;
    }
  }
}

}  // namespace
}  // namespace gw::knowledge
