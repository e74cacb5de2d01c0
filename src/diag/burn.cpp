// runBurn: the GEMM burn on every selected GPU at once, watched, judged by the diag's verdicts.
#include "diag/burn.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "diag/gemm_precision.h"
#include "diag/thresholds.h"
#include "diag/verdicts.h"
#include "diag/watcher.h"

namespace gw::diag {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string num(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

struct Target {
  int index = -1;
  std::string name;
  SkuThresholds sku = ThresholdTable::builtin().generic();
  int cuda_dev = -1;
  size_t slot = 0;  // in BurnReport::gpus
};

}  // namespace

const std::vector<ExitCodeMeaning>& burnExitCodeMeanings() {
  static const std::vector<ExitCodeMeaning> m = {
      {kBurnExitOk, "every GPU burned for the whole duration and is OK"},
      {kBurnExitFaulty,
       "a GPU is FAULTY (miscompares, checksum differs from its peers, far slower, Xid, lost), or GPUs are "
       "SUSPECT (their results disagree with no majority to name the wrong one)"},
      {kBurnExitUsage, "bad arguments (duration, precision, GPU ids)"},
      {kBurnExitCannotRun,
       "could not run or finish: no NVML, no CUDA part, no GPU visible to CUDA (the simulator), or "
       "interrupted"},
  };
  return m;
}

std::string burnExitCodeHelp() {
  std::string s = "Exit codes:\n";
  for (const auto& e : burnExitCodeMeanings()) s += "  " + std::to_string(e.code) + "  " + e.meaning + "\n";
  return s;
}

std::string validateBurnOptions(const BurnOptions& o) {
  if (!std::isfinite(o.seconds) || o.seconds < kBurnMinSeconds || o.seconds > kBurnMaxSeconds)
    return "-d: the duration must be between " + num(kBurnMinSeconds, 0) + " and " + num(kBurnMaxSeconds, 0) +
           " seconds (one week), not " + num(o.seconds, 3);
  if (gemmPrecisionFromName(o.precision) < 0)
    return "--precision: unknown precision '" + o.precision + "' (valid: " + gemmPrecisionList() + ")";
  if (!(o.interval_seconds > 0)) return "the refresh interval must be positive";
  return "";
}

std::string formatLiveLine(const BurnLive& l) {
  char b[256];
  std::string s;
  std::snprintf(b, sizeof b, "GPU %-2d %3.0f%%  %10.1f GFLOP/s  %8llu GEMMs  %llu errors", l.gpu,
                std::clamp(l.fraction, 0.0, 1.0) * 100, l.so_far.gflops,
                static_cast<unsigned long long>(l.so_far.iterations),
                static_cast<unsigned long long>(l.so_far.failed_iterations));
  s = b;
  s += l.temp_known ? "  " + std::to_string(l.temp_c) + " C" : "  -- C";
  s += l.power_w >= 0 ? "  " + num(l.power_w, 0) + " W" : "  -- W";
  s += l.sm_mhz ? "  SM " + std::to_string(l.sm_mhz) + " MHz" : "  SM -- MHz";
  s += l.mem_mhz ? "  MEM " + std::to_string(l.mem_mhz) + " MHz" : "  MEM -- MHz";
  if (!l.error.empty())
    s += "  ERROR: " + l.error;
  else if (l.finished)
    s += "  done";
  return s;
}

void TextBurnSink::tick(double elapsed, const std::vector<BurnLive>& gpus) {
  std::lock_guard<std::mutex> lk(mu_);
  std::ostringstream o;
  if (interactive_) {
    // Back to the top of the block drawn last time, then each line cleared and rewritten.
    if (drawn_) o << "\x1b[" << drawn_ << "A";
    for (const auto& g : gpus) o << "\r\x1b[2K" << formatLiveLine(g) << "\n";
    drawn_ = gpus.size();
  } else {
    (void)elapsed;
    for (const auto& g : gpus) o << formatLiveLine(g) << "\n";
  }
  out_ << o.str() << std::flush;
}

int BurnReport::exitCode() const {
  for (const auto& g : gpus)
    if (g.faulty || g.suspect) return kBurnExitFaulty;
  if (!error.empty()) return kBurnExitUsage;
  if (!cannot_run.empty() || cancelled) return kBurnExitCannotRun;
  for (const auto& g : gpus)
    if (!g.ran) return kBurnExitCannotRun;
  return kBurnExitOk;
}

namespace {

class Burner {
 public:
  Burner(const BurnOptions& o, DiagNvml& nvml, GpuBackend* backend, BurnSink& sink)
      : opt_(o), nvml_(nvml), backend_(backend), sink_(sink) {}

