// gpuwarden events: GPU events (Xid, ECC, fallen off the bus) from the agent that owns the data
// folder, else a one-shot scan of the kernel log.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/agent_link.h"
#include "cli/commands.h"
#include "cli/json_read.h"
#include "events/event_log.h"
#include "events/kmsg_source.h"
#include "platform/clock.h"
#include "server/api_params.h"

namespace gw::cli {

using json = nlohmann::json;

void addEvents(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand(
      "events", "GPU events (Xid, ECC, fallen off the bus): from the agent, else a one-shot kernel-log scan");
  cmd->footer(
      "Exit codes: 0 listed (also when there are none), 2 a --since that is no time, 3 no agent owns the folder and "
      "the kernel log cannot be read (run as root, or start `gpuwarden serve`), or the agent could not be asked.");
  struct Opts {
    std::string since = "1h";
    std::string data_dir = node::defaultDataDir();
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--since", o->since, "RFC3339, unix seconds, or a duration ago (1h, 30m); default 1h");
  cmd->add_option("--data-dir", o->data_dir,
                  std::string("Ask the agent that owns this data folder (default ") + node::defaultDataDirHelp() + ")");
  cmd->callback([&run, o]() {
    const auto now = platform::wallMs();
    auto since = server::parseTimeSpec(o->since, now);
    if (!since) {
      printError("--since: " + since.error());
      run.exit_code = kExitUsage;
      return;
    }
    json arr = json::array();
    std::string source;
    auto a = askAgent(o->data_dir, "events", json{{"since_ms", *since}});
    if (a.reached && !a.error.empty()) {
      printError(a.error);
      run.exit_code = kExitNoAgent;
      return;
    }
    if (a.ok) {
      arr = jr::array(a.result, "events");
      source = "agent " + o->data_dir;
    } else {
      events::KmsgSource k(platform::FsRoot(run.ctx.options.root), nullptr);
      auto scanned = k.scanOnce();
      if (!scanned) {
        printError("no agent owns " + o->data_dir + " and the kernel log cannot be read: " + scanned.error() +
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
      std::cout << jr::dump(json{{"source", source}, {"events", arr}}) << "\n";
      return;
    }
    if (arr.empty()) std::cout << "no GPU events since " << o->since << " (" << source << ")\n";
    for (const auto& e : arr) {
      if (!e.is_object()) continue;
      const std::int64_t ts = jr::integer(e, "ts_ms");
      std::cout << (ts > 0 ? jr::time(ts) : std::string("-")) << "  " << jr::str(e, "source") << "  "
                << jr::str(e, "kind");
      if (jr::integer(e, "code") != 0) std::cout << " " << jr::integer(e, "code");
      std::cout << "  GPU " << jr::integer(e, "gpu", -1) << " " << jr::str(e, "uuid") << "  " << jr::str(e, "message")
                << "\n";
    }
  });
}

}  // namespace gw::cli
