// runDiag: walks the plan, runs each check, watches the GPUs while the GPU tests run, and
// judges everything through verdicts.cpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "diag/diag.h"
#include "diag/gemm_precision.h"
#include "diag/verdicts.h"
#include "diag/watcher.h"

namespace gw::diag {

std::string normalizePciBusId(const std::string& id) {
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%04x:%02x:%02x.%x", dom & 0xFFFF, bus, dev, fn);
  return b;
}

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Serialises every NVML call: the watcher thread, power controllers and the main thread share it.
class LockedNvml : public DiagNvml {
 public:
  explicit LockedNvml(DiagNvml& inner) : in_(inner) {}
#define GW_FWD(ret, name, params, args)  \
  ret name params override {             \
    std::lock_guard<std::mutex> lk(mu_); \
    return in_.name args;                \
  }
  GW_FWD(Result<int>, gpuCount, (), ())
  GW_FWD(Result<std::string>, name, (int g), (g))
  GW_FWD(Result<std::string>, uuid, (int g), (g))
  GW_FWD(Result<std::string>, pciBusId, (int g), (g))
  GW_FWD(Result<uint32_t>, pciDeviceId, (int g), (g))
  GW_FWD(Result<PcieLink>, pcieLink, (int g), (g))
  GW_FWD(Result<double>, powerLimitW, (int g), (g))
  GW_FWD(Result<double>, powerDrawW, (int g), (g))
  GW_FWD(Result<unsigned>, temperatureC, (int g), (g))
  GW_FWD(Result<Clocks>, clocks, (int g), (g))
  GW_FWD(Result<uint64_t>, clockEventReasons, (int g), (g))
  GW_FWD(Result<EccCounts>, ecc, (int g), (g))
  GW_FWD(Result<RetiredPages>, retiredPages, (int g), (g))
  GW_FWD(Result<RowRemap>, rowRemap, (int g), (g))
  GW_FWD(Result<bool>, persistenceMode, (int g), (g))
  GW_FWD(Result<bool>, inforomValid, (int g), (g))
  GW_FWD(Result<std::vector<GpuProcess>>, computeProcesses, (int g), (g))
  GW_FWD(Result<int>, nvlinkActiveLinks, (int g), (g))
  GW_FWD(Result<std::string>, serial, (int g), (g))
  GW_FWD(Result<std::string>, vbiosVersion, (int g), (g))
  GW_FWD(Result<std::string>, driverVersion, (), ())
  GW_FWD(Result<int>, cudaDriverVersion, (), ())
  GW_FWD(std::vector<XidEvent>, pollXids, (), ())
#undef GW_FWD
 private:
  DiagNvml& in_;
  std::mutex mu_;
};

struct GpuCtx {
  int index = -1;
  std::string name;
  SkuThresholds sku = ThresholdTable::builtin().generic();
  int cuda_dev = -1;  // -1: not visible to CUDA
  GwDeviceProps props{};
};

class Runner {
 public:
  Runner(const DiagOptions& o, DiagNvml& nvml, GpuBackend* backend, ProgressSink& progress)
      : opt_(o), nvml_(nvml), backend_(backend), progress_(progress) {}

  DiagReport run() {
    const auto t0 = Clock::now();
    report_.level = opt_.level;
    if (setup()) {
      for (size_t i = 0; i < plan_.steps.size(); ++i) {
        if (cancelled()) {
          report_.error = "cancelled";
          break;
        }
        runStep(static_cast<int>(i));
        done_estimate_ += estimateStep(plan_.steps[i], static_cast<int>(gpus_.size()));
      }
      if (watcher_) {
        watcher_->endStep();
        for (const auto& g : gpus_)
          if (watcher_->watched(g.index)) add(judgeWatch(g.index, watcher_->summary(g.index), g.sku));
      }
      report_.cuda_status = backend_checked_ ? backendStatus() : "not needed";
      for (const auto& g : gpus_)
        if (g.cuda_dev >= 0 && g.props.runtime_version > 0)
          report_.stack.cuda_runtime_version = g.props.runtime_version;
    }
    report_.seconds = since(t0);
    report_.finalize();
    progress_.finished(report_);
    return std::move(report_);
  }

