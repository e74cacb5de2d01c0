// Framework layer (R8): does PyTorch / PaddlePaddle see the GPU, and if not, which layer below is
// to blame. The frameworks are asked through the process runner with the python3 that PATH selects.
#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "doctor/doctor_internal.h"
#include "platform/bounded_json.h"

namespace gw::doctor::detail {
namespace {

constexpr Layer kL = Layer::kFramework;

const char* kTorchScript =
    "import json,torch;print(json.dumps({'version':torch.__version__,'cuda':torch.version.cuda,"
    "'available':torch.cuda.is_available(),'count':torch.cuda.device_count()}))";
const char* kPaddleScript =
    "import json,paddle;c=paddle.device.is_compiled_with_cuda();print(json.dumps({'version':paddle.__version__,"
    "'cuda':paddle.version.cuda(),'compiled_with_cuda':c,'count':paddle.device.cuda.device_count() if c else 0}))";

struct PyResult {
  bool ran = false;
  bool not_installed = false;
  std::string error;  // last line of stderr when the import failed otherwise
  nlohmann::json data;
};

PyResult runPython(Context& ctx, const std::string& python, const char* script, const char* module) {
  PyResult res;
  platform::RunOptions opts;
  opts.env = ctx.in.env;
  // Importing torch can take most of a minute on a cold page cache.
  constexpr std::chrono::seconds kImportTimeout{60};
  opts.timeout = kImportTimeout;
  auto r = ctx.in.runner.run({ctx.in.root.path(python), "-c", script}, opts);
  if (r.not_found || r.timed_out) {
    res.error = r.timed_out ? "timed out after " + std::to_string(kImportTimeout.count()) + " s"
                            : python + " could not be started";
    return res;
  }
  res.ran = true;
  const std::string quoted1 = std::string("No module named '") + module + "'";
  const std::string quoted2 = std::string("No module named \"") + module + "\"";
  if (r.exit_code != 0) {
    if (contains(r.err, quoted1) || contains(r.err, quoted2) || contains(r.out, quoted1)) {
      res.not_installed = true;
    } else {
      auto ls = lines(r.err);
      while (!ls.empty() && trim(ls.back()).empty()) ls.pop_back();
      res.error = ls.empty() ? "exit code " + std::to_string(r.exit_code) : trim(ls.back());
    }
    return res;
  }
  auto ls = lines(r.out);
  for (auto it = ls.rbegin(); it != ls.rend(); ++it) {
    auto j = platform::parseBounded(*it);
    if (j && j->is_object()) {
      res.data = std::move(j).value();
      return res;
    }
  }
  res.error = "unexpected output: " + trim(r.out.substr(0, 200));
  return res;
}

// The device count a framework printed: a whole number, else 0 (a string, a fraction, a negative
// or a number past any machine is not believed; get<int>() would have wrapped 2^32+1 to 1).
int deviceCountOf(const nlohmann::json& d) {
  return d.contains("count") ? platform::asWholeNumber<std::uint16_t>(d["count"]).value_or(0) : 0;
}

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

// PyTorch wheel index for the newest CUDA the driver runs.
std::string torchIndexFor(const std::string& driver_cuda) {
  static const std::vector<std::pair<std::string, std::string>> kWheels = {
      {"11.8", "cu118"}, {"12.1", "cu121"}, {"12.4", "cu124"}, {"12.6", "cu126"},
      {"12.8", "cu128"}, {"12.9", "cu129"}, {"13.0", "cu130"}};
  std::string best;
  for (const auto& [v, tag] : kWheels)
    if (!driver_cuda.empty() && compareVersions(v, driver_cuda) <= 0) best = tag;
  return best;
}

std::string torchFix(const std::string& driver_cuda) {
  const std::string tag = torchIndexFor(driver_cuda.empty() ? "12.4" : driver_cuda);
  if (tag.empty())
    return "The driver (CUDA " + driver_cuda +
           ") is older than any current PyTorch CUDA build: upgrade the driver first.";
  return "pip uninstall -y torch torchvision torchaudio\n"
         "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/" +
         tag + "\n(conda: install pytorch with pytorch-cuda from the pytorch and nvidia channels)";
}

// Names the first wrong layer below the framework.
std::string blameBelow(const Context& ctx, std::string* fix) {
  if (const Check* c = ctx.firstFailureBelow(Layer::kFramework)) {
    *fix = "Fix the " + std::string(layerName(c->layer)) + " layer first (" + c->id + "):\n" + c->fix;
    return "the " + std::string(layerName(c->layer)) + " layer is wrong: " + c->title + ": " + c->found;
  }
  if (ctx.hasEnv("CUDA_VISIBLE_DEVICES")) {
    const std::string v = ctx.env("CUDA_VISIBLE_DEVICES");
    if (v.empty() || v == "-1" || v == "none" || v == "NoDevFiles") {
      *fix = "unset CUDA_VISIBLE_DEVICES   # or set it to the GPUs this job may use, e.g. 0,1";
      return "CUDA_VISIBLE_DEVICES=\"" + v + "\" hides every GPU";
    }
  }
  *fix = "python3 -c 'import torch; torch.cuda.init()'   # prints the CUDA error that made is_available() False";
  return "no lower layer failed; the CUDA error is only visible from inside the framework";
}

void checkTorch(Context& ctx, const std::string& python, const std::string& drv, bool gpus_present) {
  const std::string title = "PyTorch sees the GPU";
  auto r = runPython(ctx, python, kTorchScript, "torch");
  if (r.not_installed) {
    ctx.add("framework.pytorch", kL, Verdict::kSkip, title, "torch is not installed for " + python);
    return;
  }
  if (!r.ran || !r.error.empty()) {
    std::string fix = "Run the import by hand to see the whole error: " + python + " -c 'import torch'";
    if (contains(r.error, "libcudnn")) fix += "\ncuDNN cannot be loaded: see lib.cudnn.";
    if (contains(r.error, "libcudart") || contains(r.error, "libcublas"))
      fix += "\nA CUDA library cannot be loaded: see the toolkit checks (LD_LIBRARY_PATH).";
    ctx.add("framework.pytorch", kL, Verdict::kFail, title, "import torch failed: " + r.error, fix);
    return;
  }
  const auto& d = r.data;
  const std::string version = str(d, "version");
  const std::string cuda = str(d, "cuda");
  const bool available = d.contains("available") && d["available"].is_boolean() && d["available"].get<bool>();
  const int count = deviceCountOf(d);
  const std::string found = "torch " + version + ", built for CUDA " + (cuda.empty() ? "none" : cuda) +
                            ", is_available()=" + (available ? "True" : "False") + ", " + std::to_string(count) +
                            " device" + (count == 1 ? "" : "s");

  if (cuda.empty() || contains(version, "+cpu")) {
    ctx.add("framework.pytorch", kL, Verdict::kFail, title, found + " (a CPU-only build)", torchFix(drv),
            "A CPU-only PyTorch (pip's default on some platforms, or a conda environment that resolved the cpu "
            "build) never sees a GPU, whatever the driver does.");
    return;
  }
  if (!drv.empty() && majorOf(cuda) > majorOf(drv)) {
    ctx.add("framework.pytorch", kL, Verdict::kFail, title, found + "; the driver supports only CUDA " + drv,
            torchFix(drv) + "\nor upgrade the driver to one that supports CUDA " + majorMinor(cuda) + ".",
            "\"The NVIDIA driver on your system is too old\" / \"CUDA driver version is insufficient for CUDA runtime "
            "version\": this PyTorch build needs a newer driver.");
    return;
  }
  if (!available && gpus_present) {
    std::string fix;
    std::string why = blameBelow(ctx, &fix);
    ctx.add("framework.pytorch", kL, Verdict::kFail, title, found + "; " + why, fix,
            "The framework is a CUDA build but cannot use the GPU: the problem is in a layer below it.");
    return;
  }
  if (!available) {
    ctx.add("framework.pytorch", kL, Verdict::kFail, title, found + "; no GPU on this machine",
            "See the hardware and kernel driver checks.");
    return;
  }
  if (!drv.empty() && compareVersions(majorMinor(cuda), drv) > 0) {
    ctx.add("framework.pytorch", kL, Verdict::kWarn, title, found + "; the driver supports CUDA " + drv, torchFix(drv),
            "Runs through CUDA minor-version compatibility, but JIT-compiled PTX and newer features can fail.");
    return;
  }
  const int nvml_count = ctx.nvmlOk() ? static_cast<int>(ctx.in.nvml.gpus.size()) : 0;
  if (nvml_count > 0 && count < nvml_count) {
    ctx.add("framework.pytorch", kL, Verdict::kWarn, title, found + "; NVML sees " + std::to_string(nvml_count),
            ctx.hasEnv("CUDA_VISIBLE_DEVICES")
                ? "CUDA_VISIBLE_DEVICES=" + ctx.env("CUDA_VISIBLE_DEVICES") +
                      " limits the devices: unset it if that is not intended."
                : "Check CUDA_VISIBLE_DEVICES and the container's NVIDIA_VISIBLE_DEVICES.",
            "Fewer devices than the driver manages are visible to the framework.");
    return;
  }
  ctx.add("framework.pytorch", kL, Verdict::kPass, title, found);
}

void checkPaddle(Context& ctx, const std::string& python, const std::string& drv, bool gpus_present) {
  const std::string title = "PaddlePaddle sees the GPU";
  auto r = runPython(ctx, python, kPaddleScript, "paddle");
  if (r.not_installed) {
    ctx.add("framework.paddle", kL, Verdict::kSkip, title, "paddle is not installed");
    return;
  }
  if (!r.ran || !r.error.empty()) {
    ctx.add("framework.paddle", kL, Verdict::kFail, title, "import paddle failed: " + r.error,
            "Run the import by hand: " + python + " -c 'import paddle; paddle.utils.run_check()'");
    return;
  }
  const auto& d = r.data;
  const std::string version = str(d, "version");
  std::string cuda = str(d, "cuda");
  if (cuda == "False") cuda.clear();  // paddle.version.cuda() of a CPU build
  const bool compiled =
      d.contains("compiled_with_cuda") && d["compiled_with_cuda"].is_boolean() && d["compiled_with_cuda"].get<bool>();
  const int count = deviceCountOf(d);
  const std::string found = "paddle " + version + ", CUDA " + (cuda.empty() ? "none" : cuda) + ", " +
                            std::to_string(count) + " device" + (count == 1 ? "" : "s");
  if (!compiled || cuda.empty()) {
    ctx.add("framework.paddle", kL, Verdict::kFail, title, found + " (a CPU-only build)",
            "pip uninstall -y paddlepaddle && pip install paddlepaddle-gpu   # pick the CUDA variant <= the driver's "
            "CUDA " +
                drv + " from paddlepaddle.org.cn",
            "The CPU package `paddlepaddle` never uses the GPU; the GPU package is `paddlepaddle-gpu`.");
  } else if (!drv.empty() && majorOf(cuda) > majorOf(drv)) {
    ctx.add("framework.paddle", kL, Verdict::kFail, title, found + "; the driver supports only CUDA " + drv,
            "Install the paddlepaddle-gpu build for CUDA <= " + drv + ", or upgrade the driver.",
            "\"CUDA driver version is insufficient for CUDA runtime version\".");
  } else if (count == 0 && gpus_present) {
    std::string fix;
    std::string why = blameBelow(ctx, &fix);
    ctx.add("framework.paddle", kL, Verdict::kFail, title, found + "; " + why, fix);
  } else {
    ctx.add("framework.paddle", kL, Verdict::kPass, title, found);
  }
}

}  // namespace

void frameworkChecks(Context& ctx) {
  std::string python = findOnPath(ctx.in.root, ctx.in.env, "python3");
  if (python.empty()) python = findOnPath(ctx.in.root, ctx.in.env, "python");
  if (python.empty()) {
    ctx.add("framework.pytorch", kL, Verdict::kSkip, "PyTorch sees the GPU", "no python3 on PATH");
    return;
  }
  const std::string drv = cudaVersionString(ctx.in.nvml.cuda_driver_version);
  const bool gpus_present = !ctx.pci.empty() || !ctx.in.nvml.gpus.empty() || ctx.wsl;
  checkTorch(ctx, python, drv, gpus_present);
  checkPaddle(ctx, python, drv, gpus_present);
}

}  // namespace gw::doctor::detail
