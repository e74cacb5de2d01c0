// A background thread whose work throws (an allocation the system refuses, a thread it will not
// start) must not end the process through std::terminate without a word: the guard says which
// thread failed and why, in the log, and ends the process with exit code 70 (EX_SOFTWARE) so that
// its service manager restarts it. Nothing is retried in place: the thread's state is unknown.
#pragma once

#include <exception>
#include <utility>

namespace gw::platform {

[[noreturn]] void failThread(const char* name, const char* what);

inline constexpr int kExitThreadFailed = 70;

// Wraps a thread's body: std::thread(guardedThread("sampler", [this] { run(); })).
template <typename F>
auto guardedThread(const char* name, F&& fn) {
  return [name, fn = std::forward<F>(fn)]() mutable {
    try {
      fn();
    } catch (const std::exception& e) {
      failThread(name, e.what());
    } catch (...) {
      failThread(name, "an exception that is not a std::exception");
    }
  };
}

}  // namespace gw::platform
