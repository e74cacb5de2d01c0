// The one field catalog. A field is added here and nowhere else: the sampler, the exporter's
// metric names (dcgm-exporter's and our native ones), the CLI's query names, the API and the
// docs (docs/fields.md is rendered from this table and checked by a test) all read it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "nvml/nvml.h"

namespace gw::fields {

enum class Type { Gauge, Counter, Label };
// How often a field needs reading: fast-moving signals every tick, slow ones (ECC, retired pages,
// remapped rows) every slow tick, static ones (limits, max clocks) once per (re)enumeration.
enum class Cadence { Fast, Slow, Static };

struct ReadContext {
  const nvml::Session& session;
  const nvml::Device& device;
  unsigned index;  // gpuwarden's index for this device (NVML index, or parent index for MIG)
  // When the query was made, as nvidia-smi prints it ("2023/08/19 14:53:46.783"): one instant for
  // every GPU of a round, so the caller takes it once.
  std::string_view timestamp = {};
  // The fabric registration, which eleven query names print: read by the first of them and kept for
  // the rest, so that `-q` asks NVML once per GPU, not once per line.
  mutable std::optional<Result<nvmlGpuFabricInfo_v3_t>> fabric = {};
  const Result<nvmlGpuFabricInfo_v3_t>& fabricInfo() const {
    if (!fabric) fabric.emplace(device.fabricInfo());
    return *fabric;
  }
};

using NumericReader = Result<double> (*)(const nvml::Device&);
using TextReader = Result<std::string> (*)(const ReadContext&);

// A profiling metric from NVML's GPM API: it needs two samples an interval apart, so no reader can
// answer it alone; the sampler keeps the samples and asks NVML for `metric` over each interval.
struct GpmSource {
  unsigned metric = 0;  // NVML_GPM_METRIC_*; 0: not a GPM field
  double scale = 1;     // NVML's unit (percent, MiB/s) to the catalog's
};

struct Field {
  std::string_view key;          // our stable name: config, API, history ("gpu_temp")
  int dcgm_id;                   // DCGM field id, 0 when DCGM has none
  std::string_view dcgm_name;    // dcgm-exporter metric name ("DCGM_FI_DEV_GPU_TEMP"), "" if none
  std::string_view smi_name;     // nvidia-smi --query-gpu name ("temperature.gpu"), "" if none
  std::string_view smi_unit;     // unit nvidia-smi prints ("MiB", "W", "MHz", "%", "")
  int decimals;                  // digits nvidia-smi prints after the point
  std::string_view native_name;  // base-unit Prometheus name ("gpuwarden_gpu_temperature_celsius")
  double native_scale;           // multiply the catalog value by this for native units
  std::string_view unit;         // unit of the catalog value, for docs and the API
  Type type;
  Cadence cadence;
  unsigned nvml_fi;  // NVML_FI_DEV_* for nvmlDeviceGetFieldValues batching, 0 if none
  std::string_view help;
  NumericReader read_number;  // numeric fields (gauges and counters)
  TextReader read_text;       // label fields
  GpmSource gpm = {};         // profiling fields: read by the sampler, read_number says so
};

std::span<const Field> all();

const Field* findByKey(std::string_view key);
const Field* findBySmiName(std::string_view smi_name);
// Also takes the current name of a DCGM field DCGM has renamed (DCGM_FI_DEV_CLOCKS_EVENT_REASONS).
const Field* findByDcgmName(std::string_view dcgm_name);
// The current DCGM name of a field whose catalog name is the older one DCGM renamed; "" if none.
std::string_view currentDcgmName(const Field& f);
// Accepts nvidia-smi's name or one of its aliases (smi_query.h holds them: "clocks.current.sm" for
// "clocks.sm", "clocks_throttle_reasons.active"), our key or the DCGM name.
const Field* findAny(std::string_view name);
// Index of a field in all(), for fixed-size per-GPU value tables.
std::size_t indexOf(const Field& f);

// Reads one field as text the way nvidia-smi prints it (value plus unit unless nounits),
// "[N/A]" when unsupported, "[GPU is lost]" / "[Unknown Error]" on errors.
std::string formatForSmi(const Field& f, const ReadContext& ctx, bool with_units);

// docs/fields.md: the catalog's table, then nvidia-smi's query properties (smi_query.h).
std::string renderMarkdown();

}  // namespace gw::fields
