// nvidia-smi's query views: --query-gpu, --query-compute-apps, --query-retired-pages and
// --query-remapped-rows. Names, aliases, units and meanings come from src/fields (smi_query.h,
// catalog.h); this file selects GPUs, reads them under the call deadline and prints the CSV.
#include "cli/smi/smi_query.h"

#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "cli/commands.h"
#include "cli/gpu_processes.h"
#include "fields/smi_query.h"
#include "platform/clock.h"
#include "platform/deadline.h"

namespace gw::cli::smi {
namespace {

using Kind = QueryRequest::Kind;
namespace fs = gw::fields::smi;

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  return s;
}

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    item = trim(item);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// nvidia-smi's timestamp: local time, "YYYY/MM/DD HH:MM:SS.msec".
std::string smiTimestamp() {
  const std::int64_t ms = platform::wallMs();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d/%02d/%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

const char* switchName(Kind k) {
  switch (k) {
    case Kind::Gpu:
      return "--query-gpu";
    case Kind::ComputeApps:
      return "--query-compute-apps";
    case Kind::RetiredPages:
      return "--query-retired-pages";
    case Kind::RemappedRows:
      return "--query-remapped-rows";
  }
  return "--query-gpu";
}

std::span<const fs::ListProperty> listTable(Kind k) {
  switch (k) {
    case Kind::ComputeApps:
      return fs::computeAppProperties();
    case Kind::RetiredPages:
      return fs::retiredPageProperties();
    default:
      return fs::remappedRowProperties();
  }
}

// The SmiExit for a failure to open NVML (Context already said why, in its own words).
int openFailureExit(const Context& ctx, int gw_exit) {
  if (gw_exit == kExitUsage) return kSmiInvalidArgument;
  switch (ctx.nvmlStatus().nvmlCode()) {
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return kSmiDriverNotLoaded;
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return kSmiLibraryMismatch;
    default:
      return kSmiLibraryNotFound;
  }
}

// What each view asks of one GPU, read on that GPU's own thread.
struct GpuRead {
  bool matched = false;
  bool opened = false;
  bool lost = false;  // NVML said GPU_IS_LOST (opening it or on a call)
  std::vector<std::vector<std::string>> rows;
};

bool isErrorText(const std::string& v) { return v == "[GPU is lost]" || v == "[Unknown Error]"; }

}  // namespace

std::optional<QueryTable> queryTable(Context& ctx, const QueryRequest& request, std::ostream& err, int* exit) {
  QueryTable t;
  bool units = true;
  {
    auto parts = splitList(request.format.empty() ? "csv" : request.format);
    bool csv = false;
    for (const auto& p : parts) {
      if (p == "csv")
        csv = true;
      else if (p == "noheader")
        t.header_wanted = false;
      else if (p == "nounits")
        units = false;
      else {
        err << "\"" << p << "\" is not a valid format option. Use csv, noheader and nounits.\n";
        *exit = kSmiInvalidArgument;
        return std::nullopt;
      }
    }
    if (!csv) {
      err << "The csv format option is mandatory: --format=csv[,noheader][,nounits]\n";
      *exit = kSmiInvalidArgument;
      return std::nullopt;
    }
  }

  // Resolve every name before touching NVML: a typo prints nothing but the error.
  t.names = splitList(request.fields);
  if (t.names.empty()) {
    err << "No properties to query were given to " << switchName(request.kind) << ". See --help-query-"
        << std::string(switchName(request.kind)).substr(8) << ".\n";
    *exit = kSmiInvalidArgument;
    return std::nullopt;
  }
  std::vector<const fs::Property*> gpu_props;
  std::vector<const fs::ListProperty*> list_props;
  for (const auto& name : t.names) {
    std::string_view unit;
    if (request.kind == Kind::Gpu) {
      const fs::Property* p = fs::findGpuProperty(name);
      if (!p) {
        err << "Field \"" << name << "\" is not a valid field to query.\n\n";
        *exit = kSmiInvalidArgument;
        return std::nullopt;
      }
      gpu_props.push_back(p);
      unit = fs::unitOf(*p);
    } else {
      const fs::ListProperty* p = fs::findListProperty(listTable(request.kind), name);
      if (!p) {
        err << "Field \"" << name << "\" is not a valid field to query.\n\n";
        *exit = kSmiInvalidArgument;
        return std::nullopt;
      }
      list_props.push_back(p);
      unit = p->unit;
    }
    t.header.push_back(units && !unit.empty() ? name + " [" + std::string(unit) + "]" : name);
  }

  int gw_exit = kExitOk;
  auto devices = ctx.devices(&gw_exit);
  if (!devices) {
    *exit = openFailureExit(ctx, gw_exit);
    return std::nullopt;
  }
  nvml::Session* s = devices->session;
  const unsigned count = devices->count;
  const GpuSelection sel = parseSelection(request.ids);
  const std::string stamp = smiTimestamp();
  const Kind kind = request.kind;

  // The GPU's identity for the list views, read with the catalog's readers.
  auto identity = [](const fields::ReadContext& rc, bool with_units, const std::string& name) -> std::string {
    static const std::map<std::string, std::string, std::less<>> kIdentity = {
        {"gpu_name", "name"}, {"gpu_bus_id", "pci.bus_id"}, {"gpu_serial", "serial"}, {"gpu_uuid", "uuid"}};
    if (name == "timestamp") return std::string(rc.timestamp);
    auto it = kIdentity.find(name);
    if (it == kIdentity.end()) return "";
    return fs::read(*fs::findGpuProperty(it->second), rc, with_units);
  };

  auto reads = platform::runEachWithDeadline<GpuRead>(
      count,
      // Copies, not references: a GPU that hangs past the deadline keeps its thread (and this
      // closure) after the round has moved on.
      [s, sel, stamp, gpu_props, list_props, units, kind, identity](std::size_t idx) {
        const unsigned i = static_cast<unsigned>(idx);
        GpuRead g;
        auto dev = s->deviceByIndex(i);
        nvml::Device d = dev ? *dev : nvml::Device();
        std::string uuid, bus;
        if (!sel.empty() && dev) {
          uuid = d.uuid().value_or("");
          if (auto p = d.pciInfo()) bus = p->bus_id;
        }
        if (!sel.matches(i, uuid, bus)) return g;
        g.matched = true;
        g.opened = static_cast<bool>(dev);
        if (!dev) g.lost = nvml::isLost(dev.status().nvmlCode());
        const std::string cannot = g.lost ? "[GPU is lost]" : "[Unknown Error]";
        fields::ReadContext rc{*s, d, i, stamp};
        if (kind == Kind::Gpu) {
          std::vector<std::string> row;
          for (const auto* p : gpu_props) {
            // A GPU that cannot be opened still has its index and the system's facts.
            const bool answerable = dev || !p->per_gpu || p->name == "index";
            row.push_back(answerable ? fs::read(*p, rc, units) : cannot);
          }
          g.rows.push_back(std::move(row));
        } else if (kind == Kind::RemappedRows) {
          auto rr = dev ? d.remappedRows() : Result<nvml::RemappedRows>(dev.status());
          std::vector<std::string> row;
          for (const auto* p : list_props) {
            const std::string n(p->name);
            if (n == "remapped_rows.correctable")
              row.push_back(rr ? std::to_string(rr->correctable) : fs::describeError(rr.status()));
            else if (n == "remapped_rows.uncorrectable")
              row.push_back(rr ? std::to_string(rr->uncorrectable) : fs::describeError(rr.status()));
            else if (n == "remapped_rows.pending")
              row.push_back(rr ? (rr->pending ? "1" : "0") : fs::describeError(rr.status()));
            else if (n == "remapped_rows.failure")
              row.push_back(rr ? (rr->failure ? "1" : "0") : fs::describeError(rr.status()));
            else
              row.push_back(dev || n == "timestamp" ? identity(rc, units, n) : cannot);
          }
          g.rows.push_back(std::move(row));
        } else if (kind == Kind::RetiredPages) {
          struct Cause {
            nvmlPageRetirementCause_t cause;
            const char* text;
          };
          for (Cause c : {Cause{NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, "Single Bit ECC"},
                          Cause{NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, "Double Bit ECC"}}) {
            auto pages = dev ? d.retiredPageAddresses(c.cause) : Result<std::vector<std::uint64_t>>(dev.status());
            // Without page retirement (HBM3 GPUs remap rows instead) nvidia-smi still prints one
            // row per cause, with the address unknown.
            std::vector<std::optional<std::uint64_t>> addrs;
            std::string why;
            if (pages) {
              for (auto a : *pages) addrs.emplace_back(a);
            } else {
              addrs.emplace_back(std::nullopt);
              why = fs::describeError(pages.status());
              if (why == "[GPU is lost]") g.lost = true;
            }
            for (const auto& a : addrs) {
              std::vector<std::string> row;
              for (const auto* p : list_props) {
                const std::string n(p->name);
                if (n == "retired_pages.address") {
                  char buf[32];
                  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(a.value_or(0)));
                  row.push_back(a ? std::string(buf) : why);
                } else if (n == "retired_pages.timestamp") {
                  // Needs nvmlDeviceGetRetiredPages_v2, which gpuwarden does not declare.
                  row.push_back(a ? "[N/A]" : why);
                } else if (n == "retired_pages.cause") {
                  row.push_back(c.text);
                } else {
                  row.push_back(dev || n == "timestamp" ? identity(rc, units, n) : cannot);
                }
              }
              g.rows.push_back(std::move(row));
            }
          }
        } else {  // compute apps: rows come from the process read below; keep the identity
          std::vector<std::string> ident;
          for (const char* n : {"timestamp", "gpu_name", "gpu_bus_id", "gpu_serial", "gpu_uuid"})
            ident.push_back(dev || std::string_view(n) == "timestamp" ? identity(rc, units, n) : cannot);
          g.rows.push_back(std::move(ident));
        }
        for (const auto& row : g.rows)
          for (const auto& v : row)
            if (v == "[GPU is lost]") g.lost = true;
        return g;
      },
      kCallDeadline);

