// One line per event on stderr: "2024-05-01T12:00:00.123Z gpuwarden level: message"; under
// systemd's journal each line starts with its priority ("<4>" for a warning), so that
// `journalctl -p warning` finds the warnings.
#pragma once

#include <string>

namespace gw::platform {

void logLine(const std::string& level, const std::string& message);

}  // namespace gw::platform
