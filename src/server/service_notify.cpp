#include "server/service_notify.h"

#include <systemd/sd-daemon.h>

#include <algorithm>
#include <cstdint>

namespace gw::server::service {

namespace {
void notify(const std::string& state) { (void)sd_notify(0, state.c_str()); }
}  // namespace

void ready(const std::string& status) {
  // STATUS= must be one line: systemctl status shows it.
  std::string line = status;
  for (char& c : line)
    if (c == '\n') c = ' ';
  notify("READY=1\nSTATUS=" + line);
}

void reloading() { notify("RELOADING=1"); }

void stopping() { notify("STOPPING=1"); }

void watchdog() { notify("WATCHDOG=1"); }

std::chrono::milliseconds watchdogPeriod() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(std::max<std::uint64_t>(usec / 2000, 1));
}

}  // namespace gw::server::service
