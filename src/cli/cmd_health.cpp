// gpuwarden health / incidents / events: the node's health verdict (from the running agent, or a
// short standalone sampling run), the incident lifecycle (local, on the agent's data directory)
// and the GPU event log. See docs/cli.md and docs/health.md.
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "cli/url_encode.h"
#include "collect/sampler.h"
#include "events/event_log.h"
#include "events/kmsg_source.h"
#include "events/nvml_event_source.h"
#include "health/incidents.h"
#include "health/rules.h"
#include "nvml/nvml.h"
#include "platform/clock.h"
#include "server/api_params.h"
#include "server/config.h"
#include "server/health_service.h"

namespace gw::cli {

namespace {

using json = nlohmann::json;

using platform::wallMs;

// GET from the agent with a short connect timeout; nullopt when nobody answers with JSON.
std::optional<std::pair<int, json>> agentGet(const std::string& agent, const std::string& path) {
  std::unique_ptr<httplib::Client> cli;
  try {
    cli = std::make_unique<httplib::Client>(agent);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!cli->is_valid()) return std::nullopt;
  cli->set_connection_timeout(std::chrono::milliseconds(300));
  cli->set_read_timeout(std::chrono::seconds(10));
  auto res = cli->Get(path);
  if (!res) return std::nullopt;
  try {
    return std::make_pair(res->status, json::parse(res->body));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void printFinding(const json& f, const std::string& indent) {
  std::cout << indent << "[" << f.value("severity", "") << "] " << f.value("rule", "");
  if (f.value("xid", 0) != 0) std::cout << " (Xid " << f.value("xid", 0) << ")";
  std::cout << ": " << f.value("summary", "") << "\n";
  if (!f.value("evidence", "").empty()) std::cout << indent << "    evidence: " << f.value("evidence", "") << "\n";
  if (!f.value("action", "").empty()) std::cout << indent << "    action:   " << f.value("action", "") << "\n";
}

int printReport(const json& r, bool as_json, const std::string& source) {
  int code = r.value("exit_code", 3);
  if (as_json) {
    json j = r;
    j["source"] = source;
    std::cout << j.dump(2) << "\n";
    return code;
  }
  for (const auto& g : r.value("gpus", json::array())) {
    std::cout << "GPU " << g.value("index", 0) << "  " << g.value("uuid", "") << "  " << g.value("name", "") << "  "
              << g.value("state", "") << "\n";
    for (const auto& f : g.value("findings", json::array())) printFinding(f, "  ");
  }
  for (const auto& f : r.value("node_findings", json::array())) printFinding(f, "node ");
  const auto open = r.value("open_incidents", json::array());
  if (!open.empty()) {
    std::cout << open.size() << " open incident(s):\n";
    for (const auto& i : open)
      std::cout << "  #" << i.value("id", 0) << " [" << i.value("severity", "") << "] " << i.value("rule", "")
                << " GPU " << i.value("gpu_index", -1) << ": " << i.value("summary", "") << " -> "
                << i.value("action", "") << "\n";
  }
  std::cout << "status: " << r.value("status", "unknown");
  if (r.contains("reason")) std::cout << " (" << r.value("reason", "") << ")";
  std::cout << "  [" << source << "]\n";
  return code;
}

int unknownExit(const std::string& reason, bool as_json) {
  if (as_json) {
    std::cout << json{{"status", "unknown"}, {"exit_code", 3}, {"reason", reason}, {"gpus", json::array()}}.dump(2)
              << "\n";
  } else {
    std::cout << "status: unknown (" << reason << ")\n";
  }
  return 3;
}

int standaloneHealth(Run& run, double seconds) {
  const bool as_json = run.ctx.options.json;
  auto target = resolveNvmlTarget(run.ctx.options);
  if (!target) return unknownExit(target.error(), as_json);
  if (!target->scenario.empty()) ::setenv("GPUWARDEN_SIM_SCENARIO", target->scenario.c_str(), 1);
  const std::string library = target->library;
  health::RuleEngine engine(health::RuleConfig{}, run.ctx.options.root);
  auto opened = nvml::Session::open({library});
  if (!opened) {
    if (opened.status().nvmlCode() == NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
      const auto now = wallMs();
      engine.setNvmlInitError(NVML_ERROR_LIB_RM_VERSION_MISMATCH, now);
      json r = server::healthReport({}, engine.evaluate(now), nullptr);
      if (r["node_findings"].empty()) return unknownExit(opened.error(), as_json);
      r["reason"] = opened.error();
      return printReport(r, as_json, "standalone");
    }
    return unknownExit(opened.error(), as_json);
  }
  auto first = std::make_shared<std::unique_ptr<nvml::Session>>(std::move(opened).value());
  collect::SamplerConfig sc;
  sc.fast_interval = std::chrono::milliseconds(500);
  sc.slow_interval = std::chrono::milliseconds(1000);
  sc.fields = health::RuleEngine::requiredFields();
  collect::Sampler sampler(
      [first, library]() -> Result<std::unique_ptr<nvml::Session>> {
        if (*first) return std::move(*first);
        return nvml::Session::open({library});
      },
      sc);
  if (Status st = sampler.start(); !st) return unknownExit(st.message(), as_json);
  events::EventBus bus;
  bus.subscribe([&engine](const events::GpuEvent& e) { engine.onEvent(e); });
  std::unique_ptr<events::NvmlEventSource> src;
  std::shared_ptr<nvml::Session> session = sampler.session();
  if (session) {
    src = std::make_unique<events::NvmlEventSource>(*session, bus);
    if (!src->start()) src.reset();
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  bool processes_done = false;
  std::vector<collect::GpuView> views;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    views = sampler.snapshot();
    const auto now = wallMs();
    engine.observe(views, now);
    if (!processes_done && session) {
      processes_done = true;
      for (const auto& v : views) {
        if (v.id.is_mig || v.state != collect::GpuState::Up) continue;
        auto dev = session->deviceByIndex(v.id.index);
        if (!dev) continue;
        auto procs = dev->computeProcesses();
        if (!procs) continue;
        std::vector<health::ProcessSample> ps;
        for (const auto& p : *procs) ps.push_back({p.pid, p.used_bytes});
        engine.observeProcesses(v.id.index, ps, now);
      }
    }
  } while (std::chrono::steady_clock::now() < end && !stopRequested());
  if (src) src->stop();
  sampler.stop();
  json r = server::healthReport(views, engine.evaluate(wallMs()), nullptr);
  return printReport(r, as_json, "standalone, " + std::to_string(seconds).substr(0, 4) + " s");
}

std::string defaultDataDir() { return server::AgentConfig{}.data_dir; }

Result<std::unique_ptr<health::IncidentStore>> openStore(const std::string& dir) {
  health::IncidentConfig config;
  config.new_lifetime = false;  // an operator looking is not an agent start
  auto s = health::IncidentStore::open(dir, config);
  if (!s)
    return Status::Error("cannot open the incidents in " + dir + ": " + s.error() +
                         " (give --data-dir, and run as a user who may write there)");
  return s;
}

void printIncidentLine(const health::Incident& i) {
  std::cout << "#" << i.id << "  " << platform::formatRfc3339(i.opened_ms) << "  " << health::statusName(i.status)
            << "  " << health::severityName(i.severity) << "  " << i.rule << "  GPU " << i.gpu_index << " "
            << i.gpu_uuid << "  " << i.summary << "\n";
}

}  // namespace

void addHealth(CLI::App& app, Run& run) {
  // health
  {
    auto* cmd = app.add_subcommand(
        "health",
        "Health verdict: per-GPU state and findings with actions; exit 0 healthy, 1 warning, 2 critical, 3 unknown");
    struct Opts {
      std::string agent = "http://127.0.0.1:9400";
      bool standalone = false;
      double seconds = 3;
    };
    auto o = std::make_shared<Opts>();
    cmd->add_option("--agent", o->agent, "Agent URL to ask first (default http://127.0.0.1:9400)");
    cmd->add_flag("--standalone", o->standalone, "Do not ask an agent: sample NVML here for --seconds and judge");
    cmd->add_option("--seconds", o->seconds, "Standalone sampling time in seconds (default 3)")
        ->check(CLI::Range(0.5, 600.0));
    cmd->callback([&run, o]() {
      installStopHandlers();
      // An explicit --simulate or --nvml-lib names the NVML to judge: always standalone.
      const bool local = o->standalone || !run.ctx.options.simulate.empty() || !run.ctx.options.nvml_lib.empty();
      if (!local) {
        if (auto r = agentGet(o->agent, "/api/v1/health"); r && r->first == 200) {
          run.exit_code = printReport(r->second, run.ctx.options.json, "agent " + o->agent);
          return;
        }
      }
      run.exit_code = standaloneHealth(run, o->seconds);
    });
  }

  // incidents
  {
    auto* cmd =
        app.add_subcommand("incidents", "List, show, acknowledge and resolve health incidents (local data directory)");
    cmd->require_subcommand(1);
    auto dir = std::make_shared<std::string>(defaultDataDir());
    cmd->add_option("--data-dir", *dir, "The agent's data directory (default " + defaultDataDir() + ")");
    auto all = std::make_shared<bool>(false);
    auto* list = cmd->add_subcommand("list", "Unresolved incidents (--all: every incident, newest first)");
    list->add_flag("--all", *all, "Include resolved incidents");
    list->add_option("--data-dir", *dir, "The agent's data directory");
    list->callback([&run, dir, all]() {
      auto s = openStore(*dir);
      if (!s) {
        printError(s.error());
        run.exit_code = kExitNoDriver;
        return;
      }
      auto v = *all ? (*s)->recent(1000) : (*s)->unresolved();
      if (run.ctx.options.json) {
        json arr = json::array();
        for (const auto& i : v) arr.push_back(server::incidentJson(i, false));
        std::cout << json{{"incidents", arr}}.dump(2) << "\n";
        return;
      }
      if (v.empty()) std::cout << (*all ? "no incidents\n" : "no open incidents\n");
      for (const auto& i : v) printIncidentLine(i);
    });
    auto id = std::make_shared<std::int64_t>(0);
    auto byId = [&run, dir, id](const char* what) {
      return [&run, dir, id, what]() {
        auto s = openStore(*dir);
        if (!s) {
          printError(s.error());
          run.exit_code = kExitNoDriver;
          return;
        }
        const std::string w = what;
        if (w == "show") {
          auto i = (*s)->get(*id);
          if (!i) {
            printError("no incident " + std::to_string(*id) + " in " + *dir);
            run.exit_code = 1;
            return;
          }
          json j = server::incidentJson(*i, true);
          if (run.ctx.options.json) {
            std::cout << j.dump(2) << "\n";
            return;
          }
          printIncidentLine(*i);
          std::cout << "  action:   " << i->action << "\n  evidence: " << i->evidence << "\n";
          if (!i->kb_id.empty()) std::cout << "  kb:       " << i->kb_id << "\n";
          std::cout << "  seen " << i->occurrences << " time(s), last " << platform::formatRfc3339(i->last_seen_ms)
                    << (i->escalated ? ", escalated (recurred across agent restarts)" : "") << "\n";
          if (!i->resolved_by.empty()) std::cout << "  resolved by " << i->resolved_by << "\n";
          std::cout << "  context:  " << j["context"].dump() << "\n";
          return;
        }
        Status st = w == "ack" ? (*s)->acknowledge(*id, wallMs()) : (*s)->resolve(*id, wallMs(), "operator");
        if (!st) {
          printError(st.message());
          run.exit_code = 1;
          return;
        }
        std::cout << "incident " << *id << (w == "ack" ? " acknowledged" : " resolved") << "\n";
      };
    };
    for (const char* w : {"show", "ack", "resolve"}) {
      auto* sub = cmd->add_subcommand(w, std::string(w == std::string("show")  ? "Show"
                                                     : w == std::string("ack") ? "Acknowledge"
                                                                               : "Resolve") +
                                             " one incident");
      sub->add_option("id", *id, "Incident id")->required();
      sub->add_option("--data-dir", *dir, "The agent's data directory");
      sub->callback(byId(w));
    }
    auto uuid = std::make_shared<std::string>();
    auto* sh =
        cmd->add_subcommand("set-healthy", "Resolve every unresolved incident of a GPU (it was repaired or replaced)");
    sh->add_option("uuid", *uuid, "GPU UUID")->required();
    sh->add_option("--data-dir", *dir, "The agent's data directory");
    sh->callback([&run, dir, uuid]() {
      auto s = openStore(*dir);
      if (!s) {
        printError(s.error());
        run.exit_code = kExitNoDriver;
        return;
      }
      auto n = (*s)->markHealthy(*uuid, wallMs());
      if (!n) {
        printError(n.error());
        run.exit_code = 1;
        return;
      }
      std::cout << *n << " incident(s) of " << *uuid << " resolved\n";
    });
  }

  // events
  {
    auto* cmd = app.add_subcommand(
        "events", "GPU events (Xid, ECC, fallen off the bus): from the agent, else a one-shot kernel-log scan");
    struct Opts {
      std::string since = "1h";
      std::string agent = "http://127.0.0.1:9400";
    };
    auto o = std::make_shared<Opts>();
    cmd->add_option("--since", o->since, "RFC3339, unix seconds, or a duration ago (1h, 30m); default 1h");
    cmd->add_option("--agent", o->agent, "Agent URL (default http://127.0.0.1:9400)");
    cmd->callback([&run, o]() {
      const auto now = wallMs();
      auto since = server::parseTimeSpec(o->since, now);
      if (!since) {
        printError("--since: " + since.error());
        run.exit_code = kExitUsage;
        return;
      }
      json arr = json::array();
      std::string source;
      if (auto r = agentGet(o->agent, "/api/v1/events?since=" + urlEncode(o->since)); r && r->first == 200) {
        arr = r->second.value("events", json::array());
        source = "agent " + o->agent;
      } else {
        events::KmsgSource k(platform::FsRoot(run.ctx.options.root), nullptr);
        auto scanned = k.scanOnce();
        if (!scanned) {
          printError("no agent answers at " + o->agent + " and the kernel log cannot be read: " + scanned.error() +
                     " (run as root, or start `gpuwarden serve`)");
          run.exit_code = kExitNoDriver;
          return;
        }
        // Kernel-log timestamps are only as good as the boot-time estimate; keep everything when
        // the scan could not date the lines.
        for (const auto& e : *scanned)
          if (e.timestamp_ms == 0 || e.timestamp_ms >= *since) arr.push_back(json::parse(events::eventToJsonLine(e)));
        source = "kernel log";
      }
      if (run.ctx.options.json) {
        std::cout << json{{"source", source}, {"events", arr}}.dump(2) << "\n";
        return;
      }
      if (arr.empty()) std::cout << "no GPU events since " << o->since << " (" << source << ")\n";
      for (const auto& e : arr) {
        std::int64_t ts = e.value("ts_ms", std::int64_t{0});
        std::cout << (ts > 0 ? platform::formatRfc3339(ts) : std::string("-")) << "  " << e.value("source", "") << "  "
                  << e.value("kind", "");
        if (e.value("code", 0) != 0) std::cout << " " << e.value("code", 0);
        std::cout << "  GPU " << e.value("gpu", -1) << " " << e.value("uuid", "") << "  " << e.value("message", "")
                  << "\n";
      }
    });
  }
}

}  // namespace gw::cli
