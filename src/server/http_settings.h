// What the HTTP edge is told: where to listen, its limits, and the web configuration (TLS and
// basic authentication, docs/config.md "Web configuration"). Plain data, shared by the agent's
// configuration and the server, so that the server builds without the rest of the agent.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace gw::server {

struct ListenAddress {
  std::string host;  // "0.0.0.0" for ":9400", "::1" for "[::1]:9400"
  int port = 9400;   // 0 = any free port (tests)
  std::string text;  // as written
};

struct HttpLimits {
  // The whole request head must arrive within this: a client trickling a byte at a time
  // (slowloris) is cut off, however slowly it trickles.
  std::chrono::milliseconds read_timeout{5000};
  // A connection that makes no progress (no byte read or written) for this long is closed, in
  // any phase: an idle keep-alive, a client that does not read its response.
  std::chrono::milliseconds idle_timeout{10000};
  std::size_t max_header_bytes = 8 * 1024;  // request line + headers; over it: 431 (or 414)
  std::size_t max_body_bytes = 4096;        // GET/HEAD only; over it: 413 and the connection closes
  // Open connections in all (idle ones included: they cost a socket and a few KiB, no thread);
  // past it new connections are closed at once. Per client address, so that one peer cannot
  // take every slot from the scrapers.
  std::size_t max_connections = 8192;
  std::size_t max_connections_per_ip = 2048;
  unsigned max_requests_per_connection = 1000;
  unsigned threads = 4;  // event-loop threads; request handlers run on them (4: the p99 at 16 clients)
};

enum class ClientAuth { None, VerifyIfGiven, RequireAndVerify };

// tls_server_config of a Prometheus exporter's --web.config.file, read and checked.
struct TlsSettings {
  std::string cert_file, key_file, client_ca_file;
  std::string cert_pem, key_pem, client_ca_pem;  // the files' contents
  ClientAuth client_auth = ClientAuth::None;
  std::string priorities;  // GnuTLS priority string from min_version / max_version
};

struct WebConfig {
  std::string source;  // the file, for messages; empty: no web configuration
  std::optional<TlsSettings> tls;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
  std::map<std::string, std::string> headers;           // http_server_config.headers
  bool active() const { return tls.has_value() || !basic_auth_users.empty() || !headers.empty(); }
};

}  // namespace gw::server
