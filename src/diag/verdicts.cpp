#include "diag/verdicts.h"

#include "knowledge/clock_events.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <limits>

#include "knowledge/clock_events.h"
#include "diag/gemm_precision.h"
#include "knowledge/xid_catalog.h"

namespace gw::diag {

namespace {

std::string num(double v, int prec = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(v));
  return b;
}

Check make(const std::string& test, const std::string& title, int gpu) {
  Check c;
  c.test = test;
  c.title = title;
  c.gpu = gpu;
  return c;
}

// A query that failed: not supported -> skip ("n/a"), anything else -> warn with the error.
Check unreadable(Check c, const Status& s) {
  if (isNotSupported(s)) {
    c.verdict = Verdict::Skip;
    c.summary = "not supported on this GPU";
  } else if (doesNotAnswer(s)) {
    c.verdict = Verdict::Fail;
    c.summary = "GPU does not answer: " + s.message();
    c.evidence.push_back(s.message());
    c.action = "drain the node; reset the GPU (nvidia-smi -r) or reboot, and replace it if it falls off the bus again";
  } else {
    c.verdict = Verdict::Warn;
    c.summary = "could not be read: " + s.message();
    c.action = "check the driver (nvidia-smi) for this GPU";
  }
  return c;
}

// A CUDA test that returned an error: the GPU fails, with the call and its error text.
Check cudaFailed(Check c, const Status& s) {
  c.verdict = Verdict::Fail;
  c.summary = "CUDA error: " + s.message();
  c.evidence.push_back(s.message());
  c.action =
      "look for an Xid in the kernel log (gpuwarden events); a GPU that fails CUDA calls "
      "under test must be drained and replaced";
  return c;
}

constexpr const char* kReplace =
    "hardware failure: drain the node and replace (RMA) the card; do not work around it in "
    "software";

}  // namespace

bool isNotSupported(const Status& s) { return !s.ok() && s.nvmlCode() == kNvmlNotSupported; }

bool doesNotAnswer(const Status& s) {
  const int c = s.nvmlCode();
  return !s.ok() && (c == 15 || c == 16 || c == kNvmlTimeout);
}

double pcieTheoreticalGBps(int gen, int width) {
  static const double kPerLane[] = {0, 0.25, 0.5, 0.984615, 1.969231, 3.938462, 7.876923};
  if (gen < 1 || gen > 6 || width <= 0) return 0;
  return kPerLane[gen] * width;
}

Check judgePcieLink(int gpu, const Result<PcieLink>& link, const SkuThresholds& t) {
  Check c = make("pcie_link", "PCIe link state", gpu);
  if (!link.ok()) return unreadable(c, link.status());
  const PcieLink& l = *link;
  c.measured = {{"cur_gen", l.cur_gen}, {"cur_width", l.cur_width}, {"max_gen", l.max_gen}, {"max_width", l.max_width}};
  c.summary = "Gen" + std::to_string(l.cur_gen) + " x" + std::to_string(l.cur_width) + " (max Gen" +
              std::to_string(l.max_gen) + " x" + std::to_string(l.max_width) + ")";
  if (l.cur_width > 0 && l.max_width > 0 && l.cur_width < l.max_width) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back("link width x" + std::to_string(l.cur_width) + " below its maximum x" +
                         std::to_string(l.max_width) + " (a degraded link)");
    c.action = "reseat the card / check the riser; run diag -r 2 to measure the bandwidth";
  }
  if (t.pcie_gen > 0 && l.max_gen > 0 && l.max_gen < t.pcie_gen) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back("slot or card limited to Gen" + std::to_string(l.max_gen) + "; " + t.name + " is a Gen" +
                         std::to_string(t.pcie_gen) + " card");
    c.action = "check the slot, riser and BIOS PCIe settings";
  }
  if (t.pcie_width > 0 && l.max_width > 0 && l.max_width < t.pcie_width) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back("link limited to x" + std::to_string(l.max_width) + "; " + t.name + " expects x" +
                         std::to_string(t.pcie_width));
    c.action = "check the slot, riser and BIOS PCIe settings";
  }
  if (l.cur_gen > 0 && l.max_gen > 0 && l.cur_gen < l.max_gen)
    c.evidence.push_back("generation below maximum at idle is normal power saving");
  return c;
}

