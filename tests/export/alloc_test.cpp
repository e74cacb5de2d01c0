// Steady-state scrapes allocate nothing: once the output buffer and the exporter's scratch have
// grown, rendering the same node again performs no heap allocation. A separate executable,
// because it replaces the global operator new to count.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "export/export_fixture.h"
#include "export/prometheus.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

// The replacements pair malloc with free; GCC cannot see that operator new is ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace gw::exporter {
namespace {

using namespace gw::exporter::testing;

TEST(Allocation, SteadyStateScrapeAllocatesNothing) {
  const auto node = makeNode();
  const auto agent = makeAgent();
  SelfMetrics s;
  s.now_ms = kNowMs;
  for (Naming n : {Naming::Dcgm, Naming::Native}) {
    for (Format f : {Format::Text004, Format::OpenMetrics}) {
      ExportOptions o;
      o.naming = n;
      o.extra_labels = {{"cluster", "a"}};
      std::string out;
      renderMetrics(out, node, agent, s, o, f);  // warm-up: buffers grow, tables are built
      const std::size_t size = out.size();
      out.clear();
      g_allocations = 0;
      g_counting = true;
      renderMetrics(out, node, agent, s, o, f);
      g_counting = false;
      EXPECT_EQ(g_allocations.load(), 0) << "naming " << static_cast<int>(n) << " format " << static_cast<int>(f);
      EXPECT_EQ(out.size(), size);
    }
  }
}

}  // namespace
}  // namespace gw::exporter
