#include "export/prometheus.h"
#include "export/header_tokens.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <cmath>
#include <functional>
#include <tuple>

#include "export/dcgm_compat.h"
#include "platform/clock.h"

#ifndef GW_VERSION
#define GW_VERSION "0.0.0"
#endif

namespace gw::exporter {
namespace {

using collect::GpuState;
using collect::GpuView;

constexpr std::size_t kNamings = 2;
constexpr std::size_t kFormats = 2;
constexpr std::size_t idx(Naming n) { return n == Naming::Dcgm ? 0 : 1; }
constexpr std::size_t idx(Format f) { return f == Format::Text004 ? 0 : 1; }

// ---------------------------------------------------------------------------------------------
// Text helpers.

// Label values: backslash, double quote and line feed are escaped (both formats); any other byte,
// UTF-8 included, passes through.
void appendLabelValue(std::string& out, std::string_view v) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    std::string_view rep;
    if (c == '\\') {
      rep = "\\\\";
    } else if (c == '"') {
      rep = "\\\"";
    } else if (c == '\n') {
      rep = "\\n";
    } else {
      continue;
    }
    out.append(v.data() + start, i - start);
    out.append(rep);
    start = i + 1;
  }
  out.append(v.data() + start, v.size() - start);
}

// HELP text: text format 0.0.4 escapes backslash and line feed; OpenMetrics also double quotes.
void appendHelp(std::string& out, std::string_view v, Format f) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && f == Format::OpenMetrics) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void appendLabel(std::string& out, std::string_view name, std::string_view value) {
  if (!out.empty() && out.back() != '{') out += ',';
  out.append(name);
  out += "=\"";
  appendLabelValue(out, value);
  out += '"';
}