  BurnReport run() {
    report_.seconds_asked = opt_.seconds;
    report_.precision = opt_.precision;
    report_.error = validateBurnOptions(opt_);
    if (!report_.error.empty()) return std::move(report_);
    if (!select()) return std::move(report_);
    if (!mapDevices()) return std::move(report_);
    burn();
    judge();
    return std::move(report_);
  }

 private:
  bool cancelled() const { return opt_.cancelled && opt_.cancelled(); }

  bool select() {
    auto count = nvml_.gpuCount();
    if (!count.ok()) {
      report_.cannot_run = "cannot list GPUs: " + count.error();
      return false;
    }
    std::vector<int> selected = opt_.gpus;
    if (selected.empty())
      for (int i = 0; i < *count; ++i) selected.push_back(i);
    std::set<int> seen;
    const ThresholdTable& table = ThresholdTable::builtin();
    for (int g : selected) {
      if (g < 0 || g >= *count) {
        report_.error =
            "-i: no GPU with index " + std::to_string(g) + " (" + std::to_string(*count) + " GPU(s) present)";
        return false;
      }
      if (!seen.insert(g).second) continue;
      // A GPU that does not answer NVML (hung past the call deadline, or off the bus) cannot be
      // burnt and is not good: FAULTY, while the others still burn.
      auto name = nvml_.name(g);
      if (doesNotAnswer(name.status())) {
        BurnGpu b;
        b.gpu = g;
        b.faulty = true;
        b.not_run = "NVML: " + name.error();
        b.reasons.push_back("does not answer NVML: " + name.error());
        report_.gpus.push_back(b);
        continue;
      }
      Target t;
      t.index = g;
      t.name = name.value_or("unknown");
      t.sku = table.lookup(t.name, nvml_.pciDeviceId(g).value_or(0));
      t.slot = report_.gpus.size();
      BurnGpu b;
      b.gpu = g;
      b.name = t.name;
      b.uuid = nvml_.uuid(g).value_or("");
      b.pci_bus_id = nvml_.pciBusId(g).value_or("");
      report_.gpus.push_back(b);
      targets_.push_back(t);
    }
    if (targets_.empty()) {
      if (report_.gpus.empty()) report_.cannot_run = "no GPU found";
      return false;
    }
    return true;
  }

  std::string simNote() const {
    return opt_.simulated ? "; the simulator's GPUs are NVML only, CUDA cannot run on them" : "";
  }

  bool mapDevices() {
    if (!backend_) {
      owned_ = openCudaBackend(opt_.cuda_part_path);
      backend_ = owned_.get();
    }
    if (backend_->state() != BackendState::Ready) {
      report_.cannot_run = backend_->reason() + simNote();
      for (auto& g : report_.gpus)
        if (g.not_run.empty()) g.not_run = backend_->reason();
      return false;
    }
    std::vector<Result<std::string>> buses;
    for (const auto& t : targets_) buses.push_back(nvml_.pciBusId(t.index));
    auto m = mapCudaDevices(*backend_, buses);
    if (!m.ok()) {
      report_.cannot_run = m.error();
      return false;
    }
    std::vector<Target> runnable;
    for (size_t i = 0; i < targets_.size(); ++i) {
      targets_[i].cuda_dev = m->ordinal[i];
      if (targets_[i].cuda_dev >= 0)
        runnable.push_back(targets_[i]);
      else
        report_.gpus[targets_[i].slot].not_run = "not visible to CUDA (CUDA_VISIBLE_DEVICES?)";
    }
    if (runnable.empty()) {
      report_.cannot_run = "none of the selected GPUs is visible to CUDA" + simNote();
      return false;
    }
    targets_ = std::move(runnable);
    return true;
  }