 private:
  bool cancelled() const { return opt_.cancelled && opt_.cancelled(); }

  bool setup() {
    auto plan = buildPlan(opt_.level, opt_.duration_seconds);
    if (!plan) {
      report_.error =
          "invalid level or duration: -r takes 1, 2 or 3 and --duration a number of seconds " + durationRange();
      return false;
    }
    plan_ = *plan;
    precision_ = gemmPrecisionFromName(opt_.gemm_precision);
    if (precision_ < 0) {
      report_.error = "unknown GEMM precision '" + opt_.gemm_precision + "' (" + gemmPrecisionList() + ")";
      return false;
    }
    if (!opt_.thresholds_path.empty()) {
      auto t = ThresholdTable::loadFile(opt_.thresholds_path);
      if (!t.ok()) {
        report_.error = t.error();
        return false;
      }
      table_ = std::move(t).value();
    } else {
      table_ = ThresholdTable::builtin();
    }
    report_.stack.gpuwarden_version = opt_.gpuwarden_version;
    report_.stack.driver_version = nvml_.driverVersion().value_or("");
    report_.stack.cuda_driver_version = nvml_.cudaDriverVersion().value_or(0);
    auto count = nvml_.gpuCount();
    if (!count.ok()) {
      report_.error = "cannot list GPUs: " + count.error();
      return false;
    }
    std::vector<int> selected = opt_.gpus;
    if (selected.empty())
      for (int i = 0; i < *count; ++i) selected.push_back(i);
    std::set<int> seen;
    for (int g : selected) {
      if (g < 0 || g >= *count) {
        report_.error = "no GPU with index " + std::to_string(g) + " (" + std::to_string(*count) + " GPU(s) present)";
        return false;
      }
      if (!seen.insert(g).second) continue;
      GpuCtx c;
      c.index = g;
      c.name = nvml_.name(g).value_or("unknown");
      uint32_t pci_id = nvml_.pciDeviceId(g).value_or(0);
      c.sku = table_.lookup(c.name, pci_id);
      gpus_.push_back(c);
      GpuSummary s;
      s.gpu = g;
      s.name = c.name;
      s.uuid = nvml_.uuid(g).value_or("");
      s.pci_bus_id = nvml_.pciBusId(g).value_or("");
      s.serial = nvml_.serial(g).value_or("");
      s.vbios = nvml_.vbiosVersion(g).value_or("");
      s.sku = c.sku.key;
      report_.gpus.push_back(s);
    }
    if (gpus_.empty()) {
      report_.error = "no GPU found";
      return false;
    }
    total_estimate_ = plan_.estimateSeconds(static_cast<int>(gpus_.size()));
    return true;
  }

  void add(Check c) {
    progress_.checkDone(c);
    report_.checks.push_back(std::move(c));
  }

  void reportProgress(double step_fraction, const std::string& activity) {
    double est = estimateStep(plan_.steps[cur_step_], static_cast<int>(gpus_.size()));
    double done = done_estimate_ + std::clamp(step_fraction, 0.0, 1.0) * est;
    double f = total_estimate_ > 0 ? done / total_estimate_ : 1.0;
    progress_.progress(f, std::max(0.0, total_estimate_ - done), activity);
  }

  // --- the CUDA part ---------------------------------------------------------------------
  GpuBackend* backend() {
    if (!backend_checked_) {
      backend_checked_ = true;
      if (!backend_) {
        owned_ = openCudaBackend(opt_.cuda_part_path);
        backend_ = owned_.get();
      }
      if (backend_->state() == BackendState::Ready) {
        std::vector<Result<std::string>> buses;
        for (const auto& g : gpus_) buses.push_back(nvml_.pciBusId(g.index));
        auto m = mapCudaDevices(*backend_, buses);
        if (!m.ok()) {
          map_error_ = m.error();
        } else {
          for (size_t i = 0; i < gpus_.size(); ++i) {
            gpus_[i].cuda_dev = m->ordinal[i];
            gpus_[i].props = m->props[i];
          }
        }
      }
    }
    return backend_;
  }

  std::string backendStatus() const {
    if (!backend_) return "not loaded";
    return backend_->state() == BackendState::Ready ? backend_->reason() : "skipped: " + backend_->reason();
  }

