// MIG profile names: the driver's, from the MIG device's name, and only without it a guess from
// slice count and memory, with the rounding at its edges (one home: nvml::migProfileName, used by
// the inventory and the sampler's labels).
#include <gtest/gtest.h>

#include "nvml/inventory.h"

namespace gw::nvml {
namespace {

TEST(MigProfileName, TheDriversNameWinsOverTheGuess) {
  // A 1g of 16.5 GiB, which the guess calls 17gb, where NVIDIA's name says 18gb (a real H200's 1g
  // is 16 GiB and still named 18gb).
  EXPECT_EQ(migProfileName("NVIDIA H200 MIG 1g.18gb", 1, 16896), "1g.18gb");
  EXPECT_EQ(migProfileName("", 1, 16896), "1g.17gb");
  // A compute instance smaller than its GPU instance.
  EXPECT_EQ(migProfileName("NVIDIA A100-SXM4-80GB MIG 1c.3g.40gb", 3, 40192), "1c.3g.40gb");
  // Only the last " MIG " counts, and one with nothing after it is no name.
  EXPECT_EQ(migProfileName("X MIG Y MIG 2g.20gb", 2, 19968), "2g.20gb");
  EXPECT_EQ(migProfileName("NVIDIA A100 MIG ", 2, 19968), "2g.20gb");
  EXPECT_EQ(migProfileName("NVIDIA A100-SXM4-80GB", 2, 19968), "2g.20gb");
}

TEST(MigProfileName, TheGpuInstancesProfileDropsTheComputeSlices) {
  EXPECT_EQ(gpuInstanceProfile("1c.3g.40gb"), "3g.40gb");
  EXPECT_EQ(gpuInstanceProfile("12c.7g.141gb"), "7g.141gb");
  EXPECT_EQ(gpuInstanceProfile("3g.40gb"), "3g.40gb");
  EXPECT_EQ(gpuInstanceProfile("c.3g.40gb"), "c.3g.40gb");  // no count: not a compute prefix
  EXPECT_EQ(gpuInstanceProfile("1g.10gb"), "1g.10gb");
  EXPECT_EQ(gpuInstanceProfile(""), "");
}

TEST(MigProfileName, NvidiasNamesForTheMemoryNvmlReports) {
  EXPECT_EQ(migProfileName("", 1, 4864), "1g.5gb");    // A100 40GB: 4.75 GiB
  EXPECT_EQ(migProfileName("", 2, 9984), "2g.10gb");   // 9.75 GiB
  EXPECT_EQ(migProfileName("", 3, 19968), "3g.20gb");  // 19.5 GiB
  EXPECT_EQ(migProfileName("", 7, 40192), "7g.40gb");  // 39.25 GiB: up to the marketing size
  EXPECT_EQ(migProfileName("", 1, 9856), "1g.10gb");   // H100 80GB
  EXPECT_EQ(migProfileName("", 7, 80896), "7g.80gb");
}

TEST(MigProfileName, HalfAGibRoundsUpJustBelowItDown) {
  EXPECT_EQ(migProfileName("", 1, 6 * 1024 + 511), "1g.6gb");
  EXPECT_EQ(migProfileName("", 1, 6 * 1024 + 512), "1g.7gb");
  EXPECT_EQ(migProfileName("", 1, 7 * 1024 + 511), "1g.7gb");
  // 8.5 GiB rounds to 9, which NVIDIA calls 10; just below it is 8.
  EXPECT_EQ(migProfileName("", 1, 8 * 1024 + 511), "1g.8gb");
  EXPECT_EQ(migProfileName("", 1, 8 * 1024 + 512), "1g.10gb");
  EXPECT_EQ(migProfileName("", 1, 9 * 1024 + 512), "1g.10gb");
  EXPECT_EQ(migProfileName("", 1, 10 * 1024 + 511), "1g.10gb");
  EXPECT_EQ(migProfileName("", 1, 10 * 1024 + 512), "1g.11gb");
  EXPECT_EQ(migProfileName("", 2, 0), "2g.0gb");
}

}  // namespace
}  // namespace gw::nvml