  void burn() {
    const int precision = gemmPrecisionFromName(opt_.precision);
    std::vector<int> idx;
    for (const auto& t : targets_) idx.push_back(t.index);
    watcher_ = std::make_unique<Watcher>(nvml_, idx, opt_.interval_seconds);
    watcher_->beginStep("burn");
    live_.resize(targets_.size());
    results_.assign(targets_.size(), Result<GwGemmResult>(Status::Error("not run")));
    for (size_t i = 0; i < targets_.size(); ++i) live_[i].gpu = targets_[i].index;
    const auto t0 = Clock::now();
    std::vector<std::thread> threads;
    for (size_t i = 0; i < targets_.size(); ++i) {
      threads.emplace_back([this, i, precision] {
        GemmProgressFn pf = [this, i](double f, const GwGemmResult& so_far) {
          std::lock_guard<std::mutex> lk(mu_);
          live_[i].fraction = f;
          live_[i].so_far = so_far;
          return !stop_;
        };
        auto r = backend_->gemmBurn(targets_[i].cuda_dev, opt_.seconds, precision, pf);
        std::lock_guard<std::mutex> lk(mu_);
        live_[i].finished = true;
        if (r.ok()) {
          live_[i].so_far = *r;
          live_[i].fraction = 1.0;
        } else {
          live_[i].error = r.error();
        }
        results_[i] = std::move(r);
        ++finished_;
        cv_.notify_all();
      });
    }
    for (;;) {
      bool all_done = false;
      {
        std::unique_lock<std::mutex> lk(mu_);
        // Short waits: Ctrl-C is noticed within a tenth of a second, the display keeps its beat.
        const auto next = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(opt_.interval_seconds));
        while (finished_ < targets_.size() && Clock::now() < next) {
          cv_.wait_for(lk, std::chrono::milliseconds(100));
          if (!stop_ && cancelled()) stop_ = true;  // the burns see it at their next progress call
        }
        all_done = finished_ == targets_.size();
      }
      sink_.tick(since(t0), snapshot());
      if (all_done) break;
    }
    for (auto& t : threads) t.join();
    report_.cancelled = stop_;
    report_.seconds = since(t0);
    watcher_->endStep();
  }

  std::vector<BurnLive> snapshot() {
    std::vector<BurnLive> out;
    {
      std::lock_guard<std::mutex> lk(mu_);
      out = live_;
    }
    for (auto& l : out) {
      WatchSummary w = watcher_->summary(l.gpu);
      l.temp_known = w.cur_temp_known;
      l.temp_c = w.cur_temp_c;
      l.power_w = w.cur_power_w;
      l.sm_mhz = w.cur_sm_mhz;
      l.mem_mhz = w.cur_mem_mhz;
    }
    return out;
  }

  void judge() {
    std::vector<GemmInput> in;
    for (size_t i = 0; i < targets_.size(); ++i)
      in.push_back({targets_[i].index, targets_[i].name, targets_[i].sku, opt_.precision, results_[i]});
    std::vector<Check> checks = judgeGemmBurn(in);
    for (size_t i = 0; i < targets_.size(); ++i) {
      BurnGpu& g = report_.gpus[targets_[i].slot];
      g.ran = true;
      for (auto& c : checks)
        if (c.gpu == targets_[i].index) g.checks.push_back(c);
      if (watcher_->watched(targets_[i].index))
        g.checks.push_back(judgeWatch(targets_[i].index, watcher_->summary(targets_[i].index), targets_[i].sku));
      for (const auto& c : g.checks) {
        if (c.verdict != Verdict::Fail && c.verdict != Verdict::Warn) continue;
        auto& into = c.verdict == Verdict::Fail ? g.reasons : g.warnings;
        if (c.evidence.empty()) into.push_back(c.title + ": " + c.summary);
        for (const auto& e : c.evidence) into.push_back(c.title + ": " + e);
        if (c.verdict == Verdict::Fail) g.faulty = true;
        if (c.measured.value("checksum_disputed", false)) g.suspect = true;
      }
    }
  }

