#include "cluster/cluster_diag.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "diag/report.h"
#include "platform/bounded_json.h"

namespace gw::cluster {

using json = nlohmann::json;

std::map<int, std::string> splitLabelledOutput(const std::string& out, std::size_t max_bytes) {
  std::map<int, std::string> tasks;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    int task = -1;
    std::size_t text_at = 0;
    // srun --label pads the number to the widest task number: "  3: text".
    std::size_t p = line.find_first_not_of(' ');
    const std::size_t colon = line.find(':');
    if (p != std::string::npos && colon != std::string::npos && colon > p && colon - p <= 6) {
      auto r = std::from_chars(line.data() + p, line.data() + colon, task);
      if (r.ec != std::errc() || r.ptr != line.data() + colon || task < 0)
        task = -1;
      else
        text_at = colon + 1 + (colon + 1 < line.size() && line[colon + 1] == ' ');
    }
    std::string& t = tasks[task];
    if (t.size() < max_bytes) t.append(line, task < 0 ? 0 : text_at).append("\n");
  }
  return tasks;
}

unsigned gpuCountFromGres(const std::string& gres) {
  unsigned total = 0;
  std::stringstream in(gres);
  for (std::string item; std::getline(in, item, ',');) {
    item = item.substr(0, item.find('('));
    if (item.rfind("gpu", 0) != 0) continue;
    const auto colon = item.rfind(':');
    if (colon == std::string::npos) continue;
    unsigned n = 0;
    auto r = std::from_chars(item.data() + colon + 1, item.data() + item.size(), n);
    if (r.ec == std::errc() && r.ptr == item.data() + item.size()) total += n;
  }
  return total;
}

namespace {
// What a flag after a compact state (sinfo %t) says; a state with a flag is not usable now.
std::string stateFlag(char flag) {
  switch (flag) {
    case '*':
      return "not responding";
    case '~':
      return "powered down";
    case '#':
      return "powering up";
    case '%':
      return "powering down";
    case '!':
      return "to be powered down";
    case '@':
      return "to be rebooted";
    case '^':
      return "rebooting";
    case '$':
      return "in a maintenance reservation";
    case '-':
      return "planned for a pending job";
    default:
      return "";
  }
}
}  // namespace

SinfoNodes nodesFromSinfo(const std::string& out, bool named) {
  SinfoNodes nodes;
  std::set<std::string> told;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::stringstream l(line);
    std::string name, gres, state;
    std::getline(l, name, '|');
    std::getline(l, gres, '|');
    std::getline(l, state, '|');
    if (name.empty()) continue;
    if (state == "idle" || state == "mix" || state == "alloc") {
      nodes.usable[name] = gpuCountFromGres(gres);
      continue;
    }
    if (!named || !told.insert(name).second) continue;
    NodeDiag row;
    row.node = name;
    row.overall = "no report";
    row.error = "not tested: the node is " + state;
    if (const std::string flag = state.empty() ? "" : stateFlag(state.back()); !flag.empty())
      row.error += " (" + flag + ")";
    nodes.untestable.push_back(std::move(row));
  }
  // A node usable in one partition's line and not in another's (the same node) is usable.
  std::erase_if(nodes.untestable, [&](const NodeDiag& r) { return nodes.usable.contains(r.node); });
  return nodes;
}

NodeDiag readNodeReport(const std::string& text, const std::string& fallback_node) {
  NodeDiag row;
  row.node = fallback_node;
  const auto begin = text.find('{');
  if (begin == std::string::npos) {
    row.overall = "no report";
    std::string first = text.substr(0, text.find('\n'));
    row.error = first.empty() ? "no output" : first.substr(0, 200);
    return row;
  }
  // A node's output is bounded (splitLabelledOutput) but not trusted: its nesting and value count
  // are checked before anything is built from them.
  auto parsed = platform::parseBounded(std::string_view(text).substr(begin));
  if (!parsed || !parsed->is_object()) {
    row.overall = "no report";
    row.error =
        ("the report is not a JSON object: " + (parsed ? std::string("a ") + parsed->type_name() : parsed.error()))
            .substr(0, 200);
    return row;
  }
  const json& j = *parsed;
  auto r = diag::reportFromJson(j);
  if (!r) {
    row.overall = "no report";
    row.error = "not a diag report: " + r.error();
    return row;
  }
  if (!r->node.empty()) row.node = r->node;
  row.overall = std::string(diag::verdictName(r->overall));
  row.exit_code = r->exitCode();
  row.gpus = static_cast<unsigned>(r->gpus.size());
  for (const char* want : {"fail", "warn"})
    for (const auto& c : r->checks)
      if (std::string_view(diag::verdictName(c.verdict)) == want)
        row.failed.push_back((c.gpu >= 0 ? "GPU " + std::to_string(c.gpu) + ": " : std::string()) + c.test + ": " +
                             c.summary);
  if (!r->error.empty()) row.error = r->error;
  return row;
}

namespace {
int fleetExit(const std::vector<NodeDiag>& rows) {
  bool failed = false, incomplete = false;
  for (const auto& r : rows) {
    failed |= r.overall == "fail";
    incomplete |= r.overall == "incomplete" || r.overall == "no report";
  }
  return failed ? 1 : incomplete ? 4 : 0;
}
}  // namespace

json fleetJson(const std::vector<NodeDiag>& rows, int level) {
  json nodes = json::array();
  std::map<std::string, int> count;
  for (const auto& r : rows) {
    ++count[r.overall];
    json n{
        {"node", r.node}, {"overall", r.overall}, {"exit_code", r.exit_code}, {"gpus", r.gpus}, {"findings", r.failed}};
    if (!r.error.empty()) n["error"] = r.error;
    nodes.push_back(std::move(n));
  }
  return json{{"level", level},
              {"nodes", nodes},
              {"summary",
               {{"nodes", rows.size()},
                {"pass", count["pass"]},
                {"warn", count["warn"]},
                {"fail", count["fail"]},
                {"incomplete", count["incomplete"]},
                {"no_report", count["no report"]}}},
              {"exit_code", fleetExit(rows)}};
}

std::string fleetTable(const std::vector<NodeDiag>& rows) {
  std::size_t w = 4;
  for (const auto& r : rows) w = std::max(w, r.node.size());
  std::ostringstream o;
  auto pad = [](std::string s, std::size_t n) { return s.size() >= n ? s : s + std::string(n - s.size(), ' '); };
  o << pad("NODE", w) << "  " << pad("VERDICT", 10) << "  GPUS  FIRST FINDING\n";
  for (const auto& r : rows) {
    std::string first = !r.failed.empty() ? r.failed.front() : r.error;
    if (r.failed.size() > 1) first += " (+" + std::to_string(r.failed.size() - 1) + " more)";
    o << pad(r.node, w) << "  " << pad(r.overall, 10) << "  " << pad(std::to_string(r.gpus), 4) << "  " << first
      << "\n";
  }
  const json s = fleetJson(rows, 0)["summary"];
  o << s["nodes"] << " node(s): " << s["pass"] << " pass, " << s["warn"] << " warn, " << s["fail"] << " fail, "
    << s["incomplete"] << " incomplete, " << s["no_report"] << " without a report\n";
  return o.str();
}

}  // namespace gw::cluster