Check judgeRetiredPages(int gpu, const Result<RetiredPages>& r, const SkuThresholds& t) {
  Check c = make("retired_pages", "page retirement", gpu);
  if (!r.ok()) {
    c = unreadable(c, r.status());
    if (c.verdict == Verdict::Skip) c.summary = "not supported (GPUs since Ampere remap rows instead)";
    return c;
  }
  uint64_t total = r->sbe + r->dbe;
  c.measured = {{"sbe", r->sbe}, {"dbe", r->dbe}, {"pending", r->pending}};
  c.summary = std::to_string(total) + " retired pages (" + std::to_string(r->sbe) + " SBE, " + std::to_string(r->dbe) +
              " DBE)" + (r->pending ? ", retirement pending" : "");
  if (t.max_retired_pages > 0 && total > t.max_retired_pages) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back(std::to_string(total) + " retired pages exceed the limit of " +
                         std::to_string(t.max_retired_pages));
    c.action = kReplace;
  } else if (r->pending) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back("a page retirement waits for the next GPU reset");
    c.action = "drain the GPU and reset it (nvidia-smi -r) or reboot to complete the retirement";
  }
  return c;
}

Check judgeRowRemap(int gpu, const Result<RowRemap>& r) {
  Check c = make("row_remap", "row remapping", gpu);
  if (!r.ok()) {
    c = unreadable(c, r.status());
    if (c.verdict == Verdict::Skip) c.summary = "not supported (before Ampere, or no HBM ECC)";
    return c;
  }
  c.measured = {{"correctable", r->correctable},
                {"uncorrectable", r->uncorrectable},
                {"pending", r->pending},
                {"failure", r->failure}};
  c.summary = std::to_string(r->correctable + r->uncorrectable) + " rows remapped (" +
              std::to_string(r->uncorrectable) + " for uncorrectable errors)";
  if (r->failure) {
    c.verdict = Verdict::Fail;
    c.summary += ", remapping FAILED";
    c.evidence.push_back("row remapping failure: the GPU has no spare row left for a failing one");
    c.action = kReplace;
  } else if (r->pending) {
    c.verdict = Verdict::Warn;
    c.summary += ", remap pending";
    c.evidence.push_back("a row remap waits for the next GPU reset (Xid 63/64)");
    c.action = "drain the GPU and reset it (nvidia-smi -r) or reboot";
  }
  return c;
}

Check judgeEcc(int gpu, const Result<EccCounts>& r) {
  Check c = make("ecc", "ECC error counters", gpu);
  if (!r.ok()) {
    c = unreadable(c, r.status());
    if (c.verdict == Verdict::Skip) c.summary = "ECC not supported or disabled";
    return c;
  }
  c.measured = {{"volatile_dbe", r->volatile_dbe}, {"aggregate_dbe", r->aggregate_dbe}};
  c.summary = std::to_string(r->volatile_dbe) + " uncorrectable since driver load, " +
              std::to_string(r->aggregate_dbe) + " over the card's life";
  if (r->volatile_dbe > 0) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back("uncorrectable (double-bit) ECC errors since the driver loaded");
    c.action = "if the count keeps rising the memory is failing: drain and RMA (R20)";
  }
  return c;
}

Check judgeProcesses(int gpu, const Result<std::vector<GpuProcess>>& r) {
  Check c = make("processes", "stray compute processes", gpu);
  if (!r.ok()) return unreadable(c, r.status());
  c.measured = nlohmann::json::array();
  for (const auto& p : *r) {
    c.measured.push_back({{"pid", p.pid}, {"name", p.name}, {"used_bytes", p.used_bytes}});
    c.evidence.push_back("pid " + std::to_string(p.pid) + " (" + p.name + ") holds " +
                         num(p.used_bytes / 1048576.0, 0) + " MiB");
  }
  if (r->empty()) {
    c.summary = "no compute process";
  } else {
    c.verdict = Verdict::Warn;
    c.summary = std::to_string(r->size()) + " compute process(es) on the GPU";
    c.action =
        "stop them before testing (diagnostics then see less free memory and share the "
        "GPU); a process left from a finished job holds memory (R17)";
  }
  return c;
}

Check judgePersistence(int gpu, const Result<bool>& r) {
  Check c = make("persistence", "persistence mode", gpu);
  if (!r.ok()) return unreadable(c, r.status());
  c.measured = {{"enabled", *r}};
  c.summary = *r ? "enabled" : "disabled";
  if (!*r) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back(
        "without persistence the driver tears the GPU down between jobs: slow "
        "starts, lost state");
    c.action = "enable nvidia-persistenced (or nvidia-smi -pm 1)";
  }
  return c;
}

