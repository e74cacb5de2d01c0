// Workload rules: a starved job (R16), a straggler among busy peers, memory held by processes that
// no longer exist (R17).
#include <algorithm>

#include "health/rule.h"
#include "platform/fs_root.h"

namespace gw::health {
namespace {

// Over the window, nearly every sample in [swing_low, util_max): the window is the hold, so the
// rule waits until it has (almost) a whole window of history.
std::optional<Condition> starvation(const RuleContext& x) {
  const RuleConfig& c = x.config;
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
  return Condition{
      .severity = Severity::Warning,
      .summary = swinging
                     ? x.gpuName() + " utilisation swings between " + fmt(lo) + " % and " + fmt(hi) +
                           " %: the job is starved (input pipeline, data loading or communication)."
                     : x.gpuName() + " utilisation has stayed under " + fmt(c.starvation_util_max) + " % (mean " +
                           fmt(sum / n) + " %): the job is starved (input pipeline, data loading or communication).",
      .action =
          "Profile the input pipeline: more data-loader workers, pinned memory, faster storage, larger batches; "
          "check NCCL communication.",
      .evidence = "gpu_util mean=" + fmt(sum / n, 1) + " min=" + fmt(lo) + " max=" + fmt(hi) + " over " +
                  fmt((x.now - old->t) / 1000.0) + " s (" + std::to_string(n) + " samples)"};
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
              .fires_when = "{0} of `starvation_window_ms` (5 min) of samples with util {1} and {2} (\"swinging\" "
                            "when that share is also {3}); the window is its hold",
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
};

}  // namespace

std::span<const Rule> workloadRules() { return kRules; }

}  // namespace gw::health
