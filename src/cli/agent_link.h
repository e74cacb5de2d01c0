// How a command reaches the agent that owns a data folder: its control socket (node/data_dir.h
// names it after the folder), or, when no agent runs, the folder itself under the lock the agent
// takes too. Nothing else is trusted: not whatever happens to answer on a TCP port.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "node/control_protocol.h"
#include "node/data_dir.h"

namespace gw::cli {

// The agent's reply to {op, args}; reply.reached is false when no agent serves `data_dir`.
node::control::Reply askAgent(const std::string& data_dir, const std::string& op,
                              const nlohmann::json& args = nlohmann::json::object());

// With no agent answering: the folder's lock, or an error that says who holds it (an agent that
// holds the folder but does not answer on its socket is named, never written behind).
Result<std::unique_ptr<node::DataDirLock>> lockWithoutAgent(const std::string& data_dir);

}  // namespace gw::cli
