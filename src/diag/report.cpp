#include "diag/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace gw::diag {

const char* verdictName(Verdict v) {
  switch (v) {
    case Verdict::Skip:
      return "skip";
    case Verdict::Pass:
      return "pass";
    case Verdict::Warn:
      return "warn";
    case Verdict::Fail:
      return "fail";
  }
  return "?";
}

Verdict worst(Verdict a, Verdict b) { return std::max(a, b); }

int DiagReport::exitCode() const {
  if (!error.empty()) return 2;
  return overall == Verdict::Fail ? 1 : 0;
}

void DiagReport::finalize() {
  overall = Verdict::Pass;
  for (auto& g : gpus) {
    g.verdict = Verdict::Pass;
    g.reasons.clear();
  }
  std::map<int, GpuSummary*> by_index;
  for (auto& g : gpus) by_index[g.gpu] = &g;
  for (const auto& c : checks) {
    overall = worst(overall, c.verdict == Verdict::Skip ? Verdict::Pass : c.verdict);
    std::vector<int> involved = c.gpus_involved;
    if (c.gpu >= 0) involved.push_back(c.gpu);
    for (int gi : involved) {
      auto it = by_index.find(gi);
      if (it == by_index.end() || c.verdict == Verdict::Skip) continue;
      it->second->verdict = worst(it->second->verdict, c.verdict);
      if (c.verdict >= Verdict::Warn)
        it->second->reasons.push_back(std::string(verdictName(c.verdict)) + " " + c.test + ": " + c.summary);
    }
  }
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
  return o.str();
}

nlohmann::json toJson(const DiagReport& r) {
  nlohmann::json j;
  j["level"] = r.level;
  j["seconds"] = r.seconds;
  j["overall"] = verdictName(r.overall);
  j["exit_code"] = r.exitCode();
  if (!r.error.empty()) j["error"] = r.error;
  j["cuda"] = r.cuda_status;
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : r.gpus)
    j["gpus"].push_back({{"index", g.gpu},
                         {"name", g.name},
                         {"uuid", g.uuid},
                         {"pci_bus_id", g.pci_bus_id},
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

}  // namespace gw::diag
