#include "alert/sinks.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>

#include <httplib.h>

#include "platform/atomic_file.h"
#include "platform/clock.h"

namespace gw::alert {
namespace {

// What a receiver's reply or a command's stderr adds to a delivery error: enough to say why,
// never a whole page in the log and the stats.
constexpr std::size_t kErrorTextBytes = 200;

Delivery post(const SinkConfig& config, const std::string& url, const std::string& body) {
  std::string origin, path;
  if (!splitUrl(url, origin, path)) return Delivery::reject("bad URL: " + url);
  httplib::Client client(origin);
  if (!client.is_valid()) return Delivery::reject("unsupported URL: " + url);
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(config.timeout);
  auto usecs = std::chrono::duration_cast<std::chrono::microseconds>(config.timeout - secs);
  client.set_connection_timeout(secs.count(), usecs.count());
  client.set_read_timeout(secs.count(), usecs.count());
  client.set_write_timeout(secs.count(), usecs.count());
  client.enable_server_certificate_verification(config.verify_tls);
  httplib::Headers headers;
  for (const auto& [k, v] : config.headers) headers.emplace(k, v);
  headers.emplace("User-Agent", "gpuwarden-alert");
  auto res = client.Post(path, headers, body, "application/json");
  if (!res) return Delivery::retry("POST " + url + ": " + httplib::to_string(res.error()));
  int s = res->status;
  if (s >= 200 && s < 300) return Delivery::success();
  std::string msg = "POST " + url + ": HTTP " + std::to_string(s) + " " + res->body.substr(0, kErrorTextBytes);
  if (s == 408 || s == 429 || s >= 500) return Delivery::retry(msg);
  return Delivery::reject(msg);
}

}  // namespace

bool splitUrl(const std::string& url, std::string& origin, std::string& path) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return false;
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return false;
  auto slash = url.find('/', scheme_end + 3);
  origin = url.substr(0, slash);
  path = slash == std::string::npos ? "/" : url.substr(slash);
  return origin.size() > scheme_end + 3;
}

const char* toString(SinkConfig::Type type) {
  switch (type) {
    case SinkConfig::Type::webhook:
      return "webhook";
    case SinkConfig::Type::alertmanager:
      return "alertmanager";
    case SinkConfig::Type::command:
      return "command";
  }
  return "?";
}

WebhookSink::WebhookSink(SinkConfig config) : config_(std::move(config)) {}

Delivery WebhookSink::deliver(const Alert& alert) { return post(config_, config_.url, toJson(alert).dump()); }

AlertmanagerSink::AlertmanagerSink(SinkConfig config) : config_(std::move(config)) {
  while (!config_.url.empty() && config_.url.back() == '/') config_.url.pop_back();
}

nlohmann::json AlertmanagerSink::payload(const Alert& a, const std::string& generator_url) {
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : a.labels) labels[k] = v;
  if (!labels.contains("alertname")) labels["alertname"] = a.rule;
  if (!a.severity.empty()) labels["severity"] = a.severity;
  if (!a.hostname.empty()) labels["instance"] = a.hostname;
  if (a.gpu_index >= 0) labels["gpu"] = std::to_string(a.gpu_index);
  if (!a.gpu_uuid.empty()) labels["UUID"] = a.gpu_uuid;
  nlohmann::json annotations = nlohmann::json::object();
  for (const auto& [k, v] : a.annotations) annotations[k] = v;
  if (!a.summary.empty()) annotations["summary"] = a.summary;
  if (!annotations.contains("description") && !a.action.empty()) annotations["description"] = a.action;
  if (!a.action.empty()) annotations["action"] = a.action;
  nlohmann::json one;
  one["labels"] = labels;
  one["annotations"] = annotations;
  one["startsAt"] = platform::formatRfc3339(a.starts_at_ms != 0 ? a.starts_at_ms : platform::wallMs());
  if (!a.firing()) one["endsAt"] = platform::formatRfc3339(a.ends_at_ms);
  if (!generator_url.empty()) one["generatorURL"] = generator_url;
  return nlohmann::json::array({one});
}

Delivery AlertmanagerSink::deliver(const Alert& alert) {
  return post(config_, config_.url + "/api/v2/alerts", payload(alert, config_.generator_url).dump());
}

CommandSink::CommandSink(SinkConfig config, std::string temp_dir, platform::ProcessRunner& runner)
    : config_(std::move(config)), temp_dir_(std::move(temp_dir)), runner_(runner) {}

Delivery CommandSink::deliver(const Alert& a) {
  if (config_.command.empty()) return Delivery::reject("command sink without a command");
  static std::atomic<unsigned> counter{0};
  std::string json = toJson(a).dump();
  std::filesystem::path file = std::filesystem::path(temp_dir_) / ("alert-" + std::to_string(::getpid()) + "-" +
                                                                   std::to_string(counter.fetch_add(1)) + ".json");
  // The command may read the file while we are still running: it sees all of it or nothing.
  if (Status s = platform::writeFileAtomic(file.string(), json, 0600); !s.ok()) return Delivery::retry(s.message());
  platform::RunOptions opts;
  opts.timeout = config_.timeout;
  opts.env = {{"GPUWARDEN_ALERT_JSON", json},
              {"GPUWARDEN_ALERT_FILE", file.string()},
              {"GPUWARDEN_ALERT_ID", a.id},
              {"GPUWARDEN_ALERT_RULE", a.rule},
              {"GPUWARDEN_ALERT_SEVERITY", a.severity},
              {"GPUWARDEN_ALERT_STATUS", a.status()},
              {"GPUWARDEN_ALERT_SUMMARY", a.summary},
              {"GPUWARDEN_ALERT_ACTION", a.action},
              {"GPUWARDEN_ALERT_GPU_UUID", a.gpu_uuid},
              {"GPUWARDEN_ALERT_GPU_INDEX", std::to_string(a.gpu_index)},
              {"GPUWARDEN_ALERT_HOSTNAME", a.hostname}};
  platform::RunResult r = runner_.run(config_.command, opts);
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (r.exit_code == 0 && !r.timed_out) return Delivery::success();
  std::string why = r.not_found   ? "not found"
                    : r.timed_out ? "timed out"
                                  : "exit " + std::to_string(r.exit_code) + ": " + r.err.substr(0, kErrorTextBytes);
  return Delivery::retry(config_.command[0] + ": " + why);
}

std::unique_ptr<Sink> makeSink(const SinkConfig& config, const std::string& temp_dir) {
  switch (config.type) {
    case SinkConfig::Type::webhook:
      return std::make_unique<WebhookSink>(config);
    case SinkConfig::Type::alertmanager:
      return std::make_unique<AlertmanagerSink>(config);
    case SinkConfig::Type::command:
      return std::make_unique<CommandSink>(config, temp_dir);
  }
  return nullptr;
}

}  // namespace gw::alert
