// A table's facts pinned in a committed text file, one line per row: the test's own statement of
// them (tests/unit/field-catalog.tsv, tests/knowledge/xid-catalog.tsv). Nothing regenerates such a
// file; a changed fact is a deliberate edit of the table and of the file. Lines starting with '#'
// are comments.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace gw::testsupport {

inline void expectLinesAsPinned(const std::string& path, const std::vector<std::string>& got) {
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing";
  std::vector<std::string> want;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') want.push_back(line);
  EXPECT_EQ(got.size(), want.size()) << path;
  for (std::size_t i = 0; i < std::max(got.size(), want.size()); ++i)
    EXPECT_EQ(i < got.size() ? got[i] : "(none)", i < want.size() ? want[i] : "(none)") << path << ", row " << i;
}

}  // namespace gw::testsupport
