// Workload rules: a starved training job (R16), a straggler among busy peers, memory held by
// processes that no longer exist or that live on with nothing to do (R17).
#include <algorithm>

#include "health/rule.h"
#include "platform/fs_root.h"

namespace gw::health {
namespace {

// Over the window, nearly every sample in [swing_low, util_max): the window is the hold, so the
// rule waits until it has (almost) a whole window of history. Training only: an inference server
// swinging with its requests, or waiting for them at 40 %, is not starved (seed 001 §1.2).
std::optional<Condition> starvation(const RuleContext& x) {
  const RuleConfig& c = x.config;
  if (!x.workload || x.workload->cls != WorkloadClass::kTraining) return std::nullopt;
  const Sample* old = x.gpu->firstSince(x.now - c.starvation_window_ms);
  if (!(old && x.now - old->t >= c.starvation_window_ms * 9 / 10)) return std::nullopt;
  int n = 0, inBand = 0, low = 0;
  double sum = 0, lo = 1e9, hi = -1;
  x.gpu->forEachSince(x.now - c.starvation_window_ms, [&](const Sample& o) {
    if (!valid(o.v[kUtil])) return;
    const double u = o.v[kUtil];
    ++n;
    sum += u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    if (u >= c.swing_low && u < c.starvation_util_max) ++inBand;
    if (u >= c.swing_low && u <= c.swing_high) ++low;
  });
  if (!(n >= 10 && inBand >= c.starvation_fraction * n)) return std::nullopt;
  const bool swinging = low >= c.starvation_fraction * n;
  const bool inferred = x.workload->source == "inferred";
  return Condition{
      .severity = Severity::Warning,
      .summary = (swinging ? x.gpuName() + " utilisation swings between " + fmt(lo) + " % and " + fmt(hi) +
                                 " %: the training job is starved (input pipeline, data loading or communication)."
                           : x.gpuName() + " utilisation has stayed under " + fmt(c.starvation_util_max) + " % (mean " +
                                 fmt(sum / n) +
                                 " %): the training job is starved (input pipeline, data loading or communication).") +
                 (inferred ? " Training was inferred from its steady load." : ""),
      .action =
          "Profile the input pipeline: more data-loader workers, pinned memory, faster storage, larger batches; "
          "check NCCL communication." +
          std::string(inferred ? " If the GPU serves inference, say so (health.workload or workload_by_gpu): "
                                 "an inference server at this load is normal."
                               : ""),
      .evidence = "gpu_util mean=" + fmt(sum / n, 1) + " min=" + fmt(lo) + " max=" + fmt(hi) + " over " +
                  fmt((x.now - old->t) / 1000.0) + " s (" + std::to_string(n) +
                  " samples); workload=" + x.workload->describe()};
}

// Idle while (almost) every answering peer is busy: the whole job runs at this GPU's pace.
std::optional<Condition> straggler(const RuleContext& x) {
  const RuleConfig& c = x.config;
  int busy = 0, others = 0;
  for (const GpuHistory* o : x.peers) {
    if (o->state != collect::GpuState::Up) continue;
    ++others;
    const Sample* s = o->latest();
    if (s && valid(s->v[kUtil]) && s->v[kUtil] >= c.straggler_peer_util) ++busy;
  }
  const double util = x.at(kUtil);
  const int need = std::max(c.straggler_min_peers, (others * 3 + 3) / 4);
  if (!(valid(util) && util <= c.straggler_idle_util && others > 0 && busy >= need)) return std::nullopt;
  return Condition{
      .severity = Severity::Warning,
      .summary = x.gpuName() + " is idle (" + fmt(util) + " %) while " + std::to_string(busy) + " of its " +
                 std::to_string(others) + " peers are busy.",
      .action =
          "Check the job's placement and this rank (hung rank, CUDA_VISIBLE_DEVICES, failed "
          "worker); the whole job runs at the straggler's pace.",
      .evidence = "gpu_util=" + fmt(util) + " busy_peers=" + std::to_string(busy) + "/" + std::to_string(others)};
}

// A pid that /proc does not list has exited, yet the driver still counts its memory.
std::optional<Condition> zombieProcess(const RuleContext& x) {
  platform::FsRoot root{std::string(x.proc_root)};
  std::uint64_t bytes = 0;
  std::string pids;
  for (const auto& p : *x.processes) {
    if (p.pid == 0 || root.exists("/proc/" + std::to_string(p.pid))) continue;
    bytes += p.used_bytes;
    pids += (pids.empty() ? "" : ",") + std::to_string(p.pid);
  }
  if (pids.empty()) return std::nullopt;
  return Condition{.severity = Severity::Warning,
                   .summary = x.gpuName() + " memory (" + gib(bytes) +
                              ") is held by process(es) that no longer exist (pid " + pids + ").",
                   .action =
                       "Find and kill the leftover process (fuser -v /dev/nvidia*), or reset the GPU "
                       "(nvidia-smi -r) once it is free; jobs see 'CUDA out of memory' until then.",
                   .evidence = "pids=" + pids + " used_bytes=" + std::to_string(bytes)};
}

// Alive, holding memory, and nothing has run on the GPU for the whole window: the job is over but
// its process is not (a notebook kernel, a hung rank, a dataloader worker keeping the CUDA
// context). The window is the hold, as for starvation. An interactive GPU's idle notebook is how
// notebooks work: said, as info, without calling the GPU unhealthy.
std::optional<Condition> leftoverProcess(const RuleContext& x) {
  const RuleConfig& c = x.config;
  platform::FsRoot root{std::string(x.proc_root)};
  std::uint64_t bytes = 0;
  std::string pids;
  for (const auto& p : *x.processes) {
    if (p.pid == 0 || p.used_bytes == 0 || !root.exists("/proc/" + std::to_string(p.pid))) continue;
    bytes += p.used_bytes;
    pids += (pids.empty() ? "" : ",") + std::to_string(p.pid);
  }
  if (pids.empty() || static_cast<double>(bytes) < c.leftover_min_gib * 1024.0 * 1024 * 1024) return std::nullopt;
  const Sample* old = x.gpu->firstSince(x.now - c.leftover_window_ms);
  if (!(old && x.now - old->t >= c.leftover_window_ms * 9 / 10)) return std::nullopt;
  int n = 0;
  bool idle = true;
  double hi = 0;
  x.gpu->forEachSince(x.now - c.leftover_window_ms, [&](const Sample& s) {
    if (!valid(s.v[kUtil])) return;
    ++n;
    hi = std::max(hi, s.v[kUtil]);
    idle = idle && s.v[kUtil] <= c.idle_util;
  });
  if (!(n >= 10 && idle)) return std::nullopt;
  const bool interactive = x.workload && x.workload->cls == WorkloadClass::kInteractive;
  const std::string minutes = trimmed(static_cast<double>(x.now - old->t) / 60'000.0, 1);
  return Condition{
      .severity = interactive ? Severity::Info : Severity::Warning,
      .summary = x.gpuName() + " memory (" + gib(bytes) + ") is held by live process(es) (pid " + pids +
                 ") while the GPU has been idle for " + minutes + " min" +
                 (interactive ? ": an idle interactive session; other jobs on this GPU see 'CUDA out of memory'."
                              : ": a finished job that never exited; new jobs see 'CUDA out of memory'."),
      .action = interactive ? "Ask the session's owner to release the GPU (restart the notebook kernel) if "
                              "someone else needs it."
                            : "Check the processes (nvidia-smi --query-compute-apps=pid,process_name,used_memory; "
                              "ps -o user,etime,cmd -p PID) and end the leftover one (kill PID, or its job "
                              "through the scheduler); the memory is freed when it exits.",
      .evidence = "pids=" + pids + " used_bytes=" + std::to_string(bytes) + " gpu_util max=" + fmt(hi) + " over " +
                  fmt((x.now - old->t) / 1000.0) + " s (" + std::to_string(n) + " samples)" +
                  (x.workload ? "; workload=" + x.workload->describe() : "")};
}

constexpr Threshold kStarvation[] = {
    {.signal = "share of the window's samples in the band",
     .value = [](const RuleConfig& c) { return c.starvation_fraction; },
     .percent = true,
     .step = 0.01,
     .config_key = "starvation_fraction"},
    {.signal = "utilisation (band's low edge)",
     .value = [](const RuleConfig& c) { return c.swing_low; },
     .unit = " %",
     .config_key = "swing_low"},
    {.signal = "utilisation (band's high edge)",
     .cmp = Cmp::kBelow,
     .value = [](const RuleConfig& c) { return c.starvation_util_max; },
     .unit = " %",
     .config_key = "starvation_util_max"},
    {.signal = "utilisation (swinging)",
     .cmp = Cmp::kAtMost,
     .value = [](const RuleConfig& c) { return c.swing_high; },
     .unit = " %",
     .config_key = "swing_high",
     .marks = "swings"},
    {.signal = "utilisation spread p90 − p10 (class inferred)",
     .cmp = Cmp::kBelow,
     .value = [](const RuleConfig& c) { return c.inference_spread; },
     .unit = " points",
     .config_key = "inference_spread"},
};
constexpr Threshold kLeftover[] = {
    {.signal = "memory held by live processes",
     .value = [](const RuleConfig& c) { return c.leftover_min_gib; },
     .unit = " GiB",
     .config_key = "leftover_min_gib"},
    {.signal = "utilisation, every sample of the window",
     .cmp = Cmp::kAtMost,
     .value = [](const RuleConfig& c) { return c.idle_util; },
     .unit = " %",
     .config_key = "idle_util"},
};
constexpr Threshold kStraggler[] = {
    {.signal = "utilisation",
     .cmp = Cmp::kAtMost,
     .value = [](const RuleConfig& c) { return c.straggler_idle_util; },
     .unit = " %",
     .config_key = "straggler_idle_util"},
    {.signal = "a busy peer's utilisation",
     .value = [](const RuleConfig& c) { return c.straggler_peer_util; },
     .unit = " %",
     .config_key = "straggler_peer_util"},
    {.signal = "busy peers",
     .against = "max(`straggler_min_peers`, ¾ of the answering peers)",
     .config_key = "straggler_min_peers"},
};

const Rule kRules[] = {
    {.info = {.name = "starvation",
              .kb_id = "low-utilization-input-bound",
              .fires_when = "training only (set, or inferred: spread {4}): {0} of `starvation_window_ms` (5 min) of "
                            "samples with util {1} and {2} (\"swinging\" when that share is also {3}); the window is "
                            "its hold",
              .thresholds = kStarvation},
     .evaluate = starvation},
    {.info = {.name = "straggler",
              .config_key = "straggler_hold_ms",
              .hold = &RuleConfig::straggler_hold_ms,
              .kb_id = "one-gpu-idle",
              .fires_when = "util {0} while busy peers (util {1}) {2}",
              .thresholds = kStraggler},
     .evaluate = straggler},
    {.info = {.name = "zombie_process",
              .config_key = "zombie_hold_ms",
              .hold = &RuleConfig::zombie_hold_ms,
              .kb_id = "oom-free-memory",
              .fires_when = "a listed process's pid is absent from `<root>/proc`"},
     .scope = RuleScope::kProcesses,
     .evaluate = zombieProcess},
    {.info = {.name = "leftover_process",
              .kb_id = "oom-free-memory",
              .fires_when = "live processes hold {0} of memory and util {1} for all of `leftover_window_ms` (10 min), "
                            "the window being its hold; `info` on an interactive GPU",
              .thresholds = kLeftover},
     .scope = RuleScope::kProcesses,
     .evaluate = leftoverProcess},
};

}  // namespace

std::span<const Rule> workloadRules() { return kRules; }

}  // namespace gw::health
