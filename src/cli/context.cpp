#include "cli/context.h"
#include "cli/printable.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace gw::cli {
namespace fs = std::filesystem;

namespace {

bool isFile(const std::string& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string firstExisting(const std::vector<std::string>& candidates) {
  for (const auto& c : candidates)
    if (isFile(c)) return c;
  return "";
}

}  // namespace

std::string executableDirectory() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::vector<std::string> scenarioDirectories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("GPUWARDEN_SCENARIO_DIR"); env && *env) dirs.emplace_back(env);
  const std::string exe = executableDirectory();
  dirs.push_back(exe + "/../share/gpuwarden/scenarios");
#ifdef GW_SOURCE_SCENARIO_DIR
  dirs.emplace_back(GW_SOURCE_SCENARIO_DIR);  // running from a build tree
#endif
  return dirs;
}

std::vector<std::string> listScenarios() {
  std::vector<std::string> names;
  for (const auto& dir : scenarioDirectories()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<NvmlTarget> resolveNvmlTarget(const GlobalOptions& o, bool* usage_error) {
  if (usage_error) *usage_error = false;
  auto usage = [&](std::string message) {
    if (usage_error) *usage_error = true;
    return Status::Error(std::move(message));
  };
  NvmlTarget t;
  if (o.simulate.empty()) {
    if (!o.nvml_lib.empty()) {
      t.library = o.nvml_lib;
    } else if (const char* env = std::getenv("GPUWARDEN_NVML_LIB"); env && *env) {
      t.library = env;
    } else {
      t.library = "libnvidia-ml.so.1";
    }
    return t;
  }

  // Simulation, only because it was asked for.
  const std::string& s = o.simulate;
  if (s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml")) {
    if (!isFile(s)) return usage("scenario file " + s + " does not exist");
    t.scenario = fs::absolute(s).string();
  } else {
    for (const auto& dir : scenarioDirectories()) {
      if (isFile(dir + "/" + s + ".yaml")) {
        t.scenario = fs::weakly_canonical(dir + "/" + s + ".yaml").string();
        break;
      }
    }
    if (t.scenario.empty()) {
      std::string known;
      for (const auto& n : listScenarios()) known += (known.empty() ? "" : ", ") + n;
      return usage("unknown scenario '" + s + "' (known: " + known + ")");
    }
  }
  if (!o.nvml_lib.empty()) {
    t.library = o.nvml_lib;
  } else if (const char* env = std::getenv("GPUWARDEN_SIM_LIB"); env && *env) {
    t.library = env;
  } else {
    const std::string exe = executableDirectory();
    t.library = firstExisting(
        {exe + "/../lib/libnvml-sim.so", exe + "/../lib/gpuwarden/libnvml-sim.so", exe + "/libnvml-sim.so"});
    if (t.library.empty())
      return Status::Nvml(NVML_ERROR_LIBRARY_NOT_FOUND, "the NVML simulator libnvml-sim.so was not found next to " +
                                                            exe + " (set GPUWARDEN_SIM_LIB)");
  }
  return t;
}

nvml::Session* Context::nvml() {
  if (tried_) return session_.get();
  tried_ = true;
  auto target = resolveNvmlTarget(options, &usage_error_);
  if (!target) {
    nvml_status_ = target.status();
    if (!quiet_) printError(target.error());
    return nullptr;
  }
  if (!target->scenario.empty()) ::setenv("GPUWARDEN_SIM_SCENARIO", target->scenario.c_str(), 1);
  auto session = nvml::Session::open({target->library});
  if (!session) {
    nvml_status_ = session.status();
    if (!quiet_) printError(session.error());
    return nullptr;
  }
  session_ = std::move(session).value();
  return session_.get();
}

nvml::Session* Context::tryNvml() {
  quiet_ = true;
  nvml::Session* s = nvml();
  quiet_ = false;
  return s;
}

const platform::FsRoot& Context::root() {
  if (!root_) root_ = std::make_unique<platform::FsRoot>(options.root);
  return *root_;
}

// An error may quote another program's or machine's words (an HTTP body, a remote agent's reason).
void printError(const std::string& message) { std::cerr << "gpuwarden: " << printable(message, true) << "\n"; }

std::optional<Context::Devices> Context::devices(int* exit_code) {
  nvml::Session* s = nvml();
  if (!s) {
    *exit_code = failureExit();
    return std::nullopt;
  }
  auto count = s->deviceCount();
  if (!count) {
    printError(count.error());
    *exit_code = kExitNoDriver;
    return std::nullopt;
  }
  return Devices{s, *count};
}

}  // namespace gw::cli
