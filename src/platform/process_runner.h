// The one way the product runs other programs (nvcc --version, python3 -c ..., dmesg).
// Tests replace it, or point PATH at fixture scripts, so stack checks run on any machine.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"

namespace gw::platform {

struct RunResult {
  int exit_code = -1;  // -1 when the program could not be started or was killed
  bool timed_out = false;
  bool not_found = false;  // the program does not exist / is not executable
  int signal = 0;          // the signal that ended it (0: it exited, or was killed on timeout)
  std::string out;
  std::string err;
};

struct RunOptions {
  std::chrono::milliseconds timeout{10000};
  // Added to (or overriding) the inherited environment.
  std::map<std::string, std::string> env;
  std::size_t max_output = 1 << 20;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // argv[0] is looked up in PATH when it has no '/'.
  virtual RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {}) = 0;
};

// fork/exec with pipes and a deadline; the child is killed (SIGKILL to its group) on timeout.
class SystemProcessRunner final : public ProcessRunner {
 public:
  RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {}) override;
};

ProcessRunner& defaultProcessRunner();

}  // namespace gw::platform
