#include "cluster/fleet.h"

#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>

#include "alert/sinks.h"
#include "platform/bounded_json.h"

namespace gw::cluster::fleet {

using json = nlohmann::json;

namespace {

std::string labelOf(const Sample& s, const std::string& name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? std::string() : it->second;
}

// A GPU across the queries: its node and UUID (an index repeats on every node).
using GpuKey = std::pair<std::string, std::string>;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double round1(double v) { return std::round(v * 10) / 10; }

std::string percentEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char b[4];
      std::snprintf(b, sizeof b, "%%%02X", c);
      out += b;
    }
  }
  return out;
}

}  // namespace

std::string Naming::util_query(const std::string& window) const {
  return dcgm ? "avg_over_time(DCGM_FI_DEV_GPU_UTIL[" + window + "])"
              : "100 * avg_over_time(gpuwarden_gpu_utilization_ratio[" + window + "])";
}

std::string Naming::power_query(const std::string& window) const {
  return dcgm ? "avg_over_time(DCGM_FI_DEV_POWER_USAGE[" + window + "])"
              : "avg_over_time(gpuwarden_gpu_power_watts[" + window + "])";
}

Result<std::vector<Sample>> parseVector(const std::string& body) {
  if (body.size() > kMaxAnswerBytes)
    return Status::Error("the answer is " + std::to_string(body.size()) + " bytes; at most " +
                         std::to_string(kMaxAnswerBytes) + " are read");
  auto doc = platform::parseBounded(body, 8, 4 * kMaxSamples * 4);
  if (!doc) return Status::Error("not a Prometheus API answer: " + doc.error());
  const json& j = *doc;
  if (!j.is_object() || !j.contains("status") || !j["status"].is_string())
    return Status::Error("not a Prometheus API answer: no status");
  if (j["status"] != "success") {
    std::string e = j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : "no reason given";
    return Status::Error("Prometheus says: " + e.substr(0, 300));
  }
  if (!j.contains("data") || !j["data"].is_object() || j["data"].value("resultType", "") != "vector" ||
      !j["data"].contains("result") || !j["data"]["result"].is_array())
    return Status::Error("not an instant vector answer");
  const json& r = j["data"]["result"];
  if (r.size() > kMaxSamples)
    return Status::Error(std::to_string(r.size()) + " series; at most " + std::to_string(kMaxSamples));
  std::vector<Sample> out;
  out.reserve(r.size());
  for (const auto& e : r) {
    if (!e.is_object() || !e.contains("metric") || !e["metric"].is_object() || !e.contains("value") ||
        !e["value"].is_array() || e["value"].size() != 2 || !e["value"][1].is_string())
      return Status::Error("a series of the answer is not {metric, value: [time, \"number\"]}");
    Sample s;
    if (e["metric"].size() > kMaxLabels)
      return Status::Error("a series has " + std::to_string(e["metric"].size()) + " labels; at most " +
                           std::to_string(kMaxLabels));
    for (const auto& [k, v] : e["metric"].items()) {
      if (!v.is_string() || k.size() > kMaxLabelBytes || v.get<std::string>().size() > kMaxLabelBytes)
        return Status::Error("a series has a label that is not a short string");
      s.labels[k] = v.get<std::string>();
    }
    const std::string text = e["value"][1].get<std::string>();
    char* end = nullptr;
    s.value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') return Status::Error("a series' value '" + text.substr(0, 40) + "'");
    if (!std::isfinite(s.value)) continue;  // NaN from an empty window: no information
    out.push_back(std::move(s));
  }
  return out;
}

