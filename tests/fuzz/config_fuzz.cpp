// libFuzzer target for the three YAML configurations an operator writes, each input given to all
// three parsers (yaml-cpp underneath, the system's):
//  - the agent configuration (`serve --config`, server::parseConfig);
//  - the web configuration (TLS and basic auth, server::parseWebConfig), with a real certificate,
//    key and CA beside it (cert.pem, key.pem, ca.pem, made at start) so that TLS settings can pass;
//  - the rule configuration (health::parseRuleConfig).
// Invariants: an error names the file and a line of the input ("file:N: ..."); a configuration
// that parses holds only values inside the bounds docs/config.md and health.md give; an agent
// configuration renders back to YAML that parses to the same configuration, and a reload from it
// to itself changes nothing.
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "export/prometheus.h"
#include "fields/catalog.h"
#include "health/rules.h"
#include "server/basic_auth.h"
#include "server/config.h"
#include "server/web_config.h"

namespace {

using gw::server::AgentConfig;
using Ms = std::chrono::milliseconds;

[[noreturn]] void fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "config_fuzz: invariant broken: %s\n--- input ---\n%.*s\n", what.c_str(),
               static_cast<int>(input.size()), input.data());
  std::abort();
}

std::string_view g_input;
void check(bool ok, const std::string& what) {
  if (!ok) fail(what, g_input);
}

// "FILE:N: message" with 1 <= N <= lines + 1.
void checkLocated(const std::string& error, const std::string& file, std::size_t lines) {
  check(error.rfind(file + ":", 0) == 0, "error does not name the file: " + error);
  std::size_t p = file.size() + 1;
  std::size_t line = 0, digits = 0;
  while (p < error.size() && error[p] >= '0' && error[p] <= '9' && digits < 9) {
    line = line * 10 + static_cast<std::size_t>(error[p] - '0');
    ++p, ++digits;
  }
  check(digits > 0 && p + 1 < error.size() && error[p] == ':' && error[p + 1] == ' ',
        "error has no line number: " + error);
  check(line >= 1 && line <= lines + 1,
        "error names line " + std::to_string(line) + " of " + std::to_string(lines) + ": " + error);
  check(error.size() > p + 2, "error says nothing after its location: " + error);
}

bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// A double-quoted YAML scalar of a printable-ASCII string.
std::string q(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string ms(Ms d) { return std::to_string(d.count()) + "ms"; }

// The configuration as YAML; empty when a string in it is not printable ASCII (not rendered).
std::string render(const AgentConfig& c) {
  std::vector<const std::string*> strings = {&c.data_dir, &c.web_config_file, &c.alerts.min_severity};
  for (const auto& l : c.listen) strings.push_back(&l.host);
  for (const auto& [k, v] : c.extra_labels) strings.push_back(&k), strings.push_back(&v);
  for (const auto& s : c.alerts.sinks) {
    for (const auto* x : {&s.name, &s.url, &s.generator_url}) strings.push_back(x);
    for (const auto& a : s.command) strings.push_back(&a);
    for (const auto& [k, v] : s.headers) strings.push_back(&k), strings.push_back(&v);
  }
  for (const auto* s : strings)
    if (!printable(*s)) return "";
  std::ostringstream o;
  o << "listen:\n";
  for (const auto& l : c.listen)
    o << "  - "
      << q((l.host.find(':') != std::string::npos ? "[" + l.host + "]" : l.host) + ":" + std::to_string(l.port))
      << "\n";
  o << "data_dir: " << q(c.data_dir) << "\n";
  o << "sampling:\n  fast_interval: " << ms(c.fast_interval) << "\n  slow_interval: " << ms(c.slow_interval)
    << "\n  call_deadline: " << ms(c.call_deadline) << "\n";
  if (!c.fields.empty()) {
    o << "  fields:\n";
    for (const auto& f : c.fields) o << "    - " << q(f) << "\n";
  }
  o << "metrics:\n  naming: " << gw::exporter::namingName(c.naming) << "\n";
  if (!c.extra_labels.empty()) {
    o << "  extra_labels:\n";
    for (const auto& [k, v] : c.extra_labels) o << "    " << q(k) << ": " << q(v) << "\n";
  }
  o << "history:\n  enabled: " << (c.history_enabled ? "true" : "false")
    << "\n  raw_retention: " << c.raw_retention.count()
    << "h\n  downsampled_retention: " << c.downsampled_retention.count()
    << "h\n  flush_interval: " << ms(c.flush_interval) << "\n";
  const auto& h = c.http;
  o << "http:\n  read_timeout: " << ms(h.read_timeout) << "\n  idle_timeout: " << ms(h.idle_timeout)
    << "\n  max_header_bytes: " << h.max_header_bytes << "\n  max_body_bytes: " << h.max_body_bytes
    << "\n  max_connections: " << h.max_connections << "\n  max_connections_per_ip: " << h.max_connections_per_ip
    << "\n  max_requests_per_connection: " << h.max_requests_per_connection << "\n  threads: " << h.threads << "\n";
  if (!c.web_config_file.empty()) o << "web_config_file: " << q(c.web_config_file) << "\n";
  o << "alerts:\n  min_severity: " << q(c.alerts.min_severity) << "\n";
  if (c.alerts.repeat_interval) o << "  repeat_interval: " << ms(*c.alerts.repeat_interval) << "\n";
  if (!c.alerts.sinks.empty()) {
    o << "  sinks:\n";
    for (const auto& s : c.alerts.sinks) {
      o << "    - type: " << gw::alert::toString(s.type) << "\n      name: " << q(s.name) << "\n";
      if (!s.url.empty()) o << "      url: " << q(s.url) << "\n";
      if (!s.command.empty()) {
        o << "      command:\n";
        for (const auto& a : s.command) o << "        - " << q(a) << "\n";
      }
      o << "      timeout: " << ms(s.timeout) << "\n      rate_limit: " << s.rate_limit
        << "\n      rate_interval: " << ms(s.rate_interval) << "\n";
      if (!s.headers.empty()) {
        o << "      headers:\n";
        for (const auto& [k, v] : s.headers) o << "        " << q(k) << ": " << q(v) << "\n";
      }
      if (!s.generator_url.empty()) o << "      generator_url: " << q(s.generator_url) << "\n";
      o << "      verify_tls: " << (s.verify_tls ? "true" : "false") << "\n";
    }
  }
  o << "events:\n  max_bytes: " << c.events_max_bytes << "\n";
  return o.str();
}

bool same(const AgentConfig& a, const AgentConfig& b) {
  if (a.listen.size() != b.listen.size()) return false;
  for (std::size_t i = 0; i < a.listen.size(); ++i)
    if (a.listen[i].host != b.listen[i].host || a.listen[i].port != b.listen[i].port) return false;
  if (a.alerts.sinks.size() != b.alerts.sinks.size()) return false;
  for (std::size_t i = 0; i < a.alerts.sinks.size(); ++i) {
    const auto &x = a.alerts.sinks[i], &y = b.alerts.sinks[i];
    if (x.type != y.type || x.name != y.name || x.url != y.url || x.headers != y.headers || x.command != y.command ||
        x.timeout != y.timeout || x.rate_limit != y.rate_limit || x.rate_interval != y.rate_interval ||
        x.generator_url != y.generator_url || x.verify_tls != y.verify_tls)
      return false;
  }
  const auto &h = a.http, &k = b.http;
  return a.data_dir == b.data_dir && a.fast_interval == b.fast_interval && a.slow_interval == b.slow_interval &&
         a.call_deadline == b.call_deadline && a.fields == b.fields && a.naming == b.naming &&
         a.extra_labels == b.extra_labels && a.history_enabled == b.history_enabled &&
         a.raw_retention == b.raw_retention && a.downsampled_retention == b.downsampled_retention &&
         a.flush_interval == b.flush_interval && h.read_timeout == k.read_timeout && h.idle_timeout == k.idle_timeout &&
         h.max_header_bytes == k.max_header_bytes && h.max_body_bytes == k.max_body_bytes &&
         h.max_connections == k.max_connections && h.max_connections_per_ip == k.max_connections_per_ip &&
         h.max_requests_per_connection == k.max_requests_per_connection && h.threads == k.threads &&
         a.web_config_file == b.web_config_file && a.alerts.repeat_interval == b.alerts.repeat_interval &&
         a.alerts.min_severity == b.alerts.min_severity && a.events_max_bytes == b.events_max_bytes;
}

bool httpToken(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

bool inRange(Ms v, Ms lo, Ms hi) { return v >= lo && v <= hi; }

void checkAgentConfig(const AgentConfig& c) {
  check(!c.listen.empty(), "no listen address");
  for (const auto& l : c.listen) check(l.port >= 0 && l.port <= 65535 && !l.host.empty(), "a bad listen address");
  check(!c.data_dir.empty(), "an empty data_dir");
  check(inRange(c.fast_interval, Ms(10), Ms(3600000)), "sampling.fast_interval out of 10ms..1h");
  check(c.slow_interval >= c.fast_interval && c.slow_interval <= Ms(86400000), "sampling.slow_interval out of range");
  check(inRange(c.call_deadline, Ms(10), Ms(60000)), "sampling.call_deadline out of 10ms..60s");
  for (const auto& f : c.fields) {
    const auto* field = gw::fields::findByKey(f);
    check(field && field->type != gw::fields::Type::Label, "sampling.fields holds '" + f + "'");
  }
  check(c.extra_labels.size() <= gw::server::kMaxExtraLabels, "too many extra labels");
  std::set<std::string> labels;
  for (const auto& [k, v] : c.extra_labels) {
    check(k.size() <= gw::server::kMaxLabelNameBytes && v.size() <= gw::server::kMaxLabelValueBytes,
          "an extra label over its size");
    check(gw::exporter::isValidExtraLabel(k, gw::exporter::Naming::Dcgm) &&
              gw::exporter::isValidExtraLabel(k, gw::exporter::Naming::Native),
          "extra label '" + k + "' is not valid");
    check(labels.insert(k).second, "extra label '" + k + "' twice");
  }
  check(c.raw_retention.count() > 0 && c.downsampled_retention >= c.raw_retention, "history retentions out of order");
  check(inRange(c.flush_interval, Ms(100), Ms(10000)), "history.flush_interval out of 100ms..10s");
  const auto& h = c.http;
  check(inRange(h.read_timeout, Ms(100), Ms(300000)) && inRange(h.idle_timeout, Ms(1000), Ms(300000)),
        "http timeouts out of range");
  check(h.max_header_bytes >= 1024 && h.max_header_bytes <= (1u << 20) && h.max_body_bytes <= (1u << 20),
        "http byte limits out of range");
  check(h.max_connections >= 1 && h.max_connections <= 65536 && h.max_connections_per_ip >= 1 &&
            h.max_connections_per_ip <= 65536,
        "http connection limits out of range");
  check(h.max_requests_per_connection >= 1 && h.max_requests_per_connection <= 1000000 && h.threads >= 1 &&
            h.threads <= 64,
        "http request or thread limits out of range");
  check(gw::health::parseSeverity(c.alerts.min_severity).has_value(), "alerts.min_severity is not a severity");
  if (c.alerts.repeat_interval) check(*c.alerts.repeat_interval >= Ms(10000), "alerts.repeat_interval under 10s");
  std::set<std::string> names;
  for (const auto& s : c.alerts.sinks) {
    check(!s.name.empty() && names.insert(s.name).second, "a sink name empty or used twice");
    const bool http = s.type != gw::alert::SinkConfig::Type::command;
    check(http ? (s.url.starts_with("http://") || s.url.starts_with("https://")) && s.command.empty()
               : s.url.empty() && !s.command.empty() && s.headers.empty(),
          "sink '" + s.name + "' has the wrong kind of target");
    check(s.timeout > Ms(0) && s.timeout <= Ms(300000) && s.rate_interval > Ms(0), "a sink duration out of range");
    check(s.rate_limit >= 0 && s.rate_limit <= 1000000, "a sink rate_limit out of range");
    for (const auto& [k, v] : s.headers) {
      check(httpToken(k), "sink '" + s.name + "' sends a header named '" + k + "', not an HTTP token");
      check(v.find_first_of("\r\n") == std::string::npos, "sink '" + s.name + "' sends a header value with a newline");
    }
  }
  check(c.events_max_bytes >= (64u << 10) && c.events_max_bytes <= (std::size_t{1} << 30),
        "events.max_bytes out of range");
  check(gw::server::restartOnlyChanges(c, c).empty(), "a reload to the same configuration changes something");
}

void fuzzAgentConfig(std::string_view text, std::size_t lines) {
  auto r = gw::server::parseConfig(text, "agent.yaml");
  if (!r) return checkLocated(r.error(), "agent.yaml", lines);
  checkAgentConfig(*r);
  const std::string again = render(*r);
  if (again.empty()) return;
  auto r2 = gw::server::parseConfig(again, "agent.yaml");
  check(static_cast<bool>(r2), "the rendered configuration does not parse: " + (r2 ? "" : r2.error()) + "\n" + again);
  check(same(*r, *r2), "the rendered configuration parses to another one:\n" + again);
}

std::string g_dir;  // holds cert.pem, key.pem, ca.pem
const std::set<std::string> kHeaders = {"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
                                        "X-XSS-Protection", "Strict-Transport-Security"};

void fuzzWebConfig(std::string_view text, std::size_t lines) {
  const std::string path = g_dir + "/web.yml";
  auto r = gw::server::parseWebConfig(text, path);
  if (!r) return checkLocated(r.error(), path, lines);
  check(r->source == path, "the web configuration does not name its file");
  if (r->tls) {
    const auto& t = *r->tls;
    check(!t.cert_pem.empty() && !t.key_pem.empty(), "TLS without a certificate or key");
    check(t.priorities.starts_with("NORMAL:-VERS-ALL:+VERS-TLS1."), "TLS priorities allow no version");
    check(t.client_auth == gw::server::ClientAuth::None || !t.client_ca_pem.empty(),
          "client certificates verified against no CA");
  }
  for (const auto& [user, hash] : r->basic_auth_users) {
    check(!user.empty() && user.find(':') == std::string::npos, "a basic auth user '" + user + "'");
    check(static_cast<bool>(gw::server::checkBcryptHash(hash)), "a basic auth hash that is not bcrypt");
  }
  for (const auto& [name, value] : r->headers) {
    check(kHeaders.count(name) == 1, "a response header '" + name + "' that may not be set");
    check(value.size() <= 1024 && value.find_first_of("\r\n") == std::string::npos, "a header value of two lines");
  }
}

void fuzzRuleConfig(std::string_view text, std::size_t lines) {
  auto r = gw::health::parseRuleConfig(text, "rules.yaml");
  if (!r) return checkLocated(r.error(), "rules.yaml", lines);
  const auto& c = *r;
  for (const auto& d : c.disabled) {
    const auto& names = gw::health::ruleNames();
    check(std::find(names.begin(), names.end(), d) != names.end(), "disabled names an unknown rule '" + d + "'");
  }
  for (double v : {c.load_util,
                   c.full_load_util,
                   c.idle_util,
                   c.gpu_temp_c,
                   c.memory_temp_c,
                   c.thermal_clock_drop,
                   c.low_power_fraction,
                   c.idle_power_w,
                   c.power_cap_fraction,
                   c.retired_pages_max,
                   c.remap_uncorrectable_max,
                   c.sbe_rise_max,
                   c.nvlink_error_max,
                   c.pstate_slow,
                   c.fan_min_temp_c,
                   c.starvation_util_max,
                   c.swing_low,
                   c.swing_high,
                   c.starvation_fraction,
                   c.straggler_idle_util,
                   c.straggler_peer_util,
                   c.inference_spread,
                   c.leftover_min_gib})
    check(!std::isnan(v) && v >= 0, "a threshold that is negative or not a number");
  // Windows are read from the per-GPU ring: none longer than it holds.
  for (std::int64_t w :
       {c.sbe_window_ms, c.pcie_replay_window_ms, c.nvlink_window_ms, c.starvation_window_ms, c.leftover_window_ms})
    check(w > 0 && w <= static_cast<std::int64_t>(gw::health::RuleEngine::kRingCapacity *
                                                  gw::health::RuleEngine::kMinSampleGapMs),
          "a window longer than the history holds");
  check(c.swing_low < c.swing_high && c.swing_high <= c.starvation_util_max, "a starvation band out of order");
  for (const auto& [gpu, cls] : c.workload_by_gpu)
    check((gpu.starts_with("GPU-") || (!gpu.empty() && gpu.find_first_not_of("0123456789") == std::string::npos)) &&
              cls != gw::health::WorkloadClass::kUnknown,
          "a workload_by_gpu entry that names no GPU or no class");
  for (double v : c.pcie_replay_per_min)
    check(!std::isnan(v) && v >= 0, "a pcie_replay_per_min entry that is negative or not a number");
  for (std::int64_t v :
       {c.temperature_hold_ms, c.thermal_hold_ms,  c.low_power_hold_ms, c.idle_power_hold_ms, c.power_slowdown_hold_ms,
        c.power_cap_hold_ms,   c.memory_hold_ms,   c.sbe_window_ms,     c.pcie_hold_ms,       c.pcie_replay_window_ms,
        c.nvlink_hold_ms,      c.nvlink_window_ms, c.pstate_hold_ms,    c.fan_hold_ms,        c.starvation_window_ms,
        c.straggler_hold_ms,   c.zombie_hold_ms,   c.lost_hold_ms,      c.stalled_hold_ms,    c.gpu_count_hold_ms,
        c.persistence_hold_ms, c.xid_active_ms,    c.fabric_hold_ms})
    check(v >= 0, "a negative time");
  check(c.straggler_min_peers >= 0 && c.expected_gpus >= 0 && c.app_xid_repeat >= 0, "a negative count");
}

void writeFile(const std::string& path, const std::string& data) { std::ofstream(path, std::ios::binary) << data; }

// A self-signed ECDSA certificate (also a CA) and its key, so that TLS settings can pass.
void makeCertificate() {
  gnutls_x509_privkey_t key = nullptr;
  gnutls_x509_crt_t crt = nullptr;
  gnutls_datum_t cert_pem{}, key_pem{};
  const std::time_t now = std::time(nullptr);
  if (gnutls_x509_privkey_init(&key) < 0 ||
      gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0 ||
      gnutls_x509_crt_init(&crt) < 0 || gnutls_x509_crt_set_version(crt, 3) < 0 ||
      gnutls_x509_crt_set_serial(crt, "\x01", 1) < 0 || gnutls_x509_crt_set_activation_time(crt, now - 3600) < 0 ||
      gnutls_x509_crt_set_expiration_time(crt, now + 86400) < 0 ||
      gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "localhost", 9) < 0 ||
      gnutls_x509_crt_set_key(crt, key) < 0 || gnutls_x509_crt_set_ca_status(crt, 1) < 0 ||
      gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0 ||
      gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &cert_pem) < 0 ||
      gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &key_pem) < 0) {
    std::fprintf(stderr, "config_fuzz: cannot make a test certificate\n");
    std::abort();
  }
  const std::string cert(reinterpret_cast<char*>(cert_pem.data), cert_pem.size);
  writeFile(g_dir + "/cert.pem", cert);
  writeFile(g_dir + "/ca.pem", cert);
  writeFile(g_dir + "/key.pem", std::string(reinterpret_cast<char*>(key_pem.data), key_pem.size));
  gnutls_free(cert_pem.data);
  gnutls_free(key_pem.data);
  gnutls_x509_crt_deinit(crt);
  gnutls_x509_privkey_deinit(key);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/gw-config-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) std::abort();
  g_dir = tmpl;
  makeCertificate();
  writeFile(g_dir + "/not-pem.txt", "not a certificate\n");
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_dir, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  g_input = text;
  const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) +
                            static_cast<std::size_t>(std::count(text.begin(), text.end(), '\r'));
  fuzzAgentConfig(text, lines);
  fuzzWebConfig(text, lines);
  fuzzRuleConfig(text, lines);
  return 0;
}
