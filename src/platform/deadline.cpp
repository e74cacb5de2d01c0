#include "platform/deadline.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace gw::platform {
namespace {
std::atomic<std::size_t> g_abandoned{0};
}  // namespace

std::size_t abandonedThreads() { return g_abandoned.load(); }
void noteAbandoned() { g_abandoned.fetch_add(1); }
void noteAbandonedDone() { g_abandoned.fetch_sub(1); }

void exitProcess(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  if (g_abandoned.load() > 0) std::_Exit(code);
  std::exit(code);
}

}  // namespace gw::platform
