// gpuwarden dmon: nvidia-smi dmon's scrolling table of several GPUs side by side (R4), with the
// card that idles while its peers are busy flagged.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/views.h"
#include "platform/deadline.h"
#include "fields/catalog.h"
#include "health/idle_peers.h"

namespace gw::cli {
namespace {

struct Column {
  char group;
  const char* name;
  const char* unit;
  const char* field;  // catalog key, or a special name handled below
  double scale;       // display = value * scale
  int width;          // nvidia-smi's column width (each column is also preceded by one space)
};

// nvidia-smi dmon's groups and columns: p power/temp, u utilisation, c clocks, v violations,
// m memory, e ECC and PCIe replays, t PCIe throughput. Every column is six wide and every line
// ends in a space, as a real 580.159.04 printed them (tests/e2e/fixtures/real-h200-580.159.04).
constexpr Column kColumns[] = {
    {'p', "pwr", "W", "power_usage", 1, 6},
    {'p', "gtemp", "C", "gpu_temp", 1, 6},
    {'p', "mtemp", "C", "memory_temp", 1, 6},
    {'u', "sm", "%", "gpu_util", 1, 6},
    {'u', "mem", "%", "mem_copy_util", 1, 6},
    {'u', "enc", "%", "enc_util", 1, 6},
    {'u', "dec", "%", "dec_util", 1, 6},
    {'u', "jpg", "%", "@jpeg_util", 1, 6},
    {'u', "ofa", "%", "@ofa_util", 1, 6},
    {'c', "mclk", "MHz", "mem_clock", 1, 6},
    {'c', "pclk", "MHz", "sm_clock", 1, 6},
    // Violations: 100 while the clock event reason is active at the sample, else 0.
    {'v', "pviol", "%", "@power_violation", 1, 6},
    {'v', "tviol", "bool", "@thermal_violation", 1, 6},
    {'m', "fb", "MB", "fb_used", 1, 6},
    {'m', "bar1", "MB", "@bar1_used", 1, 6},
    {'m', "ccpm", "MB", "@ccpm_used", 1, 6},  // confidential computing's protected memory
    {'e', "sbecc", "errs", "ecc_sbe_volatile", 1, 6},
    {'e', "dbecc", "errs", "ecc_dbe_volatile", 1, 6},
    {'e', "pci", "errs", "pcie_replay_counter", 1, 6},
    {'t', "rxpci", "MB/s", "pcie_rx_throughput", 1.0 / 1024, 6},
    {'t', "txpci", "MB/s", "pcie_tx_throughput", 1.0 / 1024, 6},
};

Result<double> readColumn(const Column& c, const nvml::Device& d) {
  std::string_view f = c.field;
  if (f == "@power_violation" || f == "@thermal_violation") {
    auto r = d.clockEventReasons();
    if (!r) return r.status();
    std::uint64_t mask = f == "@power_violation"
                             ? (nvmlClocksThrottleReasonSwPowerCap | nvmlClocksThrottleReasonHwPowerBrakeSlowdown)
                             : (nvmlClocksThrottleReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown);
    return (*r & mask) ? 100.0 : 0.0;
  }
  // Engines nvidia-smi shows beside the video ones; not in the field catalog (no DCGM field,
  // no metric), read where dmon shows them.
  if (f == "@jpeg_util" || f == "@ofa_util") {
    auto r = f == "@jpeg_util" ? d.jpegUtilization() : d.ofaUtilization();
    if (!r) return r.status();
    return static_cast<double>(*r);
  }
  if (f == "@bar1_used" || f == "@ccpm_used") {
    auto r = f == "@bar1_used" ? d.bar1Memory() : d.protectedMemory();
    if (!r) return r.status();
    return std::floor(static_cast<double>(r->used) / (1024.0 * 1024.0));
  }
  const fields::Field* field = fields::findByKey(f);
  return field->read_number(d);
}

}  // namespace

char unknownDmonGroup(const std::string& groups) {
  for (char g : groups) {
    bool known = false;
    for (const auto& c : kColumns) known = known || c.group == g;
    if (!known) return g;
  }
  return 0;
}

int runDmon(Context& ctx, const DmonOptions& o, std::ostream& out, std::ostream& err) {
  int exit_code = kExitOk;
  std::vector<const Column*> cols;
  for (char g : o.groups)
    for (const auto& c : kColumns)
      if (c.group == g) cols.push_back(&c);
  auto devices = ctx.devices(&exit_code);
  if (!devices) return exit_code;
  nvml::Session* s = devices->session;
  const unsigned count = devices->count;
  const GpuSelection sel = parseSelection(o.ids);
  std::vector<std::pair<unsigned, nvml::Device>> gpus;
  std::vector<char> unopened;  // per entry of gpus: stalled before it could be opened
  {
    // Opened in parallel under the call deadline; a GPU that does not answer is shown stalled.
    auto opened = platform::runEachWithDeadline<std::pair<bool, nvml::Device>>(
        count,
        [s, sel](std::size_t idx) {
          const unsigned i = static_cast<unsigned>(idx);
          auto d = s->deviceByIndex(i);
          std::string uuid, bus;
          if (d && !sel.empty()) {
            uuid = d->uuid().value_or("");
            if (auto p = d->pciInfo()) bus = p->bus_id;
          }
          return std::make_pair(sel.matches(i, uuid, bus), d ? *d : nvml::Device());
        },
        kCallDeadline);
    for (unsigned i = 0; i < count; ++i) {
      if (!(opened[i] ? opened[i]->first : sel.empty() || sel.matches(i, "", ""))) continue;
      gpus.emplace_back(i, opened[i] ? opened[i]->second : nvml::Device());
      unopened.push_back(!opened[i]);
    }
  }
  if (gpus.empty()) {
    printError("no GPU matches -i " + o.ids);
    return kExitUsage;
  }
  const bool table = o.format == "table", csv = o.format == "csv";
  if (table) {
    std::string h1 = "# gpu", h2 = "# Idx";
    for (const auto* c : cols) {
      h1 += fmt::format(" {:>{}}", c->name, c->width);
      h2 += fmt::format(" {:>{}}", c->unit, c->width);
    }
    out << h1 << " \n" << h2 << " \n";
  } else if (csv) {
    std::string h = "gpu";
    for (const auto* c : cols) h += std::string(",") + c->name;
    out << h << "\n";
  }
  installStopHandlers();
  bool any_error = false;
  std::set<std::size_t> reported;  // GPUs whose loss was told on `err` (once each)
  auto inflight = std::make_shared<std::vector<std::atomic<bool>>>(gpus.size());
  for (int n = 0; o.count == 0 || n < o.count; ++n) {
    if (n > 0 && !sleepInterruptible(o.delay)) break;
    // Read every GPU first, then judge stragglers against the peers of this same sample.
    struct Read {
      std::vector<std::optional<double>> values;
      std::string error;
      double util = -1;
    };
    auto reads = platform::runEachWithDeadline<Read>(
        gpus.size(),
        [gpus, cols, inflight, unopened](std::size_t g) {
          Read r;
          // Still inside the call that stalled it last round: do not pile another thread on it.
          if ((*inflight)[g].exchange(true)) {
            r.values.assign(cols.size(), std::nullopt);
            r.error = "stalled";
            return r;
          }
          const auto& d = gpus[g].second;
          for (const auto* c : cols) {
            if (!d.valid()) {
              r.values.push_back(std::nullopt);
              continue;
            }
            auto v = readColumn(*c, d);
            if (!v && nvml::isLost(v.status().nvmlCode())) r.error = "lost";
            r.values.push_back(v ? std::optional<double>(*v * c->scale) : std::nullopt);
          }
          if (!d.valid()) r.error = unopened[g] ? "stalled" : "lost";
          if (auto u = d.valid() ? d.utilization() : Result<nvmlUtilization_t>(Status::Error("lost")); u)
            r.util = u->gpu;
          (*inflight)[g] = false;
          return r;
        },
        kCallDeadline);
    std::vector<std::vector<std::optional<double>>> values(gpus.size());
    std::vector<std::string> errors(gpus.size());
    std::vector<double> util(gpus.size(), -1);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      if (!reads[g]) {
        values[g].assign(cols.size(), std::nullopt);
        errors[g] = "stalled";
        continue;
      }
      values[g] = std::move(reads[g]->values);
      errors[g] = reads[g]->error;
      util[g] = reads[g]->util;
    }
    const std::vector<bool> idle = health::idleWhilePeersBusy(util);
    nlohmann::json sample;
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      if (!errors[g].empty()) any_error = true;
      const bool straggler = idle[g];
      if (table) {
        std::string line = fmt::format("{:>5}", gpus[g].first);
        for (std::size_t k = 0; k < cols.size(); ++k) {
          const auto& v = values[g][k];
          // Whole units by truncation, as nvidia-smi divides NVML's integers (587 KB/s of PCIe
          // traffic is 0 MB/s on a real 580.159.04, not 1).
          line += v ? fmt::format(" {:>{}.0f}", std::floor(*v), cols[k]->width)
                    : fmt::format(" {:>{}}", "-", cols[k]->width);
        }
        line += ' ';
        if (o.markers && !errors[g].empty()) line += "  <- GPU " + errors[g];
        if (o.markers && straggler) line += "  <- idle while peers busy";
        if (!o.markers && !errors[g].empty() && reported.insert(g).second)
          err << "gpuwarden: GPU " << gpus[g].first << " " << errors[g] << "\n";
        out << line << "\n";
      } else if (csv) {
        std::string line = std::to_string(gpus[g].first);
        for (const auto& v : values[g]) line += v ? fmt::format(",{:.0f}", *v) : ",";
        out << line << "\n";
      } else {
        nlohmann::json row;
        row["gpu"] = gpus[g].first;
        for (std::size_t k = 0; k < cols.size(); ++k)
          row[cols[k]->name] = values[g][k] ? nlohmann::json(*values[g][k]) : nlohmann::json(nullptr);
        row["state"] = errors[g].empty() ? "ok" : errors[g];
        row["straggler"] = straggler;
        sample["gpus"].push_back(row);
      }
    }
    if (o.format == "json") {
      sample["sample"] = n;
      out << sample.dump() << "\n";
    }
    out.flush();
    if (!out) break;  // a full disk or a closed file: said once, by the caller
  }
  return any_error ? kExitPartial : kExitOk;
}

