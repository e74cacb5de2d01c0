#include "server/control_server.h"

#include <grp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "platform/bounded_json.h"
#include "platform/log.h"
#include "platform/thread_guard.h"

namespace gw::server {

using platform::logLine;
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace control = node::control;

constexpr auto kRequestBudget = std::chrono::milliseconds(2000);
constexpr auto kReplyBudget = std::chrono::milliseconds(5000);

int remainingMs(Clock::time_point end) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

// The group that may use the socket besides root: `gpuwarden` when it exists.
gid_t controlGroup() {
  struct group gr {};
  struct group* found = nullptr;
  char buf[4096];
  if (::getgrnam_r("gpuwarden", &gr, buf, sizeof buf, &found) == 0 && found) return found->gr_gid;
  return static_cast<gid_t>(-1);
}

}  // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::start(const std::string& path, Handler handler) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return Status::Error("control socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec)) ::chmod(dir.c_str(), 0755);
  if (ec) return Status::Error("cannot create the runtime folder " + dir.string() + ": " + ec.message());

  // A socket file already there: alive means another agent serves this data folder.
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    if (auto r = control::call(path, json{{"op", "ping"}}, std::chrono::milliseconds(500)); r.reached)
      return Status::Error(r.error.empty() ? "another agent already answers on " + path
                                           : "the control socket " + path + " is taken: " + r.error);
    ::unlink(path.c_str());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::Error(std::string("socket: ") + std::strerror(errno));
  // Bind with a umask that leaves no window in which the socket is wider than 0660.
  const mode_t old = ::umask(0117);
  const int bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  ::umask(old);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    const std::string why = std::strerror(bound != 0 ? bind_errno : errno);
    ::close(fd);
    return Status::Error("cannot listen on " + path + ": " + why);
  }
  if (gid_t g = controlGroup(); g != static_cast<gid_t>(-1)) {
    if (::chown(path.c_str(), ::geteuid(), g) != 0)
      logLine("warning", "control socket " + path + ": cannot give it to group gpuwarden: " + std::strerror(errno));
  }
  ::chmod(path.c_str(), 0660);
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    ::close(fd);
    ::unlink(path.c_str());
    return Status::Error(std::string("eventfd: ") + std::strerror(errno));
  }
  std::unique_ptr<ControlServer> s(new ControlServer(path, fd, wake, std::move(handler)));
  s->thread_ = std::thread(platform::guardedThread("control-socket", [p = s.get()] { p->run(); }));
  return s;
}

ControlServer::ControlServer(std::string path, int fd, int wake_fd, Handler handler)
    : path_(std::move(path)), listen_fd_(fd), wake_fd_(wake_fd), handler_(std::move(handler)) {}

ControlServer::~ControlServer() { stop(); }

void ControlServer::stop() {
  if (!running_.exchange(false)) return;
  std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_fd_);
  ::unlink(path_.c_str());
}

void ControlServer::run() {
  while (running_) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int n = ::poll(p, 2, -1);
    if (n < 0 && errno != EINTR) {
      logLine("error", std::string("control socket: poll: ") + std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (!running_) break;
    if (!(p[0].revents & POLLIN)) continue;
    int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) continue;
    serve(c);
    ::close(c);
  }
}

void ControlServer::serve(int fd) {
  auto peer = control::peerOf(fd);
  if (!peer) return;
  // Read one line within the request budget.
  const auto end = Clock::now() + kRequestBudget;
  std::string in;
  char buf[4096];
  bool complete = false;
  while (!complete) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      in.append(buf, static_cast<std::size_t>(n));
      if (auto nl = in.find('\n'); nl != std::string::npos) {
        in.resize(nl);
        complete = true;
      } else if (in.size() > control::kMaxRequestBytes) {
        break;
      }
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, remainingMs(end)) <= 0) break;
  }
  json reply;
  if (!complete) {
    reply = control::errorReply(in.size() > control::kMaxRequestBytes
                                    ? "request larger than " + std::to_string(control::kMaxRequestBytes) + " bytes"
                                    : "incomplete request (one JSON object and a newline, within 2 s)",
                                "bad_request");
  } else if (auto req = platform::parseBounded(in); !req) {
    reply = control::errorReply(req.error(), "bad_request");
  } else if (!req->is_object() || !req->contains("op") || !(*req)["op"].is_string()) {
    reply = control::errorReply("a request is an object with a string \"op\"", "bad_request");
  } else if (req->contains("args") && !(*req)["args"].is_object()) {
    reply = control::errorReply("\"args\" must be an object", "bad_request");
  } else {
    const std::string op = (*req)["op"].get<std::string>();
    const json args = req->value("args", json::object());
    try {
      reply = handler_(op, args, *peer);
    } catch (const std::exception& e) {
      // A handler's type error on a hostile argument is the caller's mistake, not the agent's end.
      reply = control::errorReply(std::string("bad arguments: ") + e.what(), "bad_request");
    }
  }
  // A client that does not read its reply within the budget is given up on.
  (void)control::sendAll(fd, reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n",
                         Clock::now() + kReplyBudget);
}

}  // namespace gw::server