  std::vector<GpuProcessRead> procs;
  if (kind == Kind::ComputeApps) {
    std::vector<bool> wanted(count);
    for (unsigned i = 0; i < count; ++i) wanted[i] = reads[i] && reads[i]->matched && reads[i]->opened;
    auto match = [wanted](unsigned i, const std::string&, const std::string&) { return wanted[i]; };
    procs = readGpuProcesses(*s, count, ctx.root(), static_cast<std::uint64_t>(platform::wallMs()) * 1000, match, false,
                             kCallDeadline);
  }

  bool matched = false;
  for (unsigned i = 0; i < count; ++i) {
    if (!reads[i]) {
      // Stalled past the deadline: only what needs no call is known.
      if (!sel.empty() && !sel.matches(i, "", "")) continue;
      matched = true;
      t.any_stalled = true;
      if (kind == Kind::Gpu) {
        std::vector<std::string> row;
        for (const auto* p : gpu_props) row.push_back(p->name == "index" ? std::to_string(i) : "[N/A]");
        t.rows.push_back(std::move(row));
      }
      continue;
    }
    GpuRead& g = *reads[i];
    if (!g.matched) continue;
    matched = true;
    t.any_lost = t.any_lost || g.lost;
    for (const auto& row : g.rows)
      for (const auto& v : row)
        if (isErrorText(v)) t.any_error = true;
    if (kind != Kind::ComputeApps) {
      for (auto& row : g.rows) t.rows.push_back(std::move(row));
      continue;
    }
    if (i >= procs.size() || procs[i].stalled) {
      t.any_stalled = true;
      continue;
    }
    if (!procs[i].lost.empty()) t.any_lost = true;
    const auto& ident = g.rows.front();
    for (const auto& proc : procs[i].procs) {
      if (proc.graphics) continue;  // --query-compute-apps lists compute contexts only
      std::vector<std::string> row;
      for (const auto* p : list_props) {
        const std::string n(p->name);
        if (n == "pid") {
          row.push_back(std::to_string(proc.pid));
        } else if (n == "process_name") {
          auto name = s->processName(proc.pid);
          row.push_back(name && !name->empty() ? *name : "[Not Found]");
        } else if (n == "used_gpu_memory") {
          if (proc.used_bytes == 0) {
            row.push_back("[N/A]");
          } else {
            std::string v = std::to_string(proc.used_bytes / (1024 * 1024));
            row.push_back(units ? v + " MiB" : v);
          }
        } else {
          static const std::vector<std::string> kOrder = {"timestamp", "gpu_name", "gpu_bus_id", "gpu_serial",
                                                          "gpu_uuid"};
          std::size_t k = 0;
          while (k < kOrder.size() && kOrder[k] != n) ++k;
          row.push_back(k < ident.size() ? ident[k] : "[N/A]");
        }
      }
      t.rows.push_back(std::move(row));
    }
  }
  if (!matched) {
    err << "No devices were found\n";
    *exit = kSmiNotFound;
    return std::nullopt;
  }
  // As for -L and the summary (lostExit): fallen off the bus is 15, a GPU that did not answer 255.
  *exit = t.any_lost ? kSmiGpuLost : t.any_stalled ? kSmiOther : kSmiOk;
  return t;
}

void writeCsv(const QueryTable& t, bool with_header, std::ostream& out) {
  auto line = [&out](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? ", " : "") << cells[i];
    out << "\n";
  };
  if (with_header && t.header_wanted) line(t.header);
  for (const auto& row : t.rows) line(row);
}

int runQuery(Context& ctx, const QueryRequest& request, std::ostream& out, std::ostream& err) {
  int exit = kSmiOk;
  auto table = queryTable(ctx, request, err, &exit);
  if (!table) return exit;
  writeCsv(*table, request.header, out);
  out.flush();
  return exit;
}

std::string queryHelp(QueryRequest::Kind kind) {
  if (kind == Kind::Gpu) return fs::helpText(switchName(kind), fs::gpuProperties());
  return fs::helpText(switchName(kind), listTable(kind));
}

}  // namespace gw::cli::smi
