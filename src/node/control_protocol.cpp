#include "node/control_protocol.h"

#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
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

namespace {

// "uid 0 (root)", or "uid 1234" when the user has no name.
std::string describeUid(uid_t uid) {
  std::string name;
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) name = found->pw_name;
  return "uid " + std::to_string(uid) + (name.empty() ? "" : " (" + name + ")");
}

}  // namespace

std::string Peer::describe() const { return describeUid(uid) + " pid " + std::to_string(pid); }

Result<Peer> peerOf(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return Status::Error(std::string("SO_PEERCRED: ") + std::strerror(errno));
  return Peer{cred.pid, cred.uid, cred.gid};
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

namespace {

bool trusted(uid_t uid, const CallOptions& o) {
  if (uid == 0 || uid == ::geteuid()) return true;
  for (uid_t t : o.trusted_uids)
    if (uid == t) return true;
  return false;
}

std::string trustedList(const CallOptions& o) {
  std::string s = "root, " + describeUid(::geteuid()) + " (this user)";
  for (uid_t t : o.trusted_uids) s += ", " + describeUid(t);
  return s;
}

// Why the file at `path` (or its folder) cannot be trusted to be the agent's; empty when it can.
// ENOENT is reported through *missing.
std::string checkSocketFile(const std::string& path, const CallOptions& o, bool* missing) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      *missing = true;
      return {};
    }
    return "cannot stat it: " + std::string(std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) return S_ISLNK(st.st_mode) ? "it is a symbolic link, not a socket" : "it is not a socket";
  const std::string dir =
      path.find('/') == std::string::npos ? "." : path.substr(0, std::max<std::size_t>(1, path.rfind('/')));
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0) return "cannot stat its folder " + dir + ": " + std::strerror(errno);
  if (!trusted(ds.st_uid, o))
    return "its folder " + dir + " belongs to " + describeUid(ds.st_uid) + ", who could replace the socket";
  if ((ds.st_mode & S_IWOTH) && !(ds.st_mode & S_ISVTX)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(ds.st_mode & 07777));
    return "its folder " + dir + " is writable by everyone (mode " + mode +
           ") without the sticky bit, so anyone could replace the socket";
  }
  return {};
}

}  // namespace

Reply call(const std::string& socket_path, const json& request, const CallOptions& options) {
  Reply r;
  const auto end = Clock::now() + options.deadline;
  const std::string refusing = "refusing the control socket " + socket_path + ": ";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    r.error = "control socket path too long: " + socket_path;
    return r;
  }
  bool missing = false;
  if (std::string why = checkSocketFile(socket_path, options, &missing); !why.empty()) {
    r.reached = true;
    r.error = refusing + why;
    return r;
  }
  if (missing) return r;  // nobody there: not reached
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
  if (!trusted(peer->uid, options)) {
    r.error = refusing + "it is served by " + peer->describe() + ", none of " + trustedList(options);
    return r;
  }
  const std::string took = " within the deadline of " + std::to_string(options.deadline.count()) + " ms";
  if (std::string why = sendAll(fd, request.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", end);
      !why.empty()) {
    r.error = "sending to the agent at " + socket_path + ": " + why;
    return r;
  }
  r.sent = true;
  // One line, read within the deadline and the size bound; never more than the bound is held
  // (the buffer grows by doubling, capped at the bound).
  std::string in;
  char buf[65536];
  for (;;) {
    if (Clock::now() >= end) {
      r.error = "the agent did not answer" + took + " (" + std::to_string(in.size()) + " bytes read)";
      return r;
    }
    const std::size_t room = options.max_reply_bytes + 1 - in.size();  // one byte more says "too large"
    ssize_t n = ::recv(fd, buf, std::min(sizeof buf, room), 0);
    if (n > 0) {
      // The reply ends at its first newline; whatever follows is not read.
      const char* nl = static_cast<const char*>(std::memchr(buf, '\n', static_cast<std::size_t>(n)));
      const std::size_t got = nl ? static_cast<std::size_t>(nl - buf) : static_cast<std::size_t>(n);
      if (in.size() + got > options.max_reply_bytes) {
        r.error = "the agent's reply is larger than " + std::to_string(options.max_reply_bytes) + " bytes";
        return r;
      }
      if (in.capacity() < in.size() + got)
        in.reserve(std::min(options.max_reply_bytes, std::max(in.size() + got, 2 * in.capacity())));
      in.append(buf, got);
      if (nl) break;
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
      r.error = "the agent did not answer" + took + " (" + std::to_string(in.size()) + " bytes read)";
      return r;
    }
  }
  auto body = platform::parseBounded(in, options.max_depth, options.max_values);
  if (!body) {
    r.error = "the agent's reply is not a control reply: " + body.error();
    return r;
  }
  if (!body->is_object() || !body->contains("ok") || !(*body)["ok"].is_boolean()) {
    r.error = "the agent's reply is not a control reply (an object with a boolean \"ok\")";
    return r;
  }
  r.body = std::move(body).value();
  return r;
}

}  // namespace gw::node::control