template <typename Int>
void appendInt(std::string& out, Int v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Shortest representation that round-trips, as Prometheus clients print floats; integral values
// without a fraction; +Inf, -Inf and NaN spelled as both formats require.
void appendDouble(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) {
    appendInt(out, static_cast<std::int64_t>(v));
    return;
  }
  char buf[40];
  auto r = fmt::format_to_n(buf, sizeof buf, "{}", v);
  out.append(buf, r.out);
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// ---------------------------------------------------------------------------------------------
// Family descriptors, built once: the header lines per format and how to print values.

enum class Kind { Gauge, Counter, Info, Unknown };

// OpenMetrics # UNIT: only base units, and only when the family name ends with it.
std::string_view unitOf(std::string_view family) {
  static constexpr std::array<std::string_view, 8> kUnits = {
      "bytes_per_second", "celsius", "watts", "joules", "hertz", "bytes", "seconds", "ratio"};
  for (auto u : kUnits)
    if (family.size() > u.size() + 1 && endsWith(family, u) && family[family.size() - u.size() - 1] == '_') return u;
  return {};
}

// Header lines of a family whose samples are named `sample_name`, in one format.
// Text004: # HELP / # TYPE on the sample name (counters keep _total, info is a gauge).
// OpenMetrics: the family name drops _total (counter) or _info (info); # UNIT when it has one.
std::string makeHeader(std::string_view sample_name, Kind kind, std::string_view help, Format f) {
  std::string family(sample_name);
  std::string_view type;
  if (f == Format::Text004) {
    type = kind == Kind::Counter ? "counter" : kind == Kind::Unknown ? "untyped" : "gauge";
  } else {
    switch (kind) {
      case Kind::Gauge:
        type = "gauge";
        break;
      case Kind::Unknown:
        type = "unknown";
        break;
      case Kind::Counter:
        type = "counter";
        family.resize(family.size() - 6);  // callers guarantee the _total suffix
        break;
      case Kind::Info:
        type = "info";
        family.resize(family.size() - 5);  // callers guarantee the _info suffix
        break;
    }
  }
  std::string h = "# HELP " + family + ' ';
  appendHelp(h, help, f);
  h += "\n# TYPE " + family + ' ' + std::string(type) + '\n';
  if (f == Format::OpenMetrics) {
    if (auto u = unitOf(family); !u.empty()) h += "# UNIT " + family + ' ' + std::string(u) + '\n';
  }
  return h;
}

enum class ValueStyle { Native, DcgmInt, DcgmDouble };

// A counter's sample name in OpenMetrics, which requires the _total suffix.
std::string omSampleName(std::string_view name, Kind kind) {
  std::string s(name);
  if (kind == Kind::Counter && !endsWith(name, "_total")) s += "_total";
  return s;
}

struct FieldFamily {
  bool exported = false;  // numeric and named in this naming
  std::string sample_name;
  // OpenMetrics: a counter's samples end in _total (the family's name does not).
  std::string om_sample_name;
  std::array<std::string, kFormats> header;
  ValueStyle style = ValueStyle::Native;
  double mul = 1, div = 1;  // native value = catalog value * mul / div
};

struct SelfFamily {
  std::string sample_name;
  std::array<std::string, kFormats> header;
};
SelfFamily selfFamily(std::string_view sample_name, Kind kind, std::string_view help) {
  SelfFamily s;
  s.sample_name = sample_name;
  for (Format f : {Format::Text004, Format::OpenMetrics}) s.header[idx(f)] = makeHeader(sample_name, kind, help, f);
  return s;
}

struct Tables {
  std::array<std::vector<FieldFamily>, kNamings> fields;
  // Dcgm naming: the same field under DCGM's current name, where DCGM renamed it (beside the old).
  std::vector<FieldFamily> renamed;
  SelfFamily gpu_up, gpu_state, sample_lag, nvml_errors;
  SelfFamily driver_up, nvml_reinits, scrape_duration, scrapes, sample_lag_max, build_info, driver_info;
  SelfFamily gpu_health, gpu_finding, incidents_open, xid_errors, dcgm_last_xid;
  SelfFamily storage_ok, storage_write_errors, storage_damaged, history_pending, history_dropped, history_corrupt;
};

Tables buildTables() {
  Tables t;
  const auto all = fields::all();
  for (auto& v : t.fields) v.resize(all.size());
  t.renamed.resize(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const fields::Field& f = all[i];
    const bool numeric = f.read_number != nullptr && f.type != fields::Type::Label;
    if (!numeric) continue;

    if (!f.dcgm_name.empty()) {
      FieldFamily& d = t.fields[idx(Naming::Dcgm)][i];
      d.exported = true;
      d.sample_name = f.dcgm_name;
      d.style = detail::dcgmValueKind(f.dcgm_id) == detail::DcgmValueKind::Double ? ValueStyle::DcgmDouble
                                                                                  : ValueStyle::DcgmInt;
      std::string help;
      fields::Type type = f.type;
      if (auto meta = detail::dcgmExporterMeta(f.dcgm_name)) {
        help = meta->help;
        type = meta->type;
      } else {
        help = f.help;
        if (!f.unit.empty() && f.unit != "bool" && f.unit != "bitmask") help += " (in " + std::string(f.unit) + ")";
        help += '.';
      }
      const Kind kind = type == fields::Type::Counter ? Kind::Counter : Kind::Gauge;
      d.om_sample_name = omSampleName(d.sample_name, kind);
      d.header[idx(Format::Text004)] = makeHeader(d.sample_name, kind, help, Format::Text004);
      d.header[idx(Format::OpenMetrics)] = makeHeader(d.om_sample_name, kind, help, Format::OpenMetrics);
      if (auto current = fields::currentDcgmName(f); !current.empty()) {
        FieldFamily& r = t.renamed[i];
        r = d;
        r.sample_name = current;
        r.om_sample_name = omSampleName(current, kind);
        const std::string rhelp = std::string(f.help) + " (DCGM's current name of " + std::string(f.dcgm_name) + ").";
        r.header[idx(Format::Text004)] = makeHeader(r.sample_name, kind, rhelp, Format::Text004);
        r.header[idx(Format::OpenMetrics)] = makeHeader(r.om_sample_name, kind, rhelp, Format::OpenMetrics);
      }
    }

    if (!f.native_name.empty()) {
      FieldFamily& n = t.fields[idx(Naming::Native)][i];
      n.exported = true;
      n.sample_name = f.native_name;
      n.style = ValueStyle::Native;
      // Scale by division when the scale is 1/N (0.01, 0.001): 57 / 100 prints 0.57 where
      // 57 * 0.01 prints 0.5700000000000001.
      if (f.native_scale > 0 && f.native_scale < 1 &&
          std::fabs(1 / f.native_scale - std::round(1 / f.native_scale)) < 1e-9) {
        n.div = std::round(1 / f.native_scale);
      } else {
        n.mul = f.native_scale;
      }
      const Kind kind = f.type == fields::Type::Counter ? Kind::Counter : Kind::Gauge;
      n.om_sample_name = omSampleName(n.sample_name, kind);
      n.header[idx(Format::Text004)] = makeHeader(n.sample_name, kind, f.help, Format::Text004);
      n.header[idx(Format::OpenMetrics)] = makeHeader(n.om_sample_name, kind, f.help, Format::OpenMetrics);
    }
  }

  t.gpu_up = selfFamily("gpuwarden_gpu_up", Kind::Gauge,
                        "1 when the GPU answers within its deadline; 0 when it is stalled, lost or down");
  t.gpu_state = selfFamily("gpuwarden_gpu_state", Kind::Gauge,
                           "State of the GPU as the sampler sees it: 1 for the current state, 0 for the others");
  t.sample_lag = selfFamily("gpuwarden_sample_lag_seconds", Kind::Gauge,
                            "Seconds since the last complete sampling pass of the GPU");
  t.nvml_errors = selfFamily("gpuwarden_nvml_errors_total", Kind::Counter,
                             "NVML calls on the GPU that failed (unsupported fields not counted)");
  t.driver_up =
      selfFamily("gpuwarden_driver_up", Kind::Gauge, "1 when the NVIDIA driver (NVML) is loaded and answering");
  t.nvml_reinits = selfFamily("gpuwarden_nvml_reinits_total", Kind::Counter,
                              "Times the agent re-initialised NVML (driver reloads, lost GPUs)");
  t.scrape_duration = selfFamily("gpuwarden_scrape_duration_seconds", Kind::Gauge,
                                 "Time the previous /metrics scrape took to render and send");
  t.scrapes = selfFamily("gpuwarden_scrapes_total", Kind::Counter, "/metrics scrapes served");
  t.sample_lag_max = selfFamily("gpuwarden_sample_lag_max_seconds", Kind::Gauge,
                                "Largest sampling lag over all GPUs, as the sampler measured it");
  t.build_info = selfFamily("gpuwarden_build_info", Kind::Info, "gpuwarden build information");
  t.driver_info = selfFamily("gpuwarden_driver_info", Kind::Info, "NVIDIA driver, NVML and CUDA driver versions");
  t.gpu_health = selfFamily("gpuwarden_gpu_health", Kind::Gauge,
                            "GPU health from its unresolved incidents and current findings: 1 for the GPU's "
                            "current state, 0 for the others");
  t.gpu_finding = selfFamily("gpuwarden_gpu_finding", Kind::Gauge,
                             "1 for each open incident of the GPU, by the rule that found it and its severity");
  t.incidents_open = selfFamily("gpuwarden_incidents_open", Kind::Gauge,
                                "Unresolved (open or acknowledged) health incidents by severity");
  t.xid_errors = selfFamily("gpuwarden_xid_errors_total", Kind::Counter,
                            "Xid errors seen per GPU and code (NVML events and the kernel log, de-duplicated)");
  {
    // Not an NVML field: dcgm-exporter's gauge comes from DCGM's Xid events, ours from the event log.
    const auto meta = detail::dcgmExporterMeta("DCGM_FI_DEV_XID_ERRORS");
    t.dcgm_last_xid = selfFamily("DCGM_FI_DEV_XID_ERRORS", Kind::Gauge, meta ? meta->help : "");
  }
  t.storage_ok = selfFamily("gpuwarden_storage_ok", Kind::Gauge,
                            "1 when every file of the data folder takes writes; 0 while one is refused (a full "
                            "disk, an I/O error, a read-only file system; /healthz names the file)");
  t.storage_write_errors = selfFamily("gpuwarden_storage_write_errors_total", Kind::Counter,
                                      "Writes to a file of the data folder that failed");
  t.storage_damaged = selfFamily("gpuwarden_storage_damaged_files_total", Kind::Counter,
                                 "Times a damaged database of the data folder was moved aside and started afresh");
  t.history_pending = selfFamily("gpuwarden_history_pending_bytes", Kind::Gauge,
                                 "History chunks in memory waiting to be written to history.db");
  t.history_dropped = selfFamily("gpuwarden_history_dropped_samples_total", Kind::Counter,
                                 "History samples given up because history.db refused writes for so long that the "
                                 "memory cap (history pending bytes) was reached");
  t.history_corrupt = selfFamily("gpuwarden_history_corrupt_chunks_total", Kind::Counter,
                                 "History chunks read from history.db that did not decode (skipped)");
  return t;
}

const Tables& tables() {
  static const Tables t = buildTables();
  return t;
}

// ---------------------------------------------------------------------------------------------
// Labels.

// The labels of the exporter's own series besides the identity labels: an extra label of the same
// name would give those series a label twice.
constexpr std::array<std::string_view, 9> kCommonReserved = {
    "state", "version", "driver_version", "nvml_version", "cuda_driver_version", "severity", "code", "file", "rule"};
// Set per GPU by the node for what runs on it (dcgm-exporter's names).
constexpr std::array<std::string_view, 4> kWorkloadLabels = {kHpcJobLabel, kPodLabel, kNamespaceLabel, kContainerLabel};
constexpr std::array<std::string_view, 9> kDcgmLabels = {"gpu",      "UUID",      "pci_bus_id",
                                                         "device",   "modelName", "GPU_I_PROFILE",
                                                         "GPU_I_ID", "Hostname",  "DCGM_FI_DRIVER_VERSION"};
constexpr std::array<std::string_view, 7> kNativeLabels = {
    "gpu", "uuid", "pci_bus_id", "model", "mig_profile", "gpu_instance_id", "hostname"};

const GpuView* findParent(const std::vector<GpuView>& gpus, const GpuView& mig) {
  if (mig.id.parent_uuid.empty()) return nullptr;
  for (const auto& g : gpus)
    if (!g.id.is_mig && g.id.uuid == mig.id.parent_uuid) return &g;
  return nullptr;
}

// Labels merged into the extra labels at their sorted place (dcgm-exporter prints its attributes
// and the configured labels in name order): DCGM_FI_DRIVER_VERSION and the workload labels.
// A few pairs on the stack: label sets are built on every render, which must not allocate in the
// steady state (Allocation.SteadyStateScrapeAllocatesNothing).
struct LabelPairs {
  static constexpr std::size_t kMax = 8;
  std::array<std::pair<std::string_view, std::string_view>, kMax> pairs;
  std::size_t n = 0;
  void add(std::string_view k, std::string_view v) {
    if (n < kMax) pairs[n++] = {k, v};
  }
  void sort() { std::sort(pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(n)); }
  std::size_t size() const { return n; }
  const std::pair<std::string_view, std::string_view>& operator[](std::size_t i) const { return pairs[i]; }
};

// Appends the extra labels (already validated) and `inserts` (sorted by name) to a label set, in
// name order.
void appendExtras(std::string& out, const ExportOptions& o, const LabelPairs& inserts) {
  std::size_t k = 0;
  for (const auto& [name, value] : o.extra_labels) {
    if (!isValidExtraLabel(name, o.naming)) continue;
    for (; k < inserts.size() && inserts[k].first < std::string_view(name); ++k)
      appendLabel(out, inserts[k].first, inserts[k].second);
    appendLabel(out, name, value);
  }
  for (; k < inserts.size(); ++k) appendLabel(out, inserts[k].first, inserts[k].second);
}

void appendHostLabel(std::string& out, std::string_view naming_default, const collect::AgentStats& agent,
                     const ExportOptions& o) {
  const std::string_view name = o.host_label ? std::string_view(*o.host_label) : naming_default;
  const std::string_view value = o.host_value ? std::string_view(*o.host_value) : std::string_view(agent.hostname);
  if (!name.empty() && !value.empty()) appendLabel(out, name, value);
}

// What a label set is made of; string views into the GPU views (or the caller's buffers).
struct LabelIdentity {
  std::string_view index;  // "" when not known
  std::string_view uuid;   // the naming's UUID label: dcgm gives a MIG device its parent's
  std::string_view pci_bus_id, device, model;
  bool is_mig = false;
  std::string_view mig_profile, gpu_instance_id;
  const std::vector<std::pair<std::string, std::string>>* workload = nullptr;  // GpuView::workload_labels
};

// A label set in the naming's order, without braces. `out` is scratch: appendLabel() only looks at
// its last byte, so label sets are built back to back with a '{' sentinel before each.
void appendIdentityLabels(std::string& out, const LabelIdentity& id, const collect::AgentStats& agent,
                          const ExportOptions& o) {
  if (o.naming == Naming::Dcgm) {
    // dcgm-exporter: gpu, UUID, pci_bus_id, device, modelName, [GPU_I_PROFILE, GPU_I_ID],
    // [Hostname], then label fields and extra labels in name order.
    appendLabel(out, "gpu", id.index);
    appendLabel(out, "UUID", id.uuid);
    appendLabel(out, "pci_bus_id", id.pci_bus_id);
    appendLabel(out, "device", id.device);
    appendLabel(out, "modelName", id.model);
    if (id.is_mig) {
      appendLabel(out, "GPU_I_PROFILE", id.mig_profile);
      appendLabel(out, "GPU_I_ID", id.gpu_instance_id);
    }
    appendHostLabel(out, "Hostname", agent, o);
    const bool driver = o.dcgm_driver_version_label && !agent.driver_version.empty();
    LabelPairs inserts;
    if (driver) inserts.add("DCGM_FI_DRIVER_VERSION", agent.driver_version);
    if (id.workload)
      for (const auto& [k, v] : *id.workload) inserts.add(k, v);
    inserts.sort();
    appendExtras(out, o, inserts);
  } else {
    appendLabel(out, "gpu", id.index);
    appendLabel(out, "uuid", id.uuid);
    appendLabel(out, "pci_bus_id", id.pci_bus_id);
    appendLabel(out, "model", id.model);
    if (id.is_mig) {
      appendLabel(out, "mig_profile", id.mig_profile);
      appendLabel(out, "gpu_instance_id", id.gpu_instance_id);
    }
    appendHostLabel(out, "hostname", agent, o);
    LabelPairs inserts;
    if (id.workload)
      for (const auto& [k, v] : *id.workload) inserts.add(k, v);
    inserts.sort();
    appendExtras(out, o, inserts);
  }
}

// One GPU's identity labels, without braces (see appendIdentityLabels).
void appendGpuLabels(std::string& out, const std::vector<GpuView>& gpus, const GpuView& g,
                     const collect::AgentStats& agent, const ExportOptions& o) {
  const collect::GpuIdentity& id = g.id;
  const GpuView* parent = id.is_mig ? findParent(gpus, g) : nullptr;
  const collect::GpuIdentity& hw = parent ? parent->id : id;  // board identity (model, PCI, device)
  char index[16];
  auto r = std::to_chars(index, index + sizeof index, id.index);
  char gi[16];
  auto r2 = std::to_chars(gi, gi + sizeof gi, id.gpu_instance_id);

  LabelIdentity l;
  l.index = std::string_view(index, static_cast<std::size_t>(r.ptr - index));
  // A MIG device carries its parent's UUID in the dcgm naming (dcgm-exporter's), its own in native.
  l.uuid = o.naming == Naming::Dcgm && id.is_mig ? (parent                   ? std::string_view(parent->id.uuid)
                                                    : id.parent_uuid.empty() ? std::string_view(id.uuid)
                                                                             : std::string_view(id.parent_uuid))
                                                 : std::string_view(id.uuid);
  l.pci_bus_id = hw.pci_bus_id;
  // "nvidia<minor>" from the sampler; empty while the minor number is unknown (never the index:
  // the driver's minor numbers and NVML's indexes differ on many machines).
  l.device = hw.device;
  l.model = hw.name;
  l.is_mig = id.is_mig;
  l.mig_profile = id.mig_profile;
  l.gpu_instance_id = std::string_view(gi, static_cast<std::size_t>(r2.ptr - gi));
  if (!g.workload_labels.empty()) l.workload = &g.workload_labels;
  appendIdentityLabels(out, l, agent, o);
}

// Per-thread scratch, kept between scrapes so that steady-state rendering does not allocate.
struct Scratch {
  std::string labels;                   // every selected GPU's label set, back to back
  std::vector<std::size_t> begin, end;  // spans in `labels`
  std::vector<const GpuView*> views;    // selected GPUs
  std::vector<char> serve;              // its field values may be served (it and its parent are up)
  std::string agent_labels;             // extra labels only, for agent-level series
};
thread_local Scratch t_scratch;

// `name{labels[,extra]} ` — braces left out when there are no labels at all.
void appendSeriesStart(std::string& out, std::string_view name, std::string_view labels,
                       std::string_view extra_name = {}, std::string_view extra_value = {}) {
  out.append(name);
  if (labels.empty() && extra_name.empty()) {
    out += ' ';
    return;
  }
  out += '{';
  out.append(labels);
  if (!extra_name.empty()) {
    if (!labels.empty()) out += ',';
    out.append(extra_name);
    out += "=\"";
    appendLabelValue(out, extra_value);
    out += '"';
  }
  out += "} ";
}

// Appends a field value; false when it cannot be printed in this style (the caller drops the line).
bool appendFieldValue(std::string& out, const FieldFamily& ff, double v) {
  switch (ff.style) {
    case ValueStyle::Native: {
      double x = v * ff.mul;
      if (ff.div != 1) x /= ff.div;
      appendDouble(out, x);
      return true;
    }
    case ValueStyle::DcgmInt:
      // dcgm-exporter prints DCGM_FT_INT64 values with %d.
      if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) return false;
      appendInt(out, static_cast<std::int64_t>(std::llround(v)));
      return true;
    case ValueStyle::DcgmDouble:
      // … and DCGM_FT_DOUBLE ones with %f (six decimals).
      if (std::isnan(v)) {
        out += "NaN";
      } else if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
      } else {
        fmt::format_to(std::back_inserter(out), "{:.6f}", v);
      }
      return true;
  }
  return false;
}

