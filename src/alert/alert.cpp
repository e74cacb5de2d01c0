#include "alert/alert.h"

#include "platform/bounded_json.h"
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

Result<Alert> alertFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::Error("not a JSON object");
  const auto text = [&j](const char* key) -> std::string {
    if (!j.contains(key)) return "";
    if (!j[key].is_string()) throw std::runtime_error(std::string("\"") + key + "\" is not a string");
    return j[key].get<std::string>();
  };
  const auto strings = [&j](const char* key) {
    std::map<std::string, std::string> out;
    if (!j.contains(key)) return out;
    if (!j[key].is_object()) throw std::runtime_error(std::string("\"") + key + "\" is not an object");
    for (const auto& [k, v] : j[key].items()) {
      if (!v.is_string()) throw std::runtime_error(std::string("\"") + key + "\" holds a value that is not a string");
      out[k] = v.get<std::string>();
    }
    return out;
  };
  try {
    Alert a;
    a.id = text("id");
    a.rule = text("rule");
    a.severity = text("severity");
    a.summary = text("summary");
    a.action = text("action");
    a.gpu_uuid = text("gpu_uuid");
    a.gpu_index = platform::wholeNumberOr(j, "gpu_index", -1);
    a.hostname = text("hostname");
    a.labels = strings("labels");
    a.annotations = strings("annotations");
    a.starts_at_ms = platform::wholeNumberOr(j, "starts_at_ms", std::int64_t{0});
    a.ends_at_ms = platform::wholeNumberOr(j, "ends_at_ms", std::int64_t{0});
    return a;
  } catch (const std::exception& e) {
    return Status::Error(e.what());
  }
}

}  // namespace gw::alert
