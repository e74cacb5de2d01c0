#include "diag/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "diag/plan.h"
#include "platform/bounded_json.h"

namespace gw::diag {

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Skip:
      return "skip";
    case Verdict::Pass:
      return "pass";
    case Verdict::Warn:
      return "warn";
    case Verdict::Incomplete:
      return "incomplete";
    case Verdict::Fail:
      return "fail";
  }
  return "?";
}

bool verdictFromName(const std::string& name, Verdict& out) {
  for (Verdict v : {Verdict::Skip, Verdict::Pass, Verdict::Warn, Verdict::Incomplete, Verdict::Fail})
    if (name == verdictName(v)) {
      out = v;
      return true;
    }
  return false;
}

Verdict worst(Verdict a, Verdict b) { return std::max(a, b); }

const std::vector<ExitCodeMeaning>& exitCodeMeanings() {
  static const std::vector<ExitCodeMeaning> kCodes = {
      {kExitPassed, "nothing failed and every GPU was tested (warnings and incidental skips allowed)"},
      {kExitFailed, "at least one check failed"},
      {kExitCouldNotRun, "the diagnostic could not run: bad options, unreadable thresholds file, no GPU, cancelled"},
      {kExitNoDriver, "no NVIDIA driver / NVML"},
      {kExitIncomplete,
       "incomplete: nothing failed, but on at least one GPU every GPU test was skipped (no CUDA, GPU not "
       "visible to CUDA): the run does not accept that GPU"},
  };
  return kCodes;
}

std::string exitCodeTableMarkdown() {
  std::string md = "| exit | meaning |\n| --- | --- |\n";
  for (const auto& e : exitCodeMeanings()) md += "| " + std::to_string(e.code) + " | " + e.meaning + " |\n";
  return md;
}

std::string exitCodeHelp() {
  std::string s = "Exit codes:";
  for (const auto& e : exitCodeMeanings()) s += "\n  " + std::to_string(e.code) + "  " + e.meaning;
  return s;
}

int DiagReport::exitCode() const {
  if (!error.empty()) return kExitCouldNotRun;
  switch (overall) {
    case Verdict::Fail:
      return kExitFailed;
    case Verdict::Incomplete:
      return kExitIncomplete;
    case Verdict::Skip:
    case Verdict::Pass:
    case Verdict::Warn:
      break;
  }
  return kExitPassed;
}

void DiagReport::finalize() {
  overall = Verdict::Pass;
  for (auto& g : gpus) {
    g.verdict = Verdict::Pass;
    g.reasons.clear();
  }
  std::set<std::string> gpu_tests;
  if (auto plan = buildPlan(level))
    for (const auto& s : plan->steps)
      if (s.needs_cuda) gpu_tests.insert(s.id);
  std::map<int, GpuSummary*> by_index;
  std::map<int, bool> gpu_test_ran;
  std::map<int, std::string> why_skipped;
  for (auto& g : gpus) by_index[g.gpu] = &g;
  for (const auto& c : checks) {
    overall = worst(overall, c.verdict == Verdict::Skip ? Verdict::Pass : c.verdict);
    std::vector<int> involved = c.gpus_involved;
    if (c.gpu >= 0) involved.push_back(c.gpu);
    for (int gi : involved) {
      if (gpu_tests.count(c.test)) {
        if (c.verdict != Verdict::Skip) gpu_test_ran[gi] = true;
        if (c.verdict == Verdict::Skip && why_skipped[gi].empty()) why_skipped[gi] = c.summary;
      }
      auto it = by_index.find(gi);
      if (it == by_index.end() || c.verdict == Verdict::Skip) continue;
      it->second->verdict = worst(it->second->verdict, c.verdict);
      if (c.verdict >= Verdict::Warn)
        it->second->reasons.push_back(std::string(verdictName(c.verdict)) + " " + c.test + ": " + c.summary);
    }
  }
  // Skipped GPU tests never fail a card, but an acceptance run that tested nothing on a GPU must
  // not pass it either. A skip beside tests that ran (no peer access for p2p) stays a note.
  if (gpu_tests.empty()) return;
  for (auto& g : gpus) {
    if (gpu_test_ran[g.gpu] || g.verdict == Verdict::Fail) continue;
    g.verdict = Verdict::Incomplete;
    const std::string& why = why_skipped[g.gpu];
    g.reasons.push_back("incomplete: no GPU test ran" + (why.empty() ? std::string() : " (" + why + ")"));
    overall = worst(overall, Verdict::Incomplete);
  }
}