  // Why a GPU test cannot run on g ("" when it can). fail_not_skip: CUDA itself is broken.
  std::string cannotRun(const GpuCtx& g, bool* fail_not_skip) {
    *fail_not_skip = false;
    GpuBackend* b = backend();
    if (b->state() == BackendState::CudaBroken) {
      *fail_not_skip = true;
      return b->reason();
    }
    if (b->state() != BackendState::Ready) return "skipped: " + b->reason();
    if (!map_error_.empty()) {
      *fail_not_skip = true;
      return map_error_;
    }
    if (g.cuda_dev < 0) return "skipped: not visible to CUDA (CUDA_VISIBLE_DEVICES?)";
    return "";
  }

  Check unavailable(const PlanStep& s, int gpu, const std::string& why, bool fail) {
    Check c;
    c.test = s.id;
    c.title = s.title;
    c.gpu = gpu;
    c.verdict = fail ? Verdict::Fail : Verdict::Skip;
    c.summary = why;
    if (fail) c.action = "fix the CUDA stack first (gpuwarden doctor): driver and runtime must agree";
    return c;
  }

  // GPUs the step can run on; adds skip/fail checks for the others.
  std::vector<GpuCtx*> runnable(const PlanStep& s) {
    std::vector<GpuCtx*> out;
    for (auto& g : gpus_) {
      bool fail = false;
      std::string why = cannotRun(g, &fail);
      if (why.empty()) {
        out.push_back(&g);
      } else {
        // A broken CUDA stack fails the deployment test once; later tests just skip.
        bool f = fail && s.id == "cuda_deploy";
        add(unavailable(s, g.index, f ? why : (fail ? "skipped: " + why : why), f));
      }
    }
    if (!out.empty()) {
      if (!watcher_) {
        std::vector<int> idx;
        for (auto* g : out) idx.push_back(g->index);
        watcher_ = std::make_unique<Watcher>(nvml_, idx, opt_.watch_interval_seconds);
      }
      watcher_->beginStep(s.id);
    }
    return out;
  }

  // Runs fn(g, progressFn) for every GPU at once; progress is the mean of the GPUs'.
  template <typename R, typename F>
  std::vector<R> parallel(const std::vector<GpuCtx*>& gs, const std::string& title, F fn) {
    std::vector<R> results(gs.size(), R(Status::Error("not run")));
    std::vector<double> fractions(gs.size(), 0.0);
    std::mutex mu;
    std::vector<std::thread> threads;
    for (size_t i = 0; i < gs.size(); ++i) {
      threads.emplace_back([&, i] {
        ProgressFn pf = [&, i](double f) {
          std::lock_guard<std::mutex> lk(mu);
          fractions[i] = f;
          double sum = 0;
          for (double x : fractions) sum += x;
          reportProgress(sum / fractions.size(), title);
          return !cancelled();
        };
        R r = fn(*gs[i], pf);
        std::lock_guard<std::mutex> lk(mu);
        results[i] = std::move(r);
      });
    }
    for (auto& t : threads) t.join();
    return results;
  }

  void runStep(int i) {
    cur_step_ = i;
    const PlanStep& s = plan_.steps[i];
    const int n = static_cast<int>(gpus_.size());
    progress_.stepStarted(i + 1, static_cast<int>(plan_.steps.size()), s.title, estimateStep(s, n));
    reportProgress(0, s.title);
    const auto t0 = Clock::now();
    const size_t first_check = report_.checks.size();

    if (s.id == "deployment") {
      if (opt_.deployment_checks) {
        for (auto& c : opt_.deployment_checks()) {
          if (c.test.empty()) c.test = "deployment";
          add(std::move(c));
        }
      } else {
        add(unavailable(s, -1, "skipped: run `gpuwarden doctor` for the deployment checks", false));
      }
    } else if (!s.needs_cuda) {
      for (const auto& g : gpus_) {
        const int x = g.index;
        if (s.id == "pcie_link")
          add(judgePcieLink(x, nvml_.pcieLink(x), g.sku));
        else if (s.id == "retired_pages")
          add(judgeRetiredPages(x, nvml_.retiredPages(x), g.sku));
        else if (s.id == "row_remap")
          add(judgeRowRemap(x, nvml_.rowRemap(x)));
        else if (s.id == "ecc")
          add(judgeEcc(x, nvml_.ecc(x)));
        else if (s.id == "processes")
          add(judgeProcesses(x, nvml_.computeProcesses(x)));
        else if (s.id == "persistence")
          add(judgePersistence(x, nvml_.persistenceMode(x)));
        else if (s.id == "inforom")
          add(judgeInforom(x, nvml_.inforomValid(x)));
      }
    } else if (s.id == "p2p_bandwidth") {
      runP2P(s);
    } else {
      auto gs = runnable(s);
      if (!gs.empty()) runCudaStep(s, gs);
      if (watcher_) watcher_->endStep();
    }
    double took = since(t0);
    for (size_t c = first_check; c < report_.checks.size(); ++c)
      if (report_.checks[c].seconds == 0) report_.checks[c].seconds = took;
    reportProgress(1.0, s.title);
  }

