// gpuwarden smi ARGS...: nvidia-smi's command line and outputs (issue 15, R23), so that
// `alias nvidia-smi='gpuwarden smi'` keeps operators' scripts working. This file dispatches; the
// argument grammar is smi_args.cpp, the -q views smi_log.cpp, the --query-* views smi_query.cpp,
// and dmon, pmon and topo -m are the views `gpuwarden dmon|pmon|topo` print (cli/views.h).
#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/smi/smi.h"
#include "cli/smi/smi_args.h"
#include "cli/smi/smi_internal.h"
#include "cli/views.h"
#include "nvml/inventory.h"

namespace gw::cli {
namespace smi {

OpenResult openNvml(Context& ctx, std::ostream& err) {
  OpenResult r;
  r.session = ctx.tryNvml();
  if (r.session) return r;
  const Status& st = ctx.nvmlStatus();
  // nvidia-smi's sentences for the failures scripts meet, then ours naming the cause.
  switch (st.nvmlCode()) {
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      err << "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
             "Display Driver is properly installed and present in your system.\nPlease also try adding directory "
             "that contains libnvidia-ml.so to your system PATH.\n";
      r.exit = kSmiLibraryNotFound;
      break;
    case NVML_ERROR_DRIVER_NOT_LOADED:
      err << "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
             "latest NVIDIA driver is installed and running.\n";
      r.exit = kSmiDriverNotLoaded;
      break;
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      err << "Failed to initialize NVML: Driver/library version mismatch\n";
      r.exit = kSmiLibraryMismatch;
      break;
    case NVML_ERROR_NO_PERMISSION:
      err << "Failed to initialize NVML: Insufficient Permissions\n";
      r.exit = kSmiNoPermission;
      break;
    default:
      // A --simulate that names no scenario is the user's argument, not the machine.
      r.exit = ctx.failureExit() == kExitUsage ? kSmiInvalidArgument : kSmiOther;
      if (r.exit == kSmiOther) err << "Failed to initialize NVML: Unknown Error\n";
      break;
  }
  err << "gpuwarden: " << st.message() << "\n";
  return r;
}

int openAndSelect(Context& ctx, const std::string& ids, Selection* out, std::ostream& err, nvml::InventoryDepth depth) {
  auto open = openNvml(ctx, err);
  if (!open.session) return open.exit;
  out->session = open.session;
  auto inv = nvml::readInventory(*open.session, kCallDeadline, depth);
  if (!inv) {
    err << "gpuwarden: " << inv.error() << "\n";
    return kSmiOther;
  }
  out->inv = std::move(inv).value();
  return selectGpus(out->inv, ids, &out->gpus, err);
}

int selectGpus(const nvml::Inventory& inv, const std::string& ids, std::vector<const nvml::GpuInfo*>* out,
               std::ostream& err) {
  const GpuSelection sel = parseSelection(ids);
  for (const auto& g : inv.gpus)
    if (sel.matches(g.index, g.uuid, g.pci.bus_id)) out->push_back(&g);
  if (out->empty()) {
    err << "No devices were found\n";
    if (!ids.empty()) err << "gpuwarden: no GPU matches -i " << ids << "\n";
    return kSmiNotFound;
  }
  return kSmiOk;
}

bool layout580(const std::string& driver_version) { return nvml::driverMajor(driver_version) >= 580; }

void reportLost(const nvml::GpuInfo& g, std::ostream& err) {
  const std::string where = g.pci.bus_id.empty() ? std::to_string(g.index) : g.pci.bus_id;
  err << noHandleLine(where, g.state == "lost" ? "GPU is lost.  Reboot the system to recover this GPU" : g.error);
}

int lostExit(const std::vector<const nvml::GpuInfo*>& gpus) {
  for (const auto* g : gpus)
    if (g->state == "lost") return kSmiGpuLost;
  for (const auto* g : gpus)
    if (g->state != "ok") return kSmiOther;
  return kSmiOk;
}

namespace {

SettingsRunner g_settings_runner = nullptr;

}  // namespace

void setSettingsRunner(SettingsRunner runner) { g_settings_runner = runner; }

namespace {

// -L: nvidia-smi's list, MIG devices indented under their GPU.
int listGpus(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err) {
  Selection sel;
  if (int rc = openAndSelect(ctx, a.ids, &sel, err, nvml::InventoryDepth::Identity)) return rc;
  const auto& gpus = sel.gpus;
  for (const auto* g : gpus) {
    if (g->state != "ok") {
      reportLost(*g, err);
      continue;
    }
    out << "GPU " << g->index << ": " << g->name << " (UUID: " << g->uuid << ")\n";
    for (const auto& m : g->mig_devices)
      out << fmt::format("  MIG {:<12}Device {:>2}: (UUID: {})\n", m.profile, m.index, m.uuid);
  }
  return lostExit(gpus);
}

std::string helpText() {
  return "gpuwarden smi - nvidia-smi's command line over gpuwarden's NVML access.\n\n"
         "    gpuwarden smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...\n\n"
         "    -h,   --help                Print usage information and exit.\n"
         "          --version             Print version information and exit.\n\n"
         "  LIST OPTIONS:\n\n"
         "    -L,   --list-gpus           Display a list of GPUs connected to the system.\n\n"
         "  SUMMARY OPTIONS (no option): the table of GPUs, MIG devices and processes.\n\n"
         "    -i,   --id=                 Target a specific GPU: index, UUID or PCI bus id; a comma list.\n"
         "    -f,   --filename=           Log to a specified file, rather than to stdout.\n"
         "    -l,   --loop=               Probe until Ctrl+C at specified second interval (default 5).\n"
         "    -lms, --loop-ms=            Probe until Ctrl+C at specified millisecond interval.\n\n"
         "  QUERY OPTIONS:\n\n"
         "    -q,   --query               Display GPU or Unit info.\n"
         "    -x,   --xml-format          Produce XML output (with -q).\n"
         "    -d,   --display=            Display only selected information: MEMORY, UTILIZATION, ECC,\n"
         "                                TEMPERATURE, POWER, CLOCK, COMPUTE, PIDS, PERFORMANCE,\n"
         "                                PAGE_RETIREMENT, ROW_REMAPPER (comma-separated; with -q).\n\n"
         "  SELECTIVE QUERY OPTIONS:\n\n"
         "    --query-gpu=, --query-compute-apps=, --query-retired-pages=, --query-remapped-rows=\n"
         "    --format=                   csv, noheader, nounits (comma-separated).\n"
         "    --help-query-gpu (and the other --help-query-*) list the fields.\n\n"
         "  SUBCOMMANDS:\n\n"
         "    dmon [-i ID] [-s pucvmet] [-d SEC] [-c COUNT] [-f FILE]   Device monitoring.\n"
         "    pmon [-i ID] [-s um] [-d SEC] [-c COUNT] [-f FILE]        Process monitoring.\n"
         "    topo -m                                                   GPU interconnect matrix.\n\n"
         "  DEVICE MODIFICATION OPTIONS (with -i only; root, or the gpuwarden agent's control socket):\n\n"
         "    -pm,  --persistence-mode=   Set persistence mode: 0/DISABLED, 1/ENABLED.\n"
         "    -e,   --ecc-config=         Toggle ECC support: 0/DISABLED, 1/ENABLED (after a reboot).\n"
         "    -c,   --compute-mode=       Set compute mode: 0/DEFAULT, 2/PROHIBITED, 3/EXCLUSIVE_PROCESS.\n"
         "    -r,   --gpu-reset           Reset the GPU (PCI function-level reset; refused while in use).\n"
         "    -ac,  --applications-clocks= Set applications clocks: MEM_CLOCK,GRAPHICS_CLOCK.\n"
         "    -rac, --reset-applications-clocks  Reset the applications clocks to default.\n"
         "    -lgc, --lock-gpu-clocks=    Lock GPU clocks: MIN_GPU_CLOCK,MAX_GPU_CLOCK.\n"
         "    -rgc, --reset-gpu-clocks    Reset the locked GPU clocks.\n"
         "    -lmc, --lock-memory-clocks= Lock memory clocks: MIN_MEMORY_CLOCK,MAX_MEMORY_CLOCK.\n"
         "    -rmc, --reset-memory-clocks Reset the locked memory clocks.\n"
         "    -pl,  --power-limit=        Set the power limit in watts (within the board's range).\n\n"
         "  Other setting flags (-am, -caa, -p, -mig, -gom, -t, ...) and mig are refused (exit 3).\n\n"
         "  Return codes are nvidia-smi's: 0 success, 2 invalid argument, 3 not supported, 4 no\n"
         "  permission, 6 -i not found, 9 driver not loaded, 12 NVML library not found, 15 GPU lost,\n"
         "  19 GPU in use, 255 other error.\n";
}

int version(Context& ctx, std::ostream& out, std::ostream& err) {
  auto open = openNvml(ctx, err);
  if (!open.session) return open.exit;
  const auto driver = open.session->driverVersion().value_or("N/A");
  const auto nvml_version = open.session->nvmlVersion().value_or("N/A");
  const auto cuda = open.session->cudaDriverVersion();
  out << "NVIDIA-SMI version  : " << driver << "\n"
      << "NVML version        : " << nvml_version << "\n"
      << "DRIVER version      : " << driver << "\n"
      << "CUDA Version        : " << (cuda ? nvml::cudaVersionString(*cuda) : std::string("N/A")) << "\n";
  return kSmiOk;
}

// dmon, pmon and topo -m: nvidia-smi's exits around the shared views.
int fromGpuwardenExit(int code) {
  switch (code) {
    case kExitOk:
      return kSmiOk;
    case kExitPartial:
      return kSmiGpuLost;
    case kExitUsage:
      return kSmiInvalidArgument;
    default:
      return kSmiOther;
  }
}

// dmon's and pmon's options from smi's words; `groups` is nvidia-smi's default -s.
template <typename Options>
Options monitorOptions(const SmiArgs& a, const char* groups, bool terminal) {
  Options o;
  o.groups = a.select.empty() ? groups : a.select;
  o.delay = a.delay_s;
  o.count = static_cast<int>(a.count);
  o.ids = a.ids;
  o.markers = terminal;  // the notes gpuwarden adds to a row: a terminal only, never a pipe
  return o;
}

int monitor(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err, bool terminal) {
  Selection sel;  // nvidia-smi's answers for no driver and an -i that names no GPU
  if (int rc = openAndSelect(ctx, a.ids, &sel, err, nvml::InventoryDepth::Identity)) return rc;
  // gpuwarden's "partial" does not say why a GPU was missing; the inventory read at the start
  // does: one that did not answer is 255 as in -L and the summary, one lost (then or later) 15.
  auto exitOf = [&](int code) {
    if (code == kExitPartial && lostExit(sel.gpus) == kSmiOther) return static_cast<int>(kSmiOther);
    return fromGpuwardenExit(code);
  };
  if (a.mode == SmiArgs::Mode::Topo) return exitOf(runTopoMatrix(ctx, false, true, out));
  if (a.mode == SmiArgs::Mode::Dmon)
    return exitOf(runDmon(ctx, monitorOptions<DmonOptions>(a, "puc", terminal), out, err));
  return exitOf(runPmon(ctx, monitorOptions<PmonOptions>(a, "u", terminal), out, err));
}

// The views that -l/-lms repeat: the summary, -q and --query-*.
int looped(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err) {
  installStopHandlers();
  int rc = kSmiOk;
  for (unsigned round = 0;; ++round) {
    switch (a.mode) {
      case SmiArgs::Mode::Query:
        rc = a.xml ? queryXml(ctx, a, out, err) : queryText(ctx, a, out, err);
        break;
      case SmiArgs::Mode::Select: {
        QueryRequest q = a.query;
        q.header = round == 0;  // nvidia-smi prints the CSV header once per run
        rc = runQuery(ctx, q, out, err);
        break;
      }
      default:
        rc = summary(ctx, a, out, err);
        break;
    }
    out.flush();
    // A loop goes on through a lost GPU (that is what it watches for), not through bad arguments,
    // a missing library or an output that cannot be written (the caller says so).
    if (!a.loop_ms || !out || rc == kSmiInvalidArgument || rc == kSmiLibraryNotFound || rc == kSmiNotFound) break;
    if (!sleepInterruptible(*a.loop_ms / 1000.0)) break;
  }
  return rc;
}

}  // namespace

namespace {

// nvidia-smi writes every sentence, its errors included, to standard output (the recorded 580's
// `--bogus`, `-pl 9999`, `--query-gpu=bogus`), and scripts capture or grep that stream; gpuwarden's
// own notes, which name the cause, begin with "gpuwarden" and go to standard error, where they
// cannot break a parser. The views write both kinds to one `err` stream; this sorts it by line.
class SentenceRouter : public std::streambuf {
 public:
  SentenceRouter(std::ostream& sentences, std::ostream& notes) : sentences_(sentences), notes_(notes) {}
  ~SentenceRouter() override { emit(); }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    line_ += traits_type::to_char_type(c);
    if (line_.back() == '\n') emit();
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) overflow(traits_type::to_int_type(s[i]));
    return n;
  }
  int sync() override {
    emit();
    return 0;
  }

