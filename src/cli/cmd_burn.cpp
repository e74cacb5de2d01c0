// gpuwarden burn: every selected GPU under GEMM load at once, live numbers, OK / FAULTY (R27).
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/diag_nvml_impl.h"
#include "diag/burn.h"
#include "diag/gemm_precision.h"

namespace gw::cli {

void addBurn(CLI::App& app, Run& run) {
  auto* cmd =
      app.add_subcommand("burn", "Load every selected GPU with GEMMs at once and flag the faulty ones (like gpu-burn)");
  auto opt = std::make_shared<diag::BurnOptions>();
  auto ids = std::make_shared<std::string>();
  cmd->add_option("-d,--duration", opt->seconds, "Seconds to burn (default 60)");
  std::string precisions;
  for (const auto& p : diag::kGemmPrecisions) precisions += std::string("\n  ") + p.name + ": " + p.description;
  cmd->add_option("-p,--precision", opt->precision, "GEMM precision (default fp16):" + precisions);
  cmd->add_option("-i,--id", *ids, "GPUs to burn: indices, UUIDs or PCI bus ids, comma separated (default all)");
  cmd->footer(
      "Every GPU multiplies the same seeded matrices: a GPU whose results differ from its own first\n"
      "result (miscompares) or from the majority of its identical peers, that is far slower than its\n"
      "peers, raises an Xid, loses ECC or falls off the bus is FAULTY. Live lines go to stderr (redrawn\n"
      "on a terminal); the final table, or with --json the result document, to stdout. Without a GPU\n"
      "that CUDA can use (no driver, the simulator) it says why and exits 3. See docs/burn.md.\n" +
      diag::burnExitCodeHelp());
  cmd->callback([&run, opt, ids]() {
    // Options first: a typo is reported as such even on a machine without a driver.
    if (std::string bad = diag::validateBurnOptions(*opt); !bad.empty()) {
      printError(bad);
      run.exit_code = kExitUsage;
      return;
    }
    auto* s = run.ctx.nvml();
    if (!s) {
      run.exit_code = run.ctx.failureExit();
      return;
    }
    diag::BurnOptions o = *opt;
    o.gpus.clear();
    if (!ids->empty() && !resolveGpuIds(*s, *ids, o.gpus)) {
      run.exit_code = kExitUsage;
      return;
    }
    o.simulated = !run.ctx.options.simulate.empty();
    installStopHandlers();
    o.cancelled = [] { return stopRequested(); };
    DiagNvmlImpl nv(*s, kCallDeadline);
    // --json is for scripts: the document alone, no live lines.
    diag::TextBurnSink live(std::cerr, ::isatty(STDERR_FILENO) != 0);
    diag::BurnSink quiet;
    diag::BurnReport r = diag::runBurn(o, nv, nullptr, run.ctx.options.json ? quiet : live);
    if (!r.error.empty()) printError(r.error);
    if (!r.cannot_run.empty()) {
      printError("burn cannot run: " + r.cannot_run);
      // A GPU found faulty before the burn could not start (it does not answer) is why it exits 1.
      for (const auto& g : r.gpus)
        for (const auto& why : g.reasons) printError("GPU " + std::to_string(g.gpu) + " FAULTY: " + why);
    }
    if (run.ctx.options.json)
      std::cout << diag::burnToJson(r).dump(2) << "\n";
    else if (r.error.empty() && r.cannot_run.empty())
      std::cout << diag::renderBurnText(r);
    run.exit_code = r.exitCode();
  });
}

}  // namespace gw::cli
