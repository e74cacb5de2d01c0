// `promtool check metrics` (Debian package `prometheus`) on the native output, both formats, and
// a parse check of the dcgm output. promtool lints text format 0.0.4 only (its parser does not
// know OpenMetrics' counter families, `info` type, # UNIT or # EOF), so the OpenMetrics output is
// checked in two steps: strictly by our own OpenMetrics reader, and by promtool after mapping it
// back to 0.0.4, which must reproduce the 0.0.4 rendering byte for byte.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "export/export_fixture.h"
#include "export/exposition_parser.h"
#include "export/prometheus.h"

namespace gw::exporter {
namespace {

using namespace gw::exporter::testing;

std::string findPromtool() {
  if (const char* p = std::getenv("GW_PROMTOOL"); p != nullptr && *p) return p;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/promtool";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `promtool check metrics` with `text` on its stdin.
Result promtoolCheck(const std::string& text) {
  Result r;
  const std::string promtool = findPromtool();
  if (promtool.empty()) return r;
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/gw_promtool_XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return r;
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  ::close(fd);
  const std::string cmd = "'" + promtool + "' check metrics < '" + path + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p != nullptr) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ::unlink(path.c_str());
  return r;
}

#define REQUIRE_PROMTOOL()                                                                     \
  ASSERT_FALSE(findPromtool().empty())                                                         \
      << "promtool not found on PATH (or GW_PROMTOOL): install Debian's `prometheus` package " \
         "(apt-get install -y prometheus), which ships /usr/bin/promtool"

std::string render(Naming n, Format f, const std::vector<collect::GpuView>& gpus = makeNode()) {
  ExportOptions o;
  o.naming = n;
  o.extra_labels = {{"cluster", "train-a"}};
  SelfMetrics s;
  s.now_ms = kNowMs;
  s.last_scrape_duration_seconds = 0.000042;
  s.scrapes = 3;
  std::string out;
  renderPage(out, gpus, makeAgent(), s, o, f);  // with the health and Xid series
  return out;
}

// OpenMetrics → text format 0.0.4: counter and info families take their sample names, info
// becomes gauge, unknown becomes untyped, # UNIT and # EOF go, HELP keeps only 0.0.4's escapes.
std::string openMetricsToText004(const std::string& om) {
  std::map<std::string, std::string> types;
  std::istringstream in(om);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    const auto sp = line.find(' ', 7);
    types[line.substr(7, sp - 7)] = line.substr(sp + 1);
  }
  std::string out;
  in.clear();
  in.str(om);
  for (std::string line; std::getline(in, line);) {
    if (line == "# EOF" || line.rfind("# UNIT ", 0) == 0) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const bool help = line[2] == 'H';
      const auto sp = line.find(' ', 7);
      const std::string fam = line.substr(7, sp - 7);
      std::string rest = line.substr(sp + 1);
      const std::string& type = types[fam];
      const std::string name = type == "counter" ? fam + "_total" : type == "info" ? fam + "_info" : fam;
      if (help) {
        std::string unescaped;
        for (std::size_t i = 0; i < rest.size(); ++i) {
          if (rest[i] == '\\' && i + 1 < rest.size() && rest[i + 1] == '"') continue;
          if (rest[i] == '\\' && i + 1 < rest.size()) {
            unescaped += rest[i];
            unescaped += rest[++i];
            continue;
          }
          unescaped += rest[i];
        }
        rest = unescaped;
      } else {
        rest = rest == "info" ? "gauge" : rest == "unknown" ? "untyped" : rest;
      }
      out += std::string(help ? "# HELP " : "# TYPE ") + name + " " + rest + "\n";
      continue;
    }
    out += line + "\n";
  }
  return out;
}

TEST(Promtool, NativeText004PassesWithoutComplaint) {
  REQUIRE_PROMTOOL();
  const std::string text = render(Naming::Native, Format::Text004);
  const Result r = promtoolCheck(text);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
}

TEST(Promtool, NativeOpenMetricsPassesWithoutComplaint) {
  REQUIRE_PROMTOOL();
  const std::string om = render(Naming::Native, Format::OpenMetrics);
  const Parsed p = parseExposition(om, /*openmetrics=*/true);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  const std::string as_text = openMetricsToText004(om);
  EXPECT_EQ(as_text, render(Naming::Native, Format::Text004))
      << "the OpenMetrics rendering differs from the 0.0.4 one beyond the format's own spelling";
  const Result r = promtoolCheck(as_text);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
}

// A scraper that takes only OpenMetrics gets the dcgm naming with its counters typed counter and
// their samples named ..._total: valid OpenMetrics throughout.
TEST(Promtool, DcgmOpenMetricsIsValidOpenMetrics) {
  const std::string om = render(Naming::Dcgm, Format::OpenMetrics);
  const Parsed p = parseExposition(om, /*openmetrics=*/true);
  EXPECT_TRUE(p.errors.empty()) << joinErrors(p.errors);
  EXPECT_NE(om.find("\n# TYPE DCGM_FI_DEV_PCIE_REPLAY_COUNTER counter\n"), std::string::npos);
  EXPECT_NE(om.find("\nDCGM_FI_DEV_PCIE_REPLAY_COUNTER_total{"), std::string::npos);
}

TEST(Promtool, NativeWithHostileModelNamePasses) {
  REQUIRE_PROMTOOL();
  auto node = makeNode();
  node[2].id.name = "Odd \"GPU\" \\ name\nsecond line \xE6\x97\xA5";
  const Result r = promtoolCheck(render(Naming::Native, Format::Text004, node));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
}

// dcgm-exporter's names are not lint-clean by design (camelCase modelName, counters without
// _total, a gauge named ..._SUMMARY): promtool complains (exit 3) but must parse everything (exit 1 is a parse error),
// and complain about nothing else.
TEST(Promtool, DcgmOutputParsesAndOnlyDcgmExporterQuirksAreReported) {
  REQUIRE_PROMTOOL();
  const Result r = promtoolCheck(render(Naming::Dcgm, Format::Text004));
  EXPECT_NE(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("error while linting"), std::string::npos) << r.output;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    const auto sp = line.find(' ');
    const std::string name = line.substr(0, sp), complaint = line.substr(sp + 1);
    if (complaint == "label names should be written in 'snake_case' not 'camelCase'") continue;  // modelName, UUID…
    const bool dcgm = name.rfind("DCGM_FI_", 0) == 0;
    // DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY is a gauge whose DCGM name happens to end in a type's name.
    EXPECT_TRUE(dcgm && (complaint == "counter metrics should have \"_total\" suffix" ||
                         complaint == "metric name should not include type 'counter'" ||
                         (name == "DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY" &&
                          complaint == "metric name should not include type 'summary'")))
        << line;
  }
}

}  // namespace
}  // namespace gw::exporter