Check judgeInforom(int gpu, const Result<bool>& r) {
  Check c = make("inforom", "InfoROM", gpu);
  if (!r.ok()) {
    // NVML reports a corrupt InfoROM as an error of its own, not as "false".
    if (r.status().nvmlCode() == 14) {
      c.verdict = Verdict::Fail;
      c.summary = "InfoROM corrupted";
      c.evidence.push_back(r.status().message());
      c.action = kReplace;
      return c;
    }
    return unreadable(c, r.status());
  }
  c.measured = {{"valid", *r}};
  c.summary = *r ? "valid" : "INVALID";
  if (!*r) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back(
        "InfoROM checksum validation failed; ECC and retirement records are not "
        "trustworthy");
    c.action = kReplace;
  }
  return c;
}

Check judgeVectorAdd(int gpu, const Result<GwVecAddResult>& r) {
  Check c = make("cuda_deploy", "CUDA deployment test (vector add)", gpu);
  if (!r.ok()) return cudaFailed(c, r.status());
  c.measured = {
      {"n", r->n}, {"max_abs_error", r->max_abs_error}, {"mismatches", r->mismatches}, {"kernel_ms", r->kernel_ms}};
  if (r->mismatches == 0 && r->max_abs_error == 0) {
    c.summary = "vector add of " + std::to_string(r->n) + " elements, max error 0";
  } else {
    c.verdict = Verdict::Fail;
    c.summary = std::to_string(r->mismatches) + " wrong sums of " + std::to_string(r->n) + ", max error " +
                num(r->max_abs_error, 6);
    c.evidence.push_back("a trivial kernel computed wrong results");
    c.action = kReplace;
  }
  return c;
}

Check judgeMemtest(int gpu, const Result<GwMemtestResult>& r) {
  Check c = make("memtest", "device memory test", gpu);
  if (!r.ok()) return cudaFailed(c, r.status());
  static const char* kPat[4] = {"walking ones/zeros", "own address", "moving inversions", "random"};
  c.measured = {
      {"bytes_tested", r->bytes_tested}, {"errors", r->errors}, {"rounds", r->rounds}, {"seconds", r->seconds}};
  nlohmann::json by = nlohmann::json::object();
  for (int i = 0; i < 4; ++i) by[kPat[i]] = r->errors_by_pattern[i];
  c.measured["errors_by_pattern"] = by;
  std::string size = num(r->bytes_tested / 1073741824.0, 1) + " GiB";
  if (r->errors == 0) {
    c.summary = "0 errors in " + size + ", " + std::to_string(r->rounds) + " round(s)";
    return c;
  }
  c.verdict = Verdict::Fail;
  c.summary = std::to_string(r->errors) + " memory errors in " + size;
  for (int i = 0; i < 4; ++i)
    if (r->errors_by_pattern[i])
      c.evidence.push_back(std::string(kPat[i]) + ": " + std::to_string(r->errors_by_pattern[i]) + " errors");
  for (unsigned i = 0; i < std::min<unsigned>(r->recorded, GW_MEMTEST_MAX_RECORDED); ++i) {
    const GwMemError& e = r->first_errors[i];
    c.evidence.push_back("offset " + hex(e.offset) + ": expected " + hex(e.expected) + " read " + hex(e.actual) +
                         " (xor " + hex(e.expected ^ e.actual) + ")");
  }
  c.action = kReplace;
  return c;
}

