// Each command whose exit codes mean something beyond "0 ok" says them in its own --help, so an
// operator scripting it need not open docs/cli.md: a footer from "Exit codes:" on names every code
// the command uses.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "gw_run.h"

namespace gw::test {
namespace {

struct Command {
  std::vector<std::string> words;
  std::vector<int> codes;  // each exit code the footer must name
};

void PrintTo(const Command& c, std::ostream* os) {
  for (const auto& w : c.words) *os << w << " ";
}

std::vector<Command> table() {
  return {
      {{"discovery"}, {0, 1, 2, 3}},
      {{"query"}, {0, 1, 2, 3}},
      {{"dmon"}, {0, 1, 2, 3}},
      {{"pmon"}, {0, 1, 2, 3}},
      {{"topo"}, {0, 1, 2, 3}},
      {{"doctor"}, {0, 1, 2}},
      {{"cuda", "list"}, {0}},
      {{"cuda", "env"}, {0, 2}},
      {{"xid", "scan"}, {0, 1, 2}},
      {{"explain"}, {0, 2}},
      {{"health"}, {0, 1, 2, 3}},
      {{"history"}, {0, 1, 2, 3}},
      {{"events"}, {0, 2, 3}},
      {{"incidents", "list"}, {0, 1, 3}},
      {{"incidents", "show"}, {0, 1, 3}},
      {{"incidents", "ack"}, {0, 1, 3}},
      {{"incidents", "resolve"}, {0, 1, 3}},
      {{"incidents", "set-healthy"}, {0, 1, 3}},
      {{"reload"}, {0, 1, 3}},
      {{"diag"}, {0, 1, 2, 3, 4}},
      {{"burn"}, {0, 1, 2, 3}},
      {{"top"}, {0, 1, 2, 3}},
      {{"job", "list"}, {0, 1, 3}},
      {{"job", "show"}, {0, 1, 3}},
      {{"job", "compare"}, {0, 1, 3}},
      {{"records"}, {0, 1, 3}},
      {{"slurm", "gres"}, {0, 1, 2, 3}},
      {{"slurm", "healthcheck"}, {0, 1, 2, 3}},
      {{"slurm", "prolog"}, {0, 1, 2}},
      {{"slurm", "epilog"}, {0, 1, 2}},
      {{"cluster", "diag"}, {0, 1, 2, 4}},
      {{"fleet"}, {0, 1, 2, 3}},
      {{"serve"}, {0, 1, 2, 3}},
      {{"hash-password"}, {0, 1, 2}},
  };
}

class CliHelp : public ::testing::TestWithParam<Command> {};

TEST_P(CliHelp, SaysItsExitCodes) {
  std::vector<std::string> argv = GetParam().words;
  argv.push_back("--help");
  auto r = runGw(argv);
  ASSERT_EQ(r.code, 0) << describe(r);
  const auto at = r.out.find("Exit codes:");
  ASSERT_NE(at, std::string::npos) << describe(r);
  const std::string footer = r.out.substr(at);
  // A code opens the sentence, follows a comma, or opens a row of a table of codes.
  for (int code : GetParam().codes)
    EXPECT_TRUE(std::regex_search(footer, std::regex("(Exit codes:|,|\\n) *" + std::to_string(code) + " ")))
        << code << " in:\n"
        << footer;
}

std::string nameOf(const ::testing::TestParamInfo<Command>& info) {
  std::string name;
  for (const auto& w : info.param.words)
    for (char c : w)
      if (std::isalnum(static_cast<unsigned char>(c))) name += c;
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryCommandWithExitCodes, CliHelp, ::testing::ValuesIn(table()), nameOf);

}  // namespace
}  // namespace gw::test
