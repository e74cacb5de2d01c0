#include <gtest/gtest.h>

#include "diag/thresholds.h"

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
  EXPECT_FALSE(bad("version: 1\nskus: [{name: x}]\n").ok());
  EXPECT_FALSE(bad("version: 1\nskus: [{key: a}, {key: a}]\n").ok());
  EXPECT_FALSE(bad("version: 1\nskus: [{key: a, gemm_tflops: {fp8: 1}}]\n").ok());
  EXPECT_FALSE(bad("version: 1\nskus: [{key: a, pci_device_ids: [0x233010DE]}]\n").ok());
  EXPECT_FALSE(bad("version: [1\n").ok());
  EXPECT_FALSE(ThresholdTable::loadFile("/nonexistent/t.yaml").ok());
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