Check judgeHostBandwidth(int gpu, const Result<GwBandwidthResult>& r, const PcieLink& link, const SkuThresholds& t) {
  Check c = make("pcie_bandwidth", "host<->device bandwidth", gpu);
  if (!r.ok()) return cudaFailed(c, r.status());
  double theo = pcieTheoreticalGBps(link.max_gen, link.max_width);
  c.measured = {{"h2d_gbps", r->h2d_gbps},         {"d2h_gbps", r->d2h_gbps},  {"h2d_avg_gbps", r->h2d_avg_gbps},
                {"d2h_avg_gbps", r->d2h_avg_gbps}, {"theoretical_gbps", theo}, {"max_gen", link.max_gen},
                {"max_width", link.max_width},     {"seen_gen", link.cur_gen}, {"seen_width", link.cur_width}};
  c.summary = "H2D " + num(r->h2d_gbps) + " GB/s, D2H " + num(r->d2h_gbps) + " GB/s";
  if (theo <= 0) {
    c.summary += " (link rate unknown, not judged)";
    return c;
  }
  double worst = std::min(r->h2d_gbps, r->d2h_gbps);
  double frac = worst / theo;
  c.summary += " of " + num(theo, 2) + " GB/s theoretical (Gen" + std::to_string(link.max_gen) + " x" +
               std::to_string(link.max_width) + "), " + num(frac * 100, 0) + " %";
  if (frac < t.pcie_min_fraction) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back(num(worst) + " GB/s is below " + num(t.pcie_min_fraction * 100, 0) +
                         " % of the link's theoretical rate");
    c.action = "reseat the card, check riser/cable and the slot's lane wiring; then retest";
  } else if (frac < t.pcie_warn_fraction) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back(num(worst) + " GB/s is below " + num(t.pcie_warn_fraction * 100, 0) +
                         " % of the link's theoretical rate");
    c.action = "check the link (gpuwarden dmon -s t) and the CPU/NUMA affinity of the test";
  }
  if (link.cur_width > 0 && link.max_width > 0 && link.cur_width < link.max_width) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back("under load the link ran at x" + std::to_string(link.cur_width) + " of x" +
                         std::to_string(link.max_width));
    c.action = "a degraded PCIe link: reseat the card, check the riser; replace if it persists";
  } else if (link.cur_gen > 0 && link.max_gen > 0 && link.cur_gen < link.max_gen) {
    c.verdict = std::max(c.verdict, Verdict::Warn);
    c.evidence.push_back("under load the link ran at Gen" + std::to_string(link.cur_gen) + " of Gen" +
                         std::to_string(link.max_gen));
    if (c.action.empty()) c.action = "check the slot, riser and BIOS PCIe settings";
  }
  return c;
}

Check judgeP2P(int src_gpu, int dst_gpu, const Result<GwP2PResult>& r, bool nvlink, double expected_gbps,
               const SkuThresholds& t) {
  Check c = make("p2p_bandwidth", "peer-to-peer bandwidth", -1);
  c.gpus_involved = {src_gpu, dst_gpu};
  std::string pair = "GPU" + std::to_string(src_gpu) + "->GPU" + std::to_string(dst_gpu);
  if (!r.ok()) {
    c = cudaFailed(c, r.status());
    c.summary = pair + ": " + c.summary;
    return c;
  }
  c.measured = {{"src", src_gpu},          {"dst", dst_gpu},   {"peer_access", r->peer_access != 0}, {"gbps", r->gbps},
                {"avg_gbps", r->avg_gbps}, {"nvlink", nvlink}, {"expected_gbps", expected_gbps}};
  if (!r->peer_access) {
    if (nvlink) {
      c.verdict = Verdict::Fail;
      c.summary = pair + ": no peer access although both GPUs have active NVLink";
      c.action = "check the NVLink/NVSwitch state (nvidia-smi nvlink -s, fabric manager)";
    } else {
      c.verdict = Verdict::Skip;
      c.summary = pair + ": peer access not supported (traffic goes through host memory)";
    }
    return c;
  }
  c.summary = pair + " " + num(r->gbps) + " GB/s over " + (nvlink ? "NVLink" : "PCIe");
  if (expected_gbps <= 0) return c;
  double frac = r->gbps / expected_gbps;
  c.summary += ", " + num(frac * 100, 0) + " % of " + num(expected_gbps, 1) + " GB/s expected";
  if (frac < t.p2p_min_fraction) {
    // Over PCIe the path (switch, root complex, CPU interconnect) decides as much as the card:
    // a warning; over NVLink a slow pair is a hardware fault.
    c.verdict = nvlink ? Verdict::Fail : Verdict::Warn;
    c.evidence.push_back("below " + num(t.p2p_min_fraction * 100, 0) + " % of the expected rate");
    c.action = nvlink ? "check NVLink errors and link state (nvidia-smi nvlink -e); replace the "
                        "card or baseboard if links are down"
                      : "peer traffic may cross the CPU (see gpuwarden topo); check ACS settings";
  } else if (frac < t.p2p_warn_fraction) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back("below " + num(t.p2p_warn_fraction * 100, 0) + " % of the expected rate");
    c.action = "see gpuwarden topo for the path between the two GPUs";
  }
  return c;
}

