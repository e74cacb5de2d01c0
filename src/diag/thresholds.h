// Per-SKU thresholds of the diagnostics: one data file (thresholds.yaml), compiled in as the
// default and loadable at run time. See docs/diag.md for the format.
#pragma once

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
  std::vector<uint32_t> pciDeviceIds;  // 16-bit device ids (0x2330)
  std::vector<std::string> names;      // NVML names, compared case-insensitively

  double maxTempC = 87;
  double pcieMinFraction = 0.60, pcieWarnFraction = 0.70;
  double membwMinFraction = 0.70, membwWarnFraction = 0.80;
  double gemmMinFraction = 0.60;
  double peerSlowWarnPct = 5, peerSlowFailPct = 15;
  double p2pMinFraction = 0.50, p2pWarnFraction = 0.70;
  double powerTargetFraction = 0.85, powerMinFraction = 0.80, powerWarnFraction = 0.95;
  double memtestFraction = 0.90;
  uint64_t maxRetiredPages = 60;
  double peakMemBwGBps = 0;  // 0: unknown
  int pcieGen = 0, pcieWidth = 0;
  double nvlinkP2PGBps = 0;
  std::map<std::string, double> gemmTflops;  // "fp32", "tf32", "fp16", "bf16"

  double expectedTflops(const std::string& precision) const;  // 0 when unknown
};

class ThresholdTable {
 public:
  // Parses the YAML text; `source` names it in error messages. Unknown keys are errors.
  static Result<ThresholdTable> parse(std::string_view yaml, const std::string& source);
  static Result<ThresholdTable> loadFile(const std::string& path);
  // The compiled-in copy of src/diag/thresholds.yaml.
  static const ThresholdTable& builtin();

  // PCI device id first (either NVML's 32-bit 0xDDDDVVVV or the bare 16-bit id), then name;
  // the generic defaults when nothing matches.
  const SkuThresholds& lookup(const std::string& name, uint32_t pciDeviceId) const;
  const SkuThresholds& generic() const { return defaults_; }
  const std::vector<SkuThresholds>& skus() const { return skus_; }

 private:
  SkuThresholds defaults_;
  std::vector<SkuThresholds> skus_;
};

extern const std::string_view kDefaultThresholdsYaml;

}  // namespace gw::diag