std::string cudaVersionText(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

namespace {
std::string upper(const char* s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return r;
}
}  // namespace

std::string renderText(const DiagReport& r) {
  std::ostringstream o;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.1f", r.seconds);
  o << "gpuwarden diag -r " << r.level << "  (" << buf << " s)\n";
  if (!r.error.empty()) {
    o << "error: " << r.error << "\n";
    return o.str();
  }
  {
    const auto& st = r.stack;
    auto orUnknown = [](const std::string& v) { return v.empty() ? std::string("unknown") : v; };
    o << "driver " << orUnknown(st.driver_version) << ", CUDA " << orUnknown(cudaVersionText(st.cuda_driver_version))
      << " (driver), runtime "
      << (st.cuda_runtime_version ? cudaVersionText(st.cuda_runtime_version) : std::string("none loaded"))
      << ", gpuwarden " << orUnknown(st.gpuwarden_version) << "\n";
  }
  if (!r.cuda_status.empty()) o << "CUDA tests: " << r.cuda_status << "\n";
  auto printCheck = [&](const Check& c) {
    std::snprintf(buf, sizeof buf, "  %-5s %-32s ", upper(verdictName(c.verdict)).c_str(), c.title.c_str());
    o << buf << c.summary << "\n";
    if (c.verdict >= Verdict::Warn) {
      for (const auto& e : c.evidence) o << "          - " << e << "\n";
      if (!c.action.empty()) o << "          -> " << c.action << "\n";
    }
  };
  bool node = false;
  for (const auto& c : r.checks)
    if (c.gpu < 0 && c.gpus_involved.empty()) {
      if (!node) o << "\nNode\n";
      node = true;
      printCheck(c);
    }
  for (const auto& g : r.gpus) {
    o << "\nGPU " << g.gpu << "  " << g.name << "  " << g.pci_bus_id;
    if (!g.sku.empty()) o << "  [thresholds: " << g.sku << "]";
    if (!g.serial.empty()) o << "  serial " << g.serial;
    if (!g.vbios.empty()) o << "  VBIOS " << g.vbios;
    o << "\n";
    for (const auto& c : r.checks)
      if (c.gpu == g.gpu) printCheck(c);
  }
  bool pairs = false;
  for (const auto& c : r.checks)
    if (c.gpu < 0 && !c.gpus_involved.empty()) {
      if (!pairs) o << "\nGPU pairs\n";
      pairs = true;
      printCheck(c);
    }
  o << "\nVerdict\n";
  for (const auto& g : r.gpus) {
    o << "  GPU " << g.gpu << ": " << upper(verdictName(g.verdict));
    if (g.reasons.empty()) {
      o << "\n";
      continue;
    }
    o << "\n";
    for (const auto& why : g.reasons) o << "      " << why << "\n";
  }
  o << "  overall: " << upper(verdictName(r.overall)) << " (exit " << r.exitCode() << ")\n";
  if (r.overall == Verdict::Incomplete)
    o << "  No GPU test ran on the GPUs marked INCOMPLETE: this run does not accept them. Run it where\n"
         "  CUDA sees them (driver, libgpuwarden-cuda.so, CUDA_VISIBLE_DEVICES).\n";
  return o.str();
}

nlohmann::json toJson(const DiagReport& r) {
  nlohmann::json j;
  j["level"] = r.level;
  j["node"] = r.node.empty() ? nlohmann::json() : nlohmann::json(r.node);
  j["seconds"] = r.seconds;
  j["overall"] = verdictName(r.overall);
  j["exit_code"] = r.exitCode();
  if (!r.error.empty()) j["error"] = r.error;
  j["cuda"] = r.cuda_status;
  auto orNull = [](const std::string& v) { return v.empty() ? nlohmann::json() : nlohmann::json(v); };
  j["stack"] = {{"gpuwarden_version", orNull(r.stack.gpuwarden_version)},
                {"driver_version", orNull(r.stack.driver_version)},
                {"cuda_driver_version", orNull(cudaVersionText(r.stack.cuda_driver_version))},
                {"cuda_runtime_version", orNull(cudaVersionText(r.stack.cuda_runtime_version))}};
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : r.gpus)
    j["gpus"].push_back({{"index", g.gpu},
                         {"name", g.name},
                         {"uuid", g.uuid},
                         {"pci_bus_id", g.pci_bus_id},
                         {"serial", orNull(g.serial)},
                         {"vbios_version", orNull(g.vbios)},
                         {"thresholds", g.sku},
                         {"verdict", verdictName(g.verdict)},
                         {"reasons", g.reasons}});
  j["checks"] = nlohmann::json::array();
  for (const auto& c : r.checks) {
    nlohmann::json cj = {{"test", c.test},       {"title", c.title},       {"verdict", verdictName(c.verdict)},
                         {"summary", c.summary}, {"evidence", c.evidence}, {"measured", c.measured},
                         {"seconds", c.seconds}};
    if (c.gpu >= 0) cj["gpu"] = c.gpu;
    if (!c.gpus_involved.empty()) cj["gpus"] = c.gpus_involved;
    if (!c.action.empty()) cj["action"] = c.action;
    j["checks"].push_back(std::move(cj));
  }
  return j;
}

