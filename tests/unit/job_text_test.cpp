// `gpuwarden job`'s sizes and lengths, at each unit's edges.
#include <gtest/gtest.h>

#include "cli/job_text.h"

namespace gw::cli {
namespace {

TEST(JobText, DurationsAtEachUnitsEdge) {
  EXPECT_EQ(humanDuration(0), "0s");
  EXPECT_EQ(humanDuration(59.4), "59s");
  EXPECT_EQ(humanDuration(59.5), "1m 00s");  // rounded to whole seconds first
  EXPECT_EQ(humanDuration(60), "1m 00s");
  EXPECT_EQ(humanDuration(61), "1m 01s");
  EXPECT_EQ(humanDuration(119), "1m 59s");
  EXPECT_EQ(humanDuration(3599), "59m 59s");
  EXPECT_EQ(humanDuration(3600), "1h 00m 00s");
  EXPECT_EQ(humanDuration(3661), "1h 01m 01s");
  EXPECT_EQ(humanDuration(7199), "1h 59m 59s");
  EXPECT_EQ(humanDuration(100 * 3600 + 59), "100h 00m 59s");
}

TEST(JobText, BytesAtEachUnitsEdge) {
  EXPECT_EQ(humanBytes(0), "0 B");
  EXPECT_EQ(humanBytes(1023), "1023 B");
  EXPECT_EQ(humanBytes(1024), "1.0 KiB");
  EXPECT_EQ(humanBytes(1536), "1.5 KiB");
  EXPECT_EQ(humanBytes(1024.0 * 1024 - 1), "1024.0 KiB");  // 1023.999 KiB, shown to one decimal
  EXPECT_EQ(humanBytes(1024.0 * 1024), "1.0 MiB");
  EXPECT_EQ(humanBytes(80.0 * 1024 * 1024 * 1024), "80.0 GiB");
  EXPECT_EQ(humanBytes(1024.0 * 1024 * 1024 * 1024), "1.0 TiB");
  EXPECT_EQ(humanBytes(1024.0 * 1024 * 1024 * 1024 * 1024), "1.0 PiB");
  EXPECT_EQ(humanBytes(2048.0 * 1024 * 1024 * 1024 * 1024 * 1024), "2048.0 PiB");  // PiB is the largest unit
}

}  // namespace
}  // namespace gw::cli
