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
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gw-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& rel, const std::string& content) const {
    std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p.string();
  }

 private:
  std::string path_;
};

inline std::string describe(const GwResult& r) {
  return "exit " + std::to_string(r.code) + "\n--- stdout ---\n" + r.out + "\n--- stderr ---\n" + r.err;
}

}  // namespace gw::test
