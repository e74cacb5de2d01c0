#include "server/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "platform/log.h"

namespace gw::server {

using platform::logLine;
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kStashedAcceptEncoding = "X-Gw-Accept-Encoding";
constexpr const char* kHeaderTooLarge = "X-Gw-Header-Too-Large";
constexpr const char* kBodyTooLarge = "X-Gw-Body-Too-Large";

// Set while the accept thread runs a connection task only to refuse it (pool full).
thread_local bool tl_reject = false;

int msLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

void addressOf(const sockaddr_storage& ss, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {0};
  char serv[NI_MAXSERV] = {0};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&ss), sizeof(ss), host, sizeof(host), serv, sizeof(serv),
                  NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

// A socket stream with a deadline and a byte budget per request, so that neither a slow nor a
// verbose client can hold a connection thread or memory beyond the limits.
class LimitedStream : public httplib::Stream {
 public:
  LimitedStream(int sock, const HttpLimits& limits, const std::atomic<bool>& stopping)
      : sock_(sock), limits_(limits), stopping_(stopping) {}

  void beginRequest() {
    deadline_ = Clock::now() + limits_.read_timeout;
    // The head may exceed max_header_bytes a little so that we can answer 431 rather than
    // dropping the connection; past this hard cap the request is cut off.
    budget_ = limits_.max_header_bytes * 2 + 1024 + limits_.max_body_bytes;
  }

