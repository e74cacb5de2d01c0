// Work that may hang (an NVML call on a hung GPU blocks for as long as the GPU does) run on
// threads of its own, waited for up to a deadline. What outlives its deadline is abandoned: its
// thread is detached and finishes on its own. Such a process must not run exit-time destructors
// (they would tear down the library a thread is still inside), so it leaves with exitProcess().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace gw::platform {

// Threads still inside abandoned work.
std::size_t abandonedThreads();
// For owners of long-lived threads (the sampler's workers) that detach one stuck in a call:
// call noteAbandoned() when detaching and noteAbandonedDone() when that thread ends.
void noteAbandoned();
void noteAbandonedDone();

// Flushes stdout and stderr and ends the process with `code`: through exit() normally, through
// _Exit() while abandoned work is still running.
[[noreturn]] void exitProcess(int code);

// Runs fn(i) for every i < n, each on its own thread, and waits for all of them until `deadline`.
// Result i is empty when fn(i) had not returned by then. `fn` is copied into the threads; what it
// refers to must outlive them (the process ends with exitProcess() when any were abandoned).
template <typename R>
std::vector<std::optional<R>> runEachWithDeadline(std::size_t n, std::function<R(std::size_t)> fn,
                                                  std::chrono::milliseconds deadline) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<R>> results;
    std::size_t remaining = 0;
    bool closed = false;  // the caller stopped waiting: late results are dropped
  };
  auto shared = std::make_shared<Shared>();
  shared->results.resize(n);
  shared->remaining = n;
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([shared, fn, i] {
      std::optional<R> r(fn(i));
      std::lock_guard l(shared->mu);
      if (shared->closed) {
        noteAbandonedDone();
        return;
      }
      shared->results[i] = std::move(r);
      if (--shared->remaining == 0) shared->cv.notify_all();
    });
  }
  std::vector<std::optional<R>> out;
  std::vector<bool> done(n);
  {
    std::unique_lock l(shared->mu);
    shared->cv.wait_for(l, deadline, [&] { return shared->remaining == 0; });
    shared->closed = true;
    for (std::size_t i = 0; i < n; ++i) {
      done[i] = shared->results[i].has_value();
      if (!done[i]) noteAbandoned();
    }
    out = std::move(shared->results);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (done[i])
      threads[i].join();
    else
      threads[i].detach();
  }
  return out;
}

}  // namespace gw::platform
