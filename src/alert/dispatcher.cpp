#include "alert/dispatcher.h"

#include <deque>
#include <filesystem>
#include <random>

#include "platform/clock.h"
#include "platform/thread_guard.h"

namespace gw::alert {

using Clock = std::chrono::steady_clock;

struct Dispatcher::Worker {
  std::unique_ptr<Sink> sink;
  int rate_limit = 0;
  std::chrono::milliseconds rate_interval{60000};
  std::deque<Clock::time_point> recent;  // attempts inside the rate window
  std::thread thread;
  SinkStats stats;  // guarded by Dispatcher::mu_
};

Result<std::unique_ptr<Dispatcher>> Dispatcher::create(DispatcherConfig config) {
  if (config.work_dir.empty()) config.work_dir = std::filesystem::path(config.queue_path).parent_path().string();
  std::error_code ec;
  std::filesystem::create_directories(config.work_dir, ec);
  std::vector<std::unique_ptr<Sink>> sinks;
  for (auto& sc : config.sinks) {
    if (sc.name.empty()) sc.name = toString(sc.type);
    sinks.push_back(makeSink(sc, config.work_dir));
  }
  return create(std::move(config), std::move(sinks));
}

Result<std::unique_ptr<Dispatcher>> Dispatcher::create(DispatcherConfig config,
                                                       std::vector<std::unique_ptr<Sink>> sinks) {
  if (config.queue_path.empty()) return Status::Error("alert dispatcher: no queue path");
  const auto folder = std::filesystem::path(config.queue_path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return Status::Error("alert dispatcher: " + folder.string() + ": " + ec.message());
  for (std::size_t i = 0; i < sinks.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (sinks[i]->name() == sinks[k]->name())
        return Status::Error("alert dispatcher: two sinks named " + sinks[i]->name());
  auto q = DiskQueue::open(config.queue_path);
  if (!q.ok()) return q.status();
  return std::unique_ptr<Dispatcher>(new Dispatcher(std::move(config), std::move(q).value(), std::move(sinks)));
}

Dispatcher::Dispatcher(DispatcherConfig config, std::unique_ptr<DiskQueue> queue,
                       std::vector<std::unique_ptr<Sink>> sinks)
    : config_(std::move(config)), queue_(std::move(queue)) {
  for (auto& s : sinks) {
    auto w = std::make_unique<Worker>();
    w->stats.name = s->name();
    for (const auto& sc : config_.sinks)
      if (sc.name == s->name()) {
        w->rate_limit = sc.rate_limit;
        w->rate_interval = sc.rate_interval;
      }
    w->sink = std::move(s);
    workers_.push_back(std::move(w));
  }
}

Dispatcher::~Dispatcher() { stop(); }

void Dispatcher::start() {
  std::lock_guard lock(mu_);
  if (started_) return;
  started_ = true;
  stopping_ = false;
  for (auto& w : workers_)
    w->thread = std::thread(platform::guardedThread("alert-sink", [this, wp = w.get()] { run(*wp); }));
}

void Dispatcher::stop() {
  {
    std::lock_guard lock(mu_);
    if (!started_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
  std::lock_guard lock(mu_);
  started_ = false;
}

Result<bool> Dispatcher::submit(Alert alert) {
  if (alert.id.empty()) alert.id = alert.rule + "/" + alert.gpu_uuid;
  if (alert.hostname.empty()) alert.hostname = config_.hostname;
  if (alert.starts_at_ms == 0) alert.starts_at_ms = platform::wallMs();
  std::vector<std::string> names;
  for (const auto& w : workers_) names.push_back(w->sink->name());
  auto r = queue_->submit(alert, names, platform::wallMs(), config_.repeat_interval.count());
  if (r.ok() && r.value()) {
    {
      std::lock_guard lock(mu_);
      ++generation_;
    }
    cv_.notify_all();
  }
  return r;
}

bool Dispatcher::flush(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::unique_lock lock(mu_);
  while (true) {
    lock.unlock();
    int64_t n = queue_->pending();
    lock.lock();
    if (n == 0) return true;
    if (Clock::now() >= deadline) return false;
    cv_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
  }
}

std::vector<SinkStats> Dispatcher::stats() const {
  std::vector<SinkStats> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& w : workers_) out.push_back(w->stats);
  }
  for (auto& s : out) s.pending = queue_->pending(s.name);
  return out;
}

std::chrono::milliseconds retryDelay(const DispatcherConfig& config, int attempt, double draw) {
  double base = static_cast<double>(config.retry_initial.count());
  const double cap = static_cast<double>(config.retry_max.count());
  for (int i = 1; i < attempt && base < cap; ++i) base *= 2;
  base = std::min(base, cap);
  const double j = std::clamp(config.retry_jitter, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(base * (1.0 - j + 2.0 * j * std::clamp(draw, 0.0, 1.0))));
}

std::chrono::milliseconds Dispatcher::backoff(int attempt) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return retryDelay(config_, attempt, std::uniform_real_distribution<double>(0.0, 1.0)(rng));
}

void Dispatcher::run(Worker& w) {
  int attempt = 0;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    uint64_t seen = generation_;
    lock.unlock();
    std::optional<QueuedAlert> head = queue_->head(w.sink->name());
    lock.lock();
    if (stopping_) break;
    if (!head) {
      cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      continue;
    }
    // Rate limit: at most rate_limit attempts in any rate_interval window; excess waits.
    if (w.rate_limit > 0) {
      auto now = Clock::now();
      while (!w.recent.empty() && now - w.recent.front() >= w.rate_interval) w.recent.pop_front();
      if (static_cast<int>(w.recent.size()) >= w.rate_limit) {
        auto until = w.recent.front() + w.rate_interval;
        cv_.wait_until(lock, until, [&] { return stopping_; });
        continue;
      }
      w.recent.push_back(now);
    }
    lock.unlock();
    Delivery d = w.sink->deliver(head->alert);
    // Acknowledge under mu_ so flush() never sees an empty queue before the stats say so.
    lock.lock();
    Status s = d.ok ? queue_->ack(head->seq) : (!d.retryable ? queue_->reject(head->seq, d.error) : Status::Ok());
    if (d.ok && s.ok()) {
      ++w.stats.delivered;
      attempt = 0;
      cv_.notify_all();  // progress, for flush()
      continue;
    }
    if (!d.ok && !d.retryable && s.ok()) {
      ++w.stats.rejected;
      w.stats.last_error = d.error;
      attempt = 0;
      cv_.notify_all();
      continue;
    }
    ++w.stats.failed_attempts;
    w.stats.last_error = d.ok ? s.message() : d.error;
    if (!d.ok) ++attempt;
    auto delay = backoff(std::max(attempt, 1));
    // Sleep through the backoff; new submissions do not shorten it (order is head-of-line).
    cv_.wait_for(lock, delay, [&] { return stopping_; });
  }
}

}  // namespace gw::alert
