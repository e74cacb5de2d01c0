#include "server/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include "fields/catalog.h"
#include "platform/regular_file.h"
#include "server/counters_file.h"
#include "server/yaml_check.h"
#include "health/rules.h"

namespace gw::server {
namespace {

Status readDuration(const Checker& c, const YAML::Node& n, const std::string& field, Millis* out) {
  if (Status s = needScalar(c, n, field); !s) return s;
  auto d = parseDuration(n.Scalar());
  if (!d) return c.error(n, field, d.error());
  *out = *d;
  return Status::Ok();
}

Status readSize(const Checker& c, const YAML::Node& n, const std::string& field, std::size_t min, std::size_t max,
                std::size_t* out) {
  if (Status s = needScalar(c, n, field); !s) return s;
  std::string text = n.Scalar();
  std::uint64_t mult = 1;
  std::string num = text;
  auto ends = [&](std::string_view suf) { return text.size() > suf.size() && text.ends_with(suf); };
  if (ends("KiB"))
    mult = 1024, num = text.substr(0, text.size() - 3);
  else if (ends("MiB"))
    mult = 1024 * 1024, num = text.substr(0, text.size() - 3);
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec == std::errc::result_out_of_range)
    return c.error(n, field, "'" + text + "' is too large (at most " + std::to_string(max) + ")");
  if (ec != std::errc() || p != num.data() + num.size())
    return c.error(n, field, "expected a whole number (optionally with KiB or MiB), got '" + text + "'");
  if (v > std::numeric_limits<std::uint64_t>::max() / mult)
    return c.error(n, field, "'" + text + "' is too large (at most " + std::to_string(max) + ")");
  v *= mult;
  if (v < min || v > max)
    return c.error(
        n, field,
        "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + std::to_string(v));
  *out = static_cast<std::size_t>(v);
  return Status::Ok();
}

Status readBool(const Checker& c, const YAML::Node& n, const std::string& field, bool* out) {
  if (Status s = needScalar(c, n, field); !s) return s;
  const std::string& v = n.Scalar();
  if (v == "true" || v == "yes" || v == "on")
    *out = true;
  else if (v == "false" || v == "no" || v == "off")
    *out = false;
  else
    return c.error(n, field, "expected true or false, got '" + v + "'");
  return Status::Ok();
}

bool validLabelName(std::string_view s) {
  if (s.empty() || s.starts_with("__")) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

bool httpToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
  });
}

// Labels the exporter sets itself; an extra label may not shadow them.
const std::set<std::string, std::less<>> kReservedLabels = {
    "gpu",      "UUID",    "pci_bus_id", "device",   "modelName", "Hostname", "GPU_I_PROFILE", "GPU_I_ID", "state",
    "err_code", "err_msg", "uuid",       "instance", "job",       "le",       "quantile"};

Result<std::chrono::hours> toHours(const Checker& c, const YAML::Node& n, const std::string& field, Millis d) {
  if (d.count() % 3600000 != 0) return c.error(n, field, "must be a whole number of hours (e.g. 24h, 30d)");
  return std::chrono::hours(d.count() / 3600000);
}

