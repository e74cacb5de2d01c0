#include "diag/watcher.h"

#include <algorithm>
#include <chrono>

namespace gw::diag {

Watcher::Watcher(DiagNvml& nvml, std::vector<int> gpus, double intervalSeconds)
    : nvml_(nvml), gpus_(std::move(gpus)), interval_(intervalSeconds > 0 ? intervalSeconds : 1.0) {
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
      std::string e = std::string(what) + ": " + st.message();
      if (std::find(s.readErrors.begin(), s.readErrors.end(), e) == s.readErrors.end() && s.readErrors.size() < 8)
        s.readErrors.push_back(e);
    };
    if (temp.ok()) {
      if (!s.tempKnown || *temp > s.maxTempC) s.hottestDuring = step;
      s.maxTempC = s.tempKnown ? std::max(s.maxTempC, *temp) : *temp;
      s.tempKnown = true;
    } else {
      noteErr("temperature", temp.status());
    }
    if (clk.ok() && clk->smMHz > 0) {
      s.minSmMHz = s.maxSmMHz == 0 ? clk->smMHz : std::min(s.minSmMHz, clk->smMHz);
      s.maxSmMHz = std::max(s.maxSmMHz, clk->smMHz);
    } else if (!clk.ok()) {
      noteErr("clocks", clk.status());
    }
    if (pw.ok()) s.maxPowerW = std::max(s.maxPowerW, *pw);
    if (reasons.ok()) s.reasonsSeen |= *reasons & ~uint64_t{0x1};  // idle is not news
    if (ecc.ok()) {
      if (!s.dbeKnown) s.dbeStart = s.dbeEnd = ecc->volatileDbe;
      if (ecc->volatileDbe > s.dbeEnd && s.dbeDuring.empty()) s.dbeDuring = step;
      s.dbeEnd = std::max(s.dbeEnd, ecc->volatileDbe);
      s.dbeKnown = true;
    }
    if (link.ok()) {
      s.bestCurGen = std::max(s.bestCurGen, link->curGen);
      s.bestCurWidth = std::max(s.bestCurWidth, link->curWidth);
    }
  }
  std::lock_guard<std::mutex> lk(mu_);
  for (const auto& x : xids) {
    auto it = sums_.find(x.gpu);
    if (it != sums_.end()) it->second.xids.push_back({step, x.xid});
  }
}

}  // namespace gw::diag
