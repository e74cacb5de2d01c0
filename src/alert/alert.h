// The alert as the alert layer sees it. Deliberately its own type (not health's) so that any
// producer — the health rules, the CLI, a test — can raise one without pulling in the engine.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace gw::alert {

// Where an alert's runbook_url points unless `alerts.runbook_base` says otherwise: the knowledge
// base as the package installs it. The anchor is the entry's id ("#hot-and-loud"), as in
// docs/knowledge-base.md, so a site that serves the docs elsewhere sets only the base.
inline constexpr std::string_view kDefaultRunbookBase = "file:///usr/share/doc/gpuwarden/knowledge-base.md";

struct Alert {
  std::string id;        // dedupe key, e.g. "<rule>/<gpu uuid>"; also the ordering key
  std::string rule;      // the health rule; Alertmanager's alertname unless labels name one
  std::string severity;  // info | warning | critical | fatal
  std::string summary;
  std::string action;  // what an operator should do
  std::string gpu_uuid;
  std::string hostname;
  int gpu_index = -1;  // -1: not about one GPU
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  int64_t starts_at_ms = 0;
  int64_t ends_at_ms = 0;  // 0 = firing; otherwise the time it resolved

  bool firing() const { return ends_at_ms == 0; }
  const char* status() const { return firing() ? "firing" : "resolved"; }
};

// Round-trips every field; adds "status" and RFC 3339 "starts_at"/"ends_at" for readers.
nlohmann::json toJson(const Alert& alert);
// The inverse, for a payload read back from the queue: a field of the wrong type or a number past
// its type is an error naming it (the payload may be damaged), never an exception.
Result<Alert> alertFromJson(const nlohmann::json& j);

}  // namespace gw::alert
