#include "server/http_server.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <new>

#include "platform/log.h"
#include "server/basic_auth.h"

namespace gw::server {

using platform::logLine;

namespace {

constexpr std::size_t kMaxHeaders = 100;
constexpr std::size_t kMaxParams = 64;

struct Route {
  std::vector<std::string> segments;  // "{}" matches any one non-empty segment
  HttpServer::Handler handler;
};

std::vector<std::string> splitPath(std::string_view path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const std::size_t j = path.find('/', i);
    out.emplace_back(path.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j;
  }
  return out;
}

using Clock = std::chrono::steady_clock;

// Per connection (MHD's socket context): requests served so far, for the keep-alive cap, and the
// time by which the next request's head must have arrived (max while a request is served).
struct ConnectionState {
  int fd = -1;
  unsigned requests = 0;
  Clock::time_point head_deadline = Clock::time_point::max();
};

// Per request (MHD's request context): body bytes seen, and whether it was answered early.
struct RequestState {
  std::size_t body = 0;
  bool answered = false;
  bool close = false;
};

// What a response's iovecs point into; freed by libmicrohttpd when the response is done.
struct ResponseHold {
  std::shared_ptr<const std::string> prefix;
  std::string body;
};

// libmicrohttpd's messages (a client that vanished, a failed handshake) say little to an operator
// and a hostile client could make them flood the log: at most a few a minute.
void mhdLogger(void*, const char* fmt, va_list ap) {
  static platform::LogLimiter limiter(5, std::chrono::minutes(1));
  const auto admit = limiter.admit(platform::LogLimiter::Clock::now());
  if (admit.suppressed_now > 0)
    logLine("warning", "http: " + std::to_string(admit.suppressed_now) + " more messages suppressed");
  if (!admit.log) return;
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::string msg(buf);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
  logLine("warning", "http: " + msg);
}

bool headerSafe(std::string_view v) { return v.find_first_of("\r\n") == std::string_view::npos; }

}  // namespace

struct HttpServer::Impl {
  HttpLimits limits;
  WebConfig web;
  std::unique_ptr<BasicAuth> auth;
  std::vector<Route> routes;
  struct Bound {
    MHD_Daemon* daemon = nullptr;
    std::string address;
  };
  std::vector<Bound> bound;

  // Every open connection, for the head deadline. libmicrohttpd reports a connection closed
  // before it closes its socket, so a socket found here under `conns_mu` is still this
  // connection's, and shutting it down makes the library close the connection itself.
  std::mutex conns_mu;
  std::condition_variable reaper_cv;
  std::unordered_set<ConnectionState*> conns;
  bool reaper_stop = false;
  std::thread reaper;
  void reap();

  MHD_Result respond(MHD_Connection* c, RequestState* st, HttpResponse& res, bool head_only_close = false);
  MHD_Result dispatch(MHD_Connection* c, const char* url, const char* method, RequestState* st);
  std::optional<std::string> clientCertProblem(MHD_Connection* c) const;

  static MHD_Result onRequest(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                              const char*, size_t* upload_size, void** req_cls);
  ConnectionState* stateOf(MHD_Connection* c) {
    const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? static_cast<ConnectionState*>(info->socket_context) : nullptr;
  }
  void setDeadline(MHD_Connection* c, Clock::time_point t) {
    if (auto* cs = stateOf(c)) {
      std::lock_guard lock(conns_mu);
      cs->head_deadline = t;
    }
  }
  static void onCompleted(void* cls, MHD_Connection* c, void** req_cls, MHD_RequestTerminationCode) {
    delete static_cast<RequestState*>(*req_cls);
    *req_cls = nullptr;
    // The next request on this connection: idle for up to idle_timeout, then its head in read_timeout.
    auto* self = static_cast<Impl*>(cls);
    self->setDeadline(c, Clock::now() + self->limits.idle_timeout + self->limits.read_timeout);
  }
  static void onConnection(void* cls, MHD_Connection* c, void** socket_context, MHD_ConnectionNotificationCode code) {
    auto* self = static_cast<Impl*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      auto* cs = new (std::nothrow) ConnectionState();
      *socket_context = cs;
      if (!cs) return;
      const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
      cs->fd = info ? info->connect_fd : -1;
      cs->head_deadline = Clock::now() + self->limits.read_timeout;
      std::lock_guard lock(self->conns_mu);
      self->conns.insert(cs);
    } else {
      auto* cs = static_cast<ConnectionState*>(*socket_context);
      if (cs) {
        std::lock_guard lock(self->conns_mu);
        self->conns.erase(cs);
      }
      delete cs;
      *socket_context = nullptr;
    }
  }
};

