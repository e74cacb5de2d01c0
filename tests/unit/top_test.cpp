// gpuwarden top's pure parts: the frame's layout at several sizes, the process order, the kill's
// outcome (a real child process signalled and gone), and the process owner read under a root.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "cli/gpu_processes.h"
#include "cli/top_frame.h"

namespace gw::cli::top {
namespace {

View dgx(std::size_t gpus = 8, std::size_t procs = 8, bool history = true) {
  View v;
  v.source = "simulated dgx-h100";
  v.clock = "12:00:00";
  for (std::size_t i = 0; i < gpus; ++i) {
    Gpu g;
    g.index = static_cast<unsigned>(i);
    g.name = "NVIDIA H100 80GB HBM3";
    g.util = 90 + static_cast<double>(i);
    g.mem_used_mib = 71680;
    g.mem_total_mib = 81559;
    g.temp = 40;
    g.power = 690;
    g.power_limit = 700;
    g.sm_clock = 1980;
    g.mem_clock = 2619;
    g.max_sm_clock = 1980;
    g.max_mem_clock = 2619;
    v.gpus.push_back(g);
    if (history) {
      History h;
      for (int k = 0; k < 400; ++k) h.push(g);
      v.history.push_back(h);
    }
  }
  for (std::size_t i = 0; i < procs; ++i)
    v.processes.push_back({static_cast<unsigned>(i % std::max<std::size_t>(gpus, 1)), static_cast<unsigned>(41001 + i),
                           "alice", false, 50, (i + 1) << 30, "python3"});
  sortProcesses(v.processes, SortKey::Memory);
  return v;
}

bool anyLineHas(const std::vector<Line>& lines, const std::string& s) {
  for (const auto& l : lines)
    if (l.text.find(s) != std::string::npos) return true;
  return false;
}

int gpuRows(const std::vector<Line>& lines) {
  int n = 0;
  for (const auto& l : lines)
    if (l.text.find("[") != std::string::npos && l.text.find("%]") != std::string::npos) ++n;
  return n;
}

TEST(TopFrame, NoLineIsWiderThanTheScreenAtAnySize) {
  const View v = dgx();
  for (int w : {40, 41, 50, 60, 80, 100, 120, 200})
    for (int h : {10, 11, 20, 40, 0}) {
      const auto lines = renderFrame(v, w, h);
      ASSERT_FALSE(lines.empty());
      if (h > 0) {
        EXPECT_EQ(static_cast<int>(lines.size()), h) << w << "x" << h << ": the frame fills the screen";
      }
      for (const auto& l : lines) EXPECT_LE(static_cast<int>(l.text.size()), w) << w << "x" << h << ": " << l.text;
    }
}

TEST(TopFrame, WideScreenShowsEveryGpuItsColumnsHistoryAndProcesses) {
  const auto lines = renderFrame(dgx(), 120, 40);
  EXPECT_EQ(gpuRows(lines), 8);
  EXPECT_TRUE(anyLineHas(lines, "  0 NVIDIA H100 80GB HBM3  [")) << "the name column, whole";
  EXPECT_TRUE(anyLineHas(lines, "70.0/79.6G"));
  EXPECT_TRUE(anyLineHas(lines, "690/700W"));
  EXPECT_TRUE(anyLineHas(lines, "1980/2619"));
  EXPECT_TRUE(anyLineHas(lines, "40C"));
  EXPECT_TRUE(anyLineHas(lines, "HISTORY  utilisation %"));
  EXPECT_TRUE(anyLineHas(lines, "41008 alice"));
  EXPECT_TRUE(anyLineHas(lines, "q quit")) << "the keys on the last line";
  EXPECT_NE(lines.back().text.find("q quit"), std::string::npos);
}

TEST(TopFrame, NarrowScreenDropsColumnsBeforeBars) {
  const auto at60 = renderFrame(dgx(), 60, 40);
  EXPECT_EQ(gpuRows(at60), 8);
  EXPECT_FALSE(anyLineHas(at60, "SM/MEM MHz")) << "clocks go first";
  EXPECT_FALSE(anyLineHas(at60, "H100 80GB")) << "and the name";
  EXPECT_TRUE(anyLineHas(at60, "TEMP"));
  const auto at40 = renderFrame(dgx(), 40, 40);
  EXPECT_EQ(gpuRows(at40), 8);
  EXPECT_TRUE(anyLineHas(at40, "91%]")) << "the bars stay at the smallest width";
  EXPECT_TRUE(anyLineHas(at40, "/79.6G]"));
}

TEST(TopFrame, TooSmallIsOneLine) {
  for (auto [w, h] : {std::pair{39, 40}, {120, 9}, {30, 8}, {10, 3}}) {
    const auto lines = renderFrame(dgx(), w, h);
    ASSERT_EQ(lines.size(), 1U) << w << "x" << h;
    EXPECT_LE(static_cast<int>(lines[0].text.size()), w);
    EXPECT_EQ(lines[0].text.rfind("terminal t", 0), 0U) << lines[0].text;
  }
  EXPECT_EQ(renderFrame(dgx(), 39, 40)[0].text, "terminal too small (39x40; need 40x10)");
}

TEST(TopFrame, MoreGpusThanRowsSaysHowManyAreHidden) {
  const auto lines = renderFrame(dgx(8), 80, 10);
  EXPECT_EQ(lines.size(), 10U);
  EXPECT_LT(gpuRows(lines), 8);
  EXPECT_TRUE(anyLineHas(lines, "more GPUs: enlarge the terminal"));
}

TEST(TopFrame, HistoryChartFollowsTheChosenMetricAndScale) {
  View v = dgx(1, 0);
  v.chart = Metric::Power;
  const auto lines = renderFrame(v, 80, 20);
  EXPECT_TRUE(anyLineHas(lines, "HISTORY  power W"));
  // 690 of 700 W is level 8 of 8.
  EXPECT_TRUE(anyLineHas(lines, "@@@@@@@@")) << "full-scale samples";
  EXPECT_EQ(nextMetric(Metric::MemClock), Metric::Util);
  EXPECT_EQ(nextMetric(Metric::Util), Metric::Memory);
  // No history section in a one-shot frame.
  EXPECT_FALSE(anyLineHas(renderFrame(dgx(8, 8, false), 120, 0), "HISTORY"));
}

TEST(TopFrame, OneShotFrameHasEveryRowAndNoKeys) {
  const auto lines = renderFrame(dgx(8, 30, false), 120, 0);
  EXPECT_EQ(gpuRows(lines), 8);
  int procs = 0;
  for (const auto& l : lines)
    if (l.text.find("python3") != std::string::npos) ++procs;
  EXPECT_EQ(procs, 30) << "unbounded: no process is cut";
  EXPECT_FALSE(anyLineHas(lines, "q quit"));
}

TEST(TopFrame, SelectedProcessStaysOnScreen) {
  View v = dgx(8, 60, false);
  v.selected = 50;
  const auto lines = renderFrame(v, 100, 24);
  bool found = false;
  for (const auto& l : lines)
    if (l.style == Line::Style::Selected) {
      found = true;
      EXPECT_EQ(l.text[0], '>');
      EXPECT_NE(l.text.find(std::to_string(v.processes[50].pid)), std::string::npos) << l.text;
    }
  EXPECT_TRUE(found);
  EXPECT_TRUE(anyLineHas(lines, "more processes"));
}

TEST(TopFrame, AgentWithoutProcessesShowsWhy) {
  View v = dgx(8, 0);
  v.processes_available = false;
  v.processes_note = "  processes: not in the agent's API";
  EXPECT_TRUE(anyLineHas(renderFrame(v, 120, 40), "processes: not in the agent's API"));
}

TEST(TopFrame, LostGpuRowSaysSo) {
  View v = dgx(2, 0);
  v.gpus[1].state = "lost: GPU is lost";
  const auto lines = renderFrame(v, 120, 40);
  EXPECT_TRUE(anyLineHas(lines, "lost: GPU is lost"));
  EXPECT_EQ(gpuRows(lines), 1);
}

TEST(TopFrame, BarAndSparkline) {
  EXPECT_EQ(bar(0.5, "50%", 12), "[|||||  50%]");
  EXPECT_EQ(bar(0, "0%", 6), "[  0%]");
  EXPECT_EQ(bar(1, "100%", 8), "[||100%]");
  EXPECT_EQ(bar(2, "", 5), "[|||]") << "clamped";
  EXPECT_EQ(bar(0.5, "too long for it", 6), "[||  ]") << "text that does not fit is left out";
  EXPECT_EQ(bar(1, "100%", 6), "[100%]") << "text exactly as wide as the inside fills it";
  EXPECT_EQ(bar(1, "100%", 5), "[|||]") << "one column short: left out";
  std::deque<std::optional<double>> s{0.0, 50.0, std::nullopt, 100.0};
  EXPECT_EQ(sparkline(s, 100, 6), "  _= @") << "right-aligned, gaps where not read";
  EXPECT_EQ(sparkline(s, 100, 2), " @") << "the newest samples";
}

TEST(TopSort, ByMemoryOrBySmLargestFirstTiesByPid) {
  std::vector<Process> p{{0, 30, "a", false, 10, 5 << 20, "x"},
                         {1, 10, "a", false, 90, 1 << 20, "y"},
                         {2, 20, "a", false, std::nullopt, 5 << 20, "z"},
                         {3, 40, "a", false, 0, 0, "w"}};
  sortProcesses(p, SortKey::Memory);
  EXPECT_EQ(p[0].pid, 20U);
  EXPECT_EQ(p[1].pid, 30U);
  EXPECT_EQ(p[2].pid, 10U);
  EXPECT_EQ(p[3].pid, 40U);
  sortProcesses(p, SortKey::Sm);
  EXPECT_EQ(p[0].pid, 10U);
  EXPECT_EQ(p[1].pid, 30U);
  EXPECT_EQ(p[2].pid, 40U) << "0 % is above no sample";
  EXPECT_EQ(p[3].pid, 20U);
}

TEST(TopKill, RealChildIsTerminated) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) ::pause();
  }
  EXPECT_EQ(sendTerm(static_cast<unsigned>(child)), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(killMessage(static_cast<unsigned>(child), 0, "root", "sleep"),
            "sent SIGTERM to process " + std::to_string(child) + " (sleep)");
}

