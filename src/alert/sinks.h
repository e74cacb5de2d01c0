// Where alerts go. A sink delivers one alert synchronously and says whether a failure is worth
// retrying; the dispatcher owns queueing, retries, rate limits and threads.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "alert/alert.h"
#include "platform/process_runner.h"

namespace gw::alert {

struct SinkConfig {
  enum class Type { webhook, alertmanager, command };
  Type type = Type::webhook;
  std::string name;  // unique per dispatcher; the queue is keyed by it (defaults to the type)
  // webhook: the full URL the JSON is POSTed to (http:// or https://).
  // alertmanager: the base URL, e.g. http://127.0.0.1:9093 (/api/v2/alerts is appended).
  std::string url;
  std::map<std::string, std::string> headers;  // extra HTTP headers (e.g. Authorization)
  std::vector<std::string> command;            // command: argv; argv[0] looked up in PATH
  std::chrono::milliseconds timeout{5000};     // per delivery attempt
  int rate_limit = 60;                         // at most this many attempts per rate_interval
  std::chrono::milliseconds rate_interval{60000};
  std::string generator_url;  // alertmanager: optional generatorURL (e.g. the agent's API)
  bool verify_tls = true;
};

struct Delivery {
  bool ok = false;
  bool retryable = true;  // false: the receiver rejected this alert for good (HTTP 4xx)
  std::string error;
  static Delivery success() { return {true, true, {}}; }
  static Delivery retry(std::string e) { return {false, true, std::move(e)}; }
  static Delivery reject(std::string e) { return {false, false, std::move(e)}; }
};

class Sink {
 public:
  virtual ~Sink() = default;
  virtual const std::string& name() const = 0;
  virtual Delivery deliver(const Alert& alert) = 0;
};

// POSTs toJson(alert) as application/json. 2xx ok; 408, 429, 5xx and transport errors retry;
// other 4xx reject.
class WebhookSink final : public Sink {
 public:
  explicit WebhookSink(SinkConfig config);
  const std::string& name() const override { return config_.name; }
  Delivery deliver(const Alert& alert) override;

 private:
  SinkConfig config_;
};

// Prometheus Alertmanager API v2: POST <url>/api/v2/alerts with a one-element array.
class AlertmanagerSink final : public Sink {
 public:
  explicit AlertmanagerSink(SinkConfig config);
  const std::string& name() const override { return config_.name; }
  Delivery deliver(const Alert& alert) override;
  static nlohmann::json payload(const Alert& alert, const std::string& generator_url = {});

 private:
  SinkConfig config_;
};

// Runs config.command with the alert in the environment: GPUWARDEN_ALERT_JSON (the JSON),
// GPUWARDEN_ALERT_FILE (a temporary file holding the same JSON, removed afterwards) and
// GPUWARDEN_ALERT_{ID,RULE,SEVERITY,STATUS,SUMMARY,ACTION,GPU_UUID,GPU_INDEX,HOSTNAME}.
// Exit 0 is success; anything else (including a timeout) is retried.
class CommandSink final : public Sink {
 public:
  CommandSink(SinkConfig config, std::string temp_dir,
              platform::ProcessRunner& runner = platform::defaultProcessRunner());
  const std::string& name() const override { return config_.name; }
  Delivery deliver(const Alert& alert) override;

 private:
  SinkConfig config_;
  std::string temp_dir_;
  platform::ProcessRunner& runner_;
};

std::unique_ptr<Sink> makeSink(const SinkConfig& config, const std::string& temp_dir);
const char* toString(SinkConfig::Type type);

// Splits "scheme://host[:port][/path]" into "scheme://host[:port]" and "/path" ("/" if none).
bool splitUrl(const std::string& url, std::string& origin, std::string& path);

}  // namespace gw::alert