constexpr std::array<GpuState, 4> kStates = {GpuState::Up, GpuState::Stalled, GpuState::Lost, GpuState::Down};
constexpr std::string_view stateLabel(GpuState s) {
  switch (s) {
    case GpuState::Up:
      return "up";
    case GpuState::Stalled:
      return "stalled";
    case GpuState::Lost:
      return "lost";
    case GpuState::Down:
      return "down";
  }
  return "unknown";
}

}  // namespace

// ---------------------------------------------------------------------------------------------

namespace {

// Label sets, once per GPU, into the scratch (s.labels, s.begin, s.end, s.views, s.serve), and
// the agent-level labels.
void buildLabels(Scratch& s, const std::vector<GpuView>& gpus, const collect::AgentStats& agent,
                 const ExportOptions& o) {
  s.labels.clear();
  s.begin.clear();
  s.end.clear();
  s.views.clear();
  s.serve.clear();
  for (const auto& g : gpus) {
    if (g.id.is_mig && !o.include_mig) continue;
    s.labels += '{';  // sentinel so that the first label gets no comma
    s.begin.push_back(s.labels.size());
    appendGpuLabels(s.labels, gpus, g, agent, o);
    s.end.push_back(s.labels.size());
    s.views.push_back(&g);
    const GpuView* parent = g.id.is_mig ? findParent(gpus, g) : nullptr;
    s.serve.push_back(g.state == GpuState::Up && (parent == nullptr || parent->state == GpuState::Up));
  }
  s.agent_labels.clear();
  s.agent_labels += '{';
  appendExtras(s.agent_labels, o, {});
}

}  // namespace

