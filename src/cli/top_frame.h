// gpuwarden top's screen as data: what one refresh read (GPUs, their recent history, processes)
// and the layout of a frame into lines for a given width and height. Pure: no terminal, no NVML,
// so `--once` and the curses screen draw the same frame and tests check it at any size.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace gw::cli::top {

// The smallest screen a frame is laid out on; below it the frame is one "too small" line.
inline constexpr int kMinWidth = 40;
inline constexpr int kMinHeight = 10;
// Samples kept per GPU and metric (five minutes at the default 1 s).
inline constexpr std::size_t kHistorySamples = 300;

enum class Metric { Util, Memory, Temp, Power, SmClock, MemClock };
inline constexpr std::size_t kMetricCount = 6;
const char* metricName(Metric m);  // "utilisation %", "memory used GiB", ...
Metric nextMetric(Metric m);

struct Gpu {
  unsigned index = 0;
  std::string name;
  std::string state = "up";                           // "up", or why there is no reading ("lost: ...", "stalled")
  std::optional<double> util;                         // %
  std::optional<double> mem_used_mib, mem_total_mib;  // MiB
  std::optional<double> temp;                         // C
  std::optional<double> power, power_limit;           // W
  std::optional<double> sm_clock, mem_clock;          // MHz
  std::optional<double> max_sm_clock, max_mem_clock;  // MHz
  std::optional<double> value(Metric m) const;
  std::optional<double> scaleMax(Metric m) const;  // the chart's top: 100 %, the total, the limit
};

// The last kHistorySamples values of each metric of one GPU, oldest first (none: not read).
struct History {
  std::array<std::deque<std::optional<double>>, kMetricCount> series;
  void push(const Gpu& g);
};

struct Process {
  unsigned gpu = 0;
  unsigned pid = 0;
  std::string user;
  bool graphics = false;
  std::optional<unsigned> sm;  // %
  std::uint64_t used_bytes = 0;
  std::string command;
};

enum class SortKey { Memory, Sm };
// Largest first; equal ones by pid, then GPU, so the order does not flicker between refreshes.
void sortProcesses(std::vector<Process>& procs, SortKey key);

struct View {
  std::string source;  // "local", "simulated dgx-h100", "agent http://node1:9400"
  std::string clock;   // "22:41:05"
  double interval_s = 1;
  std::vector<Gpu> gpus;
  std::vector<History> history;  // one per gpus[i]; empty: no history section (--once)
  bool processes_available = true;
  std::string processes_note;      // why there is no process list, when there is none
  std::vector<Process> processes;  // sorted
  SortKey sort = SortKey::Memory;
  Metric chart = Metric::Util;
  int selected = -1;    // index into processes, -1: none
  std::string prompt;   // a question waiting for y/n
  std::string message;  // the last action's outcome
};

struct Line {
  enum class Style { Normal, Header, Selected, Alert };
  std::string text;  // ASCII only: one byte per column
  Style style = Style::Normal;
};

// The frame laid out on width x height. height <= 0: unbounded (every section in full). No line
// is longer than `width`; below kMinWidth x kMinHeight the frame is one "terminal too small" line.
std::vector<Line> renderFrame(const View& v, int width, int height);

// A bar of exactly `width` columns: "[||||||    95%]", `text` right-aligned inside.
std::string bar(double fraction, const std::string& text, int width);
// The last `width` samples as one row of ASCII levels scaled to [0, top]; ' ' where not read.
std::string sparkline(const std::deque<std::optional<double>>& series, double top, int width);

// The outcome of SIGTERM to `pid` (owned by `user`, running `command`) as one sentence, from the
// errno of kill(2) (0: sent).
std::string killMessage(unsigned pid, int err, const std::string& user, const std::string& command);
// kill(pid, SIGTERM); 0 or the errno.
int sendTerm(unsigned pid);

}  // namespace gw::cli::top