void addDmon(CLI::App& app, Run& run) {
  auto o = std::make_shared<DmonOptions>();
  auto* cmd = app.add_subcommand("dmon", "Scrolling per-GPU monitor, like nvidia-smi dmon");
  cmd->add_option("-s,--select", o->groups,
                  "Metric groups: p power/temp, u utilisation, c clocks, v violations, m memory, e ECC/PCIe errors, t "
                  "PCIe throughput (default puc)");
  cmd->add_option("-d,--delay", o->delay, "Seconds between samples (default 1)");
  cmd->add_option("-c,--count", o->count, "Stop after COUNT samples (default: until interrupted)");
  cmd->add_option("-i,--id", o->ids, "GPUs to show: indexes, UUIDs or PCI bus ids, comma-separated");
  cmd->add_option("--format", o->format, "table (default), csv or json (one JSON object per sample)");
  cmd->footer(
      "On a terminal, a GPU at low utilisation while its peers are busy is marked '<- idle while peers busy' (R4).\n" +
      std::string(kInventoryExitCodes));
  cmd->callback([&run, o]() {
    if (run.ctx.options.json) o->format = "json";
    if (o->format != "table" && o->format != "csv" && o->format != "json") {
      printError("unknown --format '" + o->format + "' (expected table, csv or json)");
      run.exit_code = kExitUsage;
      return;
    }
    if (char g = unknownDmonGroup(o->groups)) {
      printError(fmt::format("unknown metric group '{}' in -s (valid: pucvmet)", g));
      run.exit_code = kExitUsage;
      return;
    }
    if (o->delay <= 0) {
      printError("-d must be a positive number of seconds");
      run.exit_code = kExitUsage;
      return;
    }
    o->markers = stdoutIsTerminal();
    run.exit_code = runDmon(run.ctx, *o, std::cout, std::cerr);
  });
}

bool stdoutIsTerminal() { return ::isatty(STDOUT_FILENO) != 0; }

}  // namespace gw::cli
