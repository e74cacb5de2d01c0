#include "platform/thread_guard.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "platform/log.h"

namespace gw::platform {

void failThread(const char* name, const char* what) {
  logLine("error", std::string("thread '") + name + "' failed: " + what +
                       "; the agent exits (code 70) so that its service manager restarts it");
  std::fflush(stdout);
  std::fflush(stderr);
  // Not exit(): other threads are still running, and exit-time destructors would pull their
  // state from under them.
  std::_Exit(kExitThreadFailed);
}

}  // namespace gw::platform
