// nvidia-smi -q (the "NVSMI LOG" text) and -q -x (the nvidia_smi_log XML): one tree of facts per
// GPU, read once from NVML and rendered both ways, so that the two can never disagree. Labels and
// element names are nvidia-smi's: R550's tree, and for a 580 or later driver the tree a real 580
// printed (tests/e2e/fixtures/real-h200-580.159.04), whose values are the --query-gpu
// properties' (src/fields/smi_query.h), so that -q and --query-gpu say one thing. A value NVML
// does not give is N/A, never guessed.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>

#include "cli/gpu_processes.h"
#include "cli/smi/smi_internal.h"
#include "fields/smi_query.h"

namespace gw::cli::smi {
namespace {

struct Node {
  std::string key;        // the text's label; empty: a group the text does not show (its children are)
  std::string tag;        // the XML element
  std::string value;      // a leaf's value
  std::string xml_value;  // when the XML spells it differently ("18" for the text's "0x18")
  std::string xml_wrap;   // the XML nests the value one element deeper (<retired_count>)
  std::string section;    // the -d section that shows it; empty: shown only without -d
  int text_indent = 0;    // extra text indentation (a process's details sit under its PID)
  std::vector<Node> children;
  bool group = false;      // printed as a heading even with no children
  std::string empty_text;  // the text's value for a group without children ("None")
  bool xml_only = false;   // 580's XML repeats the power state inside the power readings; its text does not
};

Node leaf(std::string key, std::string tag, std::string value) {
  Node n;
  n.key = std::move(key);
  n.tag = std::move(tag);
  n.value = std::move(value);
  return n;
}

Node group(std::string key, std::string tag, std::vector<Node> children, std::string section = "") {
  Node n;
  n.key = std::move(key);
  n.tag = std::move(tag);
  n.children = std::move(children);
  n.section = std::move(section);
  n.group = true;
  return n;
}

template <typename T, typename F>
std::string orNA(const Result<T>& r, F format) {
  return r ? format(*r) : std::string("N/A");
}
std::string enabled(const Result<bool>& r) {
  return orNA(r, [](bool b) { return std::string(b ? "Enabled" : "Disabled"); });
}
std::string yesNo(bool b) { return b ? "Yes" : "No"; }
std::string mib(std::uint64_t bytes) { return std::to_string(bytes / (1024 * 1024)) + " MiB"; }
std::string withUnit(const Result<unsigned>& r, const char* unit) {
  return orNA(r, [unit](unsigned v) { return std::to_string(v) + " " + unit; });
}
std::string powerW(const Result<unsigned>& mw) {
  return orNA(mw, [](unsigned v) { return fmt::format("{:.2f} W", v / 1000.0); });
}

std::string xmlEscape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0; NVML strings should have none.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          o += '?';
        else
          o += c;
    }
  }
  return o;
}

const char* computeMode(unsigned m) {
  switch (m) {
    case NVML_COMPUTEMODE_DEFAULT:
      return "Default";
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
      return "Exclusive_Thread";
    case NVML_COMPUTEMODE_PROHIBITED:
      return "Prohibited";
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
      return "Exclusive_Process";
    default:
      return "Unknown";
  }
}

Node pciNode(const nvml::GpuInfo& g) {
  const nvml::Device& d = g.device;
  const auto& p = g.pci;
  auto hex = [](unsigned v, int width, bool prefix) { return fmt::format("{}{:0{}X}", prefix ? "0x" : "", v, width); };
  auto hexLeaf = [&](const char* key, const char* tag, unsigned v, int width) {
    Node n = leaf(key, tag, hex(v, width, true));
    n.xml_value = hex(v, width, false);
    return n;
  };
  const unsigned full_id = (p.device_id << 16) | p.vendor_id;
  auto gen = [](const Result<unsigned>& r) { return orNA(r, [](unsigned v) { return std::to_string(v); }); };
  auto width = [](const Result<unsigned>& r) { return orNA(r, [](unsigned v) { return std::to_string(v) + "x"; }); };
  auto kbs = [](const Result<unsigned>& r) { return orNA(r, [](unsigned v) { return std::to_string(v) + " KB/s"; }); };
  return group(
      "PCI", "pci",
      {hexLeaf("Bus", "pci_bus", p.bus, 2), hexLeaf("Device", "pci_device", p.device, 2),
       hexLeaf("Domain", "pci_domain", p.domain, 4), hexLeaf("Device Id", "pci_device_id", full_id, 8),
       leaf("Bus Id", "pci_bus_id", p.bus_id), hexLeaf("Sub System Id", "pci_sub_system_id", p.subsystem_id, 8),
       group("GPU Link Info", "pci_gpu_link_info",
             {group("PCIe Generation", "pcie_gen",
                    {leaf("Max", "max_link_gen", gen(d.pcieMaxGen())),
                     leaf("Current", "current_link_gen", gen(d.pcieGen()))}),
              group("Link Width", "link_widths",
                    {leaf("Max", "max_link_width", width(d.pcieMaxWidth())),
                     leaf("Current", "current_link_width", width(d.pcieWidth()))})}),
       leaf("Replays Since Reset", "replay_counter", gen(d.pcieReplayCounter())),
       leaf("Tx Throughput", "tx_util", kbs(d.pcieThroughputKBs(NVML_PCIE_UTIL_TX_BYTES))),
       leaf("Rx Throughput", "rx_util", kbs(d.pcieThroughputKBs(NVML_PCIE_UTIL_RX_BYTES)))});
}