namespace {

using nlohmann::json;

// Readers for reportFromJson: a missing (or null) optional field keeps the default, a present
// field of the wrong type is an error naming it.
struct Reader {
  std::string error;

  bool fail(const std::string& where, const std::string& what) {
    if (error.empty()) error = where + ": " + what;
    return false;
  }
  void str(const json& o, const char* key, const std::string& where, std::string& out) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return;
    if (!it->is_string()) {
      fail(where + key, "must be a string");
      return;
    }
    out = it->get<std::string>();
  }
  void integer(const json& o, const char* key, const std::string& where, int& out, bool required) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
      if (required) fail(where + key, "missing");
      return;
    }
    // In int's range too: get<int>() of 2^32+1 would be 1 (a report of level 4294967297 filed as 1).
    const auto n = platform::asWholeNumber<int>(*it);
    if (!n) {
      fail(where + key, "must be an integer");
      return;
    }
    out = *n;
  }
  void number(const json& o, const char* key, const std::string& where, double& out) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return;
    if (!it->is_number()) {
      fail(where + key, "must be a number");
      return;
    }
    out = it->get<double>();
  }
  void verdict(const json& o, const char* key, const std::string& where, Verdict& out) {
    std::string name;
    str(o, key, where, name);
    if (name.empty()) return;
    if (!verdictFromName(name, out)) fail(where + key, "unknown verdict '" + name + "'");
  }
  void strings(const json& o, const char* key, const std::string& where, std::vector<std::string>& out) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return;
    if (!it->is_array()) {
      fail(where + key, "must be an array of strings");
      return;
    }
    for (const auto& e : *it) {
      if (!e.is_string()) {
        fail(where + key, "must be an array of strings");
        return;
      }
      out.push_back(e.get<std::string>());
    }
  }
  // "12.4" -> 12040; "" or absent -> 0.
  void cudaVersion(const json& o, const char* key, const std::string& where, int& out) {
    std::string v;
    str(o, key, where, v);
    if (v.empty()) return;
    unsigned major = 0, minor = 0;
    char rest = 0;
    if (std::sscanf(v.c_str(), "%u.%u%c", &major, &minor, &rest) != 2 || minor > 99) {
      fail(where + key, "'" + v + "' is not a CUDA version (major.minor)");
      return;
    }
    out = static_cast<int>(major * 1000 + minor * 10);
  }
};

}  // namespace

