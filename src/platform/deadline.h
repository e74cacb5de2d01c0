// Work that may hang (an NVML call on a hung GPU blocks for as long as the GPU does) run on
// threads of its own, waited for up to a deadline. What outlives its deadline is abandoned: its
// thread is detached and finishes on its own. Such a process must not run exit-time destructors
// (they would tear down the library a thread is still inside), so it leaves with exitProcess().
#pragma once

#include <algorithm>
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

// Runs fn(i) for every i < n and waits for all of them until `deadline`. Result i is empty when
// fn(i) had not returned by then. One worker takes the items in order, which is all a quick run
// (a healthy node's GPUs) needs; when they are not all done after `straggle` (an item that is
// slow, or hangs in the driver), a worker per item not yet taken joins in, so an item that hangs
// holds up only itself and every other one still has until `deadline`. `fn` is copied into the
// threads; what it refers to must outlive them (the process ends with exitProcess() when any were
// abandoned).
template <typename R>
std::vector<std::optional<R>> runEachWithDeadline(std::size_t n, std::function<R(std::size_t)> fn,
                                                  std::chrono::milliseconds deadline,
                                                  std::chrono::milliseconds straggle = std::chrono::milliseconds(10)) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<R>> results;
    std::size_t next = 0;       // the first item no worker has taken
    std::size_t remaining = 0;  // items without a result
    std::vector<bool> running;  // per worker: inside fn or about to be
    bool closed = false;        // the caller stopped waiting: late results are dropped
  };
  auto shared = std::make_shared<Shared>();
  shared->results.resize(n);
  shared->remaining = n;
  std::vector<std::thread> workers;
  auto start_worker = [&] {
    const std::size_t w = workers.size();
    shared->running.push_back(true);
    workers.emplace_back([shared, fn, w] {
      std::unique_lock l(shared->mu);
      while (!shared->closed && shared->next < shared->results.size()) {
        const std::size_t i = shared->next++;
        l.unlock();
        std::optional<R> r(fn(i));
        l.lock();
        if (shared->closed) break;
        shared->results[i] = std::move(r);
        if (--shared->remaining == 0) shared->cv.notify_all();
      }
      shared->running[w] = false;
      if (shared->closed) noteAbandonedDone();  // the caller counted it abandoned when it closed
    });
  };
  const auto end = std::chrono::steady_clock::now() + deadline;
  std::vector<std::optional<R>> out;
  std::vector<bool> abandoned;
  {
    std::unique_lock l(shared->mu);
    if (n > 0) start_worker();
    if (!shared->cv.wait_for(l, std::min<std::chrono::milliseconds>(straggle, deadline),
                             [&] { return shared->remaining == 0; })) {
      for (std::size_t k = shared->next; k < n; ++k) start_worker();
    }
    shared->cv.wait_until(l, end, [&] { return shared->remaining == 0; });
    shared->closed = true;
    abandoned = shared->running;
    for (bool a : abandoned)
      if (a) noteAbandoned();
    out = std::move(shared->results);
  }
  for (std::size_t w = 0; w < workers.size(); ++w) {
    if (abandoned[w])
      workers[w].detach();
    else
      workers[w].join();
  }
  return out;
}

// One piece of such work: fn's result, or nothing when it had not returned by `deadline` (it is
// then abandoned, as above).
template <typename R>
std::optional<R> runWithDeadline(std::function<R()> fn, std::chrono::milliseconds deadline) {
  auto r = runEachWithDeadline<R>(
      1, [fn = std::move(fn)](std::size_t) { return fn(); }, deadline);
  return std::move(r[0]);
}

}  // namespace gw::platform