void renderSampledMetrics(std::string& out, const std::vector<GpuView>& gpus, const collect::AgentStats& agent,
                          const ExportOptions& o, Format f, std::string_view version) {
  const Tables& t = tables();
  const auto& fams = t.fields[idx(o.naming)];
  const std::size_t fi = idx(f);
  Scratch& s = t_scratch;
  buildLabels(s, gpus, agent, o);
  auto labelsOf = [&](std::size_t i) { return std::string_view(s.labels).substr(s.begin[i], s.end[i] - s.begin[i]); };
  const std::string_view agent_labels = std::string_view(s.agent_labels).substr(1);

  // Field families, in catalog order (or the order asked for).
  const auto all = fields::all();
  auto emitFamily = [&](std::size_t field_index, const FieldFamily& ff) {
    const std::size_t mark = out.size();
    out += ff.header[fi];
    bool any = false;
    for (std::size_t i = 0; i < s.views.size(); ++i) {
      const GpuView& g = *s.views[i];
      if (!s.serve[i]) continue;  // stale values are not served as fresh
      if (field_index >= g.values.size()) continue;
      const collect::FieldValue& v = g.values[field_index];
      if (!v.valid) continue;
      const std::size_t line = out.size();
      appendSeriesStart(out, f == Format::OpenMetrics ? ff.om_sample_name : ff.sample_name, labelsOf(i));
      if (!appendFieldValue(out, ff, v.value)) {
        out.resize(line);
        continue;
      }
      out += '\n';
      any = true;
    }
    if (!any) out.resize(mark);
  };
  auto emitField = [&](std::size_t field_index) {
    emitFamily(field_index, fams[field_index]);
    if (o.naming == Naming::Dcgm && t.renamed[field_index].exported) emitFamily(field_index, t.renamed[field_index]);
  };
  if (o.fields.empty()) {
    for (std::size_t i = 0; i < fams.size(); ++i)
      if (fams[i].exported) emitField(i);
  } else {
    std::bitset<1024> seen;
    const std::less<const fields::Field*> before;
    for (const fields::Field* p : o.fields) {
      if (p == nullptr || before(p, all.data()) || !before(p, all.data() + all.size())) continue;
      const std::size_t i = fields::indexOf(*p);
      if (i >= seen.size() || seen.test(i) || !fams[i].exported) continue;
      seen.set(i);
      emitField(i);
    }
  }

  // Per-GPU state, present whatever the state.
  if (!s.views.empty()) {
    out += t.gpu_up.header[fi];
    for (std::size_t i = 0; i < s.views.size(); ++i) {
      appendSeriesStart(out, t.gpu_up.sample_name, labelsOf(i));
      out += s.views[i]->state == GpuState::Up ? "1\n" : "0\n";
    }
    out += t.gpu_state.header[fi];
    for (std::size_t i = 0; i < s.views.size(); ++i) {
      for (GpuState st : kStates) {
        appendSeriesStart(out, t.gpu_state.sample_name, labelsOf(i), "state", stateLabel(st));
        out += s.views[i]->state == st ? "1\n" : "0\n";
      }
    }
    out += t.nvml_errors.header[fi];
    for (std::size_t i = 0; i < s.views.size(); ++i) {
      appendSeriesStart(out, t.nvml_errors.sample_name, labelsOf(i));
      appendInt(out, s.views[i]->nvml_errors);
      out += '\n';
    }
  }

  // Agent-level series.
  auto single = [&](const SelfFamily& fam, auto&& appendValue) {
    out += fam.header[fi];
    appendSeriesStart(out, fam.sample_name, agent_labels);
    appendValue();
    out += '\n';
  };
  single(t.driver_up, [&] { out += agent.driver_up ? '1' : '0'; });
  single(t.nvml_reinits, [&] { appendInt(out, agent.nvml_reinits); });

  out += t.build_info.header[fi];
  out += t.build_info.sample_name;
  out += '{';
  appendLabel(out, "version", version.empty() ? std::string_view(GW_VERSION) : version);
  if (!agent_labels.empty()) {
    out += ',';
    out.append(agent_labels);
  }
  out += "} 1\n";

  if (!agent.driver_version.empty()) {
    out += t.driver_info.header[fi];
    out += t.driver_info.sample_name;
    out += '{';
    appendLabel(out, "driver_version", agent.driver_version);
    if (!agent.nvml_version.empty()) appendLabel(out, "nvml_version", agent.nvml_version);
    if (agent.cuda_driver_version > 0) {
      // NVML's encoding: 12040 is CUDA 12.4.
      char buf[32];
      auto r = fmt::format_to_n(buf, sizeof buf, "{}.{}", agent.cuda_driver_version / 1000,
                                (agent.cuda_driver_version % 1000) / 10);
      appendLabel(out, "cuda_driver_version", std::string_view(buf, r.size));
    }
    if (!agent_labels.empty()) {
      out += ',';
      out.append(agent_labels);
    }
    out += "} 1\n";
  }
}