Result<DiagReport> reportFromJson(const json& j) {
  if (!j.is_object()) return Status::Error("a diag report must be a JSON object");
  DiagReport r;
  Reader rd;
  rd.integer(j, "level", "", r.level, true);
  rd.number(j, "seconds", "", r.seconds);
  rd.str(j, "node", "", r.node);
  rd.verdict(j, "overall", "", r.overall);
  rd.str(j, "error", "", r.error);
  rd.str(j, "cuda", "", r.cuda_status);
  if (auto st = j.find("stack"); st != j.end() && !st->is_null()) {
    if (!st->is_object()) return Status::Error("stack: must be an object");
    rd.str(*st, "gpuwarden_version", "stack.", r.stack.gpuwarden_version);
    rd.str(*st, "driver_version", "stack.", r.stack.driver_version);
    rd.cudaVersion(*st, "cuda_driver_version", "stack.", r.stack.cuda_driver_version);
    rd.cudaVersion(*st, "cuda_runtime_version", "stack.", r.stack.cuda_runtime_version);
  }
  if (auto gs = j.find("gpus"); gs != j.end() && !gs->is_null()) {
    if (!gs->is_array()) return Status::Error("gpus: must be an array");
    for (std::size_t i = 0; i < gs->size(); ++i) {
      const json& g = (*gs)[i];
      const std::string at = "gpus[" + std::to_string(i) + "].";
      if (!g.is_object()) return Status::Error("gpus[" + std::to_string(i) + "]: must be an object");
      GpuSummary s;
      rd.integer(g, "index", at, s.gpu, true);
      rd.str(g, "name", at, s.name);
      rd.str(g, "uuid", at, s.uuid);
      rd.str(g, "pci_bus_id", at, s.pci_bus_id);
      rd.str(g, "serial", at, s.serial);
      rd.str(g, "vbios_version", at, s.vbios);
      rd.str(g, "thresholds", at, s.sku);
      rd.verdict(g, "verdict", at, s.verdict);
      rd.strings(g, "reasons", at, s.reasons);
      r.gpus.push_back(std::move(s));
    }
  }
  if (auto cs = j.find("checks"); cs != j.end() && !cs->is_null()) {
    if (!cs->is_array()) return Status::Error("checks: must be an array");
    for (std::size_t i = 0; i < cs->size(); ++i) {
      const json& c = (*cs)[i];
      const std::string at = "checks[" + std::to_string(i) + "].";
      if (!c.is_object()) return Status::Error("checks[" + std::to_string(i) + "]: must be an object");
      Check k;
      rd.str(c, "test", at, k.test);
      rd.str(c, "title", at, k.title);
      rd.verdict(c, "verdict", at, k.verdict);
      rd.str(c, "summary", at, k.summary);
      rd.strings(c, "evidence", at, k.evidence);
      rd.str(c, "action", at, k.action);
      rd.number(c, "seconds", at, k.seconds);
      rd.integer(c, "gpu", at, k.gpu, false);
      if (auto m = c.find("measured"); m != c.end()) k.measured = *m;  // any shape a test measured
      if (auto inv = c.find("gpus"); inv != c.end() && !inv->is_null()) {
        if (!inv->is_array()) return Status::Error(at + "gpus: must be an array of GPU indices");
        for (const auto& x : *inv) {
          const auto n = platform::asWholeNumber<int>(x);
          if (!n) return Status::Error(at + "gpus: must be an array of GPU indices");
          k.gpus_involved.push_back(*n);
        }
      }
      r.checks.push_back(std::move(k));
    }
  }
  if (!rd.error.empty()) return Status::Error(rd.error);
  return r;
}

}  // namespace gw::diag
