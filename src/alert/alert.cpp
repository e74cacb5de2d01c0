#include "alert/alert.h"

#include <chrono>
#include <cstdio>
#include <ctime>

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
  j["starts_at"] = rfc3339(a.starts_at_ms);
  if (!a.firing()) j["ends_at"] = rfc3339(a.ends_at_ms);
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

std::string rfc3339(int64_t unix_ms) {
  int64_t secs = unix_ms / 1000;
  int64_t ms = unix_ms % 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace gw::alert
