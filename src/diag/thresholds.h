// Per-SKU thresholds of the diagnostics: one data file (thresholds.yaml), compiled in as the
// default and loadable at run time. See docs/diag.md for the format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace gw::diag {

struct SkuThresholds {
  std::string key = "generic";
  std::string name = "generic";
  std::vector<uint32_t> pci_device_ids;  // 16-bit device ids (0x2330)
  std::vector<std::string> names;        // NVML names, compared case-insensitively

  // The values live in one place, thresholds.yaml's `defaults:` (compiled in): a SkuThresholds
  // made here holds zeros; take ThresholdTable::builtin().generic() for the defaults.
  double max_temp_c = 0;
  double pcie_min_fraction = 0, pcie_warn_fraction = 0;
  double membw_min_fraction = 0, membw_warn_fraction = 0;
  double gemm_min_fraction = 0;
  double peer_slow_warn_pct = 0, peer_slow_fail_pct = 0;
  double p2p_min_fraction = 0, p2p_warn_fraction = 0;
  double power_target_fraction = 0, power_min_fraction = 0, power_warn_fraction = 0;
  double memtest_fraction = 0;
  uint64_t max_retired_pages = 0;
  double peak_mem_bw_gbps = 0;  // 0: unknown
  int pcie_gen = 0, pcie_width = 0;
  double nvlink_p2p_gbps = 0;
  std::map<std::string, double> gemm_tflops;  // "fp32", "tf32", "fp16", "bf16"

  double expectedTflops(const std::string& precision) const;  // 0 when unknown
};

inline constexpr std::size_t kMaxThresholdsFileBytes = 1 << 20;

class ThresholdTable {
 public:
  // Parses the YAML text; `source` names it in error messages. Unknown keys are errors. What its
  // `defaults:` leaves out keeps the built-in default.
  static Result<ThresholdTable> parse(std::string_view yaml, const std::string& source);
  // A regular file of at most kMaxThresholdsFileBytes (the built-in table is ~4 KiB).
  static Result<ThresholdTable> loadFile(const std::string& path);
  // The compiled-in copy of src/diag/thresholds.yaml.
  static const ThresholdTable& builtin();

  // PCI device id first (either NVML's 32-bit 0xDDDDVVVV or the bare 16-bit id), then name;
  // the generic defaults when nothing matches.
  const SkuThresholds& lookup(const std::string& name, uint32_t pci_device_id) const;
  const SkuThresholds& generic() const { return defaults_; }
  const std::vector<SkuThresholds>& skus() const { return skus_; }

 private:
  // `base`: where `defaults:` starts; `require_all`: every default key must be given (the
  // built-in file, which is where the defaults are written).
  static Result<ThresholdTable> parseOver(std::string_view yaml, const std::string& source, const SkuThresholds& base,
                                          bool require_all);
  SkuThresholds defaults_;
  std::vector<SkuThresholds> skus_;
};

extern const std::string_view kDefaultThresholdsYaml;

}  // namespace gw::diag