Node clockEventsNode(const nvml::Device& d) {
  static const std::pair<std::uint64_t, std::pair<const char*, const char*>> kReasons[] = {
      {nvmlClocksThrottleReasonGpuIdle, {"Idle", "clocks_event_reason_gpu_idle"}},
      {nvmlClocksThrottleReasonApplicationsClocksSetting,
       {"Applications Clocks Setting", "clocks_event_reason_applications_clocks_setting"}},
      {nvmlClocksThrottleReasonSwPowerCap, {"SW Power Cap", "clocks_event_reason_sw_power_cap"}},
      {nvmlClocksThrottleReasonHwSlowdown, {"HW Slowdown", "clocks_event_reason_hw_slowdown"}},
      {nvmlClocksThrottleReasonHwThermalSlowdown, {"HW Thermal Slowdown", "clocks_event_reason_hw_thermal_slowdown"}},
      {nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
       {"HW Power Brake Slowdown", "clocks_event_reason_hw_power_brake_slowdown"}},
      {nvmlClocksThrottleReasonSyncBoost, {"Sync Boost", "clocks_event_reason_sync_boost"}},
      {nvmlClocksThrottleReasonSwThermalSlowdown, {"SW Thermal Slowdown", "clocks_event_reason_sw_thermal_slowdown"}},
      {nvmlClocksThrottleReasonDisplayClockSetting,
       {"Display Clock Setting", "clocks_event_reason_display_clocks_setting"}},
  };
  const auto mask = d.clockEventReasons();
  std::vector<Node> children;
  for (const auto& [bit, names] : kReasons)
    children.push_back(leaf(names.first, names.second,
                            mask ? std::string((*mask & bit) ? "Active" : "Not Active") : std::string("N/A")));
  return group("Clocks Event Reasons", "clocks_event_reasons", std::move(children), "PERFORMANCE");
}

Node eccErrorsNode(const nvml::Device& d) {
  auto count = [&](nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter) {
    return orNA(d.eccErrors(type, counter), [](std::uint64_t v) { return std::to_string(v); });
  };
  auto side = [&](const char* key, const char* tag, nvmlEccCounterType_t counter) {
    return group(
        key, tag,
        {group("Single Bit", "single_bit", {leaf("Total", "total", count(NVML_MEMORY_ERROR_TYPE_CORRECTED, counter))}),
         group("Double Bit", "double_bit",
               {leaf("Total", "total", count(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, counter))})});
  };
  return group("ECC Errors", "ecc_errors",
               {side("Volatile", "volatile", NVML_VOLATILE_ECC), side("Aggregate", "aggregate", NVML_AGGREGATE_ECC)},
               "ECC");
}

Node retiredPagesNode(const nvml::Device& d) {
  auto pages = [&](const char* key, const char* tag, nvmlPageRetirementCause_t cause) {
    Node n = leaf(key, tag, orNA(d.retiredPages(cause), [](unsigned v) { return std::to_string(v); }));
    n.xml_wrap = "retired_count";
    return n;
  };
  return group("Retired Pages", "retired_pages",
               {pages("Single Bit ECC", "multiple_single_bit_retirement",
                      NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS),
                pages("Double Bit ECC", "double_bit_retirement", NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR),
                leaf("Pending Page Blacklist", "pending_blacklist", orNA(d.retiredPagesPending(), yesNo))},
               "PAGE_RETIREMENT");
}

Node remappedRowsNode(const nvml::Device& d) {
  const auto r = d.remappedRows();
  auto field = [&](auto get) { return r ? get(*r) : std::string("N/A"); };
  return group(
      "Remapped Rows", "remapped_rows",
      {leaf("Correctable Error", "remapped_row_corr",
            field([](const nvml::RemappedRows& v) { return std::to_string(v.correctable); })),
       leaf("Uncorrectable Error", "remapped_row_unc",
            field([](const nvml::RemappedRows& v) { return std::to_string(v.uncorrectable); })),
       leaf("Pending", "remapped_row_pending", field([](const nvml::RemappedRows& v) { return yesNo(v.pending); })),
       leaf("Remapping Failure Occurred", "remapped_row_failure",
            field([](const nvml::RemappedRows& v) { return yesNo(v.failure); }))},
      "ROW_REMAPPER");
}

Node clocksNode(const char* key, const char* tag, bool sm_video, auto read) {
  std::vector<Node> c;
  auto mhz = [](const Result<unsigned>& r) { return withUnit(r, "MHz"); };
  c.push_back(leaf("Graphics", "graphics_clock", mhz(read(NVML_CLOCK_GRAPHICS))));
  if (sm_video) c.push_back(leaf("SM", "sm_clock", mhz(read(NVML_CLOCK_SM))));
  c.push_back(leaf("Memory", "mem_clock", mhz(read(NVML_CLOCK_MEM))));
  if (sm_video) c.push_back(leaf("Video", "video_clock", mhz(read(NVML_CLOCK_VIDEO))));
  return group(key, tag, std::move(c), "CLOCK");
}