Check judgeTriad(int gpu, const Result<GwTriadResult>& r, double peak_gbps, const SkuThresholds& t) {
  Check c = make("stream_triad", "memory bandwidth (STREAM triad)", gpu);
  if (!r.ok()) return cudaFailed(c, r.status());
  c.measured = {{"best_gbps", r->best_gbps},
                {"avg_gbps", r->avg_gbps},
                {"wrong_elements", r->wrong_elements},
                {"peak_gbps", peak_gbps},
                {"bytes_per_array", r->bytes_per_array}};
  c.summary = num(r->best_gbps, 0) + " GB/s";
  if (r->wrong_elements) {
    c.verdict = Verdict::Fail;
    c.summary += ", " + std::to_string(r->wrong_elements) + " WRONG results";
    c.evidence.push_back("a[i] = b[i] + 3*c[i] gave wrong values: memory or compute corruption");
    c.action = kReplace;
    return c;
  }
  if (peak_gbps <= 0) {
    c.summary += " (peak unknown, not judged)";
    return c;
  }
  double frac = r->best_gbps / peak_gbps;
  c.summary += " of " + num(peak_gbps, 0) + " GB/s peak, " + num(frac * 100, 0) + " %";
  if (frac < t.membw_min_fraction) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back("below " + num(t.membw_min_fraction * 100, 0) + " % of the peak");
    c.action =
        "check memory clocks and throttling (gpuwarden dmon -s c); a card that stays "
        "slow must be replaced";
  } else if (frac < t.membw_warn_fraction) {
    c.verdict = Verdict::Warn;
    c.evidence.push_back("below " + num(t.membw_warn_fraction * 100, 0) + " % of the peak");
    c.action = "check memory clocks and throttling (gpuwarden dmon -s c)";
  }
  return c;
}

std::vector<PeerStanding> comparePeers(const std::vector<double>& values, double warn_pct, double fail_pct) {
  std::vector<PeerStanding> out(values.size());
  if (values.size() < 2) return out;
  double sum = 0;
  for (double v : values) sum += v;
  for (size_t i = 0; i < values.size(); ++i) {
    PeerStanding& s = out[i];
    s.has_peers = true;
    s.peer_mean = (sum - values[i]) / (values.size() - 1);
    s.slower_pct = s.peer_mean > 0 ? (s.peer_mean - values[i]) / s.peer_mean * 100.0 : 0;
    if (s.slower_pct > fail_pct)
      s.verdict = Verdict::Fail;
    else if (s.slower_pct > warn_pct)
      s.verdict = Verdict::Warn;
  }
  return out;
}