json buildReport(const Inputs& in, const Options& o) {
  const Naming& n = o.naming;
  const std::string host = n.host_label, uuid_l = n.uuid_label();
  struct Gpu {
    std::string node, index, uuid, model, state = "unknown";
    std::optional<double> util, power;
    std::vector<json> findings;
    std::set<std::string> jobs;  // "hpc_job:17", "pod:ns/name"
  };
  std::map<GpuKey, Gpu> gpus;
  auto gpuOf = [&](const Sample& s) -> Gpu* {
    if (!labelOf(s, n.mig_label()).empty()) return nullptr;  // MIG instances: their GPU stands for them
    const std::string u = labelOf(s, uuid_l);
    if (u.empty()) return nullptr;
    Gpu& g = gpus[{labelOf(s, host), u}];
    g.node = labelOf(s, host);
    g.uuid = u;
    if (g.index.empty()) g.index = labelOf(s, "gpu");
    if (g.model.empty()) g.model = labelOf(s, n.model_label());
    return &g;
  };
  for (const auto& s : in.health)
    if (Gpu* g = gpuOf(s)) g->state = labelOf(s, "state");
  for (const auto& s : in.findings)
    if (Gpu* g = gpuOf(s)) g->findings.push_back({{"rule", labelOf(s, "rule")}, {"severity", labelOf(s, "severity")}});
  for (const auto& s : in.util)
    if (Gpu* g = gpuOf(s)) {
      g->util = s.value;
      // hpc_job holds every job of the GPU, comma-joined (node/jobs.h).
      std::stringstream jobs(labelOf(s, "hpc_job"));
      for (std::string j; std::getline(jobs, j, ',');)
        if (!j.empty()) g->jobs.insert("hpc_job:" + j);
      if (auto pod = labelOf(s, "pod"); !pod.empty()) g->jobs.insert("pod:" + labelOf(s, "namespace") + "/" + pod);
    }
  for (const auto& s : in.power)
    if (Gpu* g = gpuOf(s)) g->power = s.value;

  auto unhealthy = [](const std::string& state) { return state == "critical" || state == "fatal"; };
  auto idle = [&](const Gpu& g) { return g.util && *g.util <= o.idle_util_pct && g.jobs.empty(); };

  std::map<std::string, json> nodes;
  json bad = json::array(), idle_list = json::array();
  std::size_t n_idle = 0, n_bad = 0;
  for (const auto& [key, g] : gpus) {
    json& node = nodes[g.node];
    if (node.is_null()) node = {{"node", g.node}, {"gpus", 0}, {"idle", 0}, {"unhealthy", 0}};
    node["gpus"] = node["gpus"].get<int>() + 1;
    if (idle(g)) {
      node["idle"] = node["idle"].get<int>() + 1;
      ++n_idle;
      idle_list.push_back({{"node", g.node}, {"gpu", g.index}, {"uuid", g.uuid}, {"utilization_pct", round1(*g.util)}});
    }
    if (unhealthy(g.state) || !g.findings.empty()) {
      if (unhealthy(g.state)) {
        node["unhealthy"] = node["unhealthy"].get<int>() + 1;
        ++n_bad;
      }
      bad.push_back({{"node", g.node},
                     {"gpu", g.index},
                     {"uuid", g.uuid},
                     {"model", g.model},
                     {"state", g.state},
                     {"findings", g.findings}});
    }
  }

  // Jobs: their GPUs across nodes, the slowest against the median of the others.
  std::map<std::string, std::vector<const Gpu*>> jobs;
  for (const auto& [key, g] : gpus)
    for (const auto& j : g.jobs) jobs[j].push_back(&g);
  json job_list = json::array();
  for (const auto& [id, members] : jobs) {
    std::set<std::string> job_nodes;
    double util_sum = 0, power = 0;
    int with_util = 0;
    const Gpu* slowest = nullptr;
    for (const Gpu* g : members) {
      job_nodes.insert(g->node);
      if (g->power) power += *g->power;
      if (!g->util) continue;
      util_sum += *g->util;
      ++with_util;
      if (!slowest || *g->util < *slowest->util) slowest = g;
    }
    const auto colon = id.find(':');
    json j{{"job", id.substr(colon + 1)},
           {"label", id.substr(0, colon)},
           {"nodes", job_nodes.size()},
           {"gpus", members.size()},
           {"utilization_pct", with_util ? json(round1(util_sum / with_util)) : json(nullptr)},
           {"power_w", round1(power)},
           {"slowest", nullptr}};
    if (slowest && with_util > 1) {
      std::vector<double> peers;
      for (const Gpu* g : members)
        if (g != slowest && g->util) peers.push_back(*g->util);
      const double med = median(peers);
      j["slowest"] = {{"node", slowest->node},
                      {"gpu", slowest->index},
                      {"uuid", slowest->uuid},
                      {"utilization_pct", round1(*slowest->util)},
                      {"peers_median_pct", round1(med)},
                      {"straggler", *slowest->util <= o.straggler_util_pct && med >= o.straggler_peer_util_pct}};
    }
    job_list.push_back(std::move(j));
  }
  json top = job_list;
  std::stable_sort(top.begin(), top.end(), [](const json& a, const json& b) {
    return a["power_w"].get<double>() > b["power_w"].get<double>();
  });
  if (top.size() > o.top) top.erase(top.begin() + static_cast<std::ptrdiff_t>(o.top), top.end());

  json node_list = json::array();
  for (auto& [name, j] : nodes) node_list.push_back(std::move(j));
  return {{"window", o.window},
          {"naming", n.dcgm ? "dcgm" : "native"},
          {"host_label", host},
          {"totals", {{"nodes", node_list.size()}, {"gpus", gpus.size()}, {"idle", n_idle}, {"unhealthy", n_bad}}},
          {"nodes", node_list},
          {"unhealthy", bad},
          {"idle", idle_list},
          {"jobs", job_list},
          {"top", top}};
}

