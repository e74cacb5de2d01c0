// The client half of smi's settings (gpuwarden-full only): the agent that owns the data folder
// ($GPUWARDEN_DATA_DIR, else /var/lib/gpuwarden) applies the change when one answers, as root and
// into its own records; otherwise smi applies it itself through NVML and records it in the folder
// under the lock the agent takes too.
#include <unistd.h>

#include <cstdlib>

#include "cli/agent_link.h"
#include "cli/smi/smi_internal.h"
#include "cli/smi/smi_settings.h"
#include "node/control_protocol.h"
#include "node/data_dir.h"
#include "node/records.h"
#include "platform/bounded_json.h"
#include "platform/clock.h"

namespace gw::cli::smi {
namespace {

// The change stands whatever happens here: a record that cannot be written is reported, not undone.
void recordAlone(const std::string& data_dir, const std::vector<node::Record>& records, std::ostream& err) {
  auto fail = [&](const std::string& why) {
    err << "gpuwarden: the change stands but is not recorded in " << data_dir << ": " << why << "\n";
  };
  const node::DataDir dir(data_dir);
  if (Status st = dir.create(); !st) return fail(st.message());
  auto lock = lockWithoutAgent(data_dir);
  if (!lock) return fail(lock.error());
  auto store = node::RecordStore::open(dir.recordsDb());
  if (!store) return fail(store.error());
  for (const auto& r : records)
    if (auto id = (*store)->append(r); !id) return fail(id.error());
}

int runSettings(Context& ctx, const std::string& ids, const SettingRequest& request,
                const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  const std::string data_dir = node::defaultDataDir();
  // The agent checks that it drives the same kind of NVML (a simulated change must never reach
  // real GPUs, nor the reverse).
  const bool simulated = !ctx.options.simulate.empty();
  // MIG's lists change nothing: any user reads them here, as with nvidia-smi.
  AgentAnswer a;
  if (!isMigList(request.kind))
    a = askAgent(data_dir, "settings.apply", nlohmann::json{{"words", words}, {"simulated", simulated}},
                 AskLimits{.deadline = agentSettingWait()});
  if (a.reached) {
    if (!a.error.empty()) {
      err << "gpuwarden: " << a.error
          << (a.sent ? "; whether anything changed is unknown (read it back with `gpuwarden smi -q`)\n"
                     : "; nothing was changed\n");
      return kSmiOther;
    }
    if (!a.ok) {
      if (a.code == "forbidden") {
        err << "Insufficient Permissions\ngpuwarden: " << a.refusal << "\n";
        return kSmiNoPermission;
      }
      err << "gpuwarden: the agent refused: " << a.refusal << "\n";
      return a.code == "bad_request" ? kSmiInvalidArgument : kSmiOther;
    }
    const auto& r = a.result;
    const auto exit = r.contains("exit") ? platform::asWholeNumber<int>(r["exit"]) : std::nullopt;
    if (!exit || !r.contains("stdout") || !r["stdout"].is_string() || !r.contains("stderr") ||
        !r["stderr"].is_string()) {
      err << "gpuwarden: the agent's answer to settings.apply has the wrong shape\n";
      return kSmiOther;
    }
    out << r["stdout"].get<std::string>();
    err << r["stderr"].get<std::string>();
    return *exit;
  }
  auto open = openNvml(ctx, err);
  if (!open.session) return open.exit;
  const node::control::Peer me{::getpid(), ::geteuid(), ::getegid()};
  SettingOutcome o = applySetting(*open.session, ctx.root(), ids, request, me.describe(), platform::wallMs());
  out << o.out;
  err << o.err;
  if (!o.records.empty()) recordAlone(data_dir, o.records, err);
  return o.exit;
}

}  // namespace

void installSettingsRunner() { setSettingsRunner(&runSettings); }

}  // namespace gw::cli::smi
