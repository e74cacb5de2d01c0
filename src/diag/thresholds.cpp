#include "diag/thresholds.h"

#include "diag/gemm_precision.h"
#include "platform/regular_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace gw::diag {

double SkuThresholds::expectedTflops(const std::string& precision) const {
  auto it = gemm_tflops.find(precision);
  return it == gemm_tflops.end() ? 0.0 : it->second;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

struct ParseError {
  std::string message;
};

template <typename T>
T as(const YAML::Node& n, const std::string& where) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw ParseError{where + ": wrong type or value"};
  }
}

double fraction(const YAML::Node& n, const std::string& where) {
  double v = as<double>(n, where);
  if (v < 0 || v > 1) throw ParseError{where + ": must be a fraction between 0 and 1"};
  return v;
}

double nonNegative(const YAML::Node& n, const std::string& where) {
  double v = as<double>(n, where);
  if (v < 0) throw ParseError{where + ": must not be negative"};
  return v;
}

// Every key of `defaults:`: the built-in file must give each (it is their one home).
constexpr const char* kDefaultKeys[] = {"max_temp_c",
                                        "pcie_min_fraction",
                                        "pcie_warn_fraction",
                                        "membw_min_fraction",
                                        "membw_warn_fraction",
                                        "gemm_min_fraction",
                                        "peer_slow_warn_pct",
                                        "peer_slow_fail_pct",
                                        "p2p_min_fraction",
                                        "p2p_warn_fraction",
                                        "power_target_fraction",
                                        "power_min_fraction",
                                        "power_warn_fraction",
                                        "memtest_fraction",
                                        "max_retired_pages",
                                        "peak_mem_bw_gbps",
                                        "pcie_gen",
                                        "pcie_width",
                                        "nvlink_p2p_gbps",
                                        "gemm_tflops"};

// Applies the keys of `m` on top of `t`. SKU-only keys are allowed when `sku`.
void apply(const YAML::Node& m, SkuThresholds& t, const std::string& where, bool sku) {
  if (!m.IsMap()) throw ParseError{where + ": expected a mapping"};
  for (const auto& kv : m) {
    const std::string key = as<std::string>(kv.first, where);
    const YAML::Node& v = kv.second;
    const std::string at = where + "." + key;
    if (key == "max_temp_c")
      t.max_temp_c = nonNegative(v, at);
    else if (key == "pcie_min_fraction")
      t.pcie_min_fraction = fraction(v, at);
    else if (key == "pcie_warn_fraction")
      t.pcie_warn_fraction = fraction(v, at);
    else if (key == "membw_min_fraction")
      t.membw_min_fraction = fraction(v, at);
    else if (key == "membw_warn_fraction")
      t.membw_warn_fraction = fraction(v, at);
    else if (key == "gemm_min_fraction")
      t.gemm_min_fraction = fraction(v, at);
    else if (key == "peer_slow_warn_pct")
      t.peer_slow_warn_pct = nonNegative(v, at);
    else if (key == "peer_slow_fail_pct")
      t.peer_slow_fail_pct = nonNegative(v, at);
    else if (key == "p2p_min_fraction")
      t.p2p_min_fraction = fraction(v, at);
    else if (key == "p2p_warn_fraction")
      t.p2p_warn_fraction = fraction(v, at);
    else if (key == "power_target_fraction")
      t.power_target_fraction = fraction(v, at);
    else if (key == "power_min_fraction")
      t.power_min_fraction = fraction(v, at);
    else if (key == "power_warn_fraction")
      t.power_warn_fraction = fraction(v, at);
    else if (key == "memtest_fraction") {
      t.memtest_fraction = fraction(v, at);
      if (t.memtest_fraction <= 0 || t.memtest_fraction > 0.98) throw ParseError{at + ": must be in (0, 0.98]"};
    } else if (key == "max_retired_pages")
      t.max_retired_pages = as<uint64_t>(v, at);
    else if (key == "peak_mem_bw_gbps")
      t.peak_mem_bw_gbps = nonNegative(v, at);
    else if (key == "pcie_gen")
      t.pcie_gen = as<int>(v, at);
    else if (key == "pcie_width")
      t.pcie_width = as<int>(v, at);
    else if (key == "nvlink_p2p_gbps")
      t.nvlink_p2p_gbps = nonNegative(v, at);
    else if (key == "gemm_tflops") {
      if (!v.IsMap()) throw ParseError{at + ": expected a mapping of precision: TFLOPS"};
      for (const auto& p : v) {
        std::string prec = lower(as<std::string>(p.first, at));
        if (gemmPrecisionFromName(prec) < 0)
          throw ParseError{at + ": unknown precision '" + prec + "' (" + gemmPrecisionList() + ")"};
        t.gemm_tflops[prec] = nonNegative(p.second, at + "." + prec);
      }
    } else if (sku && key == "key")
      t.key = as<std::string>(v, at);
    else if (sku && key == "name")
      t.name = as<std::string>(v, at);
    else if (sku && key == "names") {
      t.names.clear();
      for (const auto& n : v) t.names.push_back(trim(as<std::string>(n, at)));
    } else if (sku && key == "pci_device_ids") {
      t.pci_device_ids.clear();
      for (const auto& n : v) {
        uint32_t id = as<uint32_t>(n, at);
        if (id > 0xFFFF) throw ParseError{at + ": a 16-bit PCI device id, e.g. 0x2330"};
        t.pci_device_ids.push_back(id);
      }
    } else {
      throw ParseError{at + ": unknown key"};
    }
  }
  if (t.pcie_warn_fraction < t.pcie_min_fraction || t.membw_warn_fraction < t.membw_min_fraction ||
      t.p2p_warn_fraction < t.p2p_min_fraction || t.power_warn_fraction < t.power_min_fraction)
    throw ParseError{where + ": a *_warn_fraction is below its *_min_fraction"};
  if (t.peer_slow_fail_pct < t.peer_slow_warn_pct)
    throw ParseError{where + ": peer_slow_fail_pct is below peer_slow_warn_pct"};
}

}  // namespace

