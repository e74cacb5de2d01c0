// Which program answers a command line (src/cli/front_route.h). A wrong "Front" would run a
// command the front does not have (a usage error where the full program would have worked); a
// wrong "Full" only costs the exec, so these pin both directions.
#include "cli/front_route.h"

#include <gtest/gtest.h>

#include <vector>

namespace gw::cli {
namespace {

Program routeOf(std::vector<const char*> args, const char* argv0 = "/usr/bin/gpuwarden") { return route(argv0, args); }

TEST(FrontRoute, TheFrontsCommandsAndVersionStayInTheFront) {
  EXPECT_EQ(routeOf({"--version"}), Program::Front);
  EXPECT_EQ(routeOf({"query", "--query-gpu=index"}), Program::Front);
  EXPECT_EQ(routeOf({"smi", "-L"}), Program::Front);
  EXPECT_EQ(routeOf({"smi"}), Program::Front);
  EXPECT_EQ(routeOf({"query"}, "gpuwarden"), Program::Front);  // found on $PATH: no directory
}

TEST(FrontRoute, GlobalOptionsAndTheirValuesAreSkipped) {
  EXPECT_EQ(routeOf({"--simulate", "dgx-h100", "query"}), Program::Front);
  EXPECT_EQ(routeOf({"--simulate=dgx-h100", "--json", "query"}), Program::Front);
  EXPECT_EQ(routeOf({"--nvml-lib", "/x/libnvidia-ml.so.1", "--root", "/fixture", "smi"}), Program::Front);
  EXPECT_EQ(routeOf({"--json", "--version"}), Program::Front);
  // A scenario called "query" is a value, not the command.
  EXPECT_EQ(routeOf({"--simulate", "query", "serve"}), Program::Full);
  EXPECT_EQ(routeOf({"--simulate", "serve", "query"}), Program::Front);
}

TEST(FrontRoute, EverythingElseGoesToTheFullProgram) {
  EXPECT_EQ(routeOf({}), Program::Full);
  EXPECT_EQ(routeOf({"--help"}), Program::Full);
  EXPECT_EQ(routeOf({"-h"}), Program::Full);
  EXPECT_EQ(routeOf({"serve", "--config", "x"}), Program::Full);
  EXPECT_EQ(routeOf({"discovery"}), Program::Full);
  EXPECT_EQ(routeOf({"quer"}), Program::Full);        // a near miss gets the full program's suggestions
  EXPECT_EQ(routeOf({"--simulate"}), Program::Full);  // a value missing: the full program says so
  EXPECT_EQ(routeOf({"--unknown", "query"}), Program::Full);
}

TEST(FrontRoute, SmiSettingsGoToTheFullProgram) {
  // The front links neither the agent's socket nor the records database that a change needs.
  EXPECT_EQ(routeOf({"smi", "-pl", "250"}), Program::Full);
  EXPECT_EQ(routeOf({"smi", "-i", "0", "-pm", "1"}), Program::Full);
  EXPECT_EQ(routeOf({"--simulate", "dgx-h100", "smi", "--power-limit=250"}), Program::Full);
  EXPECT_EQ(routeOf({"smi", "-r", "-i", "0"}), Program::Full);
  EXPECT_EQ(routeOf({"smi", "-rgc"}), Program::Full);
  // Reading stays in the front, even with a value that looks like a flag's.
  EXPECT_EQ(routeOf({"smi", "-q", "-d", "POWER"}), Program::Front);
  EXPECT_EQ(routeOf({"smi", "--query-gpu=power.limit", "--format=csv"}), Program::Front);
  // A setting flag before `smi` is not smi's.
  EXPECT_EQ(routeOf({"query", "-pl"}), Program::Front);
}

TEST(FrontRoute, ASlurmHooksNameGoesToTheFullProgram) {
  // The hooks' names pick their command in the full program (main.cpp's kSlurmNames).
  EXPECT_EQ(routeOf({}, "/usr/bin/gpuwarden-slurm-prolog"), Program::Full);
  EXPECT_EQ(routeOf({"--version"}, "/usr/bin/gpuwarden-slurm-healthcheck"), Program::Full);
  EXPECT_EQ(routeOf({"query"}, "/opt/x/gw"), Program::Full);
}

}  // namespace
}  // namespace gw::cli