std::vector<Check> judgeGemmBurn(const std::vector<GemmInput>& runs) {
  std::vector<Check> checks;
  // Group the GPUs that ran fine by name + what actually ran (engine, precision, size).
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& in = runs[i];
    Check c = make("gemm_burn", "GEMM burn", in.gpu);
    if (!in.result.ok()) {
      checks.push_back(cudaFailed(c, in.result.status()));
      continue;
    }
    const GwGemmResult& g = *in.result;
    const char* prec = gemmPrecisionName(g.precision);
    c.measured = {{"precision", prec},
                  {"engine", g.used_cublas ? "cublas" : "builtin"},
                  {"n", g.n},
                  {"iterations", g.iterations},
                  {"failed_iterations", g.failed_iterations},
                  {"miscompared_elements", g.miscompared_elements},
                  {"gflops", g.gflops},
                  {"checksum", hex(g.checksum)},
                  {"seconds", g.seconds}};
    c.summary = num(g.gflops / 1000.0, 1) + " TFLOPS " + prec + " (" + (g.used_cublas ? "cuBLAS" : "built-in kernel") +
                "), " + std::to_string(g.iterations) + " GEMMs compared";
    if (g.iterations == 0) {
      c.verdict = Verdict::Fail;
      c.summary = "no GEMM completed";
      c.action = "look for an Xid in the kernel log";
    } else if (g.failed_iterations > 0 || g.miscompared_elements > 0) {
      c.verdict = Verdict::Fail;
      c.summary += ", " + std::to_string(g.failed_iterations) + " MISCOMPARED";
      c.evidence.push_back(std::to_string(g.failed_iterations) + " of " + std::to_string(g.iterations) +
                           " results differed from the first (" + std::to_string(g.miscompared_elements) +
                           " elements)");
      c.action = kReplace;
    }
    double expected = g.used_cublas ? in.sku.expectedTflops(prec) : 0;
    if (expected > 0) {
      c.measured["expected_tflops"] = expected;
      double frac = g.gflops / 1000.0 / expected;
      if (frac < in.sku.gemm_min_fraction) {
        c.verdict = std::max(c.verdict, Verdict::Warn);
        c.evidence.push_back(num(g.gflops / 1000.0) + " TFLOPS is " + num(frac * 100, 0) + " % of the " +
                             num(expected, 0) + " TFLOPS expected of " + in.sku.name);
        if (c.action.empty()) c.action = "check clocks, power cap and throttle reasons";
      }
    }
    groups[in.name + "|" + prec + "|" + std::to_string(g.used_cublas) + "|" + std::to_string(g.n)].push_back(
        checks.size());
    checks.push_back(std::move(c));
    checks.back().measured["input_index"] = i;
  }
  for (auto& [key, members] : groups) {
    (void)key;
    std::vector<double> values;
    for (size_t ci : members) values.push_back(checks[ci].measured["gflops"].get<double>());
    const SkuThresholds& sku = runs[checks[members[0]].measured["input_index"].get<size_t>()].sku;
    auto standing = comparePeers(values, sku.peer_slow_warn_pct, sku.peer_slow_fail_pct);
    // Identical inputs on the same SKU give identical bits: a minority checksum is suspect.
    std::map<std::string, int> votes;
    for (size_t ci : members) votes[checks[ci].measured["checksum"].get<std::string>()]++;
    for (size_t k = 0; k < members.size(); ++k) {
      Check& c = checks[members[k]];
      const PeerStanding& s = standing[k];
      if (s.has_peers) {
        c.measured["peer_mean_gflops"] = s.peer_mean;
        c.measured["slower_than_peers_pct"] = s.slower_pct;
        if (s.verdict != Verdict::Pass) {
          c.verdict = std::max(c.verdict, s.verdict);
          c.evidence.push_back(num(s.slower_pct, 1) + " % slower than the mean of its " +
                               std::to_string(members.size() - 1) + " peer(s) (" + num(s.peer_mean / 1000.0, 1) +
                               " TFLOPS)");
          if (c.action.empty())
            c.action =
                "a straggler: check its clocks, temperature, power cap and PCIe link; "
                "a card that stays slow must be replaced";
        }
      }
      if (votes.size() > 1) {
        int mine = votes[c.measured["checksum"].get<std::string>()];
        int best = 0;
        for (auto& [sum, n] : votes) best = std::max(best, n);
        (void)best;
        if (members.size() >= 3 && mine * 2 < static_cast<int>(members.size())) {
          c.verdict = Verdict::Fail;
          c.evidence.push_back("its result differs from the majority of identical GPUs");
          c.action = kReplace;
        } else if (mine * 2 <= static_cast<int>(members.size())) {
          c.verdict = std::max(c.verdict, Verdict::Warn);
          // One side of the split is wrong: a burn must not end in "all OK" (burn.h, suspect).
          c.measured["checksum_disputed"] = true;
          c.evidence.push_back(
              "its result differs from other GPUs of the same model; with no "
              "majority the wrong one cannot be named");
        }
      }
    }
  }
  for (auto& c : checks) c.measured.erase("input_index");
  return checks;
}

Check judgeTargetedPower(int gpu, const Result<GwPowerResult>& r, const PowerRun& p, const SkuThresholds& t) {
  Check c = make("targeted_power", "targeted power", gpu);
  if (!r.ok()) return cudaFailed(c, r.status());
  c.measured = {{"limit_w", p.limit_w},
                {"target_w", p.target_w},
                {"mean_w", p.mean_w},
                {"max_w", p.max_w},
                {"mean_duty", r->mean_duty},
                {"iterations", r->iterations},
                {"failed_iterations", r->failed_iterations},
                {"seconds", r->seconds}};
  if (r->failed_iterations > 0) {
    c.verdict = Verdict::Fail;
    c.summary = std::to_string(r->failed_iterations) + " load results MISCOMPARED under power";
    c.action = kReplace;
    return c;
  }
  if (!p.read_error.empty() || p.samples == 0 || p.target_w <= 0) {
    c.verdict = Verdict::Warn;
    c.summary = "load ran, but the power draw could not be judged";
    if (!p.read_error.empty()) c.evidence.push_back(p.read_error);
    return c;
  }
  double frac = p.mean_w / p.target_w;
  c.summary = num(p.mean_w, 0) + " W mean of " + num(p.target_w, 0) + " W target (" +
              num(t.power_target_fraction * 100, 0) + " % of the " + num(p.limit_w, 1) + " W limit), " +
              num(frac * 100, 0) + " %";
  if (frac < t.power_warn_fraction) {
    c.verdict = frac < t.power_min_fraction ? Verdict::Fail : Verdict::Warn;
    c.evidence.push_back("could not reach the target power at duty " + num(r->mean_duty * 100, 0) + " %");
    c.action =
        "a power cap, throttling or a loose power cable (R18): check clock event "
        "reasons and the card's power connectors";
  }
  return c;
}

