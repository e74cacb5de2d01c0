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

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace gw::node::control {

inline constexpr int kProtocolVersion = 1;
inline constexpr std::size_t kMaxRequestBytes = 1024 * 1024;  // a diag report fits
inline constexpr std::size_t kMaxReplyBytes = 16 * 1024 * 1024;
inline constexpr int kMaxDepth = 64;

// Who is on the other end of a unix socket (SO_PEERCRED).
struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // "uid 0 (root) pid 1234": what an incident's resolved_by records.
  std::string describe() const;
};
Result<Peer> peerOf(int fd);

// Parses one JSON document, refusing nesting deeper than max_depth (nlohmann's parser recurses).
Result<nlohmann::json> parseBounded(std::string_view text, int max_depth = kMaxDepth);

// Writes all of `data` to a non-blocking socket before `end`: an empty string when done, else why
// not (the peer went away, or the deadline passed). Both ends of the protocol send with it.
std::string sendAll(int fd, std::string_view data, std::chrono::steady_clock::time_point end);

nlohmann::json okReply(nlohmann::json result = nlohmann::json::object());
// code: a stable word scripts can test ("bad_request", "not_found", "unknown_op", "failed").
nlohmann::json errorReply(const std::string& message, const std::string& code = "failed");

struct Reply {
  bool reached = false;  // false: no agent listens on that socket (the caller may act alone)
  std::string error;     // non-empty: reached but the call failed (deadline, bad reply, untrusted owner)
  nlohmann::json body;   // the agent's reply object when error is empty
};

// Connects to `socket_path`, checks that the listening process runs as root or as the caller's
// own user (anyone else could have bound the name), sends the request and reads the reply, all
// within `deadline`.
Reply call(const std::string& socket_path, const nlohmann::json& request,
           std::chrono::milliseconds deadline = std::chrono::milliseconds(5000));

}  // namespace gw::node::control
