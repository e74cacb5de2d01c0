// The control socket's job operations (docs/api.md, "Control socket"; docs/jobs.md): what a
// scheduler's prolog and epilog tell the agent, and what `gpuwarden job` asks.
#include <algorithm>
#include <set>

#include "node/jobs.h"
#include "nvml/driver_gpus.h"
#include "platform/clock.h"
#include "platform/fs_root.h"
#include "platform/log.h"
#include "server/agent.h"

namespace gw::server {

using json = nlohmann::json;
namespace control = node::control;

namespace {

// Refuses arguments the operation does not know: a misspelt flag must not be silently ignored.
std::string unknownArg(const json& args, std::initializer_list<const char*> known) {
  for (const auto& [key, value] : args.items())
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; }))
      return "unknown argument '" + key.substr(0, 64) + "'";
  return "";
}

std::optional<std::string> stringArg(const json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// A health state that refuses a job: its GPU should not be given work.
bool refusesWork(const std::string& state) { return state == "critical" || state == "fatal"; }

}  // namespace

std::optional<json> Agent::controlJobs(const std::string& op, const json& args, const control::Peer& peer) {
  node::JobTracker& jobs = monitor_->jobs();
  const std::int64_t now = platform::wallMs();
  if (op == "job.start") {
    if (auto e = unknownArg(args, {"job_id", "gpus", "numbering", "user", "uid", "source", "refuse_unhealthy"});
        !e.empty())
      return control::errorReply(e, "bad_request");
    node::JobStartRequest req;
    auto id = stringArg(args, "job_id");
    if (!id) return control::errorReply("args.job_id (a string) is required", "bad_request");
    req.job_id = *id;
    if (!args.contains("gpus") || !args["gpus"].is_array())
      return control::errorReply("args.gpus (a list of GPU indexes or UUIDs) is required", "bad_request");
    if (args["gpus"].size() > node::kMaxJobGpus)
      return control::errorReply("args.gpus lists more than " + std::to_string(node::kMaxJobGpus) + " GPUs",
                                 "bad_request");
    for (const auto& g : args["gpus"]) {
      if (g.is_string())
        req.gpus.push_back(g.get<std::string>());
      else if (g.is_number_unsigned())
        req.gpus.push_back(std::to_string(g.get<std::uint64_t>()));
      else
        return control::errorReply("args.gpus holds something that is neither a number nor a string", "bad_request");
    }
    const std::string numbering = stringArg(args, "numbering").value_or("nvml");
    if (numbering != "nvml" && numbering != "slurm")
      return control::errorReply("args.numbering must be \"nvml\" or \"slurm\"", "bad_request");
    req.numbering = numbering == "slurm" ? node::GpuNumbering::Slurm : node::GpuNumbering::Nvml;
    req.user = stringArg(args, "user").value_or("");
    if (args.contains("uid")) {
      if (!args["uid"].is_number_integer() || args["uid"].get<std::int64_t>() < 0 ||
          args["uid"].get<std::int64_t>() > 0xffffffffLL)
        return control::errorReply("args.uid must be a user id", "bad_request");
      req.uid = args["uid"].get<std::int64_t>();
    }
    req.source = stringArg(args, "source").value_or("api");
    if (req.source != "api" && req.source != "slurm")
      return control::errorReply("args.source must be \"slurm\" or \"api\"", "bad_request");
    const bool refuse = args.value("refuse_unhealthy", false);
    auto s = monitor_->sampler();
    if (!s) return control::errorReply("NVML is not available: " + monitor_->samplerError(), "failed");
    // The install record, once the first is written (moments after the start); the driver the
    // sampler sees in any case.
    const auto stats = s->agentStats();
    req.install = {{"install_record", records_ ? records_->latestId() : 0},
                   {"driver_version", stats.driver_version},
                   {"cuda_driver_version", stats.cuda_driver_version}};
    const auto views = s->snapshot();
    auto session = s->session();
    // A simulated fleet's GPUs are not the host driver's: its list would name other GPUs.
    const bool host_driver_is_foreign =
        session && session->isSimulator() && platform::FsRoot(options_.root).isHostRoot();
    session.reset();
    if (req.numbering == node::GpuNumbering::Slurm && !host_driver_is_foreign) {
      // Read for each job, not cached: the driver's list is what names a GPU lost since the start.
      auto driver = nvml::readDriverGpus(platform::FsRoot(options_.root));
      if (driver)
        req.driver_gpus = std::move(driver).value();
      else
        platform::logLine("warning", "job " + req.job_id + ": " + driver.error());
    }
    bool unmapped = false;
    auto gpus = node::JobTracker::resolveGpus(req, views, &unmapped);
    if (!gpus) {
      // Which GPUs the job holds is not known, so it may be on a lost one: the prolog refuses it.
      if (unmapped) platform::logLine("warning", "job " + req.job_id + " refused: " + gpus.error());
      return control::errorReply(gpus.error(), unmapped ? "gpu_unmapped" : "not_found");
    }
    // Each GPU's health now: the prolog refuses a job on a GPU that must not get work.
    const json report = monitor_->healthReport();
    json health = json::array();
    std::string refusal;
    for (const auto* v : *gpus) {
      std::string state = "unknown", why;
      if (report.contains("gpus") && report["gpus"].is_array())
        for (const auto& g : report["gpus"])
          if (g.is_object() && g.contains("index") && g["index"].is_number_integer() &&
              v->id.names(g.value("uuid", ""), g["index"].get<int>())) {
            state = g.value("state", "unknown");
            if (g.contains("findings") && g["findings"].is_array())
              for (const auto& f : g["findings"])
                if (f.is_object() && refusesWork(f.value("severity", "")) && why.empty())
                  why = f.value("rule", "") + ": " + f.value("summary", "");
          }
      health.push_back({{"index", v->id.index}, {"uuid", v->id.uuid}, {"state", state}});
      const std::string gpu =
          "GPU " + std::to_string(v->id.index) + (v->id.uuid.empty() ? "" : " (" + v->id.uuid + ")");
      if (refuse && refusesWork(state) && refusal.empty())
        refusal = gpu + " is " + state + (why.empty() ? std::string() : ": " + why);
      // A GPU the sampler has lost cannot run the job whatever the rules say yet: before their
      // first pass over it, or through a configured gpu_lost hold, its health is only "unknown".
      if (refuse && v->state == collect::GpuState::Lost && refusal.empty())
        refusal = gpu + " is lost (" + state + " to the rules so far)";
    }
    if (!refusal.empty()) {
      platform::logLine("warning", "job " + req.job_id + " refused: " + refusal);
      json e = control::errorReply(refusal, "gpu_unhealthy");
      e["gpus"] = health;
      return e;
    }
    const bool was_running = [&] {
      for (const auto& r : jobs.runningJobs())
        if (r.job_id == req.job_id) return true;
      return false;
    }();
    auto r = jobs.start(req, views, now);
    if (!r) return control::errorReply(r.error(), "failed");
    if (!was_running)
      platform::logLine("info", "job " + req.job_id + " started on " + std::to_string(gpus->size()) +
                                    " GPU(s), told by " + peer.describe());
    return control::okReply(json{{"job", node::jobJson(*r, now)}, {"gpus", health}, {"already_running", was_running}});
  }
  if (op == "job.end") {
    if (auto e = unknownArg(args, {"job_id", "leftovers"}); !e.empty()) return control::errorReply(e, "bad_request");
    auto id = stringArg(args, "job_id");
    if (!id) return control::errorReply("args.job_id (a string) is required", "bad_request");
    // The latest samples first: the last second of the job counts.
    if (auto s = monitor_->sampler()) jobs.observe(s->snapshot(), now);
    auto r = jobs.end(*id, now);
    if (!r) return control::errorReply(r.error(), "not_found");
    platform::logLine("info", "job " + *id + " ended, told by " + peer.describe());
    json reply{{"job", node::jobJson(*r, now)}, {"kill_leftovers", config().jobs.epilog_kill_leftovers}};
    if (args.value("leftovers", false)) {
      std::vector<std::string> uuids;
      for (const auto& g : r->gpus) uuids.push_back(g.value("uuid", ""));
      auto procs = monitor_->gpuProcesses(uuids);
      if (!procs) {
        reply["leftovers"] = {{"error", procs.error()}};
      } else {
        json list = json::array();
        for (const auto& p : procs->processes)
          list.push_back({{"uuid", p.uuid}, {"index", p.index}, {"pid", p.pid}, {"used_bytes", p.used_bytes}});
        reply["leftovers"] = {{"simulated", procs->simulated}, {"processes", list}, {"unread", procs->unread}};
      }
    }
    return control::okReply(std::move(reply));
  }
  if (op == "job.list") {
    if (auto e = unknownArg(args, {"limit"}); !e.empty()) return control::errorReply(e, "bad_request");
    std::size_t limit = 100;
    if (args.contains("limit")) {
      if (!args["limit"].is_number_unsigned() || args["limit"].get<std::uint64_t>() < 1 ||
          args["limit"].get<std::uint64_t>() > 10000)
        return control::errorReply("args.limit must be an integer from 1 to 10000", "bad_request");
      limit = args["limit"].get<std::size_t>();
    }
    auto list = jobs.list(limit);
    if (!list) return control::errorReply(list.error(), "failed");
    json arr = json::array();
    for (const auto& r : *list) arr.push_back(node::jobJson(r, now));
    return control::okReply(json{{"jobs", arr}});
  }
  if (op == "job.show") {
    if (auto e = unknownArg(args, {"job_id"}); !e.empty()) return control::errorReply(e, "bad_request");
    auto id = stringArg(args, "job_id");
    if (!id) return control::errorReply("args.job_id (a string) is required", "bad_request");
    if (id->size() > node::kMaxJobIdBytes) return control::errorReply("no such job", "not_found");
    auto r = jobs.show(*id);
    if (!r) return control::errorReply(r.error(), "failed");
    if (!*r) return control::errorReply("no job " + *id + " on this node", "not_found");
    return control::okReply(node::jobJson(**r, now));
  }
  if (op == "records.list") {
    if (auto e = unknownArg(args, {"limit", "kind"}); !e.empty()) return control::errorReply(e, "bad_request");
    if (!records_) return control::errorReply("this agent keeps no records (its records database did not open)");
    std::size_t limit = 100;
    if (args.contains("limit")) {
      if (!args["limit"].is_number_unsigned() || args["limit"].get<std::uint64_t>() < 1 ||
          args["limit"].get<std::uint64_t>() > 10000)
        return control::errorReply("args.limit must be an integer from 1 to 10000", "bad_request");
      limit = args["limit"].get<std::size_t>();
    }
    const std::string kind = stringArg(args, "kind").value_or("");
    if (kind != "" && kind != "install" && kind != "setting")
      return control::errorReply("args.kind must be \"install\" or \"setting\"", "bad_request");
    auto list = records_->list(limit, kind);
    if (!list) return control::errorReply(list.error());
    json arr = json::array();
    for (const auto& r : *list) arr.push_back(node::recordJson(r));
    return control::okReply(json{{"records", arr}});
  }
  return std::nullopt;
}

}  // namespace gw::server
