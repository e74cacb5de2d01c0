// What tells a GPU apart (collect/gpu_view.h): a GPU that never gave its UUID (lost or stalled
// before it was identified) is named by its index, GPU 0 like any other.
#include <gtest/gtest.h>

#include "collect/gpu_view.h"

namespace gw::collect {
namespace {

TEST(GpuIdentity, AGpuWithoutAUuidIsNamedByItsIndexZeroIncluded) {
  for (const unsigned index : {0u, 1u, 7u}) {
    GpuIdentity g;
    g.index = index;
    EXPECT_EQ(g.key(), "index:" + std::to_string(index));
    EXPECT_TRUE(g.names("", static_cast<int>(index))) << index;
    EXPECT_FALSE(g.names("", static_cast<int>(index) + 1)) << index;
    EXPECT_FALSE(g.names("", -1)) << "a node-wide finding names no GPU";
    EXPECT_FALSE(g.names("GPU-x", static_cast<int>(index))) << "a finding of a GPU with a UUID is another GPU's";
  }
  GpuIdentity known;
  known.index = 0;
  known.uuid = "GPU-a";
  EXPECT_EQ(known.key(), "GPU-a");
  EXPECT_TRUE(known.names("GPU-a", 5)) << "the UUID decides, whatever index was recorded";
  EXPECT_FALSE(known.names("", 0));
}

}  // namespace
}  // namespace gw::collect
