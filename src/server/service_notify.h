// The agent's side of systemd's service protocol (sd_notify(3), libsystemd): READY=1 once it
// serves, RELOADING=1 / READY=1 around a SIGHUP, STOPPING=1, and the watchdog's keep-alive. Every
// call is a no-op when the agent was not started by systemd ($NOTIFY_SOCKET unset), so that the
// same binary runs the same way by hand, in a container and under a unit with Type=notify.
#pragma once

#include <chrono>
#include <string>

namespace gw::server::service {

void ready(const std::string& status);
void reloading();
void stopping();
void watchdog();
// Half of the unit's WatchdogSec= when the watchdog is on for this process (systemd's advice:
// ping at least twice per interval), else zero.
std::chrono::milliseconds watchdogPeriod();

}  // namespace gw::server::service
