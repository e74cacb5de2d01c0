#include "cli/top_frame.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

namespace gw::cli::top {

const char* metricName(Metric m) {
  switch (m) {
    case Metric::Util:
      return "utilisation %";
    case Metric::Memory:
      return "memory used MiB";
    case Metric::Temp:
      return "temperature C";
    case Metric::Power:
      return "power W";
    case Metric::SmClock:
      return "SM clock MHz";
    case Metric::MemClock:
      return "memory clock MHz";
  }
  return "?";
}

Metric nextMetric(Metric m) { return static_cast<Metric>((static_cast<std::size_t>(m) + 1) % kMetricCount); }

std::optional<double> Gpu::value(Metric m) const {
  switch (m) {
    case Metric::Util:
      return util;
    case Metric::Memory:
      return mem_used_mib;
    case Metric::Temp:
      return temp;
    case Metric::Power:
      return power;
    case Metric::SmClock:
      return sm_clock;
    case Metric::MemClock:
      return mem_clock;
  }
  return std::nullopt;
}

std::optional<double> Gpu::scaleMax(Metric m) const {
  switch (m) {
    case Metric::Util:
      return 100.0;
    case Metric::Memory:
      return mem_total_mib;
    case Metric::Temp:
      return 100.0;
    case Metric::Power:
      return power_limit;
    case Metric::SmClock:
      return max_sm_clock;
    case Metric::MemClock:
      return max_mem_clock;
  }
  return std::nullopt;
}

void History::push(const Gpu& g) {
  for (std::size_t m = 0; m < kMetricCount; ++m) {
    auto& s = series[m];
    s.push_back(g.state == "up" ? g.value(static_cast<Metric>(m)) : std::nullopt);
    while (s.size() > kHistorySamples) s.pop_front();
  }
}

void sortProcesses(std::vector<Process>& procs, SortKey key) {
  std::stable_sort(procs.begin(), procs.end(), [key](const Process& a, const Process& b) {
    if (key == SortKey::Memory && a.used_bytes != b.used_bytes) return a.used_bytes > b.used_bytes;
    if (key == SortKey::Sm && a.sm != b.sm)
      return a.sm.value_or(0) + (a.sm ? 1 : 0) > b.sm.value_or(0) + (b.sm ? 1 : 0);
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.gpu < b.gpu;
  });
}

std::string bar(double fraction, const std::string& text, int width) {
  if (width < 2) return std::string(static_cast<std::size_t>(std::max(width, 0)), ' ');
  const int inner = width - 2;
  if (!std::isfinite(fraction)) fraction = 0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int fill = static_cast<int>(std::lround(fraction * inner));
  std::string in(static_cast<std::size_t>(fill), '|');
  in.append(static_cast<std::size_t>(inner - fill), ' ');
  if (static_cast<int>(text.size()) <= inner)
    in.replace(static_cast<std::size_t>(inner) - text.size(), text.size(), text);
  return "[" + in + "]";
}

std::string sparkline(const std::deque<std::optional<double>>& series, double top, int width) {
  static constexpr char kLevels[] = "_.:-=+*#@";  // 9 levels: 0 .. top
  if (width <= 0) return {};
  std::string out(static_cast<std::size_t>(width), ' ');
  const std::size_t n = std::min(series.size(), static_cast<std::size_t>(width));
  for (std::size_t k = 0; k < n; ++k) {
    const auto& v = series[series.size() - n + k];
    if (!v) continue;
    double f = top > 0 ? *v / top : 0;
    if (!std::isfinite(f)) f = 0;
    const auto level = static_cast<std::size_t>(std::lround(std::clamp(f, 0.0, 1.0) * 8));
    out[static_cast<std::size_t>(width) - n + k] = kLevels[level];
  }
  return out;
}

namespace {

std::string fit(std::string s, int width) {
  if (width <= 0) return {};
  if (static_cast<int>(s.size()) > width) s.resize(static_cast<std::size_t>(width));
  return s;
}

std::string num(const std::optional<double>& v, const char* unit) {
  return v ? fmt::format("{:.0f}{}", *v, unit) : std::string("-");
}

// Which of the optional GPU columns fit on `width`, and the width of each bar.
struct GpuColumns {
  static constexpr int kIndex = 4, kName = 23, kTemp = 5, kPower = 10, kClocks = 14, kMinBars = 33;
  bool name = false, temp = false, power = false, clocks = false;
  int util_bar = 0, mem_bar = 0;
  explicit GpuColumns(int width) {
    int rest = width - kIndex;
    auto take = [&rest](bool& col, int w) {
      if (rest - w >= kMinBars) {
        col = true;
        rest -= w;
      }
    };
    take(temp, kTemp);
    take(power, kPower);
    take(clocks, kClocks);
    take(name, kName);
    rest -= 1;  // the space between the bars
    util_bar = std::max(rest / 2, 2);
    mem_bar = std::max(rest - util_bar, 2);
  }
};

std::string gpuHeader(const GpuColumns& c) {
  std::string s = "GPU ";
  if (c.name) s += fmt::format("{:<{}}", "NAME", GpuColumns::kName);
  s += fmt::format("{:<{}} {:<{}}", "UTIL", c.util_bar, "MEMORY", c.mem_bar);
  if (c.temp) s += fmt::format("{:>{}}", "TEMP", GpuColumns::kTemp);
  if (c.power) s += fmt::format("{:>{}}", "POWER", GpuColumns::kPower);
  if (c.clocks) s += fmt::format("{:>{}}", "SM/MEM MHz", GpuColumns::kClocks);
  return s;
}

Line gpuRow(const Gpu& g, const GpuColumns& c) {
  std::string s = fmt::format("{:>3} ", g.index);
  if (c.name) s += fmt::format("{:<{}} ", fit(g.name, GpuColumns::kName - 1), GpuColumns::kName - 1);
  if (g.state != "up") return {s + g.state, Line::Style::Alert};
  const double util = g.util.value_or(0) / 100.0;
  s += bar(util, g.util ? fmt::format("{:.0f}%", *g.util) : "-", c.util_bar);
  s += " ";
  double mem = 0;
  std::string mem_text = "-";
  if (g.mem_used_mib && g.mem_total_mib && *g.mem_total_mib > 0) {
    mem = *g.mem_used_mib / *g.mem_total_mib;
    mem_text = fmt::format("{:.1f}/{:.1f}G", *g.mem_used_mib / 1024.0, *g.mem_total_mib / 1024.0);
  } else if (g.mem_used_mib) {
    mem_text = fmt::format("{:.1f}G", *g.mem_used_mib / 1024.0);
  }
  s += bar(mem, mem_text, c.mem_bar);
  if (c.temp) s += fmt::format("{:>{}}", num(g.temp, "C"), GpuColumns::kTemp);
  if (c.power)
    s += fmt::format("{:>{}}", g.power_limit ? num(g.power, "") + "/" + num(g.power_limit, "W") : num(g.power, "W"),
                     GpuColumns::kPower);
  if (c.clocks) s += fmt::format("{:>{}}", num(g.sm_clock, "") + "/" + num(g.mem_clock, ""), GpuColumns::kClocks);
  return {s, Line::Style::Normal};
}

std::string mib(std::uint64_t bytes) { return fmt::format("{} MiB", bytes / (1024 * 1024)); }

std::string processHeader() {
  return fmt::format(" {:>7} {:<9} {:>3} {:>4} {:>4} {:>10}  {}", "PID", "USER", "GPU", "TYPE", "SM%", "MEMORY",
                     "COMMAND");
}

std::string processRow(const Process& p, bool selected) {
  return fmt::format("{}{:>7} {:<9} {:>3} {:>4} {:>4} {:>10}  {}", selected ? '>' : ' ', p.pid, fit(p.user, 9), p.gpu,
                     p.graphics ? "G" : "C", p.sm ? std::to_string(*p.sm) : "-", mib(p.used_bytes), p.command);
}

const char* sortName(SortKey k) { return k == SortKey::Memory ? "memory" : "SM %"; }

}  // namespace

std::vector<Line> renderFrame(const View& v, int width, int height) {
  using S = Line::Style;
  const bool bounded = height > 0;
  if (width < kMinWidth || (bounded && height < kMinHeight)) {
    std::string msg = fmt::format("terminal too small ({}x{}; need {}x{})", width, height, kMinWidth, kMinHeight);
    if (static_cast<int>(msg.size()) > width) msg = "terminal too small";
    return {{fit(msg, width), S::Alert}};
  }
  std::vector<Line> out;
  auto add = [&out, width](std::string text, S style = S::Normal) {
    out.push_back({fit(std::move(text), width), style});
  };

  const std::size_t n = v.gpus.size();
  add(fmt::format("gpuwarden top - {} - {} GPU{} - {} - every {:g} s", v.source, n, n == 1 ? "" : "s", v.clock,
                  v.interval_s),
      S::Header);
  // Bottom lines: the prompt or message, and the keys (not in a one-shot frame).
  std::vector<Line> bottom;
  if (!v.prompt.empty())
    bottom.push_back({fit(v.prompt, width), S::Alert});
  else if (bounded || !v.message.empty())
    bottom.push_back({fit(v.message, width), S::Normal});
  if (bounded)
    bottom.push_back(
        {fit(fmt::format("q quit  m/s sort by memory/SM ({})  c chart  Up/Down select  k kill", sortName(v.sort)),
             width),
         S::Header});
  int room = bounded ? height - 1 - static_cast<int>(bottom.size()) : 1 << 30;

  const GpuColumns cols(width);
  add(gpuHeader(cols), S::Header);
  --room;
  if (static_cast<int>(n) <= room) {
    for (const auto& g : v.gpus) out.push_back(gpuRow(g, cols)), out.back().text = fit(out.back().text, width);
    room -= static_cast<int>(n);
  } else {
    const int shown = std::max(room - 1, 0);
    for (int i = 0; i < shown; ++i)
      out.push_back(gpuRow(v.gpus[static_cast<std::size_t>(i)], cols)), out.back().text = fit(out.back().text, width);
    add(fmt::format("... {} more GPUs: enlarge the terminal", n - static_cast<std::size_t>(shown)), S::Alert);
    room = 0;
  }

  // History: one row per GPU, shown when it fits with room left for the process list's first row.
  if (!v.history.empty() && static_cast<int>(n) + 1 + 2 <= room) {
    const int value_w = 8;
    const int spark_w = std::max(width - 4 - value_w - 1, 1);
    add(fmt::format("HISTORY  {}, last {} samples (c: next chart)", metricName(v.chart),
                    std::min<std::size_t>(static_cast<std::size_t>(spark_w), kHistorySamples)),
        S::Header);
    const auto m = static_cast<std::size_t>(v.chart);
    for (std::size_t i = 0; i < n && i < v.history.size(); ++i) {
      const Gpu& g = v.gpus[i];
      const auto& series = v.history[i].series[m];
      double top = g.scaleMax(v.chart).value_or(0);
      if (top <= 0)
        for (const auto& x : series)
          if (x) top = std::max(top, *x);
      const auto cur = g.state == "up" ? g.value(v.chart) : std::nullopt;
      add(fmt::format("{:>3} {} {:>{}}", g.index, sparkline(series, top, spark_w),
                      cur ? fmt::format("{:.0f}", *cur) : "-", value_w));
    }
    room -= static_cast<int>(n) + 1;
  }

  if (room >= 2) {
    add(fmt::format("PROCESSES  sorted by {}", sortName(v.sort)), S::Header);
    --room;
    if (!v.processes_available) {
      add(v.processes_note);
    } else {
      add(processHeader(), S::Header);
      --room;
      const int count = static_cast<int>(v.processes.size());
      if (count == 0 && room >= 1) add("  no processes on the GPUs");
      const bool more = count > room;
      const int rows = more ? std::max(room - 1, 0) : count;
      // Keep the selected process on screen.
      const int first = v.selected >= rows ? v.selected - rows + 1 : 0;
      for (int i = first; i < first + rows && i < count; ++i) {
        const bool sel = i == v.selected;
        add(processRow(v.processes[static_cast<std::size_t>(i)], sel), sel ? S::Selected : S::Normal);
      }
      if (more) add(fmt::format("  ... {} more processes", count - rows));
    }
  }
  if (bounded)
    while (static_cast<int>(out.size()) < height - static_cast<int>(bottom.size())) out.push_back({});
  out.insert(out.end(), bottom.begin(), bottom.end());
  if (bounded && static_cast<int>(out.size()) > height) out.resize(static_cast<std::size_t>(height));
  return out;
}

std::string killMessage(unsigned pid, int err, const std::string& user, const std::string& command) {
  const std::string who = command.empty() || command == "-" ? "" : " (" + command + ")";
  switch (err) {
    case 0:
      return fmt::format("sent SIGTERM to process {}{}", pid, who);
    case EPERM:
      return fmt::format("not permitted: process {} belongs to user {}; run as root or as {}", pid, user, user);
    case ESRCH:
      return fmt::format("process {}{} is already gone", pid, who);
    default:
      return fmt::format("cannot signal process {}: {}", pid, std::strerror(err));
  }
}

int sendTerm(unsigned pid) {
  if (pid == 0 || pid > static_cast<unsigned>(std::numeric_limits<pid_t>::max())) return ESRCH;
  return ::kill(static_cast<pid_t>(pid), SIGTERM) == 0 ? 0 : errno;
}

}  // namespace gw::cli::top
