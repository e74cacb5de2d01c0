#include "diag/watcher.h"

#include <algorithm>
#include <chrono>

namespace gw::diag {

Watcher::Watcher(DiagNvml& nvml, std::vector<int> gpus, double interval_seconds)
    : nvml_(nvml), gpus_(std::move(gpus)), interval_(interval_seconds > 0 ? interval_seconds : 1.0) {
  for (int g : gpus_) sums_[g] = WatchSummary{};
}

Watcher::~Watcher() { endStep(); }

bool Watcher::watched(int gpu) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = sums_.find(gpu);
  return it != sums_.end() && it->second.samples > 0;
}

WatchSummary Watcher::summary(int gpu) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = sums_.find(gpu);
  return it == sums_.end() ? WatchSummary{} : it->second;
}

void Watcher::beginStep(const std::string& step) {
  endStep();
  {
    std::lock_guard<std::mutex> lk(mu_);
    step_ = step;
    running_ = true;
  }
  sampleNow();
  thread_ = std::thread([this] { loop(); });
}

void Watcher::endStep() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!running_) return;
    running_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  sampleNow();
}

void Watcher::loop() {
  std::unique_lock<std::mutex> lk(mu_);
  while (running_) {
    cv_.wait_for(lk, std::chrono::duration<double>(interval_), [this] { return !running_; });
    if (!running_) break;
    lk.unlock();
    sampleNow();
    lk.lock();
  }
}

void Watcher::sampleNow() {
  std::string step;
  {
    std::lock_guard<std::mutex> lk(mu_);
    step = step_;
  }
  // Xids first: the first poll arms the watch.
  std::vector<XidEvent> xids = nvml_.pollXids();
  for (int g : gpus_) {
    auto temp = nvml_.temperatureC(g);
    auto clk = nvml_.clocks(g);
    auto pw = nvml_.powerDrawW(g);
    auto reasons = nvml_.clockEventReasons(g);
    auto ecc = nvml_.ecc(g);
    auto link = nvml_.pcieLink(g);
    std::lock_guard<std::mutex> lk(mu_);
    WatchSummary& s = sums_[g];
    s.samples++;
    auto noteErr = [&](const char* what, const Status& st) {
      if (isNotSupported(st)) return;
      // The card stopped answering (off the bus, hung), not a read hiccup.
      if (doesNotAnswer(st) && s.lost_during.empty()) {
        s.lost_during = step;
        s.lost_error = st.message();
      }
      std::string e = std::string(what) + ": " + st.message();
      if (std::find(s.read_errors.begin(), s.read_errors.end(), e) == s.read_errors.end() && s.read_errors.size() < 8)
        s.read_errors.push_back(e);
    };
    s.cur_temp_known = temp.ok();
    s.cur_temp_c = temp.ok() ? *temp : 0;
    s.cur_power_w = pw.ok() ? *pw : -1;
    s.cur_sm_mhz = clk.ok() ? clk->sm_mhz : 0;
    s.cur_mem_mhz = clk.ok() ? clk->mem_mhz : 0;
    if (temp.ok()) {
      if (!s.temp_known || *temp > s.max_temp_c) s.hottest_during = step;
      s.max_temp_c = s.temp_known ? std::max(s.max_temp_c, *temp) : *temp;
      s.temp_known = true;
    } else {
      noteErr("temperature", temp.status());
    }
    if (clk.ok() && clk->sm_mhz > 0) {
      s.min_sm_mhz = s.max_sm_mhz == 0 ? clk->sm_mhz : std::min(s.min_sm_mhz, clk->sm_mhz);
      s.max_sm_mhz = std::max(s.max_sm_mhz, clk->sm_mhz);
    } else if (!clk.ok()) {
      noteErr("clocks", clk.status());
    }
    if (pw.ok()) s.max_power_w = std::max(s.max_power_w, *pw);
    if (reasons.ok()) s.reasons_seen |= *reasons & ~uint64_t{0x1};  // idle is not news
    if (ecc.ok()) {
      if (!s.dbe_known) s.dbe_start = s.dbe_end = ecc->volatile_dbe;
      if (ecc->volatile_dbe > s.dbe_end && s.dbe_during.empty()) s.dbe_during = step;
      s.dbe_end = std::max(s.dbe_end, ecc->volatile_dbe);
      s.dbe_known = true;
    }
    if (link.ok()) {
      s.best_cur_gen = std::max(s.best_cur_gen, link->cur_gen);
      s.best_cur_width = std::max(s.best_cur_width, link->cur_width);
    }
  }
  std::lock_guard<std::mutex> lk(mu_);
  for (const auto& x : xids) {
    auto it = sums_.find(x.gpu);
    if (it != sums_.end()) it->second.xids.push_back({step, x.xid});
  }
}

}  // namespace gw::diag