void renderScrapeMetrics(std::string& out, const std::vector<GpuView>& gpus, const collect::AgentStats& agent,
                         const SelfMetrics& self, const ExportOptions& o, Format f) {
  const Tables& t = tables();
  const std::size_t fi = idx(f);
  Scratch& s = t_scratch;
  buildLabels(s, gpus, agent, o);
  auto labelsOf = [&](std::size_t i) { return std::string_view(s.labels).substr(s.begin[i], s.end[i] - s.begin[i]); };
  const std::string_view agent_labels = std::string_view(s.agent_labels).substr(1);

  std::int64_t now_ms = self.now_ms;
  if (now_ms == 0) now_ms = platform::wallMs();
  const std::size_t mark = out.size();
  out += t.sample_lag.header[fi];
  bool any = false;
  for (std::size_t i = 0; i < s.views.size(); ++i) {
    const std::int64_t last = s.views[i]->last_sample_ms;
    if (last <= 0) continue;  // never sampled: no lag to report
    appendSeriesStart(out, t.sample_lag.sample_name, labelsOf(i));
    appendDouble(out, static_cast<double>(std::max<std::int64_t>(0, now_ms - last)) / 1000.0);
    out += '\n';
    any = true;
  }
  if (!any) out.resize(mark);

  auto single = [&](const SelfFamily& fam, auto&& appendValue) {
    out += fam.header[fi];
    appendSeriesStart(out, fam.sample_name, agent_labels);
    appendValue();
    out += '\n';
  };
  single(t.scrape_duration, [&] { appendDouble(out, self.last_scrape_duration_seconds); });
  single(t.scrapes, [&] { appendInt(out, self.scrapes); });
  single(t.sample_lag_max, [&] { appendDouble(out, self.sample_lag_seconds_max); });

  if (f == Format::OpenMetrics) out += "# EOF\n";
}

