// nvidia-smi's setting flags (-pm, -pl, -lgc, -rgc, -lmc, -rmc, -ac, -rac, -c, -e, -r, -mig, and mig; issue 15,
// R24) applied to GPUs through NVML's setters, with nvidia-smi's lines and exit codes. One home
// for both ways a change is made: `gpuwarden smi` alone (smi_settings_client.cpp) and the agent,
// which applies what its control socket receives (op settings.apply) with its own NVML session
// through settingsRequest, installed by `serve` (server/ includes nothing of cli/). Linked into
// gpuwarden-full only: the front never changes a GPU (front_route.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/smi/smi_args.h"
#include "node/records.h"
#include "nvml/nvml.h"
#include "platform/fs_root.h"

namespace gw::node::control {
struct Peer;
}

namespace gw::cli::smi {

struct SettingOutcome {
  int exit = kSmiOk;                  // an SmiExit
  std::string out, err;               // nvidia-smi's lines (and gpuwarden's reasons on err)
  std::vector<node::Record> records;  // kind "setting", one per GPU whose setting changed
};

// One GPU that -i selected, with the identity the messages and records name.
struct SmiGpu {
  unsigned index = 0;
  std::string uuid, bus_id;
  nvml::Device device;
};

// nvidia-smi's exit for an NVML error (an SmiExit).
int smiExitFor(const Status& st);
// Why NVML said NO_PERMISSION: which privilege this process lacks (a "gpuwarden:" note, for stderr).
std::string missingPrivilege();
// A record of kind "setting" for a change to `g`: who, when, the flag, what changed before → after.
node::Record settingRecord(const SmiGpu& g, const std::string& flag, const std::string& who, std::int64_t now_ms,
                           const std::string& summary, nlohmann::json changes);
// The record of a change sent to `g` that got no answer within `deadline`: it may have happened.
// No changes; state "outcome": "unknown".
node::Record unansweredSettingRecord(const SmiGpu& g, const std::string& flag, const std::string& who,
                                     std::int64_t now_ms, std::chrono::milliseconds deadline);
nlohmann::json settingChange(const std::string& what, const std::string& before, const std::string& after);

// nvidia-smi mig's actions (smi_mig.cpp) on the selected GPUs: the lists, and the creation and
// destruction of GPU and compute instances, each change recorded with the layout before and after.
SettingOutcome applyMig(const nvml::Session& session, const std::vector<SmiGpu>& gpus, const SettingRequest& request,
                        const std::string& who, std::int64_t now_ms);

// How long `smi` waits for the agent's answer to a setting. The agent bounds every GPU's change
// itself (exit 255 at the first that misses its deadline), so this wait ends only an agent that
// broke its own bounds; it covers MIG's bound on 16 GPUs.
std::chrono::milliseconds agentSettingWait();

// Applies `request` to the GPUs that `ids` (-i) selects, all when empty, stopping at the first
// failure as nvidia-smi does. Before and after values are read back from NVML. `who` goes into
// the records. -r writes the PCI function-level reset file under `root`.
SettingOutcome applySetting(const nvml::Session& session, const platform::FsRoot& root, const std::string& ids,
                            const SettingRequest& request, const std::string& who, std::int64_t now_ms);

// Who may change a GPU setting through the agent's control socket: root alone, as with NVML
// itself (the agent runs as root and would otherwise lend its privilege to any local user). Empty
// when `peer` may; otherwise the refusal, naming the caller's uid.
std::string settingsRefusal(const node::control::Peer& peer);

// The agent's op settings.apply (server/agent.h SettingsHandler; `gpuwarden serve` installs it):
// args {"words": the words after `smi`, "simulated": the command line ran with --simulate}. Root
// alone may; the words are parsed with smi's grammar and applied through `session`. Returns the
// control reply, result {"exit", "stdout", "stderr"}; what changed goes to *records.
nlohmann::json settingsRequest(const nlohmann::json& args, const node::control::Peer& peer,
                               const nvml::Session& session, const platform::FsRoot& root,
                               std::vector<node::Record>* records);

// Makes `gpuwarden smi` apply settings (smi_settings_client.cpp; gpuwarden-full's main() calls it).
void installSettingsRunner();

// The words after `smi` that the agent re-parses with parseSmiArgs (one grammar for both ends);
// bounds on what the control socket accepts.
inline constexpr std::size_t kMaxSettingWords = 12;
inline constexpr std::size_t kMaxSettingWordBytes = 1024;

}  // namespace gw::cli::smi