std::string renderText(const json& report) {
  // Label values come from whatever Prometheus scraped: no control character reaches the terminal.
  json r = report;
  std::function<void(json&)> clean = [&](json& j) {
    if (j.is_string()) {
      std::string s = j.get<std::string>();
      for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
      j = s;
    } else if (j.is_structured()) {
      for (auto& e : j) clean(e);
    }
  };
  clean(r);
  std::ostringstream out;
  const json& t = r["totals"];
  out << t["nodes"].get<std::size_t>() << " node(s), " << t["gpus"].get<std::size_t>()
      << " GPU(s): " << t["idle"].get<std::size_t>() << " idle, " << t["unhealthy"].get<std::size_t>()
      << " unhealthy (mean over " << r["window"].get<std::string>() << ")\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %5s %5s %10s\n", "NODE", "GPUS", "IDLE", "UNHEALTHY");
  out << line;
  for (const auto& n : r["nodes"]) {
    std::snprintf(line, sizeof line, "%-24s %5d %5d %10d\n", n["node"].get<std::string>().c_str(), n["gpus"].get<int>(),
                  n["idle"].get<int>(), n["unhealthy"].get<int>());
    out << line;
  }
  if (!r["unhealthy"].empty()) {
    out << "\nUnhealthy or with open findings:\n";
    for (const auto& g : r["unhealthy"]) {
      std::string f;
      for (const auto& x : g["findings"])
        f += (f.empty() ? "" : ", ") + x["rule"].get<std::string>() + " (" + x["severity"].get<std::string>() + ")";
      out << "  " << g["node"].get<std::string>() << " GPU " << g["gpu"].get<std::string>() << " "
          << g["uuid"].get<std::string>() << ": " << g["state"].get<std::string>() << (f.empty() ? "" : ": " + f)
          << "\n";
    }
  }
  if (!r["jobs"].empty()) {
    out << "\n";
    std::snprintf(line, sizeof line, "%-28s %5s %5s %7s %9s  %s\n", "JOB", "NODES", "GPUS", "UTIL%", "POWER_W",
                  "SLOWEST GPU (UTIL% / PEERS' MEDIAN)");
    out << line;
    for (const auto& j : r["top"]) {
      std::string slow = "-";
      if (!j["slowest"].is_null()) {
        const json& s = j["slowest"];
        char b[256];
        std::snprintf(b, sizeof b, "%s GPU %s: %.1f / %.1f%s", s["node"].get<std::string>().c_str(),
                      s["gpu"].get<std::string>().c_str(), s["utilization_pct"].get<double>(),
                      s["peers_median_pct"].get<double>(), s["straggler"].get<bool>() ? "  STRAGGLER" : "");
        slow = b;
      }
      std::snprintf(line, sizeof line, "%-28s %5zu %5zu %7.1f %9.1f  %s\n",
                    (j["label"].get<std::string>() + ":" + j["job"].get<std::string>()).c_str(),
                    j["nodes"].get<std::size_t>(), j["gpus"].get<std::size_t>(),
                    j["utilization_pct"].is_null() ? 0.0 : j["utilization_pct"].get<double>(),
                    j["power_w"].get<double>(), slow.c_str());
      out << line;
    }
  }
  return out.str();
}

Result<std::vector<Sample>> query(const std::string& base_url, const std::string& promql,
                                  std::chrono::milliseconds deadline) {
  std::string origin, prefix;
  if (!alert::splitUrl(base_url, origin, prefix))
    return Status::Error("--prometheus '" + base_url.substr(0, 200) + "' is not an http:// or https:// URL");
  if (origin.rfind("https://", 0) == 0)
    return Status::Error("--prometheus " + origin + ": https is not supported here; give an http:// address");
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  httplib::Client client(origin);
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(deadline);
  const auto usecs = std::chrono::duration_cast<std::chrono::microseconds>(deadline - secs);
  client.set_connection_timeout(secs.count(), usecs.count());
  client.set_read_timeout(secs.count(), usecs.count());
  std::string body;
  bool too_big = false;
  auto res = client.Get(prefix + "/api/v1/query?query=" + percentEncode(promql), httplib::Headers{},
                        [&](const char* data, std::size_t len) {
                          if (body.size() + len > kMaxAnswerBytes) {
                            too_big = true;
                            return false;
                          }
                          body.append(data, len);
                          return true;
                        });
  if (too_big)
    return Status::Error(promql + ": the answer is larger than " + std::to_string(kMaxAnswerBytes) + " bytes");
  if (!res) return Status::Error("cannot ask " + base_url + ": " + httplib::to_string(res.error()));
  if (res->status != 200 && res->status != 400 && res->status != 422)
    return Status::Error(promql + ": HTTP " + std::to_string(res->status) + " from " + base_url);
  auto v = parseVector(body);
  if (!v) return Status::Error(promql + ": " + v.error());
  return v;
}

}  // namespace gw::cluster::fleet
