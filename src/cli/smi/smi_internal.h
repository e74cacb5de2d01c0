// What the smi views share inside src/cli/smi: opening NVML and choosing GPUs with nvidia-smi's
// sentences and exit codes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/smi/smi.h"
#include "cli/smi/smi_args.h"
#include "nvml/inventory.h"

namespace gw::cli::smi {

struct OpenResult {
  nvml::Session* session = nullptr;
  int exit = kSmiOk;  // when session is null
};
// NVML (or the simulator); on failure nvidia-smi's sentence and exit code, then gpuwarden's reason.
OpenResult openNvml(Context& ctx, std::ostream& err);

// The GPUs of `inv` that -i names (all when empty); none: "No devices were found", kSmiNotFound.
int selectGpus(const nvml::Inventory& inv, const std::string& ids, std::vector<const nvml::GpuInfo*>* out,
               std::ostream& err);
// NVML opened, the inventory read and -i applied: what -L, the summary, -q and the monitors start
// from. On failure the sentence is written to `err` and the SmiExit returned; `gpus` point into `inv`.
struct Selection {
  nvml::Session* session = nullptr;
  nvml::Inventory inv;
  std::vector<const nvml::GpuInfo*> gpus;
};
// `depth`: Identity where the view needs only the GPUs' names (-L, the monitors' selection).
int openAndSelect(Context& ctx, const std::string& ids, Selection* out, std::ostream& err,
                  nvml::InventoryDepth depth = nvml::InventoryDepth::Full);
// nvidia-smi's line for a GPU it cannot open.
void reportLost(const nvml::GpuInfo& g, std::ostream& err);
// kSmiGpuLost when one of `gpus` is lost, kSmiOther when one did not answer, else kSmiOk.
int lostExit(const std::vector<const nvml::GpuInfo*>& gpus);

// nvidia-smi 580 redrew a few frames (the summary's rule under the banner, its process columns,
// topo's NUMA column, mig -lgip): true when the driver version's major number is 580 or later,
// the first driver these layouts were recorded from (tests/e2e/fixtures/real-h200-580.159.04).
bool layout580(const std::string& driver_version);

// The views, one round each; each returns an SmiExit.
int summary(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err);
int queryText(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err);
int queryXml(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err);

// Parses `words` (everything after `smi`) and runs the view; `terminal`: stdout is a terminal.
// As nvidia-smi, every sentence goes to `out`, its errors included; only gpuwarden's own notes
// (the lines that begin with "gpuwarden") go to `notes`.
int dispatch(Context& ctx, const std::vector<std::string>& words, std::ostream& out, std::ostream& notes,
             bool terminal);

}  // namespace gw::cli::smi