  void runCudaStep(const PlanStep& s, const std::vector<GpuCtx*>& gs) {
    GpuBackend* b = backend_;
    if (s.id == "cuda_deploy") {
      for (auto* g : gs) add(judgeVectorAdd(g->index, b->vectorAdd(g->cuda_dev, opt_.vector_add_elements)));
    } else if (s.id == "memtest") {
      auto rs = parallel<Result<GwMemtestResult>>(gs, s.title, [&](GpuCtx& g, const ProgressFn& pf) {
        return b->memtest(g.cuda_dev, g.sku.memtest_fraction, GW_MEMTEST_ALL, s.seconds, pf);
      });
      for (size_t i = 0; i < gs.size(); ++i) add(judgeMemtest(gs[i]->index, rs[i]));
    } else if (s.id == "pcie_bandwidth") {
      for (auto* g : gs) {
        auto r = b->hostBandwidth(g->cuda_dev, opt_.bandwidth_bytes, opt_.bandwidth_iterations);
        PcieLink seen;
        auto l = nvml_.pcieLink(g->index);  // right after the transfers, still trained up
        if (l.ok()) seen = *l;
        watcher_->sampleNow();
        WatchSummary w = watcher_->summary(g->index);
        seen.cur_gen = std::max(seen.cur_gen, w.best_cur_gen);
        seen.cur_width = std::max(seen.cur_width, w.best_cur_width);
        add(judgeHostBandwidth(g->index, r, seen, g->sku));
      }
    } else if (s.id == "gemm_burn") {
      auto rs = parallel<Result<GwGemmResult>>(gs, s.title, [&](GpuCtx& g, const ProgressFn& pf) {
        return b->gemmBurn(g.cuda_dev, s.seconds, precision_, [&pf](double f, const GwGemmResult&) { return pf(f); });
      });
      std::vector<GemmInput> in;
      for (size_t i = 0; i < gs.size(); ++i)
        in.push_back({gs[i]->index, gs[i]->name, gs[i]->sku, opt_.gemm_precision, rs[i]});
      for (auto& c : judgeGemmBurn(in)) add(std::move(c));
    } else if (s.id == "stream_triad") {
      for (auto* g : gs) {
        size_t bytes = opt_.triad_max_bytes_per_array;
        if (g->props.free_mem > 0) bytes = std::min(bytes, g->props.free_mem / 4);
        double peak = g->sku.peak_mem_bw_gbps > 0 ? g->sku.peak_mem_bw_gbps : g->props.peak_mem_bw_gbps;
        add(judgeTriad(g->index, b->streamTriad(g->cuda_dev, bytes, opt_.triad_iterations), peak, g->sku));
      }
    } else if (s.id == "targeted_power") {
      runPower(s, gs);
    }
  }

