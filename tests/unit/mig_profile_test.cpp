// MIG profile names from slice count and memory: NVIDIA's own names for the memory NVML reports,
// and the rounding at its edges (one home: nvml::migProfileName, used by the inventory and the
// sampler's labels).
#include <gtest/gtest.h>

#include "nvml/inventory.h"

namespace gw::nvml {
namespace {

TEST(MigProfileName, NvidiasNamesForTheMemoryNvmlReports) {
  EXPECT_EQ(migProfileName(1, 4864), "1g.5gb");    // A100 40GB: 4.75 GiB
  EXPECT_EQ(migProfileName(2, 9984), "2g.10gb");   // 9.75 GiB
  EXPECT_EQ(migProfileName(3, 19968), "3g.20gb");  // 19.5 GiB
  EXPECT_EQ(migProfileName(7, 40192), "7g.40gb");  // 39.25 GiB: up to the marketing size
  EXPECT_EQ(migProfileName(1, 9856), "1g.10gb");   // H100 80GB
  EXPECT_EQ(migProfileName(7, 80896), "7g.80gb");
}

TEST(MigProfileName, HalfAGibRoundsUpJustBelowItDown) {
  EXPECT_EQ(migProfileName(1, 6 * 1024 + 511), "1g.6gb");
  EXPECT_EQ(migProfileName(1, 6 * 1024 + 512), "1g.7gb");
  EXPECT_EQ(migProfileName(1, 7 * 1024 + 511), "1g.7gb");
  // 8.5 GiB rounds to 9, which NVIDIA calls 10; just below it is 8.
  EXPECT_EQ(migProfileName(1, 8 * 1024 + 511), "1g.8gb");
  EXPECT_EQ(migProfileName(1, 8 * 1024 + 512), "1g.10gb");
  EXPECT_EQ(migProfileName(1, 9 * 1024 + 512), "1g.10gb");
  EXPECT_EQ(migProfileName(1, 10 * 1024 + 511), "1g.10gb");
  EXPECT_EQ(migProfileName(1, 10 * 1024 + 512), "1g.11gb");
  EXPECT_EQ(migProfileName(2, 0), "2g.0gb");
}

}  // namespace
}  // namespace gw::nvml
