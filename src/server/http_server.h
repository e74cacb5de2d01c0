// The HTTP front: cpp-httplib for parsing and routing, with our own connection handling so that
// the limits hold: a bounded pool of connection threads (more connections than
// http.max_connections get an immediate 503), a deadline for the whole request head
// (a slowloris client is cut off after http.read_timeout however slowly it trickles), a cap on
// header bytes (431) and body bytes (413), keep-alive with an idle timeout, and JSON errors for
// everything (404 unknown path, 405 anything but GET/HEAD).
#pragma once

#include <atomic>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "server/config.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace gw::server {

struct HttpStats {
  std::uint64_t requests = 0;
  std::uint64_t rejected_connections = 0;  // over max_connections
  std::uint64_t active_connections = 0;
};

class HttpServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  explicit HttpServer(const HttpLimits& limits);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // GET (and HEAD) handler for a regex pattern; register before listen().
  void get(const std::string& pattern, Handler handler);

  // Binds every address (all or nothing) and starts serving in background threads.
  Status listen(const std::vector<ListenAddress>& addresses);
  // "127.0.0.1:9400" per bound socket, with the real port when 0 was asked for.
  std::vector<std::string> boundAddresses() const;
  void stop();
  HttpStats stats() const;

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
  std::vector<std::pair<std::string, Handler>> routes_;
  struct Listener;
  std::vector<std::unique_ptr<Listener>> listeners_;
};

// Writes {"error": message, "field": field} with the status.
void jsonError(httplib::Response& res, int status, const std::string& message, const std::string& field = "");
// Writes the JSON document (and a newline) with the status.
void sendJson(httplib::Response& res, const nlohmann::json& j, int status = 200);
// Refuses (400) a parameter the endpoint does not know, or one given twice, so that a typo is
// never silently ignored. False when it answered.
bool onlyParams(const httplib::Request& req, httplib::Response& res, std::initializer_list<const char*> known);
// The client's Accept-Encoding (the server hides it from cpp-httplib so that it never
// compresses on its own; /metrics compresses and caches itself).
std::string acceptEncoding(const httplib::Request& req);

}  // namespace gw::server