Status parseAlerts(const Checker& c, const YAML::Node& a, AlertSettings& out) {
  if (!a.IsMap()) return c.error(a, "alerts", "expected a mapping");
  if (Status st = checkKeys(c, a, "alerts", {"sinks", "repeat_interval", "min_severity", "runbook_base"}); !st)
    return st;
  if (auto n = a["runbook_base"]; n) {
    if (Status st = needScalar(c, n, "alerts.runbook_base"); !st) return st;
    const std::string& v = n.Scalar();
    // Alertmanager, Grafana and chat tools show it as a link: it must stand on its own.
    const bool absolute = v.starts_with("https://") || v.starts_with("http://") || v.starts_with("file:///");
    if (!absolute || v.find_first_of("# \t\n") != std::string::npos)
      return c.error(n, "alerts.runbook_base",
                     "expected an absolute URL without a fragment (https://…, http://… or file:///…), got '" + v + "'");
    out.runbook_base = v;
  }
  if (auto n = a["repeat_interval"]; n) {
    Millis d{};
    if (Status st = readDuration(c, n, "alerts.repeat_interval", &d); !st) return st;
    if (d < Millis(10000)) return c.error(n, "alerts.repeat_interval", "must be at least 10s");
    out.repeat_interval = d;
  }
  if (auto n = a["min_severity"]; n) {
    if (Status st = needScalar(c, n, "alerts.min_severity"); !st) return st;
    if (!health::parseSeverity(n.Scalar()))
      return c.error(n, "alerts.min_severity", "expected info, warning, critical or fatal, got '" + n.Scalar() + "'");
    out.min_severity = n.Scalar();
  }
  auto sinks = a["sinks"];
  if (!sinks) return Status::Ok();
  if (!sinks.IsSequence()) return c.error(sinks, "alerts.sinks", "expected a list of sinks");
  out.sinks.clear();
  std::set<std::string> names;
  std::size_t idx = 0;
  for (const auto& s : sinks) {
    const std::string f = "alerts.sinks[" + std::to_string(idx++) + "]";
    if (!s.IsMap()) return c.error(s, f, "expected a mapping (type, url, ...)");
    if (Status st = checkKeys(c, s, f,
                              {"type", "name", "url", "command", "timeout", "rate_limit", "rate_interval", "headers",
                               "generator_url", "verify_tls"});
        !st)
      return st;
    alert::SinkConfig sc;
    auto t = s["type"];
    if (!t) return c.error(s, f + ".type", "required (webhook, alertmanager or command)");
    if (Status st = needScalar(c, t, f + ".type"); !st) return st;
    if (t.Scalar() == "webhook")
      sc.type = alert::SinkConfig::Type::webhook;
    else if (t.Scalar() == "alertmanager")
      sc.type = alert::SinkConfig::Type::alertmanager;
    else if (t.Scalar() == "command")
      sc.type = alert::SinkConfig::Type::command;
    else
      return c.error(t, f + ".type", "expected webhook, alertmanager or command, got '" + t.Scalar() + "'");
    sc.name = alert::toString(sc.type);
    if (auto n = s["name"]; n) {
      if (Status st = needScalar(c, n, f + ".name"); !st) return st;
      if (n.Scalar().empty()) return c.error(n, f + ".name", "must not be empty");
      sc.name = n.Scalar();
    }
    if (!names.insert(sc.name).second)
      return c.error(s["name"] ? s["name"] : s, f + ".name",
                     "sink name '" + sc.name + "' is used twice (give each sink a name)");
    const bool http = sc.type != alert::SinkConfig::Type::command;
    if (auto n = s["url"]; n) {
      if (!http) return c.error(n, f + ".url", "not used by a command sink");
      if (Status st = needScalar(c, n, f + ".url"); !st) return st;
      std::string origin, path;
      if (!(n.Scalar().starts_with("http://") || n.Scalar().starts_with("https://")) ||
          !alert::splitUrl(n.Scalar(), origin, path))
        return c.error(n, f + ".url", "expected an http:// or https:// URL, got '" + n.Scalar() + "'");
      sc.url = n.Scalar();
    } else if (http) {
      return c.error(s, f + ".url", "required for a " + t.Scalar() + " sink");
    }
    if (auto n = s["command"]; n) {
      if (http) return c.error(n, f + ".command", "only for a command sink");
      if (!n.IsSequence() || n.size() == 0) return c.error(n, f + ".command", "expected a non-empty list (argv)");
      for (const auto& arg : n) {
        if (Status st = needScalar(c, arg, f + ".command"); !st) return st;
        sc.command.push_back(arg.Scalar());
      }
    } else if (!http) {
      return c.error(s, f + ".command", "required for a command sink (argv list)");
    }
    if (auto n = s["timeout"]; n) {
      if (Status st = readDuration(c, n, f + ".timeout", &sc.timeout); !st) return st;
      if (sc.timeout > Millis(300000)) return c.error(n, f + ".timeout", "must be at most 5m");
    }
    if (auto n = s["rate_limit"]; n) {
      std::size_t v = 0;
      if (Status st = readSize(c, n, f + ".rate_limit", 0, 1000000, &v); !st) return st;
      sc.rate_limit = static_cast<int>(v);
    }
    if (auto n = s["rate_interval"]; n)
      if (Status st = readDuration(c, n, f + ".rate_interval", &sc.rate_interval); !st) return st;
    if (auto n = s["headers"]; n) {
      if (!http) return c.error(n, f + ".headers", "only for webhook and alertmanager sinks");
      if (!n.IsMap()) return c.error(n, f + ".headers", "expected a mapping of header: value");
      for (const auto& kv : n) {
        // Sent as "name: value" lines: a name that is not an HTTP token (a space, a colon, a list
        // as key, which read as "") or a value with a line break would make a malformed request.
        if (Status st = needScalar(c, kv.first, f + ".headers"); !st) return st;
        const std::string name = kv.first.Scalar();
        if (!httpToken(name))
          return c.error(kv.first, f + ".headers." + name,
                         "not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)");
        if (Status st = needScalar(c, kv.second, f + ".headers." + name); !st) return st;
        if (kv.second.Scalar().find_first_of("\r\n") != std::string::npos)
          return c.error(kv.second, f + ".headers." + name, "a header value is one line");
        sc.headers[name] = kv.second.Scalar();
      }
    }
    if (auto n = s["generator_url"]; n) {
      if (Status st = needScalar(c, n, f + ".generator_url"); !st) return st;
      sc.generator_url = n.Scalar();
    }
    if (auto n = s["verify_tls"]; n)
      if (Status st = readBool(c, n, f + ".verify_tls", &sc.verify_tls); !st) return st;
    out.sinks.push_back(std::move(sc));
  }
  return Status::Ok();
}

