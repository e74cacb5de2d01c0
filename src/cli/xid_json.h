// The JSON of an Xid catalog entry, as `xid scan --json` and `explain xid N --json` print it.
#pragma once

#include <nlohmann/json.hpp>

#include "knowledge/xid_catalog.h"

namespace gw::cli {

nlohmann::json xidJson(const knowledge::XidInfo& x);

}  // namespace gw::cli
