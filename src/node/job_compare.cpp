#include "node/job_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gw::node {

using json = nlohmann::json;

namespace {

struct AtLoad {
  int index = -1;
  double clock = 0;  // MHz, 0 when the GPU was never at load
};

// uuid → clock at load, from a job document's fingerprint (else its per-GPU accounts).
std::map<std::string, AtLoad> clocks(const json& job) {
  std::map<std::string, AtLoad> out;
  const json* gpus = nullptr;
  if (job.contains("fingerprint") && job["fingerprint"].is_object() && job["fingerprint"].contains("gpus"))
    gpus = &job["fingerprint"]["gpus"];
  else if (job.contains("gpus"))
    gpus = &job["gpus"];
  if (!gpus || !gpus->is_array()) return out;
  for (const auto& g : *gpus) {
    if (!g.is_object() || !g.contains("uuid") || !g["uuid"].is_string()) continue;
    AtLoad a;
    a.index = g.value("index", -1);
    if (g.contains("at_load") && g["at_load"].is_object() && g["at_load"].value("sm_clock_mhz", json()).is_number())
      a.clock = g["at_load"]["sm_clock_mhz"].get<double>();
    out[g["uuid"].get<std::string>()] = a;
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Each GPU's clock against the median of the others' in the same run (fraction; 0 alone).
std::map<std::string, double> againstPeers(const std::map<std::string, AtLoad>& run) {
  std::map<std::string, double> out;
  for (const auto& [uuid, a] : run) {
    if (a.clock <= 0) continue;
    std::vector<double> others;
    for (const auto& [u, b] : run)
      if (u != uuid && b.clock > 0) others.push_back(b.clock);
    const double m = median(others);
    out[uuid] = m > 0 ? a.clock / m - 1 : 0;
  }
  return out;
}

std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", f * 100);
  return buf;
}

json installOf(const json& job) {
  if (job.contains("fingerprint") && job["fingerprint"].is_object() && job["fingerprint"].contains("install") &&
      job["fingerprint"]["install"].is_object())
    return job["fingerprint"]["install"];
  return json::object();
}

}  // namespace

json compareJobs(const json& a, const json& b) {
  const auto ca = clocks(a), cb = clocks(b);
  const json ia = installOf(a), ib = installOf(b);
  json out;
  json changes = json::array();
  for (const char* k : {"driver_version", "cuda_driver_version", "install_record"})
    if (ia.value(k, json()) != ib.value(k, json()))
      changes.push_back({{"what", k}, {"a", ia.value(k, json())}, {"b", ib.value(k, json())}});
  const bool install_changed = !changes.empty();
  out["install_changed"] = install_changed;
  out["changes"] = changes;
  const auto pa = againstPeers(ca), pb = againstPeers(cb);
  json gpus = json::array(), slower = json::array(), ageing = json::array();
  std::size_t common = 0;
  for (const auto& [uuid, x] : ca) {
    auto it = cb.find(uuid);
    if (it == cb.end() || x.clock <= 0 || it->second.clock <= 0) continue;
    ++common;
    const double change = it->second.clock / x.clock - 1;
    json g{{"uuid", uuid},
           {"index_a", x.index},
           {"index_b", it->second.index},
           {"clock_a", x.clock},
           {"clock_b", it->second.clock},
           {"change_pct", change * 100},
           {"peers_a_pct", pa.count(uuid) ? pa.at(uuid) * 100 : 0.0},
           {"peers_b_pct", pb.count(uuid) ? pb.at(uuid) * 100 : 0.0}};
    gpus.push_back(g);
    if (change <= -kSlowerFraction) slower.push_back(uuid);
    // Below its peers in both runs: the card, not the install (a regression slows them all).
    if (pa.count(uuid) && pb.count(uuid) && pa.at(uuid) <= -kSlowerFraction && pb.at(uuid) <= -kSlowerFraction)
      ageing.push_back(uuid);
  }
  out["gpus"] = gpus;
  out["slower_gpus"] = slower;
  out["ageing_gpus"] = ageing;
  if (common == 0) {
    out["verdict"] = "not_comparable";
    out["summary"] = "the two jobs share no GPU that ran at load in both: nothing to compare";
    return out;
  }
  // A regression slows most of the GPUs both runs share, under a new install.
  const bool regression = install_changed && slower.size() * 2 > common;
  std::string summary;
  if (regression) {
    std::vector<double> ch;
    for (const auto& g : gpus) ch.push_back(g["change_pct"].get<double>() / 100);
    std::string what;
    for (const auto& c : changes)
      if (c["what"] != "install_record")
        what +=
            (what.empty() ? "" : ", ") + c["what"].get<std::string>() + " " + c["a"].dump() + " -> " + c["b"].dump();
    summary = "driver regression: " + std::to_string(slower.size()) + " of " + std::to_string(common) +
              " shared GPUs are slower at load (median " + pct(median(ch)) + ") under a new install" +
              (what.empty() ? "" : " (" + what + ")");
  }
  if (!ageing.empty()) {
    std::string list;
    for (const auto& u : ageing) {
      const auto& g = *std::find_if(gpus.begin(), gpus.end(), [&](const json& x) { return x["uuid"] == u; });
      list += (list.empty() ? "" : ", ") +
              ("GPU " + std::to_string(g["index_b"].get<int>()) + " (" + u.get<std::string>() + ") " +
               pct(g["peers_a_pct"].get<double>() / 100) + " / " + pct(g["peers_b_pct"].get<double>() / 100));
    }
    summary += (summary.empty() ? "" : "; ") + std::string("ageing hardware: ") + list +
               " against its peers in both runs" + (install_changed ? ", across installs" : "");
  }
  out["verdict"] = regression && !ageing.empty() ? "both"
                   : regression                  ? "driver_regression"
                   : !ageing.empty()             ? "ageing_hardware"
                                                 : "no_difference";
  if (summary.empty())
    summary = std::string("no difference: the shared GPUs run at load within ") + pct(kSlowerFraction).substr(1) +
              " of each other and of the other run" + (install_changed ? " (the install changed)" : "");
  out["summary"] = summary;
  return out;
}

}  // namespace gw::node