Status parseRoot(const Checker& c, const YAML::Node& root, AgentConfig& cfg) {
  if (root.IsNull() || !root.IsDefined()) return Status::Ok();  // empty file: all defaults
  if (!root.IsMap()) return c.error(root, "(top level)", "expected a mapping of settings");
  if (Status s = checkKeys(c, root, "",
                           {"listen", "data_dir", "sampling", "metrics", "history", "http", "alerts", "events",
                            "web_config_file", "health", "jobs", "kubernetes"});
      !s)
    return s;

  if (auto n = root["listen"]; n) {
    std::vector<YAML::Node> items;
    if (n.IsScalar())
      items.push_back(n);
    else if (n.IsSequence())
      for (const auto& i : n) items.push_back(i);
    else
      return c.error(n, "listen", "expected an address or a list of addresses");
    if (items.empty()) return c.error(n, "listen", "needs at least one address");
    cfg.listen.clear();
    for (const auto& i : items) {
      if (Status s = needScalar(c, i, "listen"); !s) return s;
      auto a = parseListenAddress(i.Scalar());
      if (!a) return c.error(i, "listen", a.error());
      cfg.listen.push_back(*a);
    }
  }
  if (auto n = root["data_dir"]; n) {
    if (Status s = needScalar(c, n, "data_dir"); !s) return s;
    if (n.Scalar().empty()) return c.error(n, "data_dir", "must not be empty");
    cfg.data_dir = n.Scalar();
  }

  if (auto s = root["sampling"]; s) {
    if (!s.IsMap()) return c.error(s, "sampling", "expected a mapping");
    if (Status st =
            checkKeys(c, s, "sampling", {"fast_interval", "slow_interval", "call_deadline", "fields", "counters_file"});
        !st)
      return st;
    if (s["fields"] && s["counters_file"])
      return c.error(s["counters_file"], "sampling.counters_file", "give either fields or counters_file, not both");
    if (auto n = s["counters_file"]; n) {
      if (Status st = needScalar(c, n, "sampling.counters_file"); !st) return st;
      // Relative to the configuration's folder, so that the two travel together.
      std::filesystem::path p(n.Scalar());
      if (p.is_relative() && c.file() != "<defaults>") p = std::filesystem::path(c.file()).parent_path() / p;
      if (Status st = applyCountersFile(cfg, p.string()); !st)
        return c.error(n, "sampling.counters_file", st.message());
    }
    if (auto n = s["fast_interval"]; n) {
      if (Status st = readDuration(c, n, "sampling.fast_interval", &cfg.fast_interval); !st) return st;
      if (cfg.fast_interval < Millis(10) || cfg.fast_interval > Millis(3600000))
        return c.error(n, "sampling.fast_interval", "must be between 10ms and 1h");
    }
    if (auto n = s["slow_interval"]; n) {
      if (Status st = readDuration(c, n, "sampling.slow_interval", &cfg.slow_interval); !st) return st;
      if (cfg.slow_interval > Millis(24LL * 3600000))
        return c.error(n, "sampling.slow_interval", "must be at most 24h");
    }
    if (auto n = s["call_deadline"]; n) {
      if (Status st = readDuration(c, n, "sampling.call_deadline", &cfg.call_deadline); !st) return st;
      if (cfg.call_deadline < Millis(10) || cfg.call_deadline > Millis(60000))
        return c.error(n, "sampling.call_deadline", "must be between 10ms and 60s");
    }
    if (cfg.slow_interval < cfg.fast_interval)
      return c.error(s["slow_interval"] ? s["slow_interval"] : s, "sampling.slow_interval",
                     "must not be shorter than fast_interval");
    if (auto n = s["fields"]; n) {
      if (!n.IsSequence()) return c.error(n, "sampling.fields", "expected a list of field names");
      cfg.fields.clear();
      for (const auto& i : n) {
        if (Status st = needScalar(c, i, "sampling.fields"); !st) return st;
        const fields::Field* f = fields::findAny(i.Scalar());
        if (!f) return c.error(i, "sampling.fields", "unknown field '" + i.Scalar() + "' (see `gpuwarden fields`)");
        if (f->type == fields::Type::Label)
          return c.error(i, "sampling.fields", "'" + i.Scalar() + "' is a text field; only numeric fields are sampled");
        std::string key(f->key);
        if (std::find(cfg.fields.begin(), cfg.fields.end(), key) == cfg.fields.end()) cfg.fields.push_back(key);
      }
    }
  }

  if (auto m = root["metrics"]; m) {
    if (!m.IsMap()) return c.error(m, "metrics", "expected a mapping");
    if (Status st = checkKeys(c, m, "metrics", {"naming", "extra_labels", "xid_zero_hold", "host_label", "host_value"});
        !st)
      return st;
    if (auto n = m["host_label"]; n) {
      if (Status st = needScalar(c, n, "metrics.host_label"); !st) return st;
      const std::string name = n.Scalar();
      // Hostname and hostname are the namings' own; anything else must not be a label they set.
      if (!name.empty() && name != "Hostname" && name != "hostname" &&
          (!validLabelName(name) || name.size() > kMaxLabelNameBytes || kReservedLabels.count(name) ||
           !exporter::isValidExtraLabel(name, exporter::Naming::Dcgm) ||
           !exporter::isValidExtraLabel(name, exporter::Naming::Native)))
        return c.error(n, "metrics.host_label",
                       "'" + name.substr(0, 64) +
                           "' is not a label name gpuwarden may use for the host (a valid Prometheus label name that "
                           "gpuwarden does not set itself; \"\" for none)");
      cfg.host_label = name;
    }
    if (auto n = m["host_value"]; n) {
      if (Status st = needScalar(c, n, "metrics.host_value"); !st) return st;
      if (n.Scalar().empty() || n.Scalar().size() > kMaxLabelValueBytes)
        return c.error(
            n, "metrics.host_value",
            "must be 1 to " + std::to_string(kMaxLabelValueBytes) + " bytes (leave it out for the host name)");
      cfg.host_value = n.Scalar();
    }
    if (auto n = m["xid_zero_hold"]; n) {
      Millis d{};
      if (Status st = readDuration(c, n, "metrics.xid_zero_hold", &d); !st) return st;
      if (d > Millis(3600000))
        return c.error(n, "metrics.xid_zero_hold", "at most 1h (the first Xid of a code alerts this much later)");
      cfg.xid_zero_hold = d;
    }
    if (auto n = m["naming"]; n) {
      if (Status st = needScalar(c, n, "metrics.naming"); !st) return st;
      auto v = exporter::parseNaming(n.Scalar());
      if (!v) return c.error(n, "metrics.naming", "expected dcgm or native, got '" + n.Scalar() + "'");
      cfg.naming = *v;
    }
    if (auto n = m["extra_labels"]; n) {
      if (!n.IsMap()) return c.error(n, "metrics.extra_labels", "expected a mapping of label: value");
      if (n.size() > kMaxExtraLabels)
        return c.error(n, "metrics.extra_labels",
                       std::to_string(n.size()) + " labels; at most " + std::to_string(kMaxExtraLabels) +
                           " (every series of the page carries each of them)");
      for (const auto& kv : n) {
        if (Status st = needScalar(c, kv.first, "metrics.extra_labels"); !st) return st;
        const std::string name = kv.first.Scalar();
        if (name.size() > kMaxLabelNameBytes)
          return c.error(
              kv.first, "metrics.extra_labels",
              "label name of " + std::to_string(name.size()) + " bytes; at most " + std::to_string(kMaxLabelNameBytes));
        const std::string field = "metrics.extra_labels." + name;
        if (!validLabelName(name))
          return c.error(kv.first, field,
                         "not a valid Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with __)");
        if (kReservedLabels.count(name) || !exporter::isValidExtraLabel(name, exporter::Naming::Dcgm) ||
            !exporter::isValidExtraLabel(name, exporter::Naming::Native))
          return c.error(kv.first, field, "is set by gpuwarden itself");
        if (Status st = needScalar(c, kv.second, field); !st) return st;
        if (kv.second.Scalar().size() > kMaxLabelValueBytes)
          return c.error(kv.second, field,
                         "value of " + std::to_string(kv.second.Scalar().size()) + " bytes; at most " +
                             std::to_string(kMaxLabelValueBytes));
        if (cfg.host_label && name == *cfg.host_label)
          return c.error(kv.first, field, "is the host label (metrics.host_label)");
        cfg.extra_labels.emplace_back(name, kv.second.Scalar());
      }
    }
  }

  if (auto h = root["history"]; h) {
    if (!h.IsMap()) return c.error(h, "history", "expected a mapping");
    if (Status st = checkKeys(c, h, "history", {"enabled", "raw_retention", "downsampled_retention", "flush_interval"});
        !st)
      return st;
    if (auto n = h["enabled"]; n)
      if (Status st = readBool(c, n, "history.enabled", &cfg.history_enabled); !st) return st;
    if (auto n = h["raw_retention"]; n) {
      Millis d{};
      if (Status st = readDuration(c, n, "history.raw_retention", &d); !st) return st;
      auto hrs = toHours(c, n, "history.raw_retention", d);
      if (!hrs) return hrs.status();
      cfg.raw_retention = *hrs;
    }
    if (auto n = h["downsampled_retention"]; n) {
      Millis d{};
      if (Status st = readDuration(c, n, "history.downsampled_retention", &d); !st) return st;
      auto hrs = toHours(c, n, "history.downsampled_retention", d);
      if (!hrs) return hrs.status();
      cfg.downsampled_retention = *hrs;
    }
    if (cfg.downsampled_retention < cfg.raw_retention)
      return c.error(h["downsampled_retention"] ? h["downsampled_retention"] : h, "history.downsampled_retention",
                     "must not be shorter than raw_retention");
    if (auto n = h["flush_interval"]; n) {
      if (Status st = readDuration(c, n, "history.flush_interval", &cfg.flush_interval); !st) return st;
      if (cfg.flush_interval < Millis(100) || cfg.flush_interval > Millis(10000))
        return c.error(n, "history.flush_interval",
                       "must be between 100ms and 10s (at most 10 s of history is lost on a crash)");
    }
  }

  if (auto h = root["http"]; h) {
    if (!h.IsMap()) return c.error(h, "http", "expected a mapping");
    if (auto n = h["write_timeout"]; n)
      return c.error(n, "http.write_timeout",
                     "was folded into http.idle_timeout: a connection that makes no progress for that long, in "
                     "any phase, is closed");
    if (Status st = checkKeys(c, h, "http",
                              {"read_timeout", "idle_timeout", "max_header_bytes", "max_body_bytes", "max_connections",
                               "max_connections_per_ip", "max_requests_per_connection", "threads"});
        !st)
      return st;
    if (auto n = h["read_timeout"]; n) {
      if (Status st = readDuration(c, n, "http.read_timeout", &cfg.http.read_timeout); !st) return st;
      if (cfg.http.read_timeout < Millis(100) || cfg.http.read_timeout > Millis(300000))
        return c.error(n, "http.read_timeout", "must be between 100ms and 5m");
    }
    if (auto n = h["idle_timeout"]; n) {
      if (Status st = readDuration(c, n, "http.idle_timeout", &cfg.http.idle_timeout); !st) return st;
      if (cfg.http.idle_timeout < Millis(1000) || cfg.http.idle_timeout > Millis(300000))
        return c.error(n, "http.idle_timeout", "must be between 1s and 5m");
    }
    if (auto n = h["max_header_bytes"]; n)
      if (Status st = readSize(c, n, "http.max_header_bytes", 1024, 1 << 20, &cfg.http.max_header_bytes); !st)
        return st;
    if (auto n = h["max_body_bytes"]; n)
      if (Status st = readSize(c, n, "http.max_body_bytes", 0, 1 << 20, &cfg.http.max_body_bytes); !st) return st;
    if (auto n = h["max_connections"]; n)
      if (Status st = readSize(c, n, "http.max_connections", 1, 65536, &cfg.http.max_connections); !st) return st;
    if (auto n = h["max_connections_per_ip"]; n)
      if (Status st = readSize(c, n, "http.max_connections_per_ip", 1, 65536, &cfg.http.max_connections_per_ip); !st)
        return st;
    if (auto n = h["max_requests_per_connection"]; n) {
      std::size_t v = 0;
      if (Status st = readSize(c, n, "http.max_requests_per_connection", 1, 1000000, &v); !st) return st;
      cfg.http.max_requests_per_connection = static_cast<unsigned>(v);
    }
    if (auto n = h["threads"]; n) {
      std::size_t v = 0;
      if (Status st = readSize(c, n, "http.threads", 1, 64, &v); !st) return st;
      cfg.http.threads = static_cast<unsigned>(v);
    }
  }
  if (auto w = root["web_config_file"]; w) {
    if (Status st = needScalar(c, w, "web_config_file"); !st) return st;
    cfg.web_config_file = w.Scalar();
    if (cfg.web_config_file.empty()) return c.error(w, "web_config_file", "must name a file");
    // Relative to the configuration file, like the files a web configuration names.
    if (cfg.web_config_file.front() != '/' && c.file().find('/') != std::string::npos)
      cfg.web_config_file = c.file().substr(0, c.file().rfind('/') + 1) + cfg.web_config_file;
  }
  if (auto a = root["alerts"]; a)
    if (Status st = parseAlerts(c, a, cfg.alerts); !st) return st;
  if (auto e = root["events"]; e) {
    if (!e.IsMap()) return c.error(e, "events", "expected a mapping");
    if (Status st = checkKeys(c, e, "events", {"max_bytes"}); !st) return st;
    if (auto n = e["max_bytes"]; n)
      if (Status st = readSize(c, n, "events.max_bytes", 64 << 10, std::size_t{1} << 30, &cfg.events_max_bytes); !st)
        return st;
  }
  if (auto j = root["jobs"]; j) {
    if (!j.IsMap()) return c.error(j, "jobs", "expected a mapping");
    if (Status st = checkKeys(c, j, "jobs", {"hpc_job_mapping_dir", "epilog_kill_leftovers"}); !st) return st;
    if (auto n = j["hpc_job_mapping_dir"]; n) {
      if (Status st = needScalar(c, n, "jobs.hpc_job_mapping_dir"); !st) return st;
      cfg.jobs.hpc_job_mapping_dir = n.Scalar();
      if (!cfg.jobs.hpc_job_mapping_dir.empty() && cfg.jobs.hpc_job_mapping_dir.front() != '/')
        return c.error(n, "jobs.hpc_job_mapping_dir", "must be an absolute path");
    }
    if (auto n = j["epilog_kill_leftovers"]; n)
      if (Status st = readBool(c, n, "jobs.epilog_kill_leftovers", &cfg.jobs.epilog_kill_leftovers); !st) return st;
  }
  if (auto k = root["kubernetes"]; k) {
    if (!k.IsMap()) return c.error(k, "kubernetes", "expected a mapping");
    if (Status st = checkKeys(c, k, "kubernetes", {"pod_resources_socket", "refresh_interval", "timeout"}); !st)
      return st;
    auto& kc = cfg.kubernetes;
    if (auto n = k["pod_resources_socket"]; n) {
      if (Status st = needScalar(c, n, "kubernetes.pod_resources_socket"); !st) return st;
      kc.pod_resources_socket = n.Scalar();
      if (!kc.pod_resources_socket->empty() && kc.pod_resources_socket->front() != '/')
        return c.error(n, "kubernetes.pod_resources_socket", "must be an absolute path (or \"\" for off)");
      // A unix socket address holds at most 107 bytes of path.
      if (kc.pod_resources_socket->size() > 107)
        return c.error(n, "kubernetes.pod_resources_socket", "a unix socket path is at most 107 bytes");
    }
    if (auto n = k["refresh_interval"]; n) {
      if (Status st = readDuration(c, n, "kubernetes.refresh_interval", &kc.refresh_interval); !st) return st;
      if (kc.refresh_interval < Millis(100) || kc.refresh_interval > Millis(3600000))
        return c.error(n, "kubernetes.refresh_interval", "must be between 100ms and 1h");
    }
    if (auto n = k["timeout"]; n) {
      if (Status st = readDuration(c, n, "kubernetes.timeout", &kc.timeout); !st) return st;
      if (kc.timeout < Millis(10) || kc.timeout > Millis(60000))
        return c.error(n, "kubernetes.timeout", "must be between 10ms and 60s");
    }
  }
  if (auto h = root["health"]; h) {
    auto r = health::parseRuleConfigNode(h, c.file(), "health");
    if (!r) return r.status();
    cfg.health = std::move(r).value();
  }
  return Status::Ok();
}

