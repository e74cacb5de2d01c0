#include "platform/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace gw::platform {
namespace {

void setNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

RunResult SystemProcessRunner::run(const std::vector<std::string>& argv, const RunOptions& options) {
  RunResult r;
  if (argv.empty()) {
    r.not_found = true;
    return r;
  }
  int outp[2], errp[2], execp[2];
  if (::pipe2(outp, O_CLOEXEC) != 0) return r;
  if (::pipe2(errp, O_CLOEXEC) != 0) {
    ::close(outp[0]);
    ::close(outp[1]);
    return r;
  }
  if (::pipe2(execp, O_CLOEXEC) != 0) {
    for (int fd : {outp[0], outp[1], errp[0], errp[1]}) ::close(fd);
    return r;
  }

  // Build argv/envp before fork: only async-signal-safe calls are allowed in the child.
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos && options.env.count(kv.substr(0, eq))) continue;
    envs.push_back(std::move(kv));
  }
  for (const auto& [k, v] : options.env) envs.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {outp[0], outp[1], errp[0], errp[1], execp[0], execp[1]}) ::close(fd);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(outp[1], 1);
    ::dup2(errp[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    int err = errno;
    ssize_t ignored = ::write(execp[1], &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  ::close(outp[1]);
  ::close(errp[1]);
  ::close(execp[1]);
  int exec_errno = 0;
  if (::read(execp[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    r.not_found = exec_errno == ENOENT || exec_errno == EACCES || exec_errno == ENOTDIR;
  }
  ::close(execp[0]);

  setNonBlocking(outp[0]);
  setNonBlocking(errp[0]);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  pollfd fds[2] = {{outp[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[8192];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        std::string& dst = i == 0 ? r.out : r.err;
        if (dst.size() < options.max_output) dst.append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.timed_out || r.not_found) {
    r.exit_code = -1;
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

ProcessRunner& defaultProcessRunner() {
  static SystemProcessRunner runner;
  return runner;
}

}  // namespace gw::platform