std::string xidMeaning(uint64_t xid) {
  if (xid > static_cast<uint64_t>(std::numeric_limits<int>::max())) return "";
  return std::string(knowledge::headline(knowledge::lookupXid(static_cast<int>(xid))));
}

Check judgeWatch(int gpu, const WatchSummary& w, const SkuThresholds& t) {
  Check c = make("watch", "health during the tests", gpu);
  c.measured = {{"samples", w.samples},       {"max_temp_c", w.max_temp_c},   {"min_sm_mhz", w.min_sm_mhz},
                {"max_sm_mhz", w.max_sm_mhz}, {"max_power_w", w.max_power_w}, {"clock_event_reasons", w.reasons_seen},
                {"dbe_start", w.dbe_start},   {"dbe_end", w.dbe_end}};
  nlohmann::json xids = nlohmann::json::array();
  for (auto& [step, x] : w.xids) xids.push_back({{"step", step}, {"xid", x}});
  c.measured["xids"] = xids;
  c.summary = w.temp_known ? "max " + std::to_string(w.max_temp_c) + " C" : "temperature unknown";
  if (w.max_sm_mhz) c.summary += ", SM " + std::to_string(w.min_sm_mhz) + "-" + std::to_string(w.max_sm_mhz) + " MHz";
  if (w.max_power_w > 0) c.summary += ", max " + num(w.max_power_w, 0) + " W";
  for (auto& [step, x] : w.xids) {
    c.verdict = Verdict::Fail;
    std::string m = xidMeaning(x);
    c.evidence.push_back("new Xid " + std::to_string(x) + (m.empty() ? "" : " (" + m + ")") + " during " + step);
    c.action =
        "a GPU that raises an Xid under test is not fit for production: drain it, see "
        "gpuwarden explain xid " +
        std::to_string(x) + ", replace if hardware";
  }
  if (!w.lost_during.empty()) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back("the GPU stopped answering NVML during " + w.lost_during + " (" + w.lost_error + ")");
    c.action = "drain the node; reset the GPU (nvidia-smi -r) or reboot, and replace it if it falls off the bus again";
  }
  if (w.dbe_known && w.dbe_end > w.dbe_start) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back(std::to_string(w.dbe_end - w.dbe_start) + " new uncorrectable (double-bit) ECC error(s)" +
                         (w.dbe_during.empty() ? "" : " during " + w.dbe_during));
    c.action = kReplace;
  }
  if (w.temp_known && w.max_temp_c > t.max_temp_c) {
    c.verdict = Verdict::Fail;
    c.evidence.push_back("reached " + std::to_string(w.max_temp_c) + " C during " + w.hottest_during + ", above the " +
                         num(t.max_temp_c, 0) + " C allowed for " + t.name);
    if (c.action.empty())
      c.action =
          "check airflow, fans, heatsink contact and the room; a card that overheats "
          "under load with good cooling must be replaced";
  }
  const uint64_t kHw = 0x8 | 0x40 | 0x80, kSwThermal = 0x20;
  if (w.reasons_seen & (kHw | kSwThermal)) {
    c.verdict = std::max(c.verdict, Verdict::Warn);
    c.evidence.push_back("clock event reasons seen: " +
                         knowledge::clockEventReasonsText(w.reasons_seen & (kHw | kSwThermal)));
    if (c.action.empty()) c.action = "thermal or power slowdown under load: check cooling and power delivery";
  }
  if (w.reasons_seen & 0x4) c.evidence.push_back("SW power cap reached (normal at full load)");
  for (const auto& e : w.read_errors) c.evidence.push_back("could not read: " + e);
  return c;
}

}  // namespace gw::diag
