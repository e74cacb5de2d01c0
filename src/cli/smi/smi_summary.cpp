// nvidia-smi with no view option: the summary table in the R550+ layout (91 columns: the GPU
// table's three boxes are 41, 24 and 22 wide inside). Widths learned from published outputs of
// drivers 550.54.15 and 550.90.07, and from a real 580.159.04 (which draws the rule under the
// banner with '+', leaves the line before the processes empty and gives the PID six more
// columns); every value is NVML's answer, N/A where it gives none.
//
// The banner keeps the words `NVIDIA-SMI`, `Driver Version:` and `CUDA Version:` because scripts
// grep and split that line (`nvidia-smi | grep "CUDA Version"`); the version after NVIDIA-SMI is
// the driver's, which is what a real nvidia-smi of that driver prints there.
#include <fmt/format.h>

#include <ctime>
#include <map>

#include "cli/gpu_processes.h"
#include "cli/smi/smi_internal.h"

namespace gw::cli::smi {
namespace {

constexpr int kInner = 89;  // between the outer bars

template <typename T, typename F>
std::string orNA(const Result<T>& r, F format) {
  return r ? format(*r) : std::string("N/A");
}

std::string onOff(const Result<bool>& r) {
  return orNA(r, [](bool b) { return std::string(b ? "On" : "Off"); });
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes / (1024 * 1024)) + "MiB"; }

std::string watts(const Result<unsigned>& mw) {
  return orNA(mw, [](unsigned v) { return std::to_string((v + 500) / 1000) + "W"; });
}

const char* computeModeName(unsigned m) {
  switch (m) {
    case NVML_COMPUTEMODE_DEFAULT:
      return "Default";
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
      return "E. Thread";
    case NVML_COMPUTEMODE_PROHIBITED:
      return "Prohibited";
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
      return "E. Process";
    default:
      return "Unknown";
  }
}

// nvidia-smi shortens a long product name to 24 characters and "...".
std::string shortName(const std::string& name) { return name.size() > 27 ? name.substr(0, 24) + "..." : name; }

// Volatile uncorrected ECC errors: the count, "Off" with ECC disabled, "On" in MIG mode (where the
// GPU-wide count is not shown), N/A without ECC.
std::string eccCell(const nvml::Device& d, bool mig) {
  auto enabled = d.eccEnabled();
  if (!enabled) return "N/A";
  if (!*enabled) return "Off";
  if (mig) return "On";
  return orNA(d.eccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC),
              [](std::uint64_t v) { return std::to_string(v); });
}

void gpuBlock(const nvml::GpuInfo& g, std::ostream& out) {
  const nvml::Device& d = g.device;
  auto mig = d.migEnabled();
  const bool mig_on = mig && *mig;
  const std::string pstate =
      orNA(d.pstate(), [](unsigned p) { return p == 32 ? std::string("N/A") : "P" + std::to_string(p); });
  const auto mem = d.memory();
  auto util = d.utilization();
  out << fmt::format("| {:>3}  {:<31}{:<3} |{:>19} {:>3} | {:>20} |\n", g.index, shortName(g.name),
                     onOff(d.persistenceMode()), g.pci.bus_id, onOff(d.displayActive()), eccCell(d, mig_on));
  out << fmt::format("| {:>3}  {:>4}{:>6}{:>16} / {:>5} |{:>11} / {:>9} |{:>8}{:>13} |\n",
                     orNA(d.fanSpeed(), [](unsigned v) { return std::to_string(v) + "%"; }),
                     orNA(d.temperature(), [](unsigned v) { return std::to_string(v) + "C"; }), pstate,
                     watts(d.powerUsageMw()), watts(d.powerLimitMw()), mem ? mib(mem->used) : "N/A",
                     mem ? mib(mem->total) : "N/A",
                     mig_on || !util ? std::string("N/A") : std::to_string(util->gpu) + "%",
                     orNA(d.computeMode(), [](unsigned m) { return std::string(computeModeName(m)); }));
  out << fmt::format("|{:41}|{:24}| {:>20} |\n", "", "",
                     orNA(mig, [](bool b) { return std::string(b ? "Enabled" : "Disabled"); }));
  out << "+" << std::string(41, '-') << "+" << std::string(24, '-') << "+" << std::string(22, '-') << "+\n";
}

void migTable(const std::vector<const nvml::GpuInfo*>& gpus, std::ostream& out) {
  out << "\n+" << std::string(kInner, '-') << "+\n"
      << fmt::format("| {:<{}}|\n", "MIG devices:", kInner - 1)
      << "+------------------+----------------------------------+-----------+-----------------------+\n"
      << "| GPU  GI  CI  MIG |                     Memory-Usage |        Vol|        Shared         |\n"
      << "|      ID  ID  Dev |                       BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |\n"
      << "|                  |                                  |        ECC|                       |\n"
      << "|==================+==================================+===========+=======================|\n";
  for (const auto* g : gpus) {
    for (const auto& m : g->mig_devices) {
      const auto mem = m.device.memory();
      const auto bar1 = m.device.bar1Memory();
      const auto attr = m.device.attributes();
      auto count = [&](unsigned nvmlDeviceAttributes_t::*field) {
        return attr ? std::to_string((*attr).*field) : std::string("N/A");
      };
      const std::string ecc = orNA(m.device.eccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC),
                                   [](std::uint64_t v) { return std::to_string(v); });
      // A total wider than nvidia-smi's 8 columns takes from the padding after it, not the box.
      auto total = [](const std::string& v, std::size_t room) {
        return fmt::format("{:<{}}", fmt::format("{:>8}", v), room);
      };
      out << fmt::format(
          "|{:>3}{:>5}{:>4}{:>4}  |{:>19} / {}|{:>3}{:>7} |{:>3}{:>4}{:>5}{:>5}{:>5} |\n", g->index, m.gpu_instance_id,
          m.compute_instance_id, m.index, mem ? mib(mem->used) : "N/A", total(mem ? mib(mem->total) : "N/A", 12),
          count(&nvmlDeviceAttributes_t::multiprocessorCount), ecc,
          count(&nvmlDeviceAttributes_t::sharedCopyEngineCount), count(&nvmlDeviceAttributes_t::sharedEncoderCount),
          count(&nvmlDeviceAttributes_t::sharedDecoderCount), count(&nvmlDeviceAttributes_t::sharedOfaCount),
          count(&nvmlDeviceAttributes_t::sharedJpegCount));
      out << fmt::format("|{:18}|{:>21} / {}|{:11}|{:23}|\n", "", bar1 ? mib(bar1->used) : "N/A",
                         total(bar1 ? mib(bar1->total) : "N/A", 10), "", "");
      out << "+------------------+----------------------------------+-----------+-----------------------+\n";
    }
  }
}