std::string describeAlerts(const AlertSettings& a) {
  std::ostringstream o;
  o << a.effectiveRepeatInterval().count() << '|' << a.min_severity << '|' << a.runbook_base;
  for (const auto& s : a.sinks) {
    o << '|' << alert::toString(s.type) << ',' << s.name << ',' << s.url << ',' << s.timeout.count() << ','
      << s.rate_limit << ',' << s.rate_interval.count() << ',' << s.generator_url << ',' << s.verify_tls;
    for (const auto& x : s.command) o << ',' << x;
    for (const auto& [k, v] : s.headers) o << ',' << k << '=' << v;
  }
  return o.str();
}

}  // namespace

Millis AlertSettings::effectiveRepeatInterval() const {
  if (repeat_interval) return *repeat_interval;
  for (const auto& s : sinks)
    if (s.type == alert::SinkConfig::Type::alertmanager)
      return Millis(60000);  // under Alertmanager's 5 m resolve_timeout
  return std::chrono::duration_cast<Millis>(std::chrono::hours(4));
}

AgentConfig::AgentConfig() { listen.push_back(*parseListenAddress(":9400")); }

Result<Millis> parseDuration(std::string_view text) {
  const std::string original(text);
  if (text.empty()) return Status::Error("empty duration (expected e.g. 1s, 500ms, 10m, 24h, 30d)");
  std::int64_t total = 0;
  while (!text.empty()) {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range)
      return Status::Error("duration '" + original + "' is too large (at most 3650d)");
    // Each part is a count of its unit: from_chars takes a sign, which would let "1m-0s" through.
    if (ec != std::errc() || p == text.data() || text.front() == '-')
      return Status::Error("bad duration '" + original + "' (expected e.g. 1s, 500ms, 10m, 24h, 30d)");
    text.remove_prefix(static_cast<std::size_t>(p - text.data()));
    std::size_t n = 0;
    while (n < text.size() && std::isalpha(static_cast<unsigned char>(text[n]))) ++n;
    std::string_view unit = text.substr(0, n);
    text.remove_prefix(n);
    std::int64_t mult = 0;
    if (unit == "ms")
      mult = 1;
    else if (unit == "s")
      mult = 1000;
    else if (unit == "m")
      mult = 60000;
    else if (unit == "h")
      mult = 3600000;
    else if (unit == "d")
      mult = 86400000;
    else if (unit == "w")
      mult = 7 * 86400000LL;
    else if (unit.empty())
      return Status::Error("duration '" + original + "' needs a unit (ms, s, m, h, d, w)");
    else
      return Status::Error("unknown unit '" + std::string(unit) + "' in duration '" + original +
                           "' (ms, s, m, h, d, w)");
    if (v > kMaxDurationMs / mult || total > kMaxDurationMs - v * mult)
      return Status::Error("duration '" + original + "' is too large (at most 3650d)");
    total += v * mult;
  }
  if (total <= 0) return Status::Error("duration '" + original + "' must be positive");
  return Millis(total);
}

