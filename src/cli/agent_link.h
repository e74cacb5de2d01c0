// How a command reaches the agent that owns a data folder: its control socket (node/data_dir.h
// names it after the folder), or, when no agent runs, the folder itself under the lock the agent
// takes too. Nothing else is trusted: not whatever happens to answer on a TCP port, not a socket
// served by anyone but root, this user or the data folder's owner, and not an answer that breaks
// a bound (time, size, depth, number of values) or has the wrong shape.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "node/control_protocol.h"
#include "node/data_dir.h"

namespace gw::cli {

struct AgentAnswer {
  bool reached = false;   // false: no agent serves the folder (the caller may act alone)
  std::string error;      // non-empty: the agent could not be asked (exit kExitNoAgent): an untrusted
                          // socket, the deadline, a bound broken, an answer of the wrong shape
  bool sent = false;      // the request reached the agent whole: with an error, it may still act
  bool ok = false;        // the agent did it; `result` is an object
  nlohmann::json result;  // when ok
  std::string refusal;    // when reached, no error, not ok: the agent's reason
  std::string code;       // and its code word (bad_request, not_found, unknown_op, failed)
  std::string param;      // and the parameter at fault, when it names one
};

struct AskLimits {
  std::chrono::milliseconds deadline = std::chrono::milliseconds(5000);
  std::size_t max_reply_bytes = node::control::kMaxReplyBytes;
};

// Asks the agent that owns `data_dir` for {op, args} through its control socket.
AgentAnswer askAgent(const std::string& data_dir, const std::string& op,
                     const nlohmann::json& args = nlohmann::json::object(), const AskLimits& limits = {});

// For a command that needs the agent: true when it answered and can be trusted; otherwise prints
// why not ("no agent owns DIR (its control socket … does not answer)" and `hint`, or the broken
// bound) and returns false, and the caller exits kExitNoAgent.
bool agentAnswered(const AgentAnswer& a, const std::string& data_dir, const std::string& hint = "");

// With no agent answering: the folder's lock, or an error that says who holds it (an agent that
// holds the folder but does not answer on its socket is named, never written behind).
Result<std::unique_ptr<node::DataDirLock>> lockWithoutAgent(const std::string& data_dir);

}  // namespace gw::cli