Node processesNode(Context& ctx, const nvml::Session& s, const nvml::Device& d) {
  struct Row {
    unsigned pid, gi, ci;
    bool compute = false, graphics = false;
    std::uint64_t used = 0;
  };
  std::map<std::tuple<unsigned, unsigned, unsigned>, Row> rows;
  auto add = [&](const Result<std::vector<nvml::ProcessInfo>>& list, bool graphics) {
    if (!list) return;
    for (const auto& p : *list) {
      auto& r = rows.try_emplace({p.pid, p.gpu_instance_id, p.compute_instance_id},
                                 Row{p.pid, p.gpu_instance_id, p.compute_instance_id})
                    .first->second;
      (graphics ? r.graphics : r.compute) = true;
      r.used = std::max(r.used, p.used_bytes);
    }
  };
  add(d.computeProcesses(), false);
  add(d.graphicsProcesses(), true);
  Node n = group("Processes", "processes", {}, "PIDS");
  n.empty_text = "None";
  for (const auto& [key, r] : rows) {
    auto id = [](unsigned v) { return v == 0xffffffffU ? std::string("N/A") : std::to_string(v); };
    std::string name = s.processName(r.pid).value_or("");
    if (name.empty()) name = processCommand(ctx.root(), s, r.pid);
    Node info = group(
        "", "process_info",
        {leaf("GPU instance ID", "gpu_instance_id", id(r.gi)),
         leaf("Compute instance ID", "compute_instance_id", id(r.ci)), leaf("Process ID", "pid", std::to_string(r.pid)),
         leaf("Type", "type", r.compute && r.graphics ? "C+G" : (r.graphics ? "G" : "C")),
         leaf("Name", "process_name", name), leaf("Used GPU Memory", "used_memory", r.used ? mib(r.used) : "N/A")});
    for (std::size_t i = 3; i < info.children.size(); ++i) info.children[i].text_indent = 1;
    n.children.push_back(std::move(info));
  }
  return n;
}