Result<ListenAddress> parseListenAddress(std::string_view text) {
  ListenAddress a;
  a.text = std::string(text);
  std::string_view host, port;
  if (text.starts_with("[")) {
    auto close = text.find(']');
    if (close == std::string_view::npos || close == 1 || close + 1 >= text.size() || text[close + 1] != ':')
      return Status::Error("expected [IPv6]:PORT, got '" + a.text + "'");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return Status::Error("expected HOST:PORT or :PORT, got '" + a.text + "'");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos)
      return Status::Error("an IPv6 address goes in brackets: [" + std::string(host) + "]:PORT");
  }
  // "[[]:9400" or "a]:80" named a host "[" or "a]", refused only when the agent could not bind.
  if (host.find_first_of("[]") != std::string_view::npos)
    return Status::Error("bad host '" + std::string(host) + "' in '" + a.text + "' (brackets only around IPv6)");
  int p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535)
    return Status::Error("bad port '" + std::string(port) + "' in '" + a.text + "' (0-65535)");
  a.port = p;
  a.host = host.empty() ? "0.0.0.0" : std::string(host);
  return a;
}

std::optional<std::string> nodeNameFromEnv() {
  const char* v = std::getenv("NODE_NAME");
  if (v == nullptr || *v == '\0') return std::nullopt;
  const std::string s(v);
  if (s.size() > kMaxLabelValueBytes) return std::nullopt;
  for (unsigned char ch : s)
    if (ch < 0x20 || ch == 0x7f) return std::nullopt;  // a control character: not a node's name
  return s;
}

