// gpuwarden incidents with no agent running: what it reads from the data folder an agent left.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gw_run.h"

namespace gw::test {
namespace {

std::map<std::string, std::string> noAgent(const TempDir& dir) {
  return {{"GPUWARDEN_RUNTIME_DIR", dir.path() + "/run"}};
}

// --data-dir is the incidents command's own option as well as each subcommand's: both places read
// the same folder (here the golden incidents database of tests/golden, as an agent left it).
TEST(IncidentsCli, TheDataFolderIsTakenBeforeOrAfterTheSubcommand) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  std::filesystem::create_directories(data);
  std::filesystem::copy_file(std::string(GW_SOURCE_DIR) + "/tests/golden/incidents-v1.db", data + "/incidents.db");
  auto before = runGw({"--json", "incidents", "--data-dir", data, "list", "--all"}, noAgent(dir));
  auto after = runGw({"--json", "incidents", "list", "--all", "--data-dir", data}, noAgent(dir));
  ASSERT_EQ(before.code, 0) << describe(before);
  ASSERT_EQ(after.code, 0) << describe(after);
  EXPECT_EQ(before.out, after.out);
  const auto listed = nlohmann::json::parse(after.out);
  EXPECT_FALSE(listed["incidents"].empty()) << after.out;
  // The text is one line per incident: the golden summaries' newline is shown, not obeyed.
  auto text = runGw({"incidents", "list", "--all", "--data-dir", data}, noAgent(dir));
  ASSERT_EQ(text.code, 0) << describe(text);
  EXPECT_EQ(text.lines().size(), listed["incidents"].size()) << text.out;
  for (const auto& line : text.lines()) EXPECT_EQ(line.rfind("#", 0), 0u) << line;
  EXPECT_NE(text.out.find("\"quoted\", ünïcode, a\\x0anewline"), std::string::npos) << text.out;
}

// A mistyped --data-dir with no agent behind it listed "no open incidents" and exited 0, leaving a
// new folder with an empty database behind; it is said now (exit 3) and nothing is made.
TEST(IncidentsCli, AFolderWithoutIncidentsIsSaidNotListedAsEmpty) {
  TempDir dir;
  const std::string missing = dir.path() + "/typo";
  const std::string empty = dir.path() + "/empty";
  std::filesystem::create_directories(empty);
  for (const std::string& data : {missing, empty}) {
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{"incidents", "list", "--data-dir", data},
          std::vector<std::string>{"incidents", "resolve", "3", "--data-dir", data}}) {
      auto r = runGw(argv, noAgent(dir));
      EXPECT_EQ(r.code, 3) << describe(r);
      EXPECT_NE(r.err.find("no agent answers for " + data + " and it holds no incidents (" + data +
                           "/incidents.db: No such file or directory)"),
                std::string::npos)
          << describe(r);
      EXPECT_EQ(r.out, "") << describe(r);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(missing));
  EXPECT_TRUE(std::filesystem::is_empty(empty));
}

}  // namespace
}  // namespace gw::test
