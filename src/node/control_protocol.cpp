#include "node/control_protocol.h"

#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gw::node::control {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

int remainingMs(Clock::time_point end) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

}  // namespace

std::string Peer::describe() const {
  std::string name;
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) name = found->pw_name;
  return "uid " + std::to_string(uid) + (name.empty() ? "" : " (" + name + ")") + " pid " + std::to_string(pid);
}

Result<Peer> peerOf(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return Status::Error(std::string("SO_PEERCRED: ") + std::strerror(errno));
  return Peer{cred.pid, cred.uid, cred.gid};
}

Result<json> parseBounded(std::string_view text, int max_depth) {
  // A first pass counts nesting outside strings, so the recursive parser never sees a document
  // deep enough to exhaust the stack.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return Status::Error("JSON nested deeper than " + std::to_string(max_depth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    return Status::Error(std::string("not JSON: ") + e.what());
  }
}

std::string sendAll(int fd, std::string_view data, Clock::time_point end) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return std::strerror(errno);
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, remainingMs(end)) <= 0) return "not taken within the deadline";
  }
  return {};
}

json okReply(json result) { return json{{"ok", true}, {"result", std::move(result)}}; }

json errorReply(const std::string& message, const std::string& code) {
  return json{{"ok", false}, {"error", message}, {"code", code}};
}

Reply call(const std::string& socket_path, const json& request, std::chrono::milliseconds deadline) {
  Reply r;
  const auto end = Clock::now() + deadline;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    r.error = "control socket path too long: " + socket_path;
    return r;
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    r.error = std::string("socket: ") + std::strerror(errno);
    return r;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) return r;  // nobody there: not reached
    if (errno != EINPROGRESS && errno != EAGAIN) {
      r.error = "cannot connect to " + socket_path + ": " + std::strerror(errno);
      return r;
    }
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, remainingMs(end)) <= 0) {
      r.reached = true;
      r.error = "the agent at " + socket_path + " did not accept within the deadline";
      return r;
    }
  }
  r.reached = true;
  auto peer = peerOf(fd);
  if (!peer) {
    r.error = peer.error();
    return r;
  }
  if (peer->uid != 0 && peer->uid != ::geteuid()) {
    r.error = "refusing the control socket " + socket_path + ": it is served by " + peer->describe() +
              ", neither root nor this user";
    return r;
  }
  if (std::string why = sendAll(fd, request.dump() + "\n", end); !why.empty()) {
    r.error = "sending to the agent: " + why;
    return r;
  }
  std::string in;
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      in.append(buf, static_cast<std::size_t>(n));
      if (in.size() > kMaxReplyBytes) {
        r.error = "the agent's reply is larger than " + std::to_string(kMaxReplyBytes) + " bytes";
        return r;
      }
      if (in.back() == '\n') break;
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      r.error = std::string("reading the agent's reply: ") + std::strerror(errno);
      return r;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, remainingMs(end)) <= 0) {
      r.error = "the agent did not answer within " + std::to_string(deadline.count()) + " ms";
      return r;
    }
  }
  auto body = parseBounded(in);
  if (!body || !body->is_object() || !body->contains("ok") || !(*body)["ok"].is_boolean()) {
    r.error = "the agent's reply is not a control reply" + (body ? std::string() : ": " + body.error());
    return r;
  }
  r.body = std::move(body).value();
  return r;
}

}  // namespace gw::node::control
