// What dcgm-exporter declares for each DCGM metric it ships in its counter lists, so that the
// Dcgm naming prints the same # HELP / # TYPE lines and value spelling that dashboards, alert
// rules and recording rules were written against. Internal to the exporter.
#pragma once

#include <optional>
#include <string_view>

#include "fields/catalog.h"

namespace gw::exporter::detail {

struct DcgmMeta {
  fields::Type type;      // as dcgm-exporter declares it (it calls some rates "counter")
  std::string_view help;  // dcgm-exporter's help text, verbatim
};

// dcgm-exporter's declaration of a metric in its shipped lists (etc/default-counters.csv,
// etc/dcp-metrics-included.csv); nullopt for a DCGM field it does not ship.
std::optional<DcgmMeta> dcgmExporterMeta(std::string_view dcgm_name);

// How dcgm-exporter spells a value: DCGM_FT_INT64 fields with %d, DCGM_FT_DOUBLE ones with %f.
enum class DcgmValueKind { Int64, Double };
DcgmValueKind dcgmValueKind(int dcgm_id);

}  // namespace gw::exporter::detail
