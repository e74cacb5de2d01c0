#include "cli/agent_link.h"

namespace gw::cli {

node::control::Reply askAgent(const std::string& data_dir, const std::string& op, const nlohmann::json& args) {
  return node::control::call(node::DataDir(data_dir).controlSocket(), nlohmann::json{{"op", op}, {"args", args}});
}

Result<std::unique_ptr<node::DataDirLock>> lockWithoutAgent(const std::string& data_dir) {
  const node::DataDir dir(data_dir);
  auto lock = node::DataDirLock::acquire(dir, std::chrono::seconds(3));
  if (!lock)
    return Status::Error(lock.error() + "; its control socket " + dir.controlSocket() +
                         " does not answer, so nothing was changed");
  return lock;
}

}  // namespace gw::cli