// `shared_only`: without the nodes 580's tree draws anew (ECC errors, remapped rows, temperature,
// power; gpuNodes580), so that those are not read from NVML twice.
std::vector<Node> gpuNodes(Context& ctx, const nvml::Session& s, const nvml::GpuInfo& g, bool shared_only = false) {
  const nvml::Device& d = g.device;
  const auto mem = d.memory();
  const auto bar1 = d.bar1Memory();
  const auto util = d.utilization();
  auto memNode = [](const char* key, const char* tag, const Result<nvml::MemoryInfo>& m, bool reserved) {
    std::vector<Node> c;
    c.push_back(leaf("Total", "total", m ? mib(m->total) : "N/A"));
    if (reserved) c.push_back(leaf("Reserved", "reserved", m ? mib(m->reserved) : "N/A"));
    c.push_back(leaf("Used", "used", m ? mib(m->used) : "N/A"));
    c.push_back(leaf("Free", "free", m ? mib(m->free) : "N/A"));
    return group(key, tag, std::move(c), "MEMORY");
  };
  auto pct = [](const Result<unsigned>& r) { return withUnit(r, "%"); };
  auto temp = [&](nvmlTemperatureThresholds_t t) { return withUnit(d.temperatureThreshold(t), "C"); };
  const auto constraints = d.powerLimitConstraintsMw();
  auto constraint = [&](bool max) -> Result<unsigned> {
    if (!constraints) return constraints.status();
    return max ? constraints->second : constraints->first;
  };
  std::vector<Node> n;
  n.push_back(leaf("Product Name", "product_name", g.name));
  n.push_back(leaf("Product Brand", "product_brand",
                   orNA(d.brand(), [](unsigned b) { return std::string(nvml::brandName(b)); })));
  n.push_back(leaf("Product Architecture", "product_architecture", nvml::architectureName(g.architecture)));
  n.push_back(leaf("Display Mode", "display_mode", enabled(d.displayMode())));
  n.push_back(leaf("Display Active", "display_active", enabled(d.displayActive())));
  n.push_back(leaf("Persistence Mode", "persistence_mode", enabled(d.persistenceMode())));
  n.push_back(group("MIG Mode", "mig_mode", {leaf("Current", "current_mig", enabled(d.migEnabled()))}));
  n.push_back(leaf("Serial Number", "serial", g.serial.empty() ? "N/A" : g.serial));
  n.push_back(leaf("GPU UUID", "uuid", g.uuid));
  n.push_back(
      leaf("Minor Number", "minor_number", g.minor_number ? std::to_string(*g.minor_number) : std::string("N/A")));
  n.push_back(leaf("VBIOS Version", "vbios_version", g.vbios.empty() ? "N/A" : g.vbios));
  n.push_back(leaf("Board Part Number", "board_part_number", g.board_part.empty() ? "N/A" : g.board_part));
  n.push_back(group("Inforom Version", "inforom_version",
                    {leaf("Image Version", "img_version", g.inforom.empty() ? "N/A" : g.inforom)}));
  n.push_back(pciNode(g));
  n.push_back(leaf("Fan Speed", "fan_speed", pct(d.fanSpeed())));
  Node perf =
      leaf("Performance State", "performance_state",
           orNA(d.pstate(), [](unsigned p) { return p == 32 ? std::string("Unknown") : "P" + std::to_string(p); }));
  perf.section = "PERFORMANCE";
  n.push_back(perf);
  n.push_back(clockEventsNode(d));
  n.push_back(memNode("FB Memory Usage", "fb_memory_usage", mem, true));
  n.push_back(memNode("BAR1 Memory Usage", "bar1_memory_usage", bar1, false));
  Node compute = leaf("Compute Mode", "compute_mode",
                      orNA(d.computeMode(), [](unsigned m) { return std::string(computeMode(m)); }));
  compute.section = "COMPUTE";
  n.push_back(compute);
  n.push_back(group("Utilization", "utilization",
                    {leaf("Gpu", "gpu_util", util ? std::to_string(util->gpu) + " %" : "N/A"),
                     leaf("Memory", "memory_util", util ? std::to_string(util->memory) + " %" : "N/A"),
                     leaf("Encoder", "encoder_util", pct(d.encoderUtilization())),
                     leaf("Decoder", "decoder_util", pct(d.decoderUtilization()))},
                    "UTILIZATION"));
  n.push_back(group("ECC Mode", "ecc_mode", {leaf("Current", "current_ecc", enabled(d.eccEnabled()))}, "ECC"));
  if (!shared_only) n.push_back(eccErrorsNode(d));
  n.push_back(retiredPagesNode(d));
  if (!shared_only) {
    n.push_back(remappedRowsNode(d));
    n.push_back(group(
        "Temperature", "temperature",
        {leaf("GPU Current Temp", "gpu_temp", withUnit(d.temperature(), "C")),
         leaf("GPU Shutdown Temp", "gpu_temp_max_threshold", temp(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)),
         leaf("GPU Slowdown Temp", "gpu_temp_slow_threshold", temp(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)),
         leaf("GPU Max Operating Temp", "gpu_temp_max_gpu_threshold", temp(NVML_TEMPERATURE_THRESHOLD_GPU_MAX)),
         leaf("Memory Max Operating Temp", "gpu_temp_max_mem_threshold", temp(NVML_TEMPERATURE_THRESHOLD_MEM_MAX))},
        "TEMPERATURE"));
    n.push_back(group("GPU Power Readings", "gpu_power_readings",
                      {leaf("Power Draw", "power_draw", powerW(d.powerUsageMw())),
                       leaf("Current Power Limit", "current_power_limit", powerW(d.enforcedPowerLimitMw())),
                       leaf("Requested Power Limit", "requested_power_limit", powerW(d.powerLimitMw())),
                       leaf("Default Power Limit", "default_power_limit", powerW(d.defaultPowerLimitMw())),
                       leaf("Min Power Limit", "min_power_limit", powerW(constraint(false))),
                       leaf("Max Power Limit", "max_power_limit", powerW(constraint(true)))},
                      "POWER"));
  }
  n.push_back(clocksNode("Clocks", "clocks", true, [&](nvmlClockType_t t) { return d.clock(t); }));
  n.push_back(clocksNode("Applications Clocks", "applications_clocks", false,
                         [&](nvmlClockType_t t) { return d.appClock(t); }));
  n.push_back(clocksNode("Default Applications Clocks", "default_applications_clocks", false,
                         [&](nvmlClockType_t t) { return d.defaultAppClock(t); }));
  n.push_back(clocksNode("Max Clocks", "max_clocks", true, [&](nvmlClockType_t t) { return d.maxClock(t); }));
  n.push_back(processesNode(ctx, s, d));
  return n;
}

// --- nvidia-smi 580's tree ---------------------------------------------------------------------

// One --query-gpu property as -q prints it: the same reading, with its unit, and without the
// brackets the CSV puts around a value that is not one ("[N/A]" is -q's "N/A").
class Properties {
 public:
  Properties(const nvml::Session& s, const nvml::GpuInfo& g) : ctx_{s, g.device, g.index} {}
  std::string operator()(std::string_view name) const {
    const auto* p = fields::smi::findGpuProperty(name);
    if (!p) return "N/A";  // a slip in the table below; SmiReal holds every line to the real tree
    std::string v = fields::smi::read(*p, ctx_, true);
    if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
    return v;
  }
  Node leaf(std::string key, std::string tag, std::string_view property) const {
    return gw::cli::smi::leaf(std::move(key), std::move(tag), (*this)(property));
  }

 private:
  fields::ReadContext ctx_;
};

Node xmlOnly(Node n) {
  n.xml_only = true;
  return n;
}

Node indented(Node n) {
  n.text_indent = 1;
  return n;
}