void renderStorageMetrics(std::string& out, const StorageSeries& st, const std::vector<GpuView>& gpus,
                          const collect::AgentStats& agent, const ExportOptions& o, Format f) {
  const Tables& t = tables();
  const std::size_t fi = idx(f);
  Scratch& s = t_scratch;
  buildLabels(s, gpus, agent, o);
  const std::string_view agent_labels = std::string_view(s.agent_labels).substr(1);
  auto single = [&](const SelfFamily& fam, std::uint64_t v) {
    out += fam.header[fi];
    appendSeriesStart(out, fam.sample_name, agent_labels);
    appendInt(out, v);
    out += '\n';
  };
  auto perFile = [&](const SelfFamily& fam, std::uint64_t StorageSeries::File::*member) {
    if (st.files.empty()) return;
    out += fam.header[fi];
    for (const auto& file : st.files) {
      appendSeriesStart(out, fam.sample_name, agent_labels, "file", file.file);
      appendInt(out, file.*member);
      out += '\n';
    }
  };
  single(t.storage_ok, st.ok ? 1 : 0);
  perFile(t.storage_write_errors, &StorageSeries::File::write_errors);
  perFile(t.storage_damaged, &StorageSeries::File::moved_aside);
  if (st.history) {
    single(t.history_pending, st.history_pending_bytes);
    single(t.history_dropped, st.history_dropped_samples);
    single(t.history_corrupt, st.history_corrupt_chunks);
  }
}

