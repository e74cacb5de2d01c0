#include "alert/alert.h"

#include "platform/clock.h"

namespace gw::alert {

nlohmann::json toJson(const Alert& a) {
  nlohmann::json j;
  j["id"] = a.id;
  j["rule"] = a.rule;
  j["severity"] = a.severity;
  j["summary"] = a.summary;
  j["action"] = a.action;
  j["gpu_uuid"] = a.gpu_uuid;
  j["gpu_index"] = a.gpu_index;
  j["hostname"] = a.hostname;
  j["labels"] = a.labels;
  j["annotations"] = a.annotations;
  j["starts_at_ms"] = a.starts_at_ms;
  j["ends_at_ms"] = a.ends_at_ms;
  j["status"] = a.status();
  j["starts_at"] = platform::formatRfc3339(a.starts_at_ms);
  if (!a.firing()) j["ends_at"] = platform::formatRfc3339(a.ends_at_ms);
  return j;
}

Alert alertFromJson(const nlohmann::json& j) {
  Alert a;
  a.id = j.value("id", "");
  a.rule = j.value("rule", "");
  a.severity = j.value("severity", "");
  a.summary = j.value("summary", "");
  a.action = j.value("action", "");
  a.gpu_uuid = j.value("gpu_uuid", "");
  a.gpu_index = j.value("gpu_index", -1);
  a.hostname = j.value("hostname", "");
  if (j.contains("labels")) a.labels = j.at("labels").get<std::map<std::string, std::string>>();
  if (j.contains("annotations")) a.annotations = j.at("annotations").get<std::map<std::string, std::string>>();
  a.starts_at_ms = j.value("starts_at_ms", int64_t{0});
  a.ends_at_ms = j.value("ends_at_ms", int64_t{0});
  return a;
}

}  // namespace gw::alert