Status applyCountersFile(AgentConfig& cfg, const std::string& path) {
  auto f = loadCountersFile(path);
  if (!f) return f.status();
  cfg.fields = f->fields;
  cfg.dcgm_driver_version_label = f->driver_version_label;
  cfg.counters_skipped = f->skipped;
  return Status::Ok();
}

Result<AgentConfig> parseConfig(std::string_view yaml, const std::string& filename) {
  Checker c(filename);
  AgentConfig cfg;
  cfg.source = filename;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return c.errorAtLine(e.mark.line + 1 > 0 ? e.mark.line + 1 : 1, "(syntax)", e.msg);
  }
  try {
    if (Status s = checkDuplicateKeys(c, root, ""); !s) return s;
    if (Status s = parseRoot(c, root, cfg); !s) return s;
  } catch (const YAML::Exception& e) {
    return c.errorAtLine(e.mark.line + 1 > 0 ? e.mark.line + 1 : 1, "(structure)", e.msg);
  }
  return cfg;
}

Result<AgentConfig> loadConfig(const std::string& path) {
  auto text = platform::readRegularFile(path, kMaxConfigBytes, "the configuration");
  if (!text) return text.status();
  return parseConfig(*text, path);
}

std::vector<std::string> restartOnlyChanges(const AgentConfig& a, const AgentConfig& b) {
  std::vector<std::string> out;
  std::vector<std::string> la, lb;
  for (const auto& l : a.listen) la.push_back(l.host + ":" + std::to_string(l.port));
  for (const auto& l : b.listen) lb.push_back(l.host + ":" + std::to_string(l.port));
  if (la != lb) out.emplace_back("listen");
  if (a.data_dir != b.data_dir) out.emplace_back("data_dir");
  if (a.jobs.hpc_job_mapping_dir != b.jobs.hpc_job_mapping_dir) out.emplace_back("jobs.hpc_job_mapping_dir");
  if (a.history_enabled != b.history_enabled) out.emplace_back("history.enabled");
  if (a.raw_retention != b.raw_retention) out.emplace_back("history.raw_retention");
  if (a.downsampled_retention != b.downsampled_retention) out.emplace_back("history.downsampled_retention");
  if (a.flush_interval != b.flush_interval) out.emplace_back("history.flush_interval");
  const auto& x = a.http;
  const auto& y = b.http;
  if (x.read_timeout != y.read_timeout || x.idle_timeout != y.idle_timeout ||
      x.max_header_bytes != y.max_header_bytes || x.max_body_bytes != y.max_body_bytes ||
      x.max_connections != y.max_connections || x.max_connections_per_ip != y.max_connections_per_ip ||
      x.max_requests_per_connection != y.max_requests_per_connection || x.threads != y.threads)
    out.emplace_back("http");
  if (a.web_config_file != b.web_config_file) out.emplace_back("web_config_file");
  if (describeAlerts(a.alerts) != describeAlerts(b.alerts)) out.emplace_back("alerts");
  if (a.events_max_bytes != b.events_max_bytes) out.emplace_back("events.max_bytes");
  if (a.xid_zero_hold != b.xid_zero_hold) out.emplace_back("metrics.xid_zero_hold");
  if (a.kubernetes.pod_resources_socket != b.kubernetes.pod_resources_socket ||
      a.kubernetes.refresh_interval != b.kubernetes.refresh_interval || a.kubernetes.timeout != b.kubernetes.timeout)
    out.emplace_back("kubernetes");
  return out;
}

}  // namespace gw::server
