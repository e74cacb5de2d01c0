// The agent's control socket (node/control_protocol.h): a unix stream socket in the runtime
// folder, mode 0660, group `gpuwarden` when that group exists, through which the CLI changes what
// the agent owns. One thread accepts and answers connections one at a time; each connection has a
// 2 s budget to send its request, which is bounded to 1 MiB and 64 levels of nesting.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "node/control_protocol.h"

namespace gw::server {

class ControlServer {
 public:
  // Returns the reply object for a well-formed request (see control::okReply / errorReply).
  using Handler =
      std::function<nlohmann::json(const std::string& op, const nlohmann::json& args, const node::control::Peer&)>;

  // Binds `path` (a stale socket left by a dead agent is replaced; a live one is an error) and
  // starts answering.
  static Result<std::unique_ptr<ControlServer>> start(const std::string& path, Handler handler);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void stop();
  const std::string& path() const { return path_; }

 private:
  ControlServer(std::string path, int fd, int wake_fd, Handler handler);
  void run();
  void serve(int fd);

  std::string path_;
  int listen_fd_;
  int wake_fd_;  // eventfd: stop() wakes the poll
  Handler handler_;
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace gw::server
