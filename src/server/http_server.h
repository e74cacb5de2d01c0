// The HTTP edge: libmicrohttpd (Debian's libmicrohttpd12) does the protocol, this file the policy.
// Why libmicrohttpd (docs/design.md, "The HTTP edge"): it is event-driven, so an idle or trickling
// connection costs a socket and a few KiB of its memory pool, never a thread; it has connection
// limits in all and per client address, a memory cap per connection that bounds the request head,
// and TLS through GnuTLS; and it implements no Range, so no response is ever larger than its
// resource. Handlers see only the plain HttpRequest/HttpResponse below.
//
// Policy: GET and HEAD only (405), no request body beyond max_body_bytes (413, connection closed),
// a bad request closes its connection, every error is a JSON document, and with a web
// configuration every endpoint but /healthz needs basic authentication (401) and the port speaks
// only TLS.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "server/http_settings.h"

namespace gw::server {

struct HttpRequest {
  std::string method;                                        // GET or HEAD
  std::string path;                                          // decoded, without the query
  std::vector<std::pair<std::string, std::string>> params;   // decoded query, in order
  std::vector<std::pair<std::string, std::string>> headers;  // as sent
  std::vector<std::string> matches;                          // [0] the path, then one per {} segment of the route
  std::string user;                                          // the authenticated user; empty without authentication

  bool hasParam(std::string_view name) const;
  std::string param(std::string_view name) const;  // the first value, or ""
  std::size_t paramCount(std::string_view name) const;
  std::string header(std::string_view name) const;  // case-insensitive; "" when absent
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  // Sent before `body` without a copy: a page shared between scrapes (/metrics).
  std::shared_ptr<const std::string> shared_prefix;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  void setContent(std::string text, std::string type) {
    body = std::move(text);
    content_type = std::move(type);
  }
  void setHeader(std::string name, std::string value) { headers.emplace_back(std::move(name), std::move(value)); }
};

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&)>;

  // Fails when the web configuration cannot be used (bad certificate or key).
  static Result<std::unique_ptr<HttpServer>> create(const HttpLimits& limits, const WebConfig& web = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // A GET (and HEAD) route: a path where each "{}" segment matches one non-empty segment, handed
  // to the handler in request.matches. Register before listen().
  void get(const std::string& pattern, Handler handler);

  // Binds every address (all or nothing) and starts serving in background threads.
  Status listen(const std::vector<ListenAddress>& addresses);
  // "127.0.0.1:9400" per bound socket, with the real port when 0 was asked for.
  std::vector<std::string> boundAddresses() const;
  bool tls() const;
  void stop();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Writes {"error": message, "field": field} with the status.
void jsonError(HttpResponse& res, int status, const std::string& message, const std::string& field = "");
// Writes the JSON document (and a newline) with the status.
void sendJson(HttpResponse& res, const nlohmann::json& j, int status = 200);
// Refuses (400) a parameter the endpoint does not know, or one given twice, so that a typo is
// never silently ignored. False when it answered.
bool onlyParams(const HttpRequest& req, HttpResponse& res, std::initializer_list<const char*> known);

}  // namespace gw::server
