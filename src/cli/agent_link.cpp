#include "cli/agent_link.h"

#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/json_read.h"

namespace gw::cli {

AgentAnswer askAgent(const std::string& data_dir, const std::string& op, const nlohmann::json& args,
                     const AskLimits& limits) {
  node::control::CallOptions options;
  options.deadline = limits.deadline;
  options.max_reply_bytes = limits.max_reply_bytes;
  // The agent may run as the user that owns its data folder (a `gpuwarden` service user).
  struct stat st {};
  if (::stat(data_dir.c_str(), &st) == 0 && st.st_uid != 0 && st.st_uid != ::geteuid())
    options.trusted_uids.push_back(st.st_uid);
  auto reply =
      node::control::call(node::DataDir(data_dir).controlSocket(), nlohmann::json{{"op", op}, {"args", args}}, options);
  AgentAnswer a;
  a.reached = reply.reached;
  a.sent = reply.sent;
  a.error = std::move(reply.error);
  if (!a.reached || !a.error.empty()) return a;
  auto& body = reply.body;  // an object with a boolean "ok" (checked by call())
  if (jr::boolean(body, "ok")) {
    auto result = body.find("result");
    if (result == body.end() || !result->is_object()) {
      a.error = "the agent's answer to '" + op + "' is malformed: its result is not an object";
      return a;
    }
    a.ok = true;
    a.result = std::move(*result);
    return a;
  }
  a.refusal = jr::str(body, "error", "the agent refused without a reason");
  a.code = jr::str(body, "code");
  a.param = jr::str(body, "field");
  return a;
}

Result<std::unique_ptr<node::DataDirLock>> lockWithoutAgent(const std::string& data_dir) {
  const node::DataDir dir(data_dir);
  auto lock = node::DataDirLock::acquire(dir, std::chrono::seconds(3));
  if (!lock)
    return Status::Error(lock.error() + "; its control socket " + dir.controlSocket() +
                         " does not answer, so nothing was changed");
  return lock;
}

bool agentAnswered(const AgentAnswer& a, const std::string& data_dir, const std::string& hint) {
  if (!a.reached) {
    printError("no agent owns " + data_dir + " (its control socket " + node::DataDir(data_dir).controlSocket() +
               " does not answer)" + (hint.empty() ? "" : "; " + hint));
    return false;
  }
  if (!a.error.empty()) {
    printError(a.error);
    return false;
  }
  return true;
}

}  // namespace gw::cli
