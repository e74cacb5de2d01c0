// The agent's local control protocol (docs/api.md, "Control socket"): one JSON object per line
// over a unix stream socket, one request and one reply per connection.
//   request: {"op": "incidents.resolve", "args": {"id": 7}}
//   reply:   {"ok": true, "result": {...}}  or  {"ok": false, "error": "...", "code": "not_found"}
// Both ends bound everything they read: size, nesting depth and time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "platform/bounded_json.h"

namespace gw::node::control {

inline constexpr int kProtocolVersion = 1;
inline constexpr std::size_t kMaxRequestBytes = 1024 * 1024;  // a diag report fits
inline constexpr std::size_t kMaxReplyBytes = 16 * 1024 * 1024;
inline constexpr int kMaxDepth = platform::kJsonMaxDepth;
inline constexpr std::size_t kMaxValues = platform::kJsonMaxValues;

// Who is on the other end of a unix socket (SO_PEERCRED).
struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // "uid 0 (root) pid 1234": what an incident's resolved_by records.
  std::string describe() const;
};
Result<Peer> peerOf(int fd);

// Writes all of `data` to a non-blocking socket before `end`: an empty string when done, else why
// not (the peer went away, or the deadline passed). Both ends of the protocol send with it.
std::string sendAll(int fd, std::string_view data, std::chrono::steady_clock::time_point end);

nlohmann::json okReply(nlohmann::json result = nlohmann::json::object());
// code: a stable word scripts can test ("bad_request", "not_found", "unknown_op", "failed").
nlohmann::json errorReply(const std::string& message, const std::string& code = "failed");

struct Reply {
  bool reached = false;  // false: no agent listens on that socket (the caller may act alone)
  std::string error;     // non-empty: reached but the call failed (deadline, bad reply, untrusted owner)
  bool sent = false;     // the request went out whole: the agent may have acted on it, error or not
  nlohmann::json body;   // the agent's reply object (with a boolean "ok") when error is empty
};

struct CallOptions {
  // The whole exchange: connect, send, and the last byte of the reply.
  std::chrono::milliseconds deadline = std::chrono::milliseconds(5000);
  std::size_t max_reply_bytes = kMaxReplyBytes;
  int max_depth = kMaxDepth;
  std::size_t max_values = kMaxValues;
  // Who may serve the socket besides root and the caller's own user (e.g. the data folder's owner).
  std::vector<uid_t> trusted_uids;
};

// Checks the socket before it is used: `socket_path` must be a socket (not a link, not a file),
// in a folder that no one but a trusted user can change (owned by a trusted user, not writable by
// others unless sticky); after connecting, the process that listens must run as a trusted user
// (SO_PEERCRED): anyone can bind a free name while the agent restarts. Then sends the request and
// reads one reply line within every bound of `options`; a reply that breaks one is an error, and
// no more than max_reply_bytes of it is ever held. Nothing there (no file, nobody listening):
// reached is false.
Reply call(const std::string& socket_path, const nlohmann::json& request, const CallOptions& options);
inline Reply call(const std::string& socket_path, const nlohmann::json& request,
                  std::chrono::milliseconds deadline = std::chrono::milliseconds(5000)) {
  CallOptions o;
  o.deadline = deadline;
  return call(socket_path, request, o);
}

}  // namespace gw::node::control