bool HttpRequest::hasParam(std::string_view name) const {
  return std::any_of(params.begin(), params.end(), [&](const auto& p) { return p.first == name; });
}
std::string HttpRequest::param(std::string_view name) const {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return {};
}
std::size_t HttpRequest::paramCount(std::string_view name) const {
  return static_cast<std::size_t>(
      std::count_if(params.begin(), params.end(), [&](const auto& p) { return p.first == name; }));
}
std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  return {};
}

void jsonError(HttpResponse& res, int status, const std::string& message, const std::string& field) {
  nlohmann::json j{{"error", message}, {"field", field}};
  res.status = status;
  // The message may quote what the client sent (a parameter, a path): bytes that are not UTF-8
  // are replaced, as in sendJson; a strict dump threw, and the client got a 500 or no answer.
  res.setContent(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

void sendJson(HttpResponse& res, const nlohmann::json& j, int status) {
  res.status = status;
  res.setContent(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

bool onlyParams(const HttpRequest& req, HttpResponse& res, std::initializer_list<const char*> known) {
  for (const auto& param : req.params) {
    const std::string& k = param.first;
    if (std::none_of(known.begin(), known.end(), [&k](const char* n) { return k == n; })) {
      std::string list;
      for (const char* n : known) list += (list.empty() ? "" : ", ") + std::string(n);
      jsonError(res, 400, "unknown parameter '" + k + "'" + (list.empty() ? "" : " (known: " + list + ")"), k);
      return false;
    }
    if (req.paramCount(k) > 1) {
      jsonError(res, 400, "parameter '" + k + "' given more than once", k);
      return false;
    }
  }
  return true;
}

void HttpServer::Impl::reap() {
  std::unique_lock lock(conns_mu);
  while (!reaper_stop) {
    reaper_cv.wait_for(lock, std::chrono::milliseconds(100));
    const auto now = Clock::now();
    for (auto* cs : conns) {
      if (cs->head_deadline > now || cs->fd < 0) continue;
      cs->head_deadline = Clock::time_point::max();
      ::shutdown(cs->fd, SHUT_RDWR);
    }
  }
}

MHD_Result HttpServer::Impl::respond(MHD_Connection* c, RequestState* st, HttpResponse& res, bool) {
  auto* hold = new (std::nothrow) ResponseHold();
  if (!hold) return MHD_NO;
  hold->prefix = std::move(res.shared_prefix);
  hold->body = std::move(res.body);
  MHD_IoVec iov[2];
  unsigned n = 0;
  if (hold->prefix && !hold->prefix->empty()) iov[n++] = {hold->prefix->data(), hold->prefix->size()};
  if (!hold->body.empty()) iov[n++] = {hold->body.data(), hold->body.size()};
  MHD_Response* r = MHD_create_response_from_iovec(
      n ? iov : nullptr, n, [](void* cls) { delete static_cast<ResponseHold*>(cls); }, hold);
  if (!r) {
    delete hold;
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, res.content_type.c_str());
  for (const auto& [k, v] : res.headers)
    if (headerSafe(k) && headerSafe(v)) MHD_add_response_header(r, k.c_str(), v.c_str());
  for (const auto& [k, v] : web.headers) MHD_add_response_header(r, k.c_str(), v.c_str());
  // A request we refused may have left bytes the next request would be parsed from.
  bool close = st->close || res.status == 400 || res.status == 405 || res.status == 413 || res.status == 414 ||
               res.status == 431;
  const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (auto* cs = info ? static_cast<ConnectionState*>(info->socket_context) : nullptr) {
    if (++cs->requests >= limits.max_requests_per_connection) close = true;
  }
  if (close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  st->answered = true;
  const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(res.status), r);
  MHD_destroy_response(r);
  return ok;
}

std::optional<std::string> HttpServer::Impl::clientCertProblem(MHD_Connection* c) const {
  if (!web.tls || web.tls->client_auth == ClientAuth::None) return std::nullopt;
  const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (!info || !info->tls_session) return "no TLS session";
  auto session = static_cast<gnutls_session_t>(info->tls_session);
  unsigned count = 0;
  const gnutls_datum_t* peers = gnutls_certificate_get_peers(session, &count);
  if (!peers || count == 0) {
    if (web.tls->client_auth == ClientAuth::RequireAndVerify) return "a client certificate is required";
    return std::nullopt;
  }
  unsigned status = 0;
  if (gnutls_certificate_verify_peers2(session, &status) < 0 || status != 0)
    return "the client certificate is not signed by the configured client CA";
  return std::nullopt;
}

MHD_Result HttpServer::Impl::dispatch(MHD_Connection* c, const char* url, const char* method, RequestState* st) {
  HttpRequest req;
  HttpResponse res;
  req.method = method;
  req.path = url ? url : "";
  struct Collect {
    std::vector<std::pair<std::string, std::string>>* out;
    std::size_t max;
    bool overflow = false;
  };
  Collect headers{&req.headers, kMaxHeaders};
  Collect params{&req.params, kMaxParams};
  auto collect = [](void* cls, MHD_ValueKind, const char* key, const char* value) -> MHD_Result {
    auto* col = static_cast<Collect*>(cls);
    if (col->out->size() >= col->max) {
      col->overflow = true;
      return MHD_NO;
    }
    col->out->emplace_back(key ? key : "", value ? value : "");
    return MHD_YES;
  };
  MHD_get_connection_values(c, MHD_HEADER_KIND, collect, &headers);
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &params);
  if (headers.overflow) {
    jsonError(res, 431, "more than " + std::to_string(kMaxHeaders) + " request headers");
    return respond(c, st, res);
  }
  if (params.overflow) {
    jsonError(res, 400, "more than " + std::to_string(kMaxParams) + " query parameters");
    return respond(c, st, res);
  }
  if (auto problem = clientCertProblem(c)) {
    jsonError(res, 403, *problem);
    st->close = true;
    return respond(c, st, res);
  }
  if (auth && req.path != "/healthz" && req.path != "/health") {
    const auto outcome = auth->check(req.header("Authorization"));
    switch (outcome.verdict) {
      case BasicAuth::Verdict::Ok:
        req.user = outcome.user;
        break;
      case BasicAuth::Verdict::Busy:
        jsonError(res, 503, "authentication is busy; try again");
        res.setHeader("Retry-After", "1");
        return respond(c, st, res);
      default:
        jsonError(
            res, 401,
            outcome.verdict == BasicAuth::Verdict::Missing ? "authentication required" : "wrong user name or password");
        res.setHeader("WWW-Authenticate", "Basic realm=\"gpuwarden\", charset=\"UTF-8\"");
        return respond(c, st, res);
    }
  }
  const auto segments = splitPath(req.path);
  const Route* route = nullptr;
  for (const auto& r : routes) {
    if (r.segments.size() != segments.size()) continue;
    bool match = true;
    for (std::size_t i = 0; i < segments.size() && match; ++i)
      match = r.segments[i] == "{}" ? !segments[i].empty() : r.segments[i] == segments[i];
    if (!match) continue;
    route = &r;
    req.matches.push_back(req.path);
    for (std::size_t i = 0; i < segments.size(); ++i)
      if (r.segments[i] == "{}") req.matches.push_back(segments[i]);
    break;
  }
  if (!route) {
    std::string shown = req.path.substr(0, 200);
    jsonError(res, 404, "no such endpoint: " + shown + " (see /api/v1)");
    return respond(c, st, res);
  }
  try {
    route->handler(req, res);
  } catch (const std::exception& e) {
    logLine("error", "handler for " + req.path.substr(0, 200) + " failed: " + e.what());
    res = HttpResponse();
    jsonError(res, 500, std::string("internal error: ") + e.what());
  } catch (...) {
    res = HttpResponse();
    jsonError(res, 500, "internal error");
  }
  return respond(c, st, res);
}

MHD_Result HttpServer::Impl::onRequest(void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                                       const char*, size_t* upload_size, void** req_cls) {
  auto* self = static_cast<Impl*>(cls);
  auto* st = static_cast<RequestState*>(*req_cls);
  try {
    if (!st) {
      // The head is complete: refuse what we will not serve before reading any body.
      st = new (std::nothrow) RequestState();
      if (!st) return MHD_NO;
      *req_cls = st;
      self->setDeadline(c, Clock::time_point::max());
      HttpResponse res;
      if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0) {
        res.setHeader("Allow", "GET, HEAD");
        jsonError(res, 405,
                  "method " + std::string(method).substr(0, 32) + " is not allowed; this API is read-only (GET, HEAD)");
        return self->respond(c, st, res);
      }
      const char* te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
      const char* cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
      if (te || (cl && std::strcmp(cl, "0") != 0)) {
        st->close = true;  // a GET with a body: never reuse the connection
        char* end = nullptr;
        errno = 0;
        const unsigned long long n = te ? 0 : std::strtoull(cl, &end, 10);
        if (te || errno != 0 || !end || *end != '\0' || n > self->limits.max_body_bytes) {
          jsonError(res, 413,
                    "request body too large (GET and HEAD take at most " + std::to_string(self->limits.max_body_bytes) +
                        " bytes)");
          return self->respond(c, st, res);
        }
      }
      return MHD_YES;
    }
    if (*upload_size != 0) {
      st->body += *upload_size;
      *upload_size = 0;
      if (st->body > self->limits.max_body_bytes && !st->answered) {
        HttpResponse res;
        st->close = true;
        jsonError(res, 413, "request body too large");
        return self->respond(c, st, res);
      }
      return MHD_YES;
    }
    if (st->answered) return MHD_YES;
    return self->dispatch(c, url, method, st);
  } catch (...) {
    return MHD_NO;  // out of memory while answering: libmicrohttpd closes the connection
  }
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() { stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::create(const HttpLimits& limits, const WebConfig& web) {
  auto impl = std::make_unique<Impl>();
  impl->limits = limits;
  impl->web = web;
  if (!web.basic_auth_users.empty()) {
    auto a = BasicAuth::create(web.basic_auth_users);
    if (!a) return Status::Error(web.source + ": basic_auth_users: " + a.error());
    impl->auth = std::move(a).value();
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::get(const std::string& pattern, Handler handler) {
  impl_->routes.push_back(Route{splitPath(pattern), std::move(handler)});
}

bool HttpServer::tls() const { return impl_->web.tls.has_value(); }

namespace {

// A listening socket of our own, so that binding is all or nothing, port 0 can be read back,
// and no SO_REUSEPORT lets a second agent share the port.
Result<int> bindListener(const ListenAddress& a, std::string& shown) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(a.port);
  const int rc = ::getaddrinfo(a.host.empty() ? nullptr : a.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) return Status::Error("cannot listen on " + a.text + ": " + ::gai_strerror(rc));
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* p = res; p; p = p->ai_next) {
    fd = ::socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, p->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (p->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes);
    if (::bind(fd, p->ai_addr, p->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) break;
    why = std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0)
    return Status::Error("cannot listen on " + a.text + ": " + why +
                         " (address in use, or not an address of this machine?)");
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  char host[NI_MAXHOST] = {0}, serv[NI_MAXSERV] = {0};
  ::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                NI_NUMERICHOST | NI_NUMERICSERV);
  shown = (ss.ss_family == AF_INET6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + serv;
  return fd;
}

// Every open connection is a descriptor: make room for the configured number.
void raiseDescriptorLimit(std::size_t wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur >= wanted) return;
  rlimit next = rl;
  next.rlim_cur = std::min<rlim_t>(rl.rlim_max, wanted);
  ::setrlimit(RLIMIT_NOFILE, &next);
  if (next.rlim_cur < wanted)
    logLine("warning", "http: the open-file limit is " + std::to_string(next.rlim_cur) + ", below the " +
                           std::to_string(wanted) + " that http.max_connections needs (raise LimitNOFILE)");
}

}  // namespace

Status HttpServer::listen(const std::vector<ListenAddress>& addresses) {
  Impl& s = *impl_;
  raiseDescriptorLimit(s.limits.max_connections + 256);
  std::vector<std::pair<int, std::string>> sockets;
  for (const auto& a : addresses) {
    std::string shown;
    auto fd = bindListener(a, shown);
    if (!fd) {
      for (auto& [f, _] : sockets) ::close(f);
      return fd.status();
    }
    sockets.emplace_back(*fd, shown);
  }
  try {
    s.reaper_stop = false;
    s.reaper = std::thread([&s] { s.reap(); });
  } catch (const std::system_error& e) {
    for (auto& [f, _] : sockets) ::close(f);
    return Status::Error(std::string("cannot start the HTTP server's timer thread: ") + e.what());
  }
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (s.web.tls) flags |= MHD_USE_TLS;
  const unsigned timeout_s =
      static_cast<unsigned>(std::max<long long>(1, (s.limits.idle_timeout.count() + 999) / 1000));
  // The head is parsed inside this pool: past it libmicrohttpd answers 431 (or 414 for the URI).
  const std::size_t pool = s.limits.max_header_bytes + 1024;
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    std::vector<MHD_OptionItem> opts;
    opts.push_back({MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&mhdLogger), nullptr});  // first
    opts.push_back({MHD_OPTION_LISTEN_SOCKET, sockets[i].first, nullptr});
    opts.push_back({MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(s.limits.max_connections), nullptr});
    opts.push_back(
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, static_cast<intptr_t>(s.limits.max_connections_per_ip), nullptr});
    opts.push_back({MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(timeout_s), nullptr});
    opts.push_back({MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(pool), nullptr});
    opts.push_back({MHD_OPTION_STRICT_FOR_CLIENT, 1, nullptr});
    opts.push_back({MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Impl::onCompleted), &s});
    opts.push_back({MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&Impl::onConnection), &s});
    if (s.limits.threads > 1)
      opts.push_back({MHD_OPTION_THREAD_POOL_SIZE, static_cast<intptr_t>(s.limits.threads), nullptr});
    if (s.web.tls) {
      opts.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(s.web.tls->cert_pem.c_str())});
      opts.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(s.web.tls->key_pem.c_str())});
      opts.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(s.web.tls->priorities.c_str())});
      if (!s.web.tls->client_ca_pem.empty())
        opts.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, const_cast<char*>(s.web.tls->client_ca_pem.c_str())});
    }
    opts.push_back({MHD_OPTION_END, 0, nullptr});
    MHD_Daemon* d = MHD_start_daemon(flags, 0, nullptr, nullptr, &Impl::onRequest, &s, MHD_OPTION_ARRAY, opts.data(),
                                     MHD_OPTION_END);
    if (!d) {
      const int err = errno;
      for (std::size_t k = i; k < sockets.size(); ++k) ::close(sockets[k].first);
      stop();
      return Status::Error("cannot serve HTTP on " + sockets[i].second + ": libmicrohttpd did not start (" +
                           std::strerror(err) + "; out of threads or memory, or a TLS setting GnuTLS refused)");
    }
    s.bound.push_back({d, sockets[i].second});
  }
  return Status::Ok();
}

std::vector<std::string> HttpServer::boundAddresses() const {
  std::vector<std::string> out;
  for (const auto& b : impl_->bound) out.push_back(b.address);
  return out;
}

void HttpServer::stop() {
  for (auto& b : impl_->bound) MHD_stop_daemon(b.daemon);
  impl_->bound.clear();
  if (impl_->reaper.joinable()) {
    {
      std::lock_guard lock(impl_->conns_mu);
      impl_->reaper_stop = true;
    }
    impl_->reaper_cv.notify_all();
    impl_->reaper.join();
  }
}

}  // namespace gw::server