struct ProcRow {
  unsigned gpu = 0, pid = 0;
  unsigned gi = 0xffffffffU, ci = 0xffffffffU;
  bool compute = false, graphics = false;
  std::uint64_t used = 0;
};

void processTable(Context& ctx, const nvml::Session& s, const std::vector<const nvml::GpuInfo*>& gpus, bool r580,
                  std::ostream& out) {
  std::vector<ProcRow> rows;
  for (const auto* g : gpus) {
    // One row per process and instance, compute and graphics merged as nvidia-smi's "C+G".
    std::map<std::tuple<unsigned, unsigned, unsigned>, ProcRow> by_pid;
    auto add = [&](const Result<std::vector<nvml::ProcessInfo>>& list, bool graphics) {
      if (!list) return;
      for (const auto& p : *list) {
        auto& r = by_pid[{p.pid, p.gpu_instance_id, p.compute_instance_id}];
        r.gpu = g->index;
        r.pid = p.pid;
        r.gi = p.gpu_instance_id;
        r.ci = p.compute_instance_id;
        (graphics ? r.graphics : r.compute) = true;
        r.used = std::max(r.used, p.used_bytes);
      }
    };
    add(g->device.computeProcesses(), false);
    add(g->device.graphicsProcesses(), true);
    for (auto& [key, r] : by_pid) rows.push_back(r);
  }
  // 580 moved six columns from the process name to the PID.
  const int pid_width = r580 ? 16 : 10, name_width = r580 ? 32 : 38;
  out << (r580 ? std::string() : std::string(kInner, ' ')) << "\n"
      << "+" << std::string(kInner, '-') << "+\n"
      << fmt::format("| {:<{}}|\n", "Processes:", kInner - 1)
      << (r580 ? "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
               : "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n")
      << "|        ID   ID                                                               Usage      |\n"
      << "|" << std::string(kInner, '=') << "|\n";
  if (rows.empty()) out << fmt::format("|  {:<{}}|\n", "No running processes found", kInner - 2);
  for (const auto& r : rows) {
    auto id = [](unsigned v) { return v == 0xffffffffU ? std::string("N/A") : std::to_string(v); };
    std::string name = s.processName(r.pid).value_or("");
    if (name.empty()) name = processCommand(ctx.root(), s, r.pid);
    const std::size_t room = static_cast<std::size_t>(name_width);
    if (name.size() > room) name = "..." + name.substr(name.size() - (room - 3));
    const char* type = r.compute && r.graphics ? "C+G" : (r.graphics ? "G" : "C");
    out << fmt::format("|{:>5}{:>6}{:>5}{:>{}}{:>7}   {:<{}}{:>14} |\n", r.gpu, id(r.gi), id(r.ci), r.pid, pid_width,
                       type, name, name_width, r.used ? mib(r.used) : "N/A");
  }
  out << "+" << std::string(kInner, '-') << "+\n";
}

}  // namespace

int summary(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err) {
  Selection sel;
  if (int rc = openAndSelect(ctx, a.ids, &sel, err)) return rc;
  const nvml::Session& s = *sel.session;
  const nvml::Inventory* inv = &sel.inv;
  const std::vector<const nvml::GpuInfo*>& selected = sel.gpus;
  std::vector<const nvml::GpuInfo*> gpus;
  for (const auto* g : selected) {
    if (g->state == "ok")
      gpus.push_back(g);
    else
      reportLost(*g, err);
  }
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "%a %b %e %H:%M:%S %Y", &tm);
  out << stamp << "       \n";
  const std::string driver = inv->driver_version.empty() ? "N/A" : inv->driver_version;
  const std::string cuda = inv->cuda_driver_version ? nvml::cudaVersionString(inv->cuda_driver_version) : "N/A";
  out << "+" << std::string(kInner, '-') << "+\n"
      << fmt::format("| NVIDIA-SMI {:<23}Driver Version: {:<15}CUDA Version: {:<9}|\n", driver, driver, cuda)
      << (layout580(driver) ? '+' : '|') << "-----------------------------------------+------------------------+"
      << "----------------------" << (layout580(driver) ? '+' : '|') << "\n"
      << "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
      << "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
      << "|                                         |                        |               MIG M. |\n"
      << "|=========================================+========================+======================|\n";
  for (const auto* g : gpus) gpuBlock(*g, out);
  bool any_mig = false;
  for (const auto* g : gpus) any_mig = any_mig || !g->mig_devices.empty();
  if (any_mig) migTable(gpus, out);
  processTable(ctx, s, gpus, layout580(driver), out);
  return lostExit(selected);
}

}  // namespace gw::cli::smi