void renderMetrics(std::string& out, const std::vector<GpuView>& gpus, const collect::AgentStats& agent,
                   const SelfMetrics& self, const ExportOptions& o, Format f) {
  renderSampledMetrics(out, gpus, agent, o, f, self.version);
  renderScrapeMetrics(out, gpus, agent, self, o, f);
}

void renderHealthMetrics(std::string& out, const HealthSeries& h, const std::vector<GpuView>& gpus,
                         const collect::AgentStats& agent, const ExportOptions& o, Format f) {
  const Tables& t = tables();
  const std::size_t fi = idx(f);
  Scratch& s = t_scratch;
  buildLabels(s, gpus, agent, o);
  auto labelsOf = [&](std::size_t i) { return std::string_view(s.labels).substr(s.begin[i], s.end[i] - s.begin[i]); };
  const std::string_view agent_labels = std::string_view(s.agent_labels).substr(1);
  const std::size_t none = s.views.size();
  // The view with this UUID: the GPU itself, else (for an Xid) a MIG device with it.
  auto byUuid = [&](std::string_view uuid, bool gpus_only) {
    std::size_t mig = none;
    for (std::size_t i = 0; i < s.views.size(); ++i) {
      if (s.views[i]->id.uuid != uuid) continue;
      if (!s.views[i]->id.is_mig) return i;
      if (!gpus_only && mig == none) mig = i;
    }
    return mig;
  };

  std::size_t mark = out.size();
  out += t.gpu_health.header[fi];
  bool any = false;
  for (const auto& g : h.gpus) {
    const std::size_t i = byUuid(g.uuid, true);
    if (i == none) continue;
    for (const auto& st : h.states) {
      appendSeriesStart(out, t.gpu_health.sample_name, labelsOf(i), "state", st);
      out += st == g.state ? "1\n" : "0\n";
    }
    any = true;
  }
  if (!any) out.resize(mark);

  mark = out.size();
  out += t.gpu_finding.header[fi];
  any = false;
  for (const auto& fnd : h.findings) {
    const std::size_t i = byUuid(fnd.uuid, true);
    if (i == none) continue;
    appendSeriesStart(out, t.gpu_finding.sample_name, labelsOf(i), "rule", fnd.rule);
    // appendSeriesStart takes one extra label; the second goes in before the closing brace.
    out.pop_back();
    out.pop_back();
    appendLabel(out, "severity", fnd.severity);
    out += "} 1\n";
    any = true;
  }
  if (!any) out.resize(mark);

  if (!h.open_incidents.empty()) {
    out += t.incidents_open.header[fi];
    for (const auto& [severity, n] : h.open_incidents) {
      appendSeriesStart(out, t.incidents_open.sample_name, agent_labels, "severity", severity);
      appendInt(out, n);
      out += '\n';
    }
  }

  // Xids in the GPUs' order, then those of GPUs not among the views; counts that end up with the
  // same labels and code (an Xid counted under the UUID and under the bare index) are one series.
  struct XidLine {
    std::size_t order;
    std::string labels;
    int code;
    std::uint64_t count;
  };
  std::vector<XidLine> lines;
  lines.reserve(h.xids.size());
  // Each GPU's latest Xid (by time; the higher code on a tie), for the dcgm gauge.
  std::vector<std::pair<std::int64_t, int>> latest(s.views.size(), {INT64_MIN, 0});
  for (const auto& x : h.xids) {
    std::size_t i = none;
    if (!x.uuid.empty()) {
      i = byUuid(x.uuid, false);
      if (i == none) {  // a MIG device left out (include_mig): its GPU's series
        for (const auto& g : gpus)
          if (g.id.is_mig && g.id.uuid == x.uuid) {
            i = byUuid(g.id.parent_uuid, true);
            break;
          }
      }
    } else if (x.gpu_index >= 0) {
      for (std::size_t k = 0; k < s.views.size() && i == none; ++k)
        if (!s.views[k]->id.is_mig && static_cast<int>(s.views[k]->id.index) == x.gpu_index) i = k;
    }
    XidLine l{i, {}, x.code, x.count};
    if (i != none) {
      l.labels = labelsOf(i);
      latest[i] = std::max(latest[i], std::pair{x.last_ms, x.code});
    } else {
      char index[16];
      auto r = std::to_chars(index, index + sizeof index, x.gpu_index);
      LabelIdentity id;
      if (x.gpu_index >= 0) id.index = std::string_view(index, static_cast<std::size_t>(r.ptr - index));
      id.uuid = x.uuid;
      l.labels = "{";
      appendIdentityLabels(l.labels, id, agent, o);
      l.labels.erase(0, 1);
    }
    lines.push_back(std::move(l));
  }
  std::sort(lines.begin(), lines.end(), [](const XidLine& a, const XidLine& b) {
    return std::tie(a.order, a.labels, a.code) < std::tie(b.order, b.labels, b.code);
  });
  mark = out.size();
  out += t.xid_errors.header[fi];
  any = false;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::uint64_t n = lines[k].count;
    while (k + 1 < lines.size() && lines[k + 1].labels == lines[k].labels && lines[k + 1].code == lines[k].code)
      n += lines[++k].count;
    char code[16];
    auto r = std::to_chars(code, code + sizeof code, lines[k].code);
    appendSeriesStart(out, t.xid_errors.sample_name, lines[k].labels, "code",
                      std::string_view(code, static_cast<std::size_t>(r.ptr - code)));
    appendInt(out, n);
    out += '\n';
    any = true;
  }
  if (!any) out.resize(mark);

  if (o.naming != Naming::Dcgm) return;
  mark = out.size();
  out += t.dcgm_last_xid.header[fi];
  any = false;
  for (std::size_t i = 0; i < s.views.size(); ++i) {
    if (s.views[i]->id.is_mig) continue;
    appendSeriesStart(out, t.dcgm_last_xid.sample_name, labelsOf(i));
    appendInt(out, static_cast<std::uint64_t>(latest[i].second));
    out += '\n';
    any = true;
  }
  if (!any) out.resize(mark);
}

