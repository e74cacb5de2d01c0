#include <gtest/gtest.h>

#include "diag/thresholds.h"

#include <cstdio>
#include <fstream>
#include <string>

using namespace gw::diag;

TEST(Thresholds, BuiltinMatchesTheFileAndHasEverySku) {
  auto file = ThresholdTable::loadFile(GW_DIAG_THRESHOLDS_FILE);
  ASSERT_TRUE(file.ok()) << file.error();
  auto embedded = ThresholdTable::parse(kDefaultThresholdsYaml, "embedded");
  ASSERT_TRUE(embedded.ok()) << embedded.error();
  std::vector<std::string> keys;
  for (const auto& s : ThresholdTable::builtin().skus()) keys.push_back(s.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"h100-sxm5-80gb", "h200", "a100-sxm4-80gb", "l40s", "rtx-4090"}));
  EXPECT_EQ(file->skus().size(), keys.size());
}

TEST(Thresholds, LookupByPciIdThenNameThenGeneric) {
  const auto& t = ThresholdTable::builtin();
  EXPECT_EQ(t.lookup("whatever", 0x233010DE).key, "h100-sxm5-80gb");  // NVML 32-bit form
  EXPECT_EQ(t.lookup("whatever", 0x2335).key, "h200");                // bare device id
  EXPECT_EQ(t.lookup("NVIDIA A100-SXM4-80GB", 0).key, "a100-sxm4-80gb");
  EXPECT_EQ(t.lookup("nvidia l40s ", 0).key, "l40s");
  EXPECT_EQ(t.lookup("NVIDIA GeForce RTX 4090", 0x268410DE).key, "rtx-4090");
  EXPECT_EQ(t.lookup("Tesla T4", 0x1EB810DE).key, "generic");
}

TEST(Thresholds, SkuValuesAndInheritance) {
  const auto& t = ThresholdTable::builtin();
  const auto& h200 = t.lookup("NVIDIA H200", 0);
  EXPECT_DOUBLE_EQ(h200.peak_mem_bw_gbps, 4800);
  EXPECT_EQ(h200.pcie_gen, 5);
  EXPECT_DOUBLE_EQ(h200.expectedTflops("fp16"), 700);
  EXPECT_DOUBLE_EQ(h200.pcie_min_fraction, 0.60);  // inherited from defaults
  EXPECT_DOUBLE_EQ(t.lookup("NVIDIA A100-SXM4-80GB", 0).max_temp_c, 85);
  EXPECT_DOUBLE_EQ(t.generic().expectedTflops("fp16"), 0);
  EXPECT_DOUBLE_EQ(t.generic().peak_mem_bw_gbps, 0);
}