  // Waits for the next request; false on idle timeout, stop, or peer close.
  bool waitForRequest(std::chrono::milliseconds timeout) {
    if (pos_ < len_) return true;
    auto deadline = Clock::now() + timeout;
    while (!stopping_.load()) {
      int slice = std::min(msLeft(deadline), 100);
      pollfd p{sock_, POLLIN, 0};
      int r = ::poll(&p, 1, slice);
      if (r > 0) return (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
      if (r < 0 && errno != EINTR) return false;
      if (Clock::now() >= deadline) return false;
    }
    return false;
  }

  bool is_readable() const override { return pos_ < len_ || pollIn(0); }
  bool is_writable() const override {
    pollfd p{sock_, POLLOUT, 0};
    return ::poll(&p, 1, static_cast<int>(limits_.write_timeout.count())) > 0 && (p.revents & POLLOUT);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (size == 0) return 0;
    if (pos_ >= len_) {
      if (budget_ == 0) return -1;
      // Usually the bytes are already there (waitForRequest saw them): try first, and wait until
      // the request's deadline only when there is nothing yet, waking to notice a stop.
      ssize_t n = ::recv(sock_, buf_, std::min(sizeof(buf_), budget_), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        for (;;) {
          if (stopping_.load()) return -1;
          int left = msLeft(deadline_);
          if (left == 0) return -1;
          if (pollIn(std::min(left, 100))) break;
        }
        n = ::recv(sock_, buf_, std::min(sizeof(buf_), budget_), 0);
      }
      if (n <= 0) return -1;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
      budget_ -= len_;
    }
    size_t n = std::min(size, len_ - pos_);
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    auto deadline = Clock::now() + limits_.write_timeout;
    for (;;) {
      ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return n;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
      pollfd p{sock_, POLLOUT, 0};
      int left = msLeft(deadline);
      if (left == 0 || ::poll(&p, 1, left) <= 0) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) addressOf(ss, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) addressOf(ss, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  bool pollIn(int ms) const {
    pollfd p{sock_, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
  }

  int sock_;
  const HttpLimits& limits_;
  const std::atomic<bool>& stopping_;
  Clock::time_point deadline_{};
  size_t budget_ = 0;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
};

void sendAndClose(int sock, const std::string& text) {
  (void)::send(sock, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

}  // namespace

// What every listener shares: the limits, the connection pool and the counters.
struct HttpServer::Shared {
  explicit Shared(const HttpLimits& l) : limits(l) {}
  HttpLimits limits;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> requests{0}, rejected{0}, active{0};

  // A pool of connection threads, grown on demand up to max_connections; a connection that
  // would exceed it is refused at once (on the accept thread) with a 503.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  std::vector<std::thread> threads;
  size_t busy = 0, idle = 0;
  bool shutdown = false;

  void enqueue(std::function<void()> fn) {
    {
      std::unique_lock lock(mu);
      if (!shutdown && busy + queue.size() < limits.max_connections) {
        queue.push_back(std::move(fn));
        if (idle < queue.size() && threads.size() < limits.max_connections) threads.emplace_back([this] { work(); });
        cv.notify_one();
        return;
      }
    }
    rejected.fetch_add(1);
    tl_reject = true;
    fn();  // runs process_and_close_socket, which refuses the connection without reading it
    tl_reject = false;
  }

  void work() {
    std::unique_lock lock(mu);
    for (;;) {
      ++idle;
      cv.wait(lock, [&] { return shutdown || !queue.empty(); });
      --idle;
      if (queue.empty()) return;  // shutdown
      auto fn = std::move(queue.front());
      queue.pop_front();
      ++busy;
      lock.unlock();
      fn();
      lock.lock();
      --busy;
    }
  }

  void stopPool() {
    {
      std::lock_guard lock(mu);
      shutdown = true;
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
    threads.clear();
  }
};

namespace {

// Forwards a listener's connections to the shared pool; shutting a listener down leaves the pool.
class PoolProxy : public httplib::TaskQueue {
 public:
  explicit PoolProxy(HttpServer::Shared* s) : s_(s) {}
  void enqueue(std::function<void()> fn) override { s_->enqueue(std::move(fn)); }
  void shutdown() override {}

 private:
  HttpServer::Shared* s_;
};

class LimitedServer : public httplib::Server {
 public:
  explicit LimitedServer(HttpServer::Shared* s) : s_(s) {
    new_task_queue = [s] { return new PoolProxy(s); };
  }
  // cpp-httplib listens with a backlog of 5: a burst of connections (64 scrapers, a load
  // balancer's health checks) would see SYNs dropped and retried a second later. Linux lets
  // listen() be called again on a listening socket to change it.
  void widenBacklog() { ::listen(svr_sock_, SOMAXCONN); }

 private:
  bool process_and_close_socket(socket_t sock) override {
    if (tl_reject) {
      static const std::string kBody = R"({"error":"too many connections; try again later","field":""})";
      sendAndClose(sock, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(kBody.size()) + "\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" + kBody);
      return true;
    }
    s_->active.fetch_add(1);
    int one = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    LimitedStream strm(sock, s_->limits, s_->stopping);
    bool ok = true;
    for (unsigned count = 0; count < s_->limits.max_requests_per_connection && !s_->stopping.load(); ++count) {
      if (!strm.waitForRequest(count == 0 ? s_->limits.read_timeout : s_->limits.idle_timeout)) break;
      strm.beginRequest();
      bool last = count + 1 >= s_->limits.max_requests_per_connection;
      bool connection_closed = false;
      const size_t max_head = s_->limits.max_header_bytes;
      const size_t max_body = s_->limits.max_body_bytes;
      bool drop = false;
      ok = process_request(strm, last, connection_closed, [max_head, max_body, &drop](httplib::Request& req) {
        // Hide Accept-Encoding from cpp-httplib (it would compress on its own); remember it.
        auto it = req.headers.find("Accept-Encoding");
        if (it != req.headers.end()) {
          std::string v = it->second;
          req.headers.erase(it);
          req.headers.emplace(kStashedAcceptEncoding, v);
        }
        size_t head = req.method.size() + req.target.size() + req.version.size() + 4;
        for (const auto& [k, v] : req.headers) head += k.size() + v.size() + 4;
        if (head > max_head) req.headers.emplace(kHeaderTooLarge, std::to_string(head));
        // Every endpoint is GET/HEAD and cpp-httplib does not read their bodies: a declared
        // body is refused past the limit, and the connection is not reused either way (its
        // unread bytes would be taken for the next request).
        const std::string cl = req.get_header_value("Content-Length");
        const bool chunked = req.has_header("Transfer-Encoding");
        if (chunked || (!cl.empty() && cl != "0")) {
          drop = true;
          unsigned long long n = 0;
          bool numeric = !cl.empty() && cl.find_first_not_of("0123456789") == std::string::npos && cl.size() < 19;
          if (numeric) n = std::stoull(cl);
          if (chunked || !numeric || n > max_body) req.headers.emplace(kBodyTooLarge, chunked ? "chunked" : cl);
          req.headers.erase("Connection");
          req.headers.emplace("Connection", "close");
        }
      });
      s_->requests.fetch_add(1);
      if (!ok || connection_closed || drop) break;
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    s_->active.fetch_sub(1);
    return ok;
  }

  HttpServer::Shared* s_;
};

}  // namespace

struct HttpServer::Listener {
  std::unique_ptr<LimitedServer> server;
  std::thread thread;
  std::string address;
};

void jsonError(httplib::Response& res, int status, const std::string& message, const std::string& field) {
  nlohmann::json j{{"error", message}, {"field", field}};
  res.status = status;
  res.set_content(j.dump() + "\n", "application/json");
}

void sendJson(httplib::Response& res, const nlohmann::json& j, int status) {
  res.status = status;
  res.set_content(j.dump() + "\n", "application/json");
}

bool onlyParams(const httplib::Request& req, httplib::Response& res, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : req.params) {
    if (std::none_of(known.begin(), known.end(), [&](const char* n) { return k == n; })) {
      std::string list;
      for (const char* n : known) list += (list.empty() ? "" : ", ") + std::string(n);
      jsonError(res, 400, "unknown parameter '" + k + "'" + (list.empty() ? "" : " (known: " + list + ")"), k);
      return false;
    }
    if (req.get_param_value_count(k) > 1) {
      jsonError(res, 400, "parameter '" + k + "' given more than once", k);
      return false;
    }
  }
  return true;
}

std::string acceptEncoding(const httplib::Request& req) { return req.get_header_value(kStashedAcceptEncoding); }

HttpServer::HttpServer(const HttpLimits& limits) : shared_(std::make_shared<Shared>(limits)) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::get(const std::string& pattern, Handler handler) { routes_.emplace_back(pattern, std::move(handler)); }

Status HttpServer::listen(const std::vector<ListenAddress>& addresses) {
  const HttpLimits& limits = shared_->limits;
  for (const auto& a : addresses) {
    auto l = std::make_unique<Listener>();
    l->server = std::make_unique<LimitedServer>(shared_.get());
    auto& svr = *l->server;
    // cpp-httplib's default also sets SO_REUSEPORT, which lets a second agent bind the same port
    // and silently share the scrapes; SO_REUSEADDR alone still allows a quick restart.
    svr.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    svr.set_payload_max_length(limits.max_body_bytes);
    svr.set_read_timeout(limits.read_timeout);
    svr.set_write_timeout(limits.write_timeout);
    svr.set_keep_alive_timeout(std::max<time_t>(1, limits.idle_timeout.count() / 1000));
    svr.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
      if (req.method != "GET" && req.method != "HEAD") {
        res.set_header("Allow", "GET, HEAD");
        jsonError(res, 405, "method " + req.method + " is not allowed; this API is read-only (GET, HEAD)");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.has_header(kBodyTooLarge)) {
        jsonError(res, 413, "request body of " + req.get_header_value(kBodyTooLarge) + " bytes is too large");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (req.has_header(kHeaderTooLarge)) {
        jsonError(res, 431, "request header of " + req.get_header_value(kHeaderTooLarge) + " bytes is too large");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    svr.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      switch (res.status) {
        case 404:
          jsonError(res, 404, "no such endpoint: " + req.path + " (see /api/v1)");
          break;
        case 413:
          jsonError(res, 413, "request body too large");
          break;
        case 414:
          jsonError(res, 414, "request URI too long");
          break;
        case 400:
          jsonError(res, 400, "malformed request");
          break;
        default:
          jsonError(res, res.status, "request failed with HTTP status " + std::to_string(res.status));
          break;
      }
      return httplib::Server::HandlerResponse::Handled;
    }));
    svr.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown exception";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      logLine("error", "handler for " + req.path + " failed: " + what);
      jsonError(res, 500, "internal error: " + what);
    });
    for (const auto& [pattern, handler] : routes_) svr.Get(pattern, handler);

    int port = a.port;
    if (a.port == 0) {
      port = svr.bind_to_any_port(a.host);
      if (port < 0) port = 0;
    } else if (!svr.bind_to_port(a.host, a.port)) {
      port = 0;
    }
    if (port <= 0) {
      for (auto& other : listeners_) other->server->stop();
      for (auto& other : listeners_) other->thread.join();
      listeners_.clear();
      return Status::Error("cannot listen on " + a.text + ": " + std::strerror(errno) +
                           " (address in use, or not an address of this machine?)");
    }
    svr.widenBacklog();
    const bool v6 = a.host.find(':') != std::string::npos;
    l->address = (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(port);
    listeners_.push_back(std::move(l));
  }
  for (auto& l : listeners_) {
    LimitedServer* svr = l->server.get();
    l->thread = std::thread([svr] { svr->listen_after_bind(); });
  }
  // stop() before a listener runs would be lost: wait until each is accepting.
  for (auto& l : listeners_)
    for (int i = 0; i < 500 && !l->server->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return Status::Ok();
}

std::vector<std::string> HttpServer::boundAddresses() const {
  std::vector<std::string> out;
  for (const auto& l : listeners_) out.push_back(l->address);
  return out;
}

void HttpServer::stop() {
  shared_->stopping.store(true);
  for (auto& l : listeners_) l->server->stop();
  for (auto& l : listeners_)
    if (l->thread.joinable()) l->thread.join();
  // Connection threads run the listeners' request handling: finish them before the listeners go.
  shared_->stopPool();
  listeners_.clear();
}

HttpStats HttpServer::stats() const {
  return {shared_->requests.load(), shared_->rejected.load(), shared_->active.load()};
}

}  // namespace gw::server
