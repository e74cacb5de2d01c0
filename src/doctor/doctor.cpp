#include "doctor/doctor.h"

#include <algorithm>
#include <array>

#include "doctor/doctor_internal.h"
#include "doctor/fatbin.h"

namespace gw::doctor {

std::string_view layerName(Layer layer) {
  switch (layer) {
    case Layer::kHardware:
      return "hardware";
    case Layer::kKernelDriver:
      return "kernel-driver";
    case Layer::kCudaDriver:
      return "cuda-driver";
    case Layer::kToolkit:
      return "toolkit";
    case Layer::kLibraries:
      return "libraries";
    case Layer::kFramework:
      return "framework";
    case Layer::kApplication:
      return "application";
    case Layer::kContainer:
      return "container";
  }
  return "unknown";
}

std::string_view layerTitle(Layer layer) {
  switch (layer) {
    case Layer::kHardware:
      return "Hardware (PCI)";
    case Layer::kKernelDriver:
      return "Kernel driver";
    case Layer::kCudaDriver:
      return "CUDA driver (libcuda / NVML)";
    case Layer::kToolkit:
      return "CUDA toolkit and runtime";
    case Layer::kLibraries:
      return "Libraries (cuDNN)";
    case Layer::kFramework:
      return "Frameworks";
    case Layer::kApplication:
      return "Application GPU code";
    case Layer::kContainer:
      return "Container and system";
  }
  return "Unknown";
}

std::string_view verdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kFail:
      return "fail";
    case Verdict::kSkip:
      return "skip";
  }
  return "unknown";
}

std::vector<Check> runDoctor(const DoctorInput& input) {
  detail::Context ctx(input);
  detail::detectEnvironment(ctx);
  detail::hardwareChecks(ctx);
  detail::driverChecks(ctx);
  detail::cudaDriverChecks(ctx);
  detail::toolkitChecks(ctx);
  detail::libraryChecks(ctx);
  detail::frameworkChecks(ctx);
  if (!input.binary.empty()) {
    for (auto& c : checkBinary(input.binary, input.nvml)) ctx.checks.push_back(std::move(c));
  }
  detail::containerChecks(ctx);
  std::stable_sort(ctx.checks.begin(), ctx.checks.end(),
                   [](const Check& a, const Check& b) { return a.layer < b.layer; });
  return std::move(ctx.checks);
}

int exitCodeFor(const std::vector<Check>& checks) {
  int code = 0;
  for (const auto& c : checks) {
    if (c.verdict == Verdict::kFail) return 2;
    if (c.verdict == Verdict::kWarn) code = 1;
  }
  return code;
}

bool localeIsUtf8(const std::map<std::string, std::string>& env) {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) continue;
    std::string v = detail::toLower(it->second);
    return detail::contains(v, "utf-8") || detail::contains(v, "utf8");
  }
  return false;
}

namespace {

const char* symbolFor(Verdict v, bool utf8) {
  switch (v) {
    case Verdict::kPass:
      return utf8 ? "\u2714" : "PASS";
    case Verdict::kWarn:
      return utf8 ? "!" : "WARN";
    case Verdict::kFail:
      return utf8 ? "\u2718" : "FAIL";
    case Verdict::kSkip:
      return utf8 ? "-" : "SKIP";
  }
  return "?";
}

const char* colorFor(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "\033[32m";
    case Verdict::kWarn:
      return "\033[33m";
    case Verdict::kFail:
      return "\033[31m";
    case Verdict::kSkip:
      return "\033[2m";
  }
  return "";
}

struct Counts {
  int pass = 0, warn = 0, fail = 0, skip = 0;
};

Counts count(const std::vector<Check>& checks) {
  Counts n;
  for (const auto& c : checks) {
    switch (c.verdict) {
      case Verdict::kPass:
        ++n.pass;
        break;
      case Verdict::kWarn:
        ++n.warn;
        break;
      case Verdict::kFail:
        ++n.fail;
        break;
      case Verdict::kSkip:
        ++n.skip;
        break;
    }
  }
  return n;
}

const Check* lowestFailure(const std::vector<Check>& checks) {
  const Check* best = nullptr;
  for (const auto& c : checks)
    if (c.verdict == Verdict::kFail && (!best || c.layer < best->layer)) best = &c;
  return best;
}

void appendIndented(std::string& out, const std::string& text, const std::string& prefix) {
  for (const auto& l : detail::lines(text)) out += prefix + l + "\n";
}

}  // namespace

std::string renderText(const std::vector<Check>& checks, bool color, bool utf8) {
  std::string out;
  const std::string reset = color ? "\033[0m" : "";
  const std::string bold = color ? "\033[1m" : "";
  constexpr std::array<Layer, 8> kOrder = {Layer::kHardware,    Layer::kKernelDriver, Layer::kCudaDriver,
                                           Layer::kToolkit,     Layer::kLibraries,    Layer::kFramework,
                                           Layer::kApplication, Layer::kContainer};
  for (Layer layer : kOrder) {
    bool header = false;
    for (const auto& c : checks) {
      if (c.layer != layer) continue;
      if (!header) {
        if (!out.empty()) out += "\n";
        out += bold + std::string(layerTitle(layer)) + reset + "\n";
        header = true;
      }
      std::string sym = symbolFor(c.verdict, utf8);
      if (color) sym = colorFor(c.verdict) + sym + reset;
      out += "  " + sym + " " + c.title;
      if (!c.found.empty()) out += ": " + c.found;
      out += "\n";
      if (c.verdict == Verdict::kWarn || c.verdict == Verdict::kFail) {
        if (!c.explain.empty()) appendIndented(out, c.explain, "      ");
        if (!c.fix.empty()) {
          out += "      fix:\n";
          appendIndented(out, c.fix, "        ");
        }
      } else if (!c.explain.empty() && c.verdict == Verdict::kPass && c.id == "cuda_driver.version") {
        appendIndented(out, c.explain, "      ");  // R6: always explain what "CUDA Version" means
      }
    }
  }
  Counts n = count(checks);
  out += "\n" + bold + "Summary" + reset + ": " + std::to_string(n.pass) + " passed, " + std::to_string(n.warn) +
         " warning" + (n.warn == 1 ? "" : "s") + ", " + std::to_string(n.fail) + " failed, " + std::to_string(n.skip) +
         " skipped";
  if (const Check* f = lowestFailure(checks)) {
    out += "\nLowest failing layer: " + std::string(layerTitle(f->layer)) + " (" + f->id +
           ") - fix that first; layers above it often fail only because of it.";
  }
  out += "\n";
  return out;
}

nlohmann::json toJson(const std::vector<Check>& checks) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& c : checks) {
    arr.push_back({{"id", c.id},
                   {"layer", std::string(layerName(c.layer))},
                   {"verdict", std::string(verdictName(c.verdict))},
                   {"title", c.title},
                   {"found", c.found},
                   {"fix", c.fix},
                   {"explain", c.explain}});
  }
  Counts n = count(checks);
  nlohmann::json summary = {
      {"pass", n.pass}, {"warn", n.warn}, {"fail", n.fail}, {"skip", n.skip}, {"exit_code", exitCodeFor(checks)}};
  if (const Check* f = lowestFailure(checks)) {
    summary["first_failing_layer"] = std::string(layerName(f->layer));
    summary["first_failing_check"] = f->id;
  } else {
    summary["first_failing_layer"] = nullptr;
    summary["first_failing_check"] = nullptr;
  }
  return {{"checks", arr}, {"summary", summary}};
}

}  // namespace gw::doctor