// ---------------------------------------------------------------------------------------------
// Negotiation.

using detail::forEachElement;
using detail::forEachParam;
using detail::iequals;

Format negotiateFormat(std::string_view accept, Naming naming) {
  double q_om = -1, q_text = -1;
  forEachElement(accept, [&](std::string_view type, std::string_view params) {
    double q = 1;
    std::string_view version;
    forEachParam(params, [&](std::string_view k, std::string_view v) {
      if (iequals(k, "q")) q = detail::qvalue(v).value_or(0);  // a malformed q refuses
      if (iequals(k, "version")) version = v;
    });
    if (iequals(type, "application/openmetrics-text")) {
      // We produce 1.0.0, which Prometheus also accepts where it asks for 0.0.1.
      if (version.empty() || version == "1.0.0" || version == "0.0.1") q_om = std::max(q_om, q);
    } else if (iequals(type, "text/plain")) {
      if (version.empty() || version == "0.0.4") q_text = std::max(q_text, q);
    } else if (iequals(type, "*/*") || iequals(type, "text/*")) {
      q_text = std::max(q_text, q);
    }
  });
  if (naming == Naming::Dcgm) return q_om > 0 && q_text <= 0 ? Format::OpenMetrics : Format::Text004;
  return q_om > 0 && q_om >= q_text ? Format::OpenMetrics : Format::Text004;
}

std::string_view contentType(Format f) {
  return f == Format::OpenMetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                  : "text/plain; version=0.0.4; charset=utf-8";
}

std::optional<Naming> parseNaming(std::string_view s) {
  if (iequals(s, "dcgm")) return Naming::Dcgm;
  if (iequals(s, "native")) return Naming::Native;
  return std::nullopt;
}

std::string_view namingName(Naming n) { return n == Naming::Dcgm ? "dcgm" : "native"; }

bool isValidLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (digit && i > 0))) return false;
  }
  return true;
}

bool isValidExtraLabel(std::string_view name, Naming n) {
  if (!isValidLabelName(name) || name.substr(0, 2) == "__") return false;
  for (auto r : kCommonReserved)
    if (r == name) return false;
  for (auto r : kWorkloadLabels)
    if (r == name) return false;
  if (n == Naming::Dcgm) {
    for (auto r : kDcgmLabels)
      if (r == name) return false;
  } else {
    for (auto r : kNativeLabels)
      if (r == name) return false;
  }
  return true;
}

std::string_view metricName(const fields::Field& f, Naming n) {
  if (f.read_number == nullptr || f.type == fields::Type::Label) return {};
  return n == Naming::Dcgm ? f.dcgm_name : f.native_name;
}

std::string renderMetricsTableMarkdown() {
  std::string out =
      "| key | dcgm-exporter name | dcgm type | dcgm unit | native name | native type | scale | help |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  const Tables& t = tables();
  const auto all = fields::all();
  auto typeOf = [](const std::string& header) {
    // The Text004 header's TYPE word.
    const auto pos = header.rfind(' ');
    return header.substr(pos + 1, header.size() - pos - 2);
  };
  for (std::size_t i = 0; i < all.size(); ++i) {
    const fields::Field& f = all[i];
    const FieldFamily& d = t.fields[idx(Naming::Dcgm)][i];
    const FieldFamily& n = t.fields[idx(Naming::Native)][i];
    if (!d.exported && !n.exported) continue;
    out += "| `" + std::string(f.key) + "` | ";
    out += d.exported ? "`" + d.sample_name + "` | " + typeOf(d.header[0]) + " | " + std::string(f.unit) + " | "
                      : std::string(" |  |  | ");
    char scale[32];
    auto r = fmt::format_to_n(scale, sizeof scale, "{}", f.native_scale);
    out += n.exported ? "`" + n.sample_name + "` | " + typeOf(n.header[0]) + " | " + std::string(scale, r.size) + " | "
                      : std::string(" |  |  | ");
    out += std::string(f.help) + " |\n";
  }
  return out;
}

}  // namespace gw::exporter
