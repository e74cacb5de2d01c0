// Runs the real gpuwarden binary, as an operator would, and captures what it printed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "platform/process_runner.h"

#include "../support/temp_dir.h"

namespace gw::test {

struct GwResult {
  int code = -1;
  std::string out, err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::stringstream ss(out);
    for (std::string l; std::getline(ss, l);) v.push_back(l);
    return v;
  }
};

inline GwResult runGw(const std::vector<std::string>& args, std::map<std::string, std::string> env = {},
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(60000)) {
  std::vector<std::string> argv{GW_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  platform::RunOptions o;
  o.timeout = timeout;
  o.env = std::move(env);
  o.max_output = 16 << 20;
  platform::SystemProcessRunner runner;
  auto r = runner.run(argv, o);
  return {r.exit_code, r.out, r.err};
}

// A scratch directory removed at the end of the test.
using TempDir = testsupport::TempDir;

#ifdef GW_SOURCE_DIR
// A scenario file written in `dir`: the shipped scenario `base` with `faults` added, each one YAML
// flow mapping ("{type: ecc_dbe, gpu: 4, at: 1, count: 2}"). Returns its path.
inline std::string scenarioWithFaults(const TempDir& dir, const std::string& base,
                                      const std::vector<std::string>& faults) {
  std::string yaml = "base: " GW_SOURCE_DIR "/scenarios/" + base + ".yaml\nfaults:\n";
  for (const auto& f : faults) yaml += "  - " + f + "\n";
  return dir.write(base + "-with-faults.yaml", yaml);
}
#endif

inline std::string describe(const GwResult& r) {
  return "exit " + std::to_string(r.code) + "\n--- stdout ---\n" + r.out + "\n--- stderr ---\n" + r.err;
}

}  // namespace gw::test
