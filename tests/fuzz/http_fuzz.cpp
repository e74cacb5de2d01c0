// libFuzzer target for the agent's request handling: each input is the raw bytes a client sends
// to the real HttpServer (libmicrohttpd underneath, our policy on top: methods, bodies, header and
// parameter counts, basic authentication, routing, responses built from a shared page) over a
// loopback socket. Invariants: the server never crashes, every answer is a well-formed status
// line, nothing is a 206 or a 500, no answer is larger than the largest resource, and the server still
// answers a plain request afterwards.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "server/basic_auth.h"
#include "server/http_server.h"

namespace {

using gw::server::HttpRequest;
using gw::server::HttpResponse;

std::unique_ptr<gw::server::HttpServer> g_server;
int g_port = 0;
std::shared_ptr<const std::string> g_page;
constexpr std::size_t kLargest = 64 * 1024 + 512;

int connectLoopback() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(g_port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// True when `out` ends exactly after one or more whole responses (each with a Content-Length).
bool wholeResponses(const std::string& out) {
  std::size_t at = 0;
  while (at < out.size()) {
    const std::size_t end = out.find("\r\n\r\n", at);
    if (end == std::string::npos) return false;
    std::size_t length = 0;
    const std::size_t cl = out.find("Content-Length: ", at);
    if (cl != std::string::npos && cl < end) length = std::strtoul(out.c_str() + cl + 16, nullptr, 10);
    at = end + 4 + length;
  }
  return at == out.size();
}

// Sends the bytes and half-closes; reads until the server closes, or the answers look whole and
// nothing more comes for a moment (a kept-alive connection), or a second of silence.
std::string roundTrip(const std::string& bytes) {
  const int fd = connectLoopback();
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string out;
  char buf[16384];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, !out.empty() && wholeResponses(out) ? 30 : 1000) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > 16 * kLargest) break;
  }
  ::close(fd);
  return out;
}

void checkAnswers(const std::string& out) {
  // Every response starts with "HTTP/1.x NNN"; a 206 would mean Range was served.
  for (std::size_t at = out.find("HTTP/1."); at != std::string::npos; at = out.find("HTTP/1.", at + 1)) {
    if (at + 12 > out.size()) break;
    if (out.compare(at + 8, 4, " 206") == 0) __builtin_trap();
    // None of the routes below fails: a 500 means a handler (or the JSON it writes) threw.
    if (out.compare(at + 8, 4, " 500") == 0) __builtin_trap();
  }
  if (!out.empty() && out.rfind("HTTP/1.", 0) != 0) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gw::server::HttpLimits limits;
  limits.read_timeout = std::chrono::milliseconds(300);
  limits.idle_timeout = std::chrono::milliseconds(1000);
  limits.max_header_bytes = 4096;
  limits.threads = 1;
  gw::server::WebConfig web;
  web.source = "fuzz";
  // Cost 4: a fresh password costs ~1 ms; "fuzz:fuzz" is the right one.
  web.basic_auth_users["fuzz"] = *gw::server::bcryptHash("fuzz", 4);
  auto s = gw::server::HttpServer::create(limits, web);
  if (!s) std::abort();
  g_server = std::move(s).value();
  g_page = std::make_shared<const std::string>(64 * 1024, 'm');
  g_server->get("/metrics", [](const HttpRequest&, HttpResponse& res) {
    res.shared_prefix = g_page;
    res.setContent("tail\n", "text/plain");
  });
  g_server->get("/api/v1/items/{}/latest", [](const HttpRequest& req, HttpResponse& res) {
    if (req.matches.size() != 2 || req.matches[1].empty()) __builtin_trap();
    gw::server::sendJson(res, nlohmann::json{{"id", req.matches[1]}});
  });
  g_server->get("/q", [](const HttpRequest& req, HttpResponse& res) {
    if (!gw::server::onlyParams(req, res, {"a", "b"})) return;
    if (req.user != "fuzz") __builtin_trap();  // only an authenticated request gets here
    gw::server::sendJson(res, nlohmann::json{{"a", req.param("a")}, {"b", req.param("b")}});
  });
  g_server->get("/healthz", [](const HttpRequest&, HttpResponse& res) { res.setContent("ok\n", "text/plain"); });
  gw::server::ListenAddress a;
  a.host = "127.0.0.1";
  a.port = 0;
  a.text = "127.0.0.1:0";
  if (!g_server->listen({a})) std::abort();
  const std::string bound = g_server->boundAddresses().at(0);
  g_port = std::atoi(bound.substr(bound.rfind(':') + 1).c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  checkAnswers(roundTrip(std::string(reinterpret_cast<const char*>(data), size)));
  return 0;
}
