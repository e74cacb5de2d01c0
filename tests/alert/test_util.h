// Helpers shared by the alert tests: a loopback HTTP receiver and a free-port finder.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace gw::alert::test {

inline int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Records every POSTed body (as JSON) and the request headers of the last one.
class Receiver {
 public:
  explicit Receiver(int status = 200, std::string reply = "ok") : status_(status), reply_(std::move(reply)) {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      bodies_.push_back(nlohmann::json::parse(req.body));
      headers_ = req.headers;
      times_.push_back(std::chrono::steady_clock::now());
      res.status = status_;
      res.set_content(reply_, "text/plain");
    });
  }
  ~Receiver() { stop(); }
  bool start(int port) {
    if (!server_.bind_to_port("127.0.0.1", port)) return false;
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return true;
  }
  void stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::vector<nlohmann::json> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::vector<std::chrono::steady_clock::time_point> times() {
    std::lock_guard lock(mu_);
    return times_;
  }
  httplib::Headers headers() {
    std::lock_guard lock(mu_);
    return headers_;
  }

 private:
  int status_;
  std::string reply_;
  httplib::Server server_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<nlohmann::json> bodies_;
  std::vector<std::chrono::steady_clock::time_point> times_;
  httplib::Headers headers_;
};

}  // namespace gw::alert::test
