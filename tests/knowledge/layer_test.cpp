// knowledge/ sits below events, health and diag and may use only common/: a project include of
// anything else would let it grow a dependency on the layers that use it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

TEST(KnowledgeLayer, IncludesOnlyCommonAndItself) {
  const std::filesystem::path dir = std::filesystem::path(GW_TEST_SOURCE_DIR) / "src" / "knowledge";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (ext != ".h" && ext != ".cpp") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("#include \"", 0) != 0) continue;
      const std::string target = line.substr(10);
      EXPECT_TRUE(target.rfind("common/", 0) == 0 || target.rfind("knowledge/", 0) == 0)
          << entry.path().filename() << ": " << line;
    }
  }
  EXPECT_GE(files, 4);
}

}  // namespace