Node pciNode580(const nvml::GpuInfo& g, const Properties& q) {
  Node pci = pciNode(g);
  // 580 adds the class codes after the domain, the device's own and the host's link generations,
  // and drops nothing; its Bridge Chip, rollover and atomics lines are not read by gpuwarden.
  auto& c = pci.children;
  c.insert(c.begin() + 3, {q.leaf("Base Classcode", "pci_base_class", "pci.baseClass"),
                           q.leaf("Sub Classcode", "pci_sub_class", "pci.subClass")});
  for (auto& link : c)
    if (link.tag == "pci_gpu_link_info")
      for (auto& gen : link.children)
        if (gen.tag == "pcie_gen") {
          gen.children.push_back(q.leaf("Device Current", "device_current_link_gen", "pcie.link.gen.gpucurrent"));
          gen.children.push_back(q.leaf("Device Max", "max_device_link_gen", "pcie.link.gen.gpumax"));
          gen.children.push_back(q.leaf("Host Max", "max_host_link_gen", "pcie.link.gen.hostmax"));
        }
  return pci;
}

Node eccErrorsNode580(const Properties& q) {
  auto side = [&](const char* key, const char* tag, const std::string& when) {
    Node n = group(key, tag,
                   {q.leaf("SRAM Correctable", "sram_correctable", "ecc.errors.corrected." + when + ".sram"),
                    q.leaf("SRAM Uncorrectable Parity", "sram_uncorrectable_parity",
                           "ecc.errors.uncorrected." + when + ".sram.parity"),
                    q.leaf("SRAM Uncorrectable SEC-DED", "sram_uncorrectable_secded",
                           "ecc.errors.uncorrected." + when + ".sram.secded"),
                    q.leaf("DRAM Correctable", "dram_correctable", "ecc.errors.corrected." + when + ".dram"),
                    q.leaf("DRAM Uncorrectable", "dram_uncorrectable", "ecc.errors.uncorrected." + when + ".dram")});
    if (when == "aggregate")
      n.children.push_back(q.leaf("SRAM Threshold Exceeded", "sram_threshold_exceeded",
                                  "ecc.errors.uncorrected.aggregate.sram.thresholdExceeded"));
    return n;
  };
  auto source = [&](const char* key, const char* tag, const char* where) {
    return q.leaf(key, tag, std::string("ecc.errors.uncorrected.aggregate.sram.") + where);
  };
  return group("ECC Errors", "ecc_errors",
               {side("Volatile", "volatile", "volatile"), side("Aggregate", "aggregate", "aggregate"),
                group("Aggregate Uncorrectable SRAM Sources", "aggregate_uncorrectable_sram_sources",
                      {source("SRAM L2", "sram_l2", "l2"), source("SRAM SM", "sram_sm", "sm"),
                       source("SRAM Microcontroller", "sram_microcontroller", "mcu"),
                       source("SRAM PCIE", "sram_pcie", "pcie"), source("SRAM Other", "sram_other", "other")})},
               "ECC");
}

Node remappedRowsNode580(const nvml::Device& d, const Properties& q) {
  Node n = remappedRowsNode(d);
  auto& c = n.children;
  c.insert(c.begin() + 2,
           q.leaf("Inactive Uncorrectable Error", "remapped_row_unc_inactive", "remapped_rows.uncorrectable_inactive"));
  c.insert(c.begin() + 1,
           q.leaf("Inactive Correctable Error", "remapped_row_corr_inactive", "remapped_rows.correctable_inactive"));
  auto banks = [&](const char* key, const char* level) {
    std::string v = q(std::string("remapped_rows.histogram.") + level);
    if (v != "N/A") v += " bank(s)";
    return leaf(key, std::string("row_remapper_histogram_") + level, v);
  };
  c.push_back(group("Bank Remap Availability Histogram", "row_remapper_histogram",
                    {banks("Max", "max"), banks("High", "high"), banks("Partial", "partial"), banks("Low", "low"),
                     banks("None", "none")}));
  return n;
}