  const BurnOptions& opt_;
  DiagNvml& nvml_;
  GpuBackend* backend_;
  std::unique_ptr<GpuBackend> owned_;
  BurnSink& sink_;
  BurnReport report_;
  std::vector<Target> targets_;
  std::unique_ptr<Watcher> watcher_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<BurnLive> live_;
  std::vector<Result<GwGemmResult>> results_;
  size_t finished_ = 0;
  bool stop_ = false;
};

// An interrupted run proves nothing good: its GPUs are STOPPED, never OK.
std::string gpuVerdict(const BurnReport& r, const BurnGpu& g) {
  if (g.faulty) return "FAULTY";
  if (g.suspect) return "SUSPECT";
  if (!g.ran) return "NOT RUN";
  return r.cancelled ? "STOPPED" : "OK";
}

// "NOT RUN" -> "not_run"
std::string jsonToken(std::string s) {
  for (char& c : s) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

BurnReport runBurn(const BurnOptions& options, DiagNvml& nvml, GpuBackend* backend, BurnSink& sink) {
  Burner b(options, nvml, backend, sink);
  return b.run();
}

nlohmann::json burnToJson(const BurnReport& r) {
  nlohmann::json j = {{"precision", r.precision},
                      {"seconds_asked", r.seconds_asked},
                      {"seconds", r.seconds},
                      {"cancelled", r.cancelled},
                      {"exit_code", r.exitCode()}};
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.cannot_run.empty()) j["cannot_run"] = r.cannot_run;
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.gpus) {
    nlohmann::json x = {{"gpu", g.gpu},
                        {"name", g.name},
                        {"uuid", g.uuid},
                        {"pci_bus_id", g.pci_bus_id},
                        {"verdict", jsonToken(gpuVerdict(r, g))},
                        {"reasons", g.reasons},
                        {"warnings", g.warnings}};
    if (!g.not_run.empty()) x["not_run"] = g.not_run;
    for (const auto& c : g.checks) {
      if (c.test == "gemm_burn") x["gemm"] = c.measured;
      if (c.test == "watch") x["watch"] = c.measured;
    }
    gpus.push_back(std::move(x));
  }
  j["gpus"] = std::move(gpus);
  return j;
}

std::string renderBurnText(const BurnReport& r) {
  std::ostringstream o;
  if (!r.error.empty()) return "";  // the CLI prints the error itself
  if (!r.cannot_run.empty()) {
    o << "burn cannot run: " << r.cannot_run << "\n";
    return o.str();
  }
  o << "\nburn " << r.precision << ", " << num(r.seconds, 1) << " s of " << num(r.seconds_asked, 0) << " s"
    << (r.cancelled ? " (INTERRUPTED: no GPU is declared OK)" : "") << "\n";
  char b[256];
  std::snprintf(b, sizeof b, "  %-4s %-8s %12s %10s %10s %7s %7s  %s\n", "GPU", "RESULT", "GFLOP/s", "GEMMs", "MISCOMP",
                "MAX C", "MAX W", "CHECKSUM");
  o << b;
  for (const auto& g : r.gpus) {
    double gflops = 0;
    unsigned long long iters = 0, failed = 0;
    std::string sum = "-", maxc = "-", maxw = "-";
    for (const auto& c : g.checks) {
      const auto& m = c.measured;
      if (c.test == "gemm_burn" && m.contains("gflops")) {
        gflops = m["gflops"].get<double>();
        iters = m["iterations"].get<unsigned long long>();
        failed = m["failed_iterations"].get<unsigned long long>();
        sum = m["checksum"].get<std::string>();
      }
      if (c.test == "watch") {
        if (m.value("max_temp_c", 0u) > 0) maxc = std::to_string(m["max_temp_c"].get<unsigned>());
        if (m.value("max_power_w", 0.0) > 0) maxw = num(m["max_power_w"].get<double>(), 0);
      }
    }
    const std::string verdict = gpuVerdict(r, g);
    std::snprintf(b, sizeof b, "  %-4d %-8s %12.1f %10llu %10llu %7s %7s  %s\n", g.gpu, verdict.c_str(), gflops, iters,
                  failed, maxc.c_str(), maxw.c_str(), sum.c_str());
    o << b;
    if (!g.not_run.empty()) o << "       not run: " << g.not_run << "\n";
    for (const auto& x : g.reasons) o << "       FAULTY: " << x << "\n";
    for (const auto& x : g.warnings) o << "       warning: " << x << "\n";
  }
  int faulty = 0, suspect = 0;
  for (const auto& g : r.gpus) {
    faulty += g.faulty ? 1 : 0;
    suspect += !g.faulty && g.suspect ? 1 : 0;
  }
  std::string bad;
  if (faulty) bad = std::to_string(faulty) + " GPU(s) FAULTY";
  if (suspect)
    bad += (bad.empty() ? "" : ", ") + std::to_string(suspect) +
           " GPU(s) SUSPECT (results disagree and no majority names the wrong one: burn them beside a known-good GPU "
           "of the same model)";
  o << "  result: "
    << (!bad.empty()                  ? bad
        : r.exitCode() == kBurnExitOk ? "all " + std::to_string(r.gpus.size()) + " GPU(s) OK"
                                      : std::string("NOT COMPLETE"))
    << " (exit " << r.exitCode() << ")\n";
  return o.str();
}

}  // namespace gw::diag