  void runPower(const PlanStep& s, const std::vector<GpuCtx*>& gs) {
    std::vector<PowerRun> runs(gs.size());
    std::mutex mu;
    auto rs = parallel<Result<GwPowerResult>>(gs, s.title, [&](GpuCtx& g, const ProgressFn& pf) {
      size_t i = std::find(gs.begin(), gs.end(), &g) - gs.begin();
      PowerRun pr;
      auto limit = nvml_.powerLimitW(g.index);
      if (limit.ok()) {
        pr.limit_w = *limit;
        pr.target_w = *limit * g.sku.power_target_fraction;
      } else {
        pr.read_error = "power limit: " + limit.error();
      }
      double duty = 0.5, sum = 0;
      PowerControlFn control = [&](double f) -> double {
        if (!pf(f)) return -1.0;
        auto w = nvml_.powerDrawW(g.index);
        if (!w.ok()) {
          if (pr.read_error.empty()) pr.read_error = "power draw: " + w.error();
          return 1.0;
        }
        pr.max_w = std::max(pr.max_w, *w);
        if (f >= 0.5) {  // after the ramp
          sum += *w;
          pr.samples++;
        }
        if (pr.target_w > 0) duty = std::clamp(duty + 0.5 * (pr.target_w - *w) / pr.target_w, 0.05, 1.0);
        return duty;
      };
      auto r = backend_->targetedPower(g.cuda_dev, s.seconds, precision_, control);
      pr.mean_w = pr.samples ? sum / pr.samples : 0;
      std::lock_guard<std::mutex> lk(mu);
      runs[i] = pr;
      return r;
    });
    for (size_t i = 0; i < gs.size(); ++i) add(judgeTargetedPower(gs[i]->index, rs[i], runs[i], gs[i]->sku));
  }

  void runP2P(const PlanStep& s) {
    std::vector<GpuCtx*> gs;
    for (auto& g : gpus_) {
      bool fail = false;
      if (cannotRun(g, &fail).empty()) gs.push_back(&g);
    }
    if (gs.size() < 2) {
      bool fail = false;
      std::string why = gpus_.size() < 2 ? "skipped: needs two GPUs" : cannotRun(gpus_[0], &fail);
      if (why.empty()) why = "skipped: fewer than two GPUs visible to CUDA";
      if (fail) why = "skipped: " + why;
      add(unavailable(s, -1, why, false));
      return;
    }
    if (!watcher_) {
      std::vector<int> idx;
      for (auto* g : gs) idx.push_back(g->index);
      watcher_ = std::make_unique<Watcher>(nvml_, idx, opt_.watch_interval_seconds);
    }
    watcher_->beginStep(s.id);
    size_t pairs = gs.size() * (gs.size() - 1), done = 0;
    for (auto* a : gs)
      for (auto* b : gs) {
        if (a == b) continue;
        if (cancelled()) break;
        bool nvlink =
            nvml_.nvlinkActiveLinks(a->index).value_or(0) > 0 && nvml_.nvlinkActiveLinks(b->index).value_or(0) > 0;
        double expected = nvlink ? a->sku.nvlink_p2p_gbps : 0;
        if (!nvlink) {
          auto la = nvml_.pcieLink(a->index), lb = nvml_.pcieLink(b->index);
          if (la.ok() && lb.ok())
            expected = std::min(pcieTheoreticalGBps(la->max_gen, la->max_width),
                                pcieTheoreticalGBps(lb->max_gen, lb->max_width));
        }
        auto r = backend_->p2pBandwidth(a->cuda_dev, b->cuda_dev, opt_.p2p_bytes, opt_.p2p_iterations);
        add(judgeP2P(a->index, b->index, r, nvlink, expected, a->sku));
        reportProgress(static_cast<double>(++done) / pairs, s.title);
      }
    watcher_->endStep();
  }

  const DiagOptions& opt_;
  LockedNvml nvml_;
  GpuBackend* backend_;
  std::unique_ptr<GpuBackend> owned_;
  ProgressSink& progress_;
  DiagReport report_;
  DiagPlan plan_;
  ThresholdTable table_;
  std::vector<GpuCtx> gpus_;
  int precision_ = GW_GEMM_FP16;
  bool backend_checked_ = false;
  std::string map_error_;
  std::unique_ptr<Watcher> watcher_;
  int cur_step_ = 0;
  double total_estimate_ = 0, done_estimate_ = 0;
};

}  // namespace

DiagReport runDiag(const DiagOptions& options, DiagNvml& nvml, GpuBackend* backend, ProgressSink& progress) {
  Runner r(options, nvml, backend, progress);
  return r.run();
}

}  // namespace gw::diag
