// libFuzzer target for the simulator's scenario parser (src/sim/scenario_parser.h). Each input is
// written as a scenario file into a folder that also holds copies of the real scenarios
// (scenarios/*.yaml), so that `base: dgx-h100` and friends resolve as they do for users.
// Invariants: loading never throws and is deterministic (the same answer and sources twice); an
// error names a file that was read and a line in it ("file:N: ..."); a scenario that loads holds
// only what the format allows (docs/scenarios.md): at most 64 GPUs, each with a known profile,
// a valid or generated UUID, a unique bus id, a power limit inside the profile's range, CPU
// ranges in order, MIG instances only on a MIG GPU within its 7 slices, processes on existing
// instances, NVLinks sized to the profile and pointing at existing GPUs, and faults naming
// existing GPUs.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "sim/scenario_parser.h"

#ifndef GW_FUZZ_SCENARIOS
#error "GW_FUZZ_SCENARIOS (the scenarios/ folder) must be defined"
#endif

namespace {

namespace fs = std::filesystem;
using gw::sim::LoadResult;
using gw::sim::Scenario;

std::string_view g_input;
std::string g_dir, g_path;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "scenario_fuzz: invariant broken: %s\n--- input ---\n%.*s\n", what.c_str(),
               static_cast<int>(g_input.size()), g_input.data());
  std::abort();
}

std::size_t linesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n') +
                                  std::count(text.begin(), text.end(), '\r'));
}

// "FILE:N: message", FILE one of the files read (a line of `sources` that names it), N in it.
void checkLocated(const LoadResult& r) {
  const std::string& e = r.error;
  check(!e.empty(), "an error without a message");
  std::string file;
  for (std::size_t p = 0; (p = e.find(':', p)) != std::string::npos; ++p) {
    const std::string candidate = e.substr(0, p);
    if (candidate == g_path || (candidate.rfind(g_dir + "/", 0) == 0 && fs::exists(candidate))) {
      file = candidate;
      break;
    }
  }
  check(!file.empty(), "the error names no file that exists: " + e);
  std::size_t p = file.size() + 1, line = 0, digits = 0;
  while (p < e.size() && e[p] >= '0' && e[p] <= '9' && digits < 9) line = line * 10 + (e[p++] - '0'), ++digits;
  if (digits == 0) {
    // Only a file that cannot be read has no line ("path: cannot read scenario file").
    check(e.compare(p, std::string::npos, " cannot read scenario file") == 0, "the error has no line: " + e);
    return;
  }
  check(p < e.size() && e[p] == ':', "the error has no line: " + e);
  check(line >= 1 && line <= linesOf(file) + 1, "the error names line " + std::to_string(line) + ": " + e);
}