TEST(TopKill, ProcessAlreadyGoneIsEsrch) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // reaped: the pid names nothing now
  const int err = sendTerm(static_cast<unsigned>(child));
  EXPECT_EQ(err, ESRCH);
  EXPECT_EQ(killMessage(static_cast<unsigned>(child), err, "root", "python3"),
            "process " + std::to_string(child) + " (python3) is already gone");
  EXPECT_EQ(sendTerm(0), ESRCH) << "never kill(0): that is the whole process group";
}

TEST(TopKill, NotPermittedNamesTheOwner) {
  EXPECT_EQ(killMessage(4242, EPERM, "alice", "python3"),
            "not permitted: process 4242 belongs to user alice; run as root or as alice");
  // Only where the tests do not run as root can the kernel itself refuse (pid 1 is root's).
  if (::geteuid() != 0) {
    EXPECT_EQ(sendTerm(1), EPERM);
  }
  EXPECT_NE(killMessage(7, EINVAL, "bob", "x").find("cannot signal process 7"), std::string::npos);
}

}  // namespace
}  // namespace gw::cli::top

namespace gw::cli {
namespace {

TEST(GpuProcesses, OwnerIsReadUnderTheRoot) {
  std::string dir = (std::filesystem::temp_directory_path() / "gw-top-root-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::filesystem::create_directories(dir + "/proc/123");
  std::filesystem::create_directories(dir + "/proc/124");
  std::filesystem::create_directories(dir + "/etc");
  std::ofstream(dir + "/proc/123/status") << "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n";
  std::ofstream(dir + "/proc/124/status") << "Name:\tpython3\nUid:\t1001\t0\t0\t0\n";
  std::ofstream(dir + "/etc/passwd") << "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n";
  platform::FsRoot root(dir);
  EXPECT_EQ(processUser(root, 123), "alice");
  EXPECT_EQ(processUser(root, 124), "1001") << "the real uid, as a number when /etc/passwd has no name";
  EXPECT_EQ(processUser(root, 125), "-") << "not visible under the root";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gw::cli