TEST(Thresholds, RejectsTyposAndBadValues) {
  auto bad = [](const char* y) { return ThresholdTable::parse(y, "t.yaml"); };
  EXPECT_FALSE(bad("version: 2\n").ok());
  auto typo = bad("version: 1\ndefaults: {max_temp: 80}\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().find("defaults.max_temp: unknown key"), std::string::npos) << typo.error();
  EXPECT_FALSE(bad("version: 1\ndefaults: {pcie_min_fraction: 1.5}\n").ok());
  EXPECT_FALSE(bad("version: 1\ndefaults: {pcie_min_fraction: 0.9, pcie_warn_fraction: 0.8}\n").ok());
  // Each warn/min pair is checked on its own, not only when pcie's pair is inverted too.
  EXPECT_FALSE(bad("version: 1\ndefaults: {membw_min_fraction: 0.9, membw_warn_fraction: 0.8}\n").ok());
  EXPECT_FALSE(bad("version: 1\nskus: [{name: x}]\n").ok());
  EXPECT_FALSE(bad("version: 1\nskus: [{key: a}, {key: a}]\n").ok());
  EXPECT_FALSE(bad("version: 1\nskus: [{key: a, gemm_tflops: {fp8: 1}}]\n").ok());
  EXPECT_FALSE(bad("version: 1\nskus: [{key: a, pci_device_ids: [0x233010DE]}]\n").ok());
  EXPECT_FALSE(bad("version: [1\n").ok());
  EXPECT_FALSE(ThresholdTable::loadFile("/nonexistent/t.yaml").ok());
}

// `diag --thresholds` names a file: a device or a directory is refused at once (`/dev/zero` was
// read until memory ran out), and the file may be at most kMaxThresholdsFileBytes.
TEST(Thresholds, TheFileIsARegularFileWithinItsSize) {
  auto zero = ThresholdTable::loadFile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error(), "/dev/zero: the thresholds file must be a regular file");
  auto dir = ThresholdTable::loadFile("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error(), "/tmp: the thresholds file must be a regular file (this is a directory)");
  const std::string path = ::testing::TempDir() + "/gw-thresholds-size.yaml";
  const std::string yaml = "version: 1\n";
  for (std::size_t size : {kMaxThresholdsFileBytes, kMaxThresholdsFileBytes + 1}) {
    {
      std::ofstream out(path, std::ios::trunc);
      out << yaml << std::string(size - yaml.size(), '#');  // a comment fills it up
    }
    auto t = ThresholdTable::loadFile(path);
    if (size == kMaxThresholdsFileBytes) {
      EXPECT_TRUE(t.ok()) << t.error();
    } else {
      ASSERT_FALSE(t.ok());
      EXPECT_EQ(t.error(), path + ": the thresholds file is 1048577 bytes; at most 1048576");
    }
  }
  std::remove(path.c_str());
}

TEST(Thresholds, OverridesApplyPerSku) {
  auto t = ThresholdTable::parse(
      "version: 1\ndefaults: {max_temp_c: 80}\nskus:\n  - key: x\n    names: [X]\n"
      "    pci_device_ids: [0x1234]\n    max_temp_c: 90\n    gemm_tflops: {FP16: 100}\n",
      "t");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_DOUBLE_EQ(t->lookup("x", 0).max_temp_c, 90);
  EXPECT_DOUBLE_EQ(t->lookup("x", 0).expectedTflops("fp16"), 100);
  EXPECT_DOUBLE_EQ(t->lookup("y", 0).max_temp_c, 80);
}

// A key given twice in one SKU: the later list is the SKU's, not both lists run together.
TEST(Thresholds, ARepeatedListKeyKeepsTheLaterList) {
  auto t = ThresholdTable::parse(
      "version: 1\nskus:\n  - key: x\n    names: [A]\n    names: [B]\n"
      "    pci_device_ids: [0x1234]\n    pci_device_ids: [0x5678]\n",
      "t");
  ASSERT_TRUE(t.ok()) << t.error();
  ASSERT_EQ(t->skus().size(), 1u);
  EXPECT_EQ(t->skus()[0].names, std::vector<std::string>{"B"});
  EXPECT_EQ(t->skus()[0].pci_device_ids, std::vector<uint32_t>{0x5678});
}

namespace gw::diag {
namespace {

// The defaults have one home, thresholds.yaml's `defaults:`: the built-in table holds the numbers
// docs/diag.md states, and a file that leaves a default out keeps the built-in one.
TEST(Thresholds, TheBuiltinDefaultsAreTheDocumentedOnes) {
  const SkuThresholds& g = ThresholdTable::builtin().generic();
  EXPECT_EQ(g.max_temp_c, 87);
  EXPECT_EQ(g.pcie_min_fraction, 0.60);
  EXPECT_EQ(g.pcie_warn_fraction, 0.70);
  EXPECT_EQ(g.membw_min_fraction, 0.70);
  EXPECT_EQ(g.membw_warn_fraction, 0.80);
  EXPECT_EQ(g.gemm_min_fraction, 0.60);
  EXPECT_EQ(g.peer_slow_warn_pct, 5);
  EXPECT_EQ(g.peer_slow_fail_pct, 15);
  EXPECT_EQ(g.p2p_min_fraction, 0.50);
  EXPECT_EQ(g.p2p_warn_fraction, 0.70);
  EXPECT_EQ(g.power_target_fraction, 0.85);
  EXPECT_EQ(g.power_min_fraction, 0.80);
  EXPECT_EQ(g.power_warn_fraction, 0.95);
  EXPECT_EQ(g.memtest_fraction, 0.90);
  EXPECT_EQ(g.max_retired_pages, 60u);
  EXPECT_EQ(g.peak_mem_bw_gbps, 0);
  EXPECT_EQ(g.pcie_gen, 0);
  EXPECT_EQ(g.pcie_width, 0);
  EXPECT_EQ(g.nvlink_p2p_gbps, 0);
  EXPECT_TRUE(g.gemm_tflops.empty());
}

TEST(Thresholds, AFileThatLeavesADefaultOutKeepsTheBuiltinOne) {
  auto t = ThresholdTable::parse("version: 1\ndefaults: {max_temp_c: 90, gemm_min_fraction: 0.5}\n", "t");
  ASSERT_TRUE(t.ok()) << t.error();
  const SkuThresholds& g = t->generic();
  EXPECT_EQ(g.max_temp_c, 90);
  EXPECT_EQ(g.gemm_min_fraction, 0.5);
  const SkuThresholds& b = ThresholdTable::builtin().generic();
  EXPECT_EQ(g.pcie_min_fraction, b.pcie_min_fraction);
  EXPECT_EQ(g.memtest_fraction, b.memtest_fraction);
  EXPECT_EQ(g.max_retired_pages, b.max_retired_pages);
  EXPECT_EQ(g.peer_slow_fail_pct, b.peer_slow_fail_pct);
}

}  // namespace
}  // namespace gw::diag

namespace gw::diag {
namespace {

std::string parseError(const std::string& yaml) {
  auto t = ThresholdTable::parse(yaml, "t.yaml");
  return t.ok() ? "ok" : t.error();
}

// Every key of `defaults:` lands in its own field (and in a SKU that inherits it).
TEST(Thresholds, EveryKeyLandsInItsField) {
  auto t = ThresholdTable::parse(
      "version: 1\n"
      "defaults:\n"
      "  max_temp_c: 81\n  pcie_min_fraction: 0.11\n  pcie_warn_fraction: 0.12\n"
      "  membw_min_fraction: 0.21\n  membw_warn_fraction: 0.22\n  gemm_min_fraction: 0.31\n"
      "  peer_slow_warn_pct: 4\n  peer_slow_fail_pct: 41\n  p2p_min_fraction: 0.51\n  p2p_warn_fraction: 0.52\n"
      "  power_target_fraction: 0.61\n  power_min_fraction: 0.62\n  power_warn_fraction: 0.63\n"
      "  memtest_fraction: 0.71\n  max_retired_pages: 7\n  peak_mem_bw_gbps: 901\n  pcie_gen: 3\n"
      "  pcie_width: 8\n  nvlink_p2p_gbps: 99\n  gemm_tflops: {fp32: 1, tf32: 2, fp16: 3, bf16: 4}\n"
      "skus:\n  - key: k\n",
      "t");
  ASSERT_TRUE(t.ok()) << t.error();
  for (const SkuThresholds* g : {&t->generic(), &t->skus()[0]}) {
    EXPECT_EQ(g->max_temp_c, 81);
    EXPECT_EQ(g->pcie_min_fraction, 0.11);
    EXPECT_EQ(g->pcie_warn_fraction, 0.12);
    EXPECT_EQ(g->membw_min_fraction, 0.21);
    EXPECT_EQ(g->membw_warn_fraction, 0.22);
    EXPECT_EQ(g->gemm_min_fraction, 0.31);
    EXPECT_EQ(g->peer_slow_warn_pct, 4);
    EXPECT_EQ(g->peer_slow_fail_pct, 41);
    EXPECT_EQ(g->p2p_min_fraction, 0.51);
    EXPECT_EQ(g->p2p_warn_fraction, 0.52);
    EXPECT_EQ(g->power_target_fraction, 0.61);
    EXPECT_EQ(g->power_min_fraction, 0.62);
    EXPECT_EQ(g->power_warn_fraction, 0.63);
    EXPECT_EQ(g->memtest_fraction, 0.71);
    EXPECT_EQ(g->max_retired_pages, 7u);
    EXPECT_EQ(g->peak_mem_bw_gbps, 901);
    EXPECT_EQ(g->pcie_gen, 3);
    EXPECT_EQ(g->pcie_width, 8);
    EXPECT_EQ(g->nvlink_p2p_gbps, 99);
    EXPECT_EQ(g->gemm_tflops, (std::map<std::string, double>{{"bf16", 4}, {"fp16", 3}, {"fp32", 1}, {"tf32", 2}}));
    EXPECT_EQ(g->expectedTflops("tf32"), 2);
    EXPECT_EQ(g->expectedTflops("fp8"), 0);
  }
  EXPECT_EQ(t->generic().key, "generic");
  EXPECT_EQ(t->skus()[0].name, "k");  // a SKU without a name is called by its key
}

// Fractions are taken from 0 to 1 inclusive, other numbers from 0 up; memtest covers (0, 0.98].
TEST(Thresholds, ValueRangesAtTheirEdges) {
  EXPECT_EQ(parseError("version: 1\ndefaults: {gemm_min_fraction: 0}\n"), "ok");
  EXPECT_EQ(parseError("version: 1\ndefaults: {gemm_min_fraction: 1}\n"), "ok");
  EXPECT_EQ(parseError("version: 1\ndefaults: {gemm_min_fraction: 0.5}\n"), "ok");
  EXPECT_EQ(parseError("version: 1\ndefaults: {gemm_min_fraction: 1.01}\n"),
            "t.yaml: defaults.gemm_min_fraction: must be a fraction between 0 and 1");
  EXPECT_EQ(parseError("version: 1\ndefaults: {gemm_min_fraction: -0.01}\n"),
            "t.yaml: defaults.gemm_min_fraction: must be a fraction between 0 and 1");
  EXPECT_EQ(parseError("version: 1\ndefaults: {max_temp_c: 0}\n"), "ok");
  EXPECT_EQ(parseError("version: 1\ndefaults: {peak_mem_bw_gbps: 0.5}\n"), "ok");
  EXPECT_EQ(parseError("version: 1\ndefaults: {max_temp_c: -1}\n"),
            "t.yaml: defaults.max_temp_c: must not be negative");
  EXPECT_EQ(parseError("version: 1\ndefaults: {max_temp_c: hot}\n"),
            "t.yaml: defaults.max_temp_c: wrong type or value");
  EXPECT_EQ(parseError("version: 1\ndefaults: {memtest_fraction: 0.98}\n"), "ok");
  EXPECT_EQ(parseError("version: 1\ndefaults: {memtest_fraction: 0.01}\n"), "ok");
  EXPECT_EQ(parseError("version: 1\ndefaults: {memtest_fraction: 0.99}\n"),
            "t.yaml: defaults.memtest_fraction: must be in (0, 0.98]");
  EXPECT_EQ(parseError("version: 1\ndefaults: {memtest_fraction: 0}\n"),
            "t.yaml: defaults.memtest_fraction: must be in (0, 0.98]");
  // Each warn fraction may equal its min fraction, never be below it; so for the peer percentages.
  EXPECT_EQ(parseError("version: 1\ndefaults: {pcie_min_fraction: 0.5, pcie_warn_fraction: 0.5, membw_min_fraction: "
                       "0.5, membw_warn_fraction: 0.5, p2p_min_fraction: 0.5, p2p_warn_fraction: 0.5, "
                       "power_min_fraction: 0.5, power_warn_fraction: 0.5, peer_slow_warn_pct: 9, "
                       "peer_slow_fail_pct: 9}\n"),
            "ok");
  const std::string below = "t.yaml: defaults: a *_warn_fraction is below its *_min_fraction";
  EXPECT_EQ(parseError("version: 1\ndefaults: {pcie_min_fraction: 0.5, pcie_warn_fraction: 0.4}\n"), below);
  EXPECT_EQ(parseError("version: 1\ndefaults: {membw_min_fraction: 0.5, membw_warn_fraction: 0.4}\n"), below);
  EXPECT_EQ(parseError("version: 1\ndefaults: {p2p_min_fraction: 0.5, p2p_warn_fraction: 0.4}\n"), below);
  EXPECT_EQ(parseError("version: 1\ndefaults: {power_min_fraction: 0.5, power_warn_fraction: 0.4}\n"), below);
  EXPECT_EQ(parseError("version: 1\ndefaults: {peer_slow_warn_pct: 9, peer_slow_fail_pct: 8}\n"),
            "t.yaml: defaults: peer_slow_fail_pct is below peer_slow_warn_pct");
  EXPECT_EQ(parseError("version: 1\nskus: [{key: a, pci_device_ids: [0xFFFF]}]\n"), "ok");
  EXPECT_EQ(parseError("version: 1\nskus: [{key: a, pci_device_ids: [0x10000]}]\n"),
            "t.yaml: skus[0].pci_device_ids: a 16-bit PCI device id, e.g. 0x2330");
}

// The document's shape: errors name where they are.
TEST(Thresholds, ShapeErrorsNameThePlace) {
  EXPECT_EQ(parseError("version: 1\n"), "ok");
  EXPECT_EQ(parseError("- 1\n"), "t.yaml: expected a mapping at the top");
  EXPECT_EQ(parseError("defaults: {}\n"), "t.yaml: 'version: 1' expected");
  EXPECT_EQ(parseError("version: 0\n"), "t.yaml: 'version: 1' expected");
  EXPECT_EQ(parseError("version: 1\nskuz: []\n"), "t.yaml: unknown top-level key 'skuz'");
  EXPECT_EQ(parseError("version: 1\ndefaults: [1]\n"), "t.yaml: defaults: expected a mapping");
  EXPECT_EQ(parseError("version: 1\nskus: {key: a}\n"), "t.yaml: 'skus' must be a list");
  EXPECT_EQ(parseError("version: 1\nskus: [{key: a, bogus: 1}]\n"), "t.yaml: skus[0].bogus: unknown key");
  EXPECT_EQ(parseError("version: 1\nskus: [{key: a}, {key: b, bogus: 1}]\n"), "t.yaml: skus[1].bogus: unknown key");
  EXPECT_EQ(parseError("version: 1\nskus: [{key: a, gemm_tflops: 5}]\n"),
            "t.yaml: skus[0].gemm_tflops: expected a mapping of precision: TFLOPS");
  EXPECT_EQ(parseError("version: 1\nskus: [{key: a, gemm_tflops: {fp8: 1}}]\n"),
            "t.yaml: skus[0].gemm_tflops: unknown precision 'fp8' (fp16, bf16, tf32, fp32, fp64, tensor)");
  EXPECT_EQ(parseError("version: 1\nskus: [{key: a}, {key: a}]\n"), "t.yaml: duplicate sku key 'a'");
  EXPECT_EQ(parseError("version: 1\nskus: [{name: x}]\n"), "t.yaml: every sku needs a 'key'");
  // The SKU-only keys are not defaults.
  for (const char* key : {"key: x", "name: x", "names: [x]", "pci_device_ids: [1]"})
    EXPECT_EQ(
        parseError(std::string("version: 1\ndefaults: {") + key + "}\n"),
        std::string("t.yaml: defaults.") + std::string(key).substr(0, std::string(key).find(':')) + ": unknown key")
        << key;
}

// Lookup: the PCI id in either form (0xFFFF is a bare id, 1 too), names trimmed and compared
// case-insensitively, the generic defaults otherwise.
TEST(Thresholds, LookupEdges) {
  auto t = ThresholdTable::parse(
      "version: 1\nskus:\n  - key: a\n    pci_device_ids: [0xFFFF, 0x0001]\n"
      "  - key: b\n    names: ['  Card B\t', 'Other']\n",
      "t");
  ASSERT_TRUE(t.ok()) << t.error();
  EXPECT_EQ(t->lookup("", 0xFFFF).key, "a");
  EXPECT_EQ(t->lookup("", 0x0001).key, "a");
  EXPECT_EQ(t->lookup("", 0xFFFF10DE).key, "a");
  EXPECT_EQ(t->lookup("", 0x000110DE).key, "a");
  EXPECT_EQ(t->lookup("", 0x0002).key, "generic");
  EXPECT_EQ(t->lookup("card b", 0).key, "b");
  EXPECT_EQ(t->lookup(" CARD B ", 0x0002).key, "b");
  EXPECT_EQ(t->lookup("other", 0).key, "b");
  EXPECT_EQ(t->lookup("card", 0).key, "generic");
  EXPECT_EQ(t->lookup("   ", 0).key, "generic");
  EXPECT_EQ(t->skus()[1].names, (std::vector<std::string>{"Card B", "Other"}));
  EXPECT_EQ(t->skus()[0].pci_device_ids, (std::vector<uint32_t>{0xFFFF, 0x0001}));
}

// thresholds.h: a SkuThresholds made in code holds zeros; the values live in thresholds.yaml.
TEST(Thresholds, AStructMadeInCodeHoldsZeros) {
  const SkuThresholds z;
  EXPECT_EQ(z.max_temp_c, 0);
  EXPECT_EQ(z.pcie_min_fraction + z.pcie_warn_fraction + z.membw_min_fraction + z.membw_warn_fraction, 0);
  EXPECT_EQ(z.gemm_min_fraction + z.peer_slow_warn_pct + z.peer_slow_fail_pct, 0);
  EXPECT_EQ(z.p2p_min_fraction + z.p2p_warn_fraction, 0);
  EXPECT_EQ(z.power_target_fraction + z.power_min_fraction + z.power_warn_fraction + z.memtest_fraction, 0);
  EXPECT_EQ(z.max_retired_pages, 0u);
  EXPECT_EQ(z.peak_mem_bw_gbps + z.nvlink_p2p_gbps, 0);
  EXPECT_EQ(z.pcie_gen, 0);
  EXPECT_EQ(z.pcie_width, 0);
  EXPECT_EQ(z.key, "generic");
}

}  // namespace
}  // namespace gw::diag