 private:
  void emit() {
    if (line_.empty()) return;
    std::ostream& to = line_.starts_with("gpuwarden") ? notes_ : sentences_;
    to << line_;
    to.flush();
    line_.clear();
  }
  std::ostream& sentences_;
  std::ostream& notes_;
  std::string line_;
};

int dispatchRouted(Context& ctx, const std::vector<std::string>& words, std::ostream& stdout_stream, std::ostream& err,
                   bool terminal);
int runMode(Context& ctx, const SmiArgs& a, const std::vector<std::string>& words, std::ostream& out, std::ostream& err,
            bool on_terminal);

}  // namespace

int dispatch(Context& ctx, const std::vector<std::string>& words, std::ostream& stdout_stream, std::ostream& notes,
             bool terminal) {
  SentenceRouter router(stdout_stream, notes);
  std::ostream err(&router);
  return dispatchRouted(ctx, words, stdout_stream, err, terminal);
}

namespace {

int dispatchRouted(Context& ctx, const std::vector<std::string>& words, std::ostream& stdout_stream, std::ostream& err,
                   bool terminal) {
  const SmiParse p = parseSmiArgs(words);
  if (!p.ok()) {
    err << p.error << "\n";
    return p.exit;
  }
  const SmiArgs& a = p.args;
  // -f: nvidia-smi writes the file anew on each run.
  std::ofstream file;
  if (!a.filename.empty()) {
    file.open(a.filename, std::ios::out | std::ios::trunc);
    if (!file) {
      err << "Failed to open file " << a.filename << " for writing.\n";
      return kSmiOperatingSystem;
    }
  }
  std::ostream& out = a.filename.empty() ? stdout_stream : file;
  const bool on_terminal = terminal && a.filename.empty();
  const int rc = runMode(ctx, a, words, out, err, on_terminal);
  if (a.filename.empty()) return rc;  // standard output: checked by parseAndRun
  file.flush();
  if (!file) {
    err << "Failed to write file " << a.filename << ".\n";
    return rc == kSmiOk ? kSmiOperatingSystem : rc;
  }
  return rc;
}

// The view or setting the command line asked for, written to `out`.
int runMode(Context& ctx, const SmiArgs& a, const std::vector<std::string>& words, std::ostream& out, std::ostream& err,
            bool on_terminal) {
  switch (a.mode) {
    case SmiArgs::Mode::Help:
      out << helpText();
      return kSmiOk;
    case SmiArgs::Mode::HelpQuery:
      out << queryHelp(a.help_kind);
      return kSmiOk;
    case SmiArgs::Mode::Version:
      return version(ctx, out, err);
    case SmiArgs::Mode::ListGpus:
      return listGpus(ctx, a, out, err);
    case SmiArgs::Mode::Dmon:
    case SmiArgs::Mode::Pmon:
    case SmiArgs::Mode::Topo:
      return monitor(ctx, a, out, err, on_terminal);
    case SmiArgs::Mode::Select: {
      auto open = openNvml(ctx, err);  // nvidia-smi's sentences when NVML is missing
      if (!open.session) return open.exit;
      return looped(ctx, a, out, err);
    }
    case SmiArgs::Mode::Query:
    case SmiArgs::Mode::Summary:
      return looped(ctx, a, out, err);
    case SmiArgs::Mode::Setting:
      if (!g_settings_runner) {
        err << "gpuwarden smi: " << a.setting.flag << " changes a GPU setting, which gpuwarden-full does; run "
            << "`gpuwarden smi` (not the front alone). Nothing was changed.\n";
        return kSmiOther;
      }
      return g_settings_runner(ctx, a.ids, a.setting, words, out, err);
  }
  return kSmiOther;
}

}  // namespace

}  // namespace smi

void addSmi(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("smi", "nvidia-smi's command line and outputs (alias nvidia-smi='gpuwarden smi')");
  // Every word after `smi` is nvidia-smi's, parsed by its grammar: CLI11 must neither take -h nor
  // reject -L, -lms or --query-gpu=.
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->set_help_flag();
  // Not handed up to gpuwarden's own options either: `--version` and `-l` are nvidia-smi's here.
  cmd->fallthrough(false);
  cmd->footer("Run `gpuwarden smi -h` for nvidia-smi's options.");
  cmd->callback([&run, cmd]() {
    run.output_lost_exit = smi::kSmiOperatingSystem;  // as for a -f file it cannot write
    run.exit_code = smi::dispatch(run.ctx, cmd->remaining(), std::cout, std::cerr, stdoutIsTerminal());
  });
}

}  // namespace gw::cli