void checkScenario(const Scenario& s) {
  check(s.gpus.size() <= 64, "more than 64 GPUs");
  check(!s.gpus.empty() || s.init_error != gw::sim::InitError::kNone, "no GPUs on a working driver");
  std::set<std::tuple<unsigned, unsigned, unsigned, unsigned>> buses;
  std::set<std::string> uuids;
  std::set<unsigned> minors;
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    const auto& g = s.gpus[i];
    check(g.index == i && g.profile, "a GPU without its index or profile");
    const auto& P = *g.profile;
    check(g.uuid.empty() || (g.uuid.size() == 40 && g.uuid.starts_with("GPU-")), "a malformed uuid " + g.uuid);
    check(g.uuid.empty() || uuids.insert(g.uuid).second, "a uuid twice");
    check(g.minor <= 254 && minors.insert(g.minor).second, "a minor number twice or past 254");
    check(g.serial.size() < 30, "a serial of 30 characters or more");
    check(buses.insert({g.pci_domain, g.pci_bus, g.pci_device, g.pci_function}).second, "a bus id twice");
    check(g.pci_bus <= 0xff && g.pci_device <= 0x1f && g.pci_function <= 7 && g.pci_domain <= 0xffff,
          "a bus id out of range");
    check(g.power_limit_mw >= P.power_min_mw && g.power_limit_mw <= P.power_max_mw,
          "a power limit outside the profile's range");
    check(g.numa_node >= 0 && g.numa_node <= 63 && !g.cpus.empty(), "a bad NUMA node or no CPUs");
    for (const auto& [a, b] : g.cpus) check(a <= b && b <= 65535, "a CPU range out of order");
    check(g.ambient >= 0 && g.ambient <= 60, "ambient out of range");
    check(!g.ecc || P.ecc_supported, "ECC on a GPU without it");
    check(g.mig_enabled || g.mig_instances.empty(), "MIG instances with MIG disabled");
    check(!g.mig_enabled || P.mig_capable, "MIG on a GPU without it");
    unsigned slices = 0;
    for (const auto& m : g.mig_instances) {
      check(m.profile != nullptr, "a MIG instance without a profile");
      slices += m.profile->gpu_slices;
    }
    check(slices <= 7, "MIG instances over 7 slices");
    std::set<unsigned> pids;
    for (const auto& p : g.processes) {
      check(p.pid >= 1 && pids.insert(p.pid).second, "a pid twice or 0");
      check(!p.name.empty() && p.name.size() <= 255, "a process name out of range");
      check(p.stop > p.start, "a process that stops before it starts");
      check(g.mig_enabled == p.gpu_instance.has_value(), "a MIG placement that does not match MIG");
      if (p.gpu_instance) {
        check(std::any_of(g.mig_instances.begin(), g.mig_instances.end(),
                          [&](const auto& m) {
                            return m.gpu_instance_id == *p.gpu_instance && m.compute_instance_id == p.compute_instance;
                          }),
              "a process on a MIG instance that does not exist");
      }
    }
    if (g.workload.preset == gw::sim::WorkloadPreset::kCurve) {
      check(!g.workload.curve.empty(), "an empty curve");
      for (std::size_t k = 0; k < g.workload.curve.size(); ++k) {
        check(g.workload.curve[k].second >= 0 && g.workload.curve[k].second <= 100, "a curve point out of 0..100 %");
        check(k == 0 || g.workload.curve[k].first > g.workload.curve[k - 1].first, "curve times not increasing");
      }
    }
  }
  check(s.nvlinks.size() == s.gpus.size(), "NVLink table not one per GPU");
  for (std::size_t i = 0; i < s.nvlinks.size(); ++i) {
    check(s.nvlinks[i].size() == s.gpus[i].profile->nvlink_links, "NVLinks not sized to the profile");
    for (const auto& l : s.nvlinks[i]) {
      if (l.remote == gw::sim::NvLinkRemote::kGpu) check(l.peer < s.gpus.size() && l.peer != i, "a bridge to nowhere");
      if (l.remote == gw::sim::NvLinkRemote::kSwitch) check(l.switch_index < s.nvswitch_count, "a link to no switch");
    }
  }
  for (const auto& f : s.faults) {
    for (unsigned g : f.gpus) check(g < s.gpus.size(), "a fault on a GPU that does not exist");
    check(f.at >= 0 && f.duration > 0, "a fault's time out of range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/gw-scenario-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) std::abort();
  g_dir = tmpl;
  g_path = g_dir + "/fuzz-input.yaml";
  for (const auto& e : fs::directory_iterator(GW_FUZZ_SCENARIOS))
    if (e.path().extension() == ".yaml") fs::copy_file(e.path(), g_dir + "/" + e.path().filename().string());
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(g_dir, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  g_input = std::string_view(reinterpret_cast<const char*>(data), size);
  {
    std::ofstream out(g_path, std::ios::binary | std::ios::trunc);
    out.write(g_input.data(), static_cast<std::streamsize>(size));
    if (!out) std::abort();
  }
  const LoadResult r = gw::sim::loadScenarioFile(g_path);
  const LoadResult again = gw::sim::loadScenarioFile(g_path);
  check(r.ok == again.ok && r.error == again.error && r.sources == again.sources, "two loads differ");
  check(r.sources.rfind(g_path + "\n", 0) == 0, "the sources do not start with the scenario file");
  if (!r.ok) {
    checkLocated(r);
    return 0;
  }
  check(r.error.empty(), "a loaded scenario with an error");
  checkScenario(r.scenario);
  return 0;
}