Result<ThresholdTable> ThresholdTable::parse(std::string_view yaml, const std::string& source) {
  return parseOver(yaml, source, builtin().generic(), false);
}

Result<ThresholdTable> ThresholdTable::parseOver(std::string_view yaml, const std::string& source,
                                                 const SkuThresholds& base, bool require_all) {
  ThresholdTable t;
  t.defaults_ = base;
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    if (!root.IsMap()) return Status::Error(source + ": expected a mapping at the top");
    std::set<std::string> keys;
    for (const auto& kv : root) {
      std::string k = kv.first.as<std::string>();
      if (k != "version" && k != "defaults" && k != "skus")
        return Status::Error(source + ": unknown top-level key '" + k + "'");
    }
    if (!root["version"] || root["version"].as<int>() != 1) return Status::Error(source + ": 'version: 1' expected");
    if (root["defaults"]) apply(root["defaults"], t.defaults_, "defaults", false);
    if (require_all)
      for (const char* k : kDefaultKeys)
        if (!root["defaults"] || !root["defaults"][k]) return Status::Error(source + ": defaults." + k + " is missing");
    if (root["skus"]) {
      if (!root["skus"].IsSequence()) return Status::Error(source + ": 'skus' must be a list");
      int i = 0;
      for (const auto& s : root["skus"]) {
        SkuThresholds sku = t.defaults_;
        sku.key = "";
        sku.name = "";
        apply(s, sku, "skus[" + std::to_string(i++) + "]", true);
        if (sku.key.empty()) return Status::Error(source + ": every sku needs a 'key'");
        if (!keys.insert(sku.key).second) return Status::Error(source + ": duplicate sku key '" + sku.key + "'");
        if (sku.name.empty()) sku.name = sku.key;
        t.skus_.push_back(std::move(sku));
      }
    }
  } catch (const ParseError& e) {
    return Status::Error(source + ": " + e.message);
  } catch (const YAML::Exception& e) {
    return Status::Error(source + ": " + e.what());
  }
  return t;
}

Result<ThresholdTable> ThresholdTable::loadFile(const std::string& path) {
  // `diag --thresholds /dev/zero` read until memory ran out, a FIFO hung the run.
  auto text = platform::readRegularFile(path, kMaxThresholdsFileBytes, "the thresholds file");
  if (!text) return text.status();
  return parse(*text, path);
}

const ThresholdTable& ThresholdTable::builtin() {
  static const ThresholdTable table = [] {
    auto r = parseOver(kDefaultThresholdsYaml, "built-in thresholds.yaml", SkuThresholds{}, true);
    // The embedded file is tested (Thresholds.*): a broken one is a broken build, and judging
    // with thresholds of zero would pass every card.
    if (!r.ok()) {
      std::fprintf(stderr, "gpuwarden: %s\n", r.error().c_str());
      std::abort();
    }
    return std::move(r).value();
  }();
  return table;
}

const SkuThresholds& ThresholdTable::lookup(const std::string& name, uint32_t pci_device_id) const {
  uint32_t dev = pci_device_id > 0xFFFF ? (pci_device_id >> 16) : pci_device_id;
  if (dev != 0)
    for (const auto& s : skus_)
      if (std::find(s.pci_device_ids.begin(), s.pci_device_ids.end(), dev) != s.pci_device_ids.end()) return s;
  std::string n = lower(trim(name));
  for (const auto& s : skus_)
    for (const auto& candidate : s.names)
      if (lower(candidate) == n) return s;
  return defaults_;
}

}  // namespace gw::diag