// 580 gives each threshold as its distance below the GPU's maximum operating temperature (the
// T.Limit scale: shutdown at 95 C with a maximum of 87 C is -8 C), as it gives the current margin.
Node temperatureNode580(const nvml::Device& d, const Properties& q) {
  auto threshold = [&](nvmlTemperatureThresholds_t t) { return d.temperatureThreshold(t); };
  const auto gpu_max = threshold(NVML_TEMPERATURE_THRESHOLD_GPU_MAX);
  const auto mem_max = threshold(NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
  auto below = [](const Result<unsigned>& max, const Result<unsigned>& t) {
    if (!max || !t) return std::string("N/A");
    return std::to_string(static_cast<int>(*max) - static_cast<int>(*t)) + " C";
  };
  auto celsius = [&](std::string_view property) {
    std::string v = q(property);
    return v == "N/A" ? v : v + " C";
  };
  return group(
      "Temperature", "temperature",
      {leaf("GPU Current Temp", "gpu_temp", withUnit(d.temperature(), "C")),
       leaf("GPU T.Limit Temp", "gpu_temp_tlimit", celsius("temperature.gpu.tlimit")),
       leaf("GPU Shutdown T.Limit Temp", "gpu_temp_max_tlimit_threshold",
            below(gpu_max, threshold(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN))),
       leaf("GPU Slowdown T.Limit Temp", "gpu_temp_slow_tlimit_threshold",
            below(gpu_max, threshold(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN))),
       leaf("GPU Max Operating T.Limit Temp", "gpu_temp_max_gpu_tlimit_threshold", below(gpu_max, gpu_max)),
       leaf("Memory Current Temp", "memory_temp", celsius("temperature.memory")),
       leaf("Memory Max Operating T.Limit Temp", "gpu_temp_max_mem_tlimit_threshold", below(mem_max, mem_max))},
      "TEMPERATURE");
}

Node powerNode580(const char* key, const char* tag, const std::string& prefix, const std::string& pstate,
                  const Properties& q) {
  // The board's readings are the properties without a prefix, the module's "module.…".
  auto name = [&](const char* board, const char* module) { return prefix.empty() ? board : prefix + module; };
  return group(
      key, tag,
      {xmlOnly(leaf("", "power_state", pstate)),
       q.leaf("Average Power Draw", "average_power_draw", name("power.draw.average", "power.draw.average")),
       q.leaf("Instantaneous Power Draw", "instant_power_draw", name("power.draw.instant", "power.draw.instant")),
       q.leaf("Current Power Limit", "current_power_limit", name("enforced.power.limit", "enforced.power.limit")),
       q.leaf("Requested Power Limit", "requested_power_limit", name("power.limit", "power.limit")),
       q.leaf("Default Power Limit", "default_power_limit", name("power.default_limit", "power.default_limit")),
       q.leaf("Min Power Limit", "min_power_limit", name("power.min_limit", "power.min_limit")),
       q.leaf("Max Power Limit", "max_power_limit", name("power.max_limit", "power.max_limit"))},
      "POWER");
}

std::vector<Node> gpuNodes580(Context& ctx, const nvml::Session& s, const nvml::GpuInfo& g) {
  const nvml::Device& d = g.device;
  const Properties q(s, g);
  std::vector<Node> r550 = gpuNodes(ctx, s, g, true);
  auto take = [&](const char* tag) {
    for (auto& n : r550)
      if (n.tag == tag) return std::move(n);
    return leaf(tag, tag, "N/A");  // never: every tag named here is in gpuNodes
  };
  auto two = [&](const char* key, const char* tag, const char* current_tag, const char* pending_tag,
                 const std::string& property) {
    return group(
        key, tag,
        {q.leaf("Current", current_tag, property + ".current"), q.leaf("Pending", pending_tag, property + ".pending")});
  };
  std::vector<Node> n;
  for (const char* tag : {"product_name", "product_brand", "product_architecture"}) n.push_back(take(tag));
  n.push_back(q.leaf("Display Mode", "display_mode", "display_mode"));
  n.push_back(q.leaf("Display Attached", "display_attached", "display_attached"));
  n.push_back(q.leaf("Display Active", "display_active", "display_active"));
  n.push_back(q.leaf("Persistence Mode", "persistence_mode", "persistence_mode"));
  n.push_back(q.leaf("Addressing Mode", "addressing_mode", "addressing_mode"));
  n.push_back(two("MIG Mode", "mig_mode", "current_mig", "pending_mig", "mig.mode"));
  n.push_back(q.leaf("Accounting Mode", "accounting_mode", "accounting.mode"));
  n.push_back(q.leaf("Accounting Mode Buffer Size", "accounting_mode_buffer_size", "accounting.buffer_size"));
  n.push_back(two("Driver Model", "driver_model", "current_dm", "pending_dm", "driver_model"));
  for (const char* tag : {"serial", "uuid", "minor_number", "vbios_version"}) n.push_back(take(tag));
  n.push_back(leaf("MultiGPU Board", "multigpu_board", orNA(d.multiGpuBoard(), yesNo)));
  n.push_back(leaf("Board ID", "board_id", orNA(d.boardId(), [](unsigned v) { return fmt::format("{:#x}", v); })));
  n.push_back(take("board_part_number"));
  n.push_back(group(
      "Platform Info", "platformInfo",
      {q.leaf("Chassis Serial Number", "chassis_serial_number", "platform.chassis_serial_number"),
       q.leaf("Slot Number", "slot_number", "platform.slot_number"),
       q.leaf("Tray Index", "tray_index", "platform.tray_index"), q.leaf("Host ID", "host_id", "platform.host_id"),
       q.leaf("Peer Type", "peer_type", "platform.peer_type"), q.leaf("Module Id", "module_id", "platform.module_id"),
       q.leaf("GPU Fabric GUID", "gpu_fabric_guid", "platform.gpu_fabric_guid")}));
  n.push_back(
      group("Inforom Version", "inforom_version",
            {q.leaf("Image Version", "img_version", "inforom.img"), q.leaf("OEM Object", "oem_object", "inforom.oem"),
             q.leaf("ECC Object", "ecc_object", "inforom.ecc"),
             q.leaf("Power Management Object", "pwr_object", "inforom.pwr")}));
  n.push_back(
      group("GPU Operation Mode", "gpu_operation_mode",
            {q.leaf("Current", "current_gom", "gom.current"), q.leaf("Pending", "pending_gom", "gom.pending")}));
  n.push_back(q.leaf("GPU C2C Mode", "c2c_mode", "c2c.mode"));
  // vGPU's host and heterogeneous modes are not read: N/A, as on a GPU that is no vGPU host.
  n.push_back(group(
      "GPU Virtualization Mode", "gpu_virtualization_mode",
      {leaf("Virtualization Mode", "virtualization_mode",
            orNA(d.virtualizationMode(), [](unsigned m) { return std::string(nvml::virtualizationModeName(m)); })),
       leaf("Host VGPU Mode", "host_vgpu_mode", "N/A"),
       leaf("vGPU Heterogeneous Mode", "vgpu_heterogeneous_mode", "N/A")}));
  n.push_back(q.leaf("GPU Recovery Action", "gpu_recovery_action", "gpu_recovery_action"));
  n.push_back(leaf("GSP Firmware Version", "gsp_firmware_version",
                   orNA(d.gspFirmwareVersion(), [](const std::string& v) { return v; })));
  n.push_back(pciNode580(g, q));
  n.push_back(take("fan_speed"));
  n.push_back(take("performance_state"));
  Node reasons = take("clocks_event_reasons");
  for (auto& c : reasons.children)  // 580 indents the two kinds of HW slowdown under it
    if (c.tag == "clocks_event_reason_hw_thermal_slowdown" || c.tag == "clocks_event_reason_hw_power_brake_slowdown")
      c = indented(std::move(c));
  n.push_back(std::move(reasons));
  auto counter = [&](const char* key, const char* tag, const char* property) {
    return q.leaf(key, std::string("clocks_event_reasons_counters_") + tag,
                  std::string("clocks_event_reasons_counters.") + property);
  };
  n.push_back(group(
      "Clocks Event Reasons Counters", "clocks_event_reasons_counters",
      {counter("SW Power Capping", "sw_power_cap", "sw_power_cap"), counter("Sync Boost", "sync_boost", "sync_boost"),
       counter("SW Thermal Slowdown", "sw_therm_slowdown", "sw_thermal_slowdown"),
       counter("HW Thermal Slowdown", "hw_therm_slowdown", "hw_thermal_slowdown"),
       counter("HW Power Braking", "hw_power_brake", "hw_power_brake_slowdown")},
      "PERFORMANCE"));
  n.push_back(take("fb_memory_usage"));
  n.push_back(take("bar1_memory_usage"));
  n.push_back(group("Conf Compute Protected Memory Usage", "cc_protected_memory_usage",
                    {q.leaf("Total", "total", "protected_memory.total"),
                     q.leaf("Used", "used", "protected_memory.used"), q.leaf("Free", "free", "protected_memory.free")},
                    "MEMORY"));
  n.push_back(take("compute_mode"));
  Node util = take("utilization");
  util.children.front().key = "GPU";
  util.children.push_back(leaf("JPEG", "jpeg_util", withUnit(d.jpegUtilization(), "%")));
  util.children.push_back(leaf("OFA", "ofa_util", withUnit(d.ofaUtilization(), "%")));
  n.push_back(std::move(util));
  n.push_back(group("Encoder Stats", "encoder_stats",
                    {q.leaf("Active Sessions", "session_count", "encoder.stats.sessionCount"),
                     q.leaf("Average FPS", "average_fps", "encoder.stats.averageFps"),
                     q.leaf("Average Latency", "average_latency", "encoder.stats.averageLatency")}));
  n.push_back(two("DRAM Encryption Mode", "dram_encryption_mode", "current_dram_encryption", "pending_dram_encryption",
                  "dramEncryption.mode"));
  Node ecc_mode = two("ECC Mode", "ecc_mode", "current_ecc", "pending_ecc", "ecc.mode");
  ecc_mode.section = "ECC";
  n.push_back(std::move(ecc_mode));
  n.push_back(eccErrorsNode580(q));
  n.push_back(take("retired_pages"));
  n.push_back(remappedRowsNode580(d, q));
  n.push_back(temperatureNode580(d, q));
  const std::string pstate = q("pstate");
  n.push_back(powerNode580("GPU Power Readings", "gpu_power_readings", "", pstate, q));
  n.push_back(powerNode580("Module Power Readings", "module_power_readings", "module.", pstate, q));
  for (const char* tag : {"clocks", "applications_clocks", "default_applications_clocks", "max_clocks"})
    n.push_back(take(tag));
  n.push_back(group(
      "Fabric", "fabric",
      {q.leaf("State", "state", "fabric.state"), q.leaf("Status", "status", "fabric.status"),
       q.leaf("CliqueId", "cliqueId", "fabric.cliqueId"), q.leaf("ClusterUUID", "clusterUuid", "fabric.clusterUuid"),
       group("Health", "health",
             {q.leaf("Summary", "summary", "fabric.health.summary"),
              q.leaf("Bandwidth", "bandwidth", "fabric.health.bandwidth"),
              q.leaf("Route Recovery in progress", "route_recovery_in_progress",
                     "fabric.health.route_recovery_in_progress"),
              q.leaf("Route Unhealthy", "route_unhealthy", "fabric.health.route_unhealthy"),
              q.leaf("Access Timeout Recovery", "access_timeout_recovery", "fabric.health.access_timeout_recovery"),
              q.leaf("Incorrect Configuration", "incorrect_configuration", "fabric.health.incorrect_configuration"),
              q.leaf("Partition Assigned", "partition_assigned", "fabric.health.partition_assigned")})}));
  n.push_back(take("processes"));
  return n;
}

bool shown(const Node& n, const std::vector<std::string>& sections) {
  if (sections.empty()) return true;
  return !n.section.empty() && std::find(sections.begin(), sections.end(), n.section) != sections.end();
}

// The text's key column: nvidia-smi puts every colon at column 42 (R550) or 55 (580).
void renderText(const Node& n, int level, std::size_t width, std::ostream& out) {
  if (n.xml_only) return;
  if (n.key.empty()) {
    for (const auto& c : n.children) renderText(c, level, width, out);
    return;
  }
  const std::string label = std::string(4 * (level + n.text_indent), ' ') + n.key;
  if (!n.group) {
    out << fmt::format("{:<{}}: {}\n", label, width, n.value);
  } else if (n.children.empty() && !n.empty_text.empty()) {
    out << fmt::format("{:<{}}: {}\n", label, width, n.empty_text);
  } else {
    out << label << "\n";
    for (const auto& c : n.children) renderText(c, level + 1, width, out);
  }
}

void renderXml(const Node& n, int depth, std::ostream& out) {
  const std::string tabs(depth, '\t');
  if (!n.group) {
    const std::string v = xmlEscape(n.xml_value.empty() ? n.value : n.xml_value);
    if (n.xml_wrap.empty())
      out << tabs << "<" << n.tag << ">" << v << "</" << n.tag << ">\n";
    else
      out << tabs << "<" << n.tag << ">\n"
          << tabs << "\t<" << n.xml_wrap << ">" << v << "</" << n.xml_wrap << ">\n"
          << tabs << "</" << n.tag << ">\n";
    return;
  }
  out << tabs << "<" << n.tag << ">\n";
  for (const auto& c : n.children) renderXml(c, depth + 1, out);
  out << tabs << "</" << n.tag << ">\n";
}

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return buf;
}

