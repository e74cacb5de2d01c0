// The alert dispatcher: submit() deduplicates and writes the alert to the on-disk queue once per
// sink; one background thread per sink delivers its queue head-of-line (strict order), within
// the sink's rate limit, retrying failures with exponential backoff and jitter until delivered.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "alert/alert.h"
#include "alert/queue.h"
#include "alert/sinks.h"
#include "common/result.h"

namespace gw::alert {

struct DispatcherConfig {
  std::string queue_path;  // the on-disk queue (node::DataDir::alertsDb())
  std::string work_dir;    // temporary files of the command sink (the queue's folder when empty)
  std::vector<SinkConfig> sinks;
  // An alert with the same id and state is not resent within this interval.
  std::chrono::milliseconds repeat_interval{std::chrono::hours(4)};
  std::chrono::milliseconds retry_initial{500};
  std::chrono::milliseconds retry_max{std::chrono::minutes(5)};
  double retry_jitter = 0.2;  // each delay is scaled by a random factor in [1-j, 1+j]
  std::string hostname;       // filled into alerts that have none
};

// The wait before retry number `attempt` (1 is the first): retry_initial doubled per attempt up to
// retry_max, scaled by 1 - j + 2j·draw for a draw in [0, 1] (j = retry_jitter, clamped to [0, 1]).
std::chrono::milliseconds retryDelay(const DispatcherConfig& config, int attempt, double draw);

struct SinkStats {
  std::string name;
  int64_t delivered = 0;
  int64_t failed_attempts = 0;
  int64_t rejected = 0;
  int64_t pending = 0;
  std::string last_error;
};

class Dispatcher {
 public:
  // Opens (creates) the queue; does not start threads.
  static Result<std::unique_ptr<Dispatcher>> create(DispatcherConfig config);
  // For tests and custom sinks: sinks supplied by the caller (config.sinks is ignored).
  static Result<std::unique_ptr<Dispatcher>> create(DispatcherConfig config, std::vector<std::unique_ptr<Sink>> sinks);
  ~Dispatcher();  // stop()
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void start();  // one thread per sink; delivers what an earlier run left in the queue first
  void stop();   // returns after the in-flight attempt of each sink ends; the queue stays on disk

  // true: queued for every sink; false: a duplicate within the repeat interval; an error when
  // the queue could not be written (the alert was not accepted).
  Result<bool> submit(Alert alert);
  // Waits until every sink's queue is empty; false on timeout.
  bool flush(std::chrono::milliseconds timeout);

  std::vector<SinkStats> stats() const;
  int64_t pending() const { return queue_->pending(); }

 private:
  struct Worker;
  Dispatcher(DispatcherConfig config, std::unique_ptr<DiskQueue> queue, std::vector<std::unique_ptr<Sink>> sinks);
  void run(Worker& w);
  std::chrono::milliseconds backoff(int attempt);

  DispatcherConfig config_;
  std::unique_ptr<DiskQueue> queue_;
  std::vector<std::unique_ptr<Worker>> workers_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // new work, stop, or progress (for flush)
  bool stopping_ = false;
  bool started_ = false;
  uint64_t generation_ = 0;  // bumped by submit so sleeping workers re-check
};

}  // namespace gw::alert
