// nvidia-smi's query properties: every name `--query-gpu`, `--query-compute-apps`,
// `--query-retired-pages` and `--query-remapped-rows` accept, with nvidia-smi's aliases, units and
// meanings (tests/unit/smi-query-gpu-names.txt pins the driver's own list).
//
// Kept apart from the sampled catalog (catalog.h) on purpose: most of these are properties, not
// time series (timestamp, driver_version, count, inforom.*, compute_mode…), and adding them to the
// catalog would add exporter metrics, history and API fields nobody samples. A property that *is*
// a sampled field names no reader here: it is read, formatted and documented by its catalog entry
// (the catalog's smi_name), so each fact keeps one home.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "fields/catalog.h"

namespace gw::fields::smi {

// How a catalog value prints where nvidia-smi's text differs from the number.
enum class Style {
  Value,  // as the catalog formats it
  YesNo,  // a 0/1 flag: "No" / "Yes"
};

struct Property {
  std::string_view name;     // nvidia-smi's name
  std::string_view aliases;  // other names nvidia-smi accepts for it, space-separated
  std::string_view unit;     // what nvidia-smi puts in brackets ("MiB", "W", "us"); catalog fields: theirs
  std::string_view help;
  TextReader read = nullptr;  // the value without its unit; nullptr: the catalog field of this name
  Style style = Style::Value;
  bool per_gpu = true;  // false: known without asking the GPU (timestamp, count, driver_version)
};

std::span<const Property> gpuProperties();
// By nvidia-smi's name or one of its aliases; nullptr when nvidia-smi would refuse it.
const Property* findGpuProperty(std::string_view name);
// The catalog field a property reads, nullptr for a query-only one.
const Field* catalogField(const Property& p);
std::string_view unitOf(const Property& p);
// One value as nvidia-smi prints it: the value and " unit" unless `with_units` is false,
// "[N/A]" when unsupported, "[GPU is lost]" / "[Unknown Error]" on errors.
std::string read(const Property& p, const ReadContext& ctx, bool with_units);
// The bracketed word nvidia-smi prints instead of a value for an NVML error.
std::string describeError(const Status& s);

// The per-row properties of the other query views: their values are rows of lists (processes,
// pages), so the CLI reads them; names, aliases, units and meanings live here.
struct ListProperty {
  std::string_view name;
  std::string_view aliases;
  std::string_view unit;
  std::string_view help;
};
std::span<const ListProperty> computeAppProperties();
std::span<const ListProperty> retiredPageProperties();
std::span<const ListProperty> remappedRowProperties();
const ListProperty* findListProperty(std::span<const ListProperty> table, std::string_view name);

// nvidia-smi's `--help-query-*` layout: `"name" or "alias"` then the meaning.
std::string helpText(std::string_view option, std::span<const Property> props);
std::string helpText(std::string_view option, std::span<const ListProperty> props);

// The Markdown section of docs/fields.md listing every nvidia-smi query property.
std::string renderMarkdown();

}  // namespace gw::fields::smi