int query(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err, bool xml) {
  Selection sel;
  if (int rc = openAndSelect(ctx, a.ids, &sel, err)) return rc;
  const nvml::Session& s = *sel.session;
  const nvml::Inventory* inv = &sel.inv;
  const std::vector<const nvml::GpuInfo*>& gpus = sel.gpus;
  const std::string driver = inv->driver_version.empty() ? "N/A" : inv->driver_version;
  const std::string cuda = inv->cuda_driver_version ? nvml::cudaVersionString(inv->cuda_driver_version) : "N/A";
  const std::string stamp = timestamp();
  const bool v580 = layout580(inv->driver_version);
  const std::size_t width = v580 ? 55 : 42;
  auto nodes = [&](const nvml::GpuInfo& g) { return v580 ? gpuNodes580(ctx, s, g) : gpuNodes(ctx, s, g); };
  if (xml) {
    out << "<?xml version=\"1.0\" ?>\n"
        << "<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v" << (v580 ? 13 : 12) << ".dtd\">\n"
        << "<nvidia_smi_log>\n"
        << "\t<timestamp>" << stamp << "</timestamp>\n"
        << "\t<driver_version>" << xmlEscape(driver) << "</driver_version>\n"
        << "\t<cuda_version>" << xmlEscape(cuda) << "</cuda_version>\n"
        << "\t<attached_gpus>" << inv->gpus.size() << "</attached_gpus>\n";
  } else {
    out << "\n==============NVSMI LOG==============\n\n"
        << fmt::format("{:<{}}: {}\n", "Timestamp", width, stamp)
        << fmt::format("{:<{}}: {}\n", "Driver Version", width, driver)
        << fmt::format("{:<{}}: {}\n", "CUDA Version", width, cuda) << "\n"
        << fmt::format("{:<{}}: {}\n", "Attached GPUs", width, inv->gpus.size());
  }
  for (const auto* g : gpus) {
    if (g->state != "ok") {
      reportLost(*g, err);
      continue;
    }
    if (xml) {
      out << "\t<gpu id=\"" << xmlEscape(g->pci.bus_id) << "\">\n";
      for (const auto& n : nodes(*g))
        if (shown(n, a.sections)) renderXml(n, 2, out);
      out << "\t</gpu>\n";
    } else {
      out << "GPU " << g->pci.bus_id << "\n";
      for (const auto& n : nodes(*g))
        if (shown(n, a.sections)) renderText(n, 1, width, out);
      out << "\n";
    }
  }
  if (xml) out << "</nvidia_smi_log>\n";
  return lostExit(gpus);
}

}  // namespace

int queryText(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err) {
  return query(ctx, a, out, err, false);
}
int queryXml(Context& ctx, const SmiArgs& a, std::ostream& out, std::ostream& err) {
  return query(ctx, a, out, err, true);
}

}  // namespace gw::cli::smi
