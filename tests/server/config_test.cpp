#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

#include "fields/catalog.h"
#include "platform/clock.h"
#include "server/api_params.h"
#include "server/config.h"

#include "../support/temp_dir.h"
#include "server/counters_file.h"
#include "../support/temp_dir.h"

namespace gw::server {
namespace {

TEST(Config, EmptyFileGivesDefaults) {
  auto c = parseConfig("", "agent.yaml");
  ASSERT_TRUE(c) << c.error();
  ASSERT_EQ(c->listen.size(), 1u);
  EXPECT_EQ(c->listen[0].host, "0.0.0.0");
  EXPECT_EQ(c->listen[0].port, 9400);
  EXPECT_EQ(c->fast_interval, Millis(1000));
  EXPECT_EQ(c->slow_interval, Millis(10000));
  EXPECT_EQ(c->naming, MetricsNaming::Dcgm);
  EXPECT_EQ(c->xid_zero_hold, Millis(120000));
  EXPECT_TRUE(c->fields.empty());
  EXPECT_LE(c->flush_interval, Millis(10000));
}

TEST(Config, FullValidFile) {
  const char* yaml = R"(
listen: ["127.0.0.1:9400", "[::1]:9401"]
data_dir: /tmp/gw
sampling:
  fast_interval: 500ms
  slow_interval: 10s
  call_deadline: 1s
  fields: [gpu_temp, power.draw, DCGM_FI_DEV_SM_CLOCK, gpu_temp]
metrics:
  naming: native
  extra_labels: {cluster: a, rack: "r12"}
  xid_zero_hold: 45s
history:
  enabled: true
  raw_retention: 48h
  downsampled_retention: 90d
  flush_interval: 2s
http:
  read_timeout: 3s
  idle_timeout: 10s
  max_header_bytes: 8KiB
  max_body_bytes: 0
  max_connections: 32
  max_connections_per_ip: 16
  max_requests_per_connection: 100
  threads: 3
web_config_file: web.yaml
)";
  auto c = parseConfig(yaml, "agent.yaml");
  ASSERT_TRUE(c) << c.error();
  ASSERT_EQ(c->listen.size(), 2u);
  EXPECT_EQ(c->listen[0].host, "127.0.0.1");
  EXPECT_EQ(c->listen[1].host, "::1");
  EXPECT_EQ(c->listen[1].port, 9401);
  EXPECT_EQ(c->data_dir, "/tmp/gw");
  EXPECT_EQ(c->fast_interval, Millis(500));
  EXPECT_EQ(c->call_deadline, Millis(1000));
  // smi and DCGM names resolve to catalog keys, duplicates dropped
  ASSERT_EQ(c->fields.size(), 3u);
  EXPECT_EQ(c->fields[0], "gpu_temp");
  EXPECT_EQ(fields::findByKey(c->fields[1]), fields::findBySmiName("power.draw"));
  EXPECT_EQ(fields::findByKey(c->fields[2]), fields::findByDcgmName("DCGM_FI_DEV_SM_CLOCK"));
  EXPECT_EQ(c->naming, MetricsNaming::Native);
  EXPECT_EQ(c->xid_zero_hold, Millis(45000));
  ASSERT_EQ(c->extra_labels.size(), 2u);
  EXPECT_EQ(c->extra_labels[0], (std::pair<std::string, std::string>{"cluster", "a"}));
  EXPECT_EQ(c->raw_retention, std::chrono::hours(48));
  EXPECT_EQ(c->downsampled_retention, std::chrono::hours(90 * 24));
  EXPECT_EQ(c->flush_interval, Millis(2000));
  EXPECT_EQ(c->http.max_header_bytes, 8192u);
  EXPECT_EQ(c->http.max_connections, 32u);
  EXPECT_EQ(c->http.idle_timeout, Millis(10000));
  EXPECT_EQ(c->http.read_timeout, Millis(3000));
  EXPECT_EQ(c->http.max_connections_per_ip, 16u);
  EXPECT_EQ(c->http.threads, 3u);
  EXPECT_EQ(c->web_config_file, "web.yaml");  // a bare file name: no folder to resolve against
}

// The web configuration's path is taken relative to the agent's configuration file, as the files a
// web configuration names are; an absolute one is kept as written.
TEST(Config, WebConfigFileIsRelativeToTheConfiguration) {
  auto rel = parseConfig("web_config_file: web.yaml\n", "/etc/gpuwarden/agent.yaml");
  ASSERT_TRUE(rel) << rel.error();
  EXPECT_EQ(rel->web_config_file, "/etc/gpuwarden/web.yaml");
  auto sub = parseConfig("web_config_file: tls/web.yaml\n", "conf/agent.yaml");
  ASSERT_TRUE(sub) << sub.error();
  EXPECT_EQ(sub->web_config_file, "conf/tls/web.yaml");
  auto abs = parseConfig("web_config_file: /srv/web.yaml\n", "/etc/gpuwarden/agent.yaml");
  ASSERT_TRUE(abs) << abs.error();
  EXPECT_EQ(abs->web_config_file, "/srv/web.yaml");
}

struct BadCase {
  const char* yaml;
  const char* prefix;  // "file:line: field:"
  const char* contains;
};

class ConfigErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigErrors, NameFileLineAndField) {
  auto c = parseConfig(GetParam().yaml, "/etc/gpuwarden.yaml");
  ASSERT_FALSE(c) << GetParam().yaml;
  EXPECT_EQ(c.error().rfind(GetParam().prefix, 0), 0u) << c.error();
  EXPECT_NE(c.error().find(GetParam().contains), std::string::npos) << c.error();
}

// One byte past the longest path a unix socket address holds.
const std::string kLongSocket = "kubernetes:\n  pod_resources_socket: /" + std::string(107, 'a') + "\n";

INSTANTIATE_TEST_SUITE_P(
    All, ConfigErrors,
    ::testing::Values(
        BadCase{"listen: :9400\nbogus: 1\n", "/etc/gpuwarden.yaml:2: bogus:", "unknown key"},
        BadCase{"sampling:\n  fast_interval: 1s\n  fastinterval: 2s\n",
                "/etc/gpuwarden.yaml:3: sampling.fastinterval:", "unknown key"},
        BadCase{"sampling:\n  fast_interval: 10\n", "/etc/gpuwarden.yaml:2: sampling.fast_interval:", "needs a unit"},
        BadCase{"sampling:\n  fast_interval: 1 s\n", "/etc/gpuwarden.yaml:2: sampling.fast_interval:", "duration"},
        BadCase{"sampling:\n  fast_interval: 5s\n  slow_interval: 1s\n",
                "/etc/gpuwarden.yaml:3: sampling.slow_interval:", "shorter"},
        BadCase{"sampling:\n  fields:\n    - gpu_temp\n    - no_such_field\n",
                "/etc/gpuwarden.yaml:4: sampling.fields:", "unknown field"},
        BadCase{"sampling:\n  fields: [name]\n", "/etc/gpuwarden.yaml:2: sampling.fields:", "text field"},
        BadCase{"metrics:\n  naming: prometheus\n", "/etc/gpuwarden.yaml:2: metrics.naming:", "dcgm or native"},
        BadCase{"metrics:\n  xid_zero_hold: 2h\n", "/etc/gpuwarden.yaml:2: metrics.xid_zero_hold:", "at most 1h"},
        BadCase{"metrics:\n  xid_zero_hold: 30\n", "/etc/gpuwarden.yaml:2: metrics.xid_zero_hold:", "needs a unit"},
        BadCase{"metrics:\n  extra_labels:\n    9bad: x\n",
                "/etc/gpuwarden.yaml:3: metrics.extra_labels.9bad:", "label name"},
        BadCase{"metrics:\n  extra_labels:\n    UUID: x\n",
                "/etc/gpuwarden.yaml:3: metrics.extra_labels.UUID:", "gpuwarden itself"},
        BadCase{"history:\n  flush_interval: 30s\n", "/etc/gpuwarden.yaml:2: history.flush_interval:", "10s"},
        BadCase{"history:\n  raw_retention: 90m\n",
                "/etc/gpuwarden.yaml:2: history.raw_retention:", "whole number of hours"},
        BadCase{"history:\n  enabled: maybe\n", "/etc/gpuwarden.yaml:2: history.enabled:", "true or false"},
        BadCase{"jobs:\n  epilog_kill_leftovers: maybe\n",
                "/etc/gpuwarden.yaml:2: jobs.epilog_kill_leftovers:", "true or false"},
        BadCase{"listen:\n  - 127.0.0.1:99999\n", "/etc/gpuwarden.yaml:2: listen:", "bad port"},
        BadCase{"listen: 9400\n", "/etc/gpuwarden.yaml:1: listen:", "HOST:PORT"},
        BadCase{"http:\n  max_connections: 0\n", "/etc/gpuwarden.yaml:2: http.max_connections:", "between"},
        BadCase{"http:\n  max_header_bytes: lots\n", "/etc/gpuwarden.yaml:2: http.max_header_bytes:", "whole number"},
        BadCase{"http:\n  read_timeout: 1h\n", "/etc/gpuwarden.yaml:2: http.read_timeout:", "between"},
        BadCase{"http:\n  write_timeout: 5s\n", "/etc/gpuwarden.yaml:2: http.write_timeout:", "idle_timeout"},
        BadCase{"http:\n  threads: 0\n", "/etc/gpuwarden.yaml:2: http.threads:", "between"},
        BadCase{"web_config_file: [a]\n", "/etc/gpuwarden.yaml:1: web_config_file:", "single value"},
        BadCase{"sampling: [1, 2]\n", "/etc/gpuwarden.yaml:1: sampling:", "mapping"},
        BadCase{"sampling:\n  fast_interval: [1s\n", "/etc/gpuwarden.yaml:", "(syntax)"},
        // Every input bounded: duplicate keys, sizes that would wrap, durations too long, labels.
        BadCase{"sampling:\n  fast_interval: 1s\n  slow_interval: 5s\n  fast_interval: 10s\n",
                "/etc/gpuwarden.yaml:4: sampling.fast_interval:", "duplicate key (first given on line 2)"},
        BadCase{"listen: :9400\ndata_dir: /a\nlisten: :9401\n", "/etc/gpuwarden.yaml:3: listen:", "duplicate key"},
        BadCase{"alerts:\n  sinks:\n    - type: webhook\n      url: http://a/\n      url: http://b/\n",
                "/etc/gpuwarden.yaml:5: alerts.sinks[0].url:", "duplicate key (first given on line 4)"},
        BadCase{"http:\n  max_header_bytes: 18014398509481985KiB\n",
                "/etc/gpuwarden.yaml:2: http.max_header_bytes:", "too large"},
        BadCase{"http:\n  max_header_bytes: 99999999999999999999999\n",
                "/etc/gpuwarden.yaml:2: http.max_header_bytes:", "too large"},
        BadCase{"events:\n  max_bytes: 1KiB\n", "/etc/gpuwarden.yaml:2: events.max_bytes:", "between"},
        BadCase{"alerts:\n  repeat_interval: 100000000000d\n",
                "/etc/gpuwarden.yaml:2: alerts.repeat_interval:", "too large"},
        BadCase{"metrics:\n  extra_labels:\n    __meta: x\n",
                "/etc/gpuwarden.yaml:3: metrics.extra_labels.__meta:", "label name"},
        BadCase{"metrics:\n  extra_labels:\n    a-b: x\n",
                "/etc/gpuwarden.yaml:3: metrics.extra_labels.a-b:", "label name"},
        // health: the rules' keys, named under health. with the agent file's lines.
        BadCase{"health: 5\n", "/etc/gpuwarden.yaml:1: health:", "expected a mapping of health settings"},
        BadCase{"listen: :9400\nhealth:\n  gpu_temp_c: 80\n  gpu_tmep_c: 3\n",
                "/etc/gpuwarden.yaml:4: health.gpu_tmep_c:", "unknown key"},
        BadCase{"health:\n  expected_gpus: eight\n",
                "/etc/gpuwarden.yaml:2: health.expected_gpus:", "expected a whole number, got 'eight'"},
        BadCase{"health:\n  low_power_fraction: 65\n",
                "/etc/gpuwarden.yaml:2: health.low_power_fraction:", "must be between 0 and 1, got 65"},
        BadCase{"health:\n  disabled: [no_such_rule]\n",
                "/etc/gpuwarden.yaml:2: health.disabled:", "unknown rule 'no_such_rule'"},
        BadCase{"health:\n  workload_by_gpu:\n    3: serving\n", "/etc/gpuwarden.yaml:3: health.workload_by_gpu.3:",
                "expected training, inference, interactive or idle, got 'serving'"},
        BadCase{"health:\n  gpu_temp_c: 80\n  gpu_temp_c: 81\n",
                "/etc/gpuwarden.yaml:3: health.gpu_temp_c:", "duplicate key (first given on line 2)"},
        BadCase{"kubernetes:\n  pod_resources_socket: kubelet.sock\n",
                "/etc/gpuwarden.yaml:2: kubernetes.pod_resources_socket:", "must be an absolute path"},
        BadCase{kLongSocket.c_str(), "/etc/gpuwarden.yaml:2: kubernetes.pod_resources_socket:", "at most 107 bytes"},
        BadCase{"kubernetes:\n  refresh_interval: 50ms\n",
                "/etc/gpuwarden.yaml:2: kubernetes.refresh_interval:", "between 100ms and 1h"},
        BadCase{"kubernetes:\n  timeout: 2m\n", "/etc/gpuwarden.yaml:2: kubernetes.timeout:", "between 10ms and 60s"},
        BadCase{"kubernetes:\n  socket: /x\n", "/etc/gpuwarden.yaml:2: kubernetes.socket:", "unknown key"}));

TEST(Config, KubernetesSection) {
  auto d = parseConfig("", "f.yaml");
  ASSERT_TRUE(d) << d.error();
  EXPECT_FALSE(d->kubernetes.pod_resources_socket.has_value());  // the default path, when it exists
  EXPECT_EQ(d->kubernetes.refresh_interval, Millis(10000));
  EXPECT_EQ(d->kubernetes.timeout, Millis(2000));
  auto c =
      parseConfig("kubernetes:\n  pod_resources_socket: \"\"\n  refresh_interval: 30s\n  timeout: 500ms\n", "f.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->kubernetes.pod_resources_socket, std::optional<std::string>(""));
  EXPECT_EQ(c->kubernetes.refresh_interval, Millis(30000));
  EXPECT_EQ(c->kubernetes.timeout, Millis(500));
  EXPECT_EQ(restartOnlyChanges(*d, *c), std::vector<std::string>{"kubernetes"});
}

// A unix socket's address holds 107 bytes of path and its terminator: 107 is read, 108 refused.
TEST(Config, APodResourcesSocketPathOf107BytesFits) {
  const std::string at = "/" + std::string(106, 'a');
  auto c = parseConfig("kubernetes:\n  pod_resources_socket: " + at + "\n", "f.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->kubernetes.pod_resources_socket, std::optional<std::string>(at));
  auto e = parseConfig("kubernetes:\n  pod_resources_socket: " + at + "a\n", "f.yaml");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("f.yaml:2: kubernetes.pod_resources_socket: a unix socket path is at most 107 bytes"),
            std::string::npos)
      << e.error();
}

// The shipped example with every key must itself be a valid configuration.
TEST(Config, ShippedExampleIsValid) {
  auto c = loadConfig(std::string(GW_SOURCE_DIR) + "/deploy/gpuwarden.yaml");
  ASSERT_TRUE(c) << c.error();
  // Its health: section shows the rules' defaults: a changed default must change the example too.
  const health::RuleConfig defaults;
  EXPECT_EQ(c->health.low_power_fraction, defaults.low_power_fraction);
  EXPECT_EQ(c->health.gpu_temp_c, defaults.gpu_temp_c);
  EXPECT_EQ(c->health.memory_temp_c, defaults.memory_temp_c);
  EXPECT_EQ(c->health.expected_gpus, defaults.expected_gpus);
  EXPECT_TRUE(c->health.disabled.empty());
}

TEST(Config, HealthSectionSetsTheRules) {
  auto c = parseConfig(
      "health:\n  expected_gpus: 8\n  gpu_temp_c: 83\n  stalled_hold_ms: 60000\n  disabled: [persistence_off]\n"
      "  workload: training\n  workload_by_gpu: {6: inference}\n",
      "agent.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->health.expected_gpus, 8);
  EXPECT_EQ(c->health.gpu_temp_c, 83);
  EXPECT_EQ(c->health.stalled_hold_ms, 60000);
  EXPECT_EQ(c->health.disabled, std::set<std::string>{"persistence_off"});
  EXPECT_EQ(c->health.workload, health::WorkloadClass::kTraining);
  EXPECT_EQ(c->health.workload_by_gpu.at("6"), health::WorkloadClass::kInference);
  // Absent: the rules' own defaults.
  auto d = parseConfig("listen: :9400\n", "agent.yaml");
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->health.expected_gpus, 0);
  EXPECT_EQ(d->health.gpu_temp_c, health::RuleConfig{}.gpu_temp_c);
  // A changed health section is applied in place by a reload: never a restart-only change.
  EXPECT_TRUE(restartOnlyChanges(*d, *c).empty());
}

TEST(Config, SizeThatWouldWrapIsRefusedNotReadAsASmallNumber) {
  // 18014398509481985 KiB is 2^64 + 1024 bytes: unchecked, it wrapped to 1024 and passed.
  auto c = parseConfig("http:\n  max_body_bytes: 18014398509481985KiB\n", "a.yaml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("too large"), std::string::npos) << c.error();
  auto ok = parseConfig("http:\n  max_body_bytes: 1KiB\nevents:\n  max_bytes: 1MiB\n", "a.yaml");
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->http.max_body_bytes, 1024u);
  EXPECT_EQ(ok->events_max_bytes, 1u << 20);
  EXPECT_EQ(parseConfig("", "a.yaml")->events_max_bytes, 16u << 20);
}

std::string labels(std::size_t n, std::size_t value_bytes = 1) {
  std::string y = "metrics:\n  extra_labels:\n";
  for (std::size_t i = 0; i < n; ++i) y += "    l" + std::to_string(i) + ": " + std::string(value_bytes, 'v') + "\n";
  return y;
}

TEST(Config, ExtraLabelsAreBoundedInCountAndSize) {
  auto at_cap = parseConfig(labels(kMaxExtraLabels), "a.yaml");
  ASSERT_TRUE(at_cap) << at_cap.error();
  EXPECT_EQ(at_cap->extra_labels.size(), kMaxExtraLabels);
  auto over = parseConfig(labels(kMaxExtraLabels + 1), "a.yaml");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().rfind("a.yaml:3: metrics.extra_labels:", 0), 0u) << over.error();
  EXPECT_NE(over.error().find("at most 64"), std::string::npos) << over.error();
  auto long_value = parseConfig(labels(1, kMaxLabelValueBytes + 1), "a.yaml");
  ASSERT_FALSE(long_value);
  EXPECT_EQ(long_value.error().rfind("a.yaml:3: metrics.extra_labels.l0:", 0), 0u) << long_value.error();
  EXPECT_TRUE(parseConfig(labels(1, kMaxLabelValueBytes), "a.yaml"));
  auto long_name =
      parseConfig("metrics:\n  extra_labels:\n    " + std::string(kMaxLabelNameBytes + 1, 'n') + ": x\n", "a.yaml");
  ASSERT_FALSE(long_name);
  EXPECT_NE(long_name.error().find("a.yaml:3:"), std::string::npos) << long_name.error();
}

// The documented sizes themselves (docs/config.md): a label name of 128 bytes and a value of 1024,
// for an extra label and for the host label.
TEST(Config, LabelNamesOf128BytesAndValuesOf1024Fit) {
  const std::string name128 = "n" + std::string(127, 'a'), value1024(1024, 'v');
  auto c = parseConfig("metrics:\n  extra_labels:\n    " + name128 + ": " + value1024 + "\n", "a.yaml");
  ASSERT_TRUE(c) << c.error();
  ASSERT_EQ(c->extra_labels.size(), 1u);
  EXPECT_EQ(c->extra_labels[0], std::make_pair(name128, value1024));
  auto e = parseConfig("metrics:\n  extra_labels:\n    " + name128 + "a: x\n", "a.yaml");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("label name of 129 bytes; at most 128"), std::string::npos) << e.error();
  EXPECT_FALSE(parseConfig("metrics:\n  extra_labels:\n    l: " + value1024 + "v\n", "a.yaml"));
  auto h = parseConfig("metrics:\n  host_label: " + name128 + "\n  host_value: " + value1024 + "\n", "a.yaml");
  ASSERT_TRUE(h) << h.error();
  EXPECT_EQ(h->host_label, name128);
  EXPECT_FALSE(parseConfig("metrics:\n  host_label: " + name128 + "a\n", "a.yaml"));
  EXPECT_FALSE(parseConfig("metrics:\n  host_value: " + value1024 + "v\n", "a.yaml"));
}

TEST(Config, DuplicateKeysAreRefusedWithBothLines) {
  auto c = parseConfig("metrics:\n  extra_labels:\n    rack: r1\n    zone: z\n    rack: r2\n", "a.yaml");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().rfind("a.yaml:5: metrics.extra_labels.rack: duplicate key (first given on line 3)", 0), 0u)
      << c.error();
}

// The nesting bound counts a sequence as one level, as it counts a mapping: 64 levels are read
// (and then judged), the 65th is refused naming the path to it.
TEST(Config, SixtyFourLevelsOfSequencesAreReadTheSixtyFifthIsRefused) {
  const auto nested = [](int levels) {
    return "bogus: " + std::string(static_cast<std::size_t>(levels), '[') +
           std::string(static_cast<std::size_t>(levels), ']') + "\n";
  };
  auto at64 = parseConfig(nested(64), "a.yaml");
  ASSERT_FALSE(at64);
  EXPECT_EQ(at64.error().rfind("a.yaml:1: bogus: unknown key", 0), 0u) << at64.error();
  auto at65 = parseConfig(nested(65), "a.yaml");
  ASSERT_FALSE(at65);
  std::string path = "bogus";
  for (int i = 0; i < 64; ++i) path += "[0]";
  EXPECT_EQ(at65.error(), "a.yaml:1: " + path + ": nested too deeply");
}

TEST(Config, OnlyARegularFileIsAConfiguration) {
  char dir_tmpl[] = "/tmp/gw-config-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_tmpl), nullptr);
  const std::string dir = dir_tmpl;
  auto d = loadConfig(dir);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().find("regular file"), std::string::npos) << d.error();
  EXPECT_NE(d.error().find("directory"), std::string::npos) << d.error();
  const std::string fifo = dir + "/fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = loadConfig(fifo);  // must not block waiting for a writer
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().find("regular file"), std::string::npos) << f.error();
  auto dev = loadConfig("/dev/null");
  ASSERT_FALSE(dev);
  const std::string file = dir + "/ok.yaml";
  {
    std::FILE* out = std::fopen(file.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fputs("sampling:\n  fast_interval: 2s\n", out);
    std::fclose(out);
  }
  auto ok = loadConfig(file);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->fast_interval, Millis(2000));
  std::remove(fifo.c_str());
  std::remove(file.c_str());
  ::rmdir(dir.c_str());
}

// The file's bound (kMaxConfigBytes, 1 MiB): a file of exactly that size is read, one byte more
// is refused before it is parsed.
TEST(Config, AFileOfOneMebibyteIsReadAndOneByteMoreIsRefused) {
  testsupport::TempDir dir("gw-config-size");
  const std::string body = "sampling:\n  fast_interval: 2s\n";
  auto padded = [&](std::size_t size) { return body + "#" + std::string(size - body.size() - 2, 'x') + "\n"; };
  const std::string at = dir.write("at.yaml", padded(std::size_t{1} << 20));
  const std::string over = dir.write("over.yaml", padded((std::size_t{1} << 20) + 1));
  ASSERT_EQ(std::filesystem::file_size(at), std::size_t{1} << 20);
  auto ok = loadConfig(at);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->fast_interval, Millis(2000));
  auto big = loadConfig(over);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().find(over), std::string::npos) << big.error();
}

TEST(Config, MissingFileIsNamed) {
  auto c = loadConfig("/nonexistent/gpuwarden.yaml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("/nonexistent/gpuwarden.yaml"), std::string::npos);
}

TEST(Config, RestartOnlyChanges) {
  auto a = parseConfig("", "a");
  auto b = parseConfig("listen: 127.0.0.1:1\nmetrics: {naming: native}\n", "b");
  ASSERT_TRUE(a && b);
  auto diff = restartOnlyChanges(*a, *b);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0], "listen");
}

TEST(Durations, Parse) {
  EXPECT_EQ(*parseDuration("100ms"), Millis(100));
  EXPECT_EQ(*parseDuration("1s"), Millis(1000));
  EXPECT_EQ(*parseDuration("1h30m"), Millis(5400000));
  EXPECT_EQ(*parseDuration("2d"), Millis(2 * 86400000LL));
  EXPECT_FALSE(parseDuration(""));
  EXPECT_FALSE(parseDuration("10"));
  EXPECT_FALSE(parseDuration("0s"));
  EXPECT_FALSE(parseDuration("1y"));
  EXPECT_FALSE(parseDuration("-1s"));
  EXPECT_FALSE(parseDuration("s"));
  EXPECT_FALSE(parseDuration("9223372036854775807ms"));
  EXPECT_FALSE(parseDuration("2000000000000000000ms2000000000000000000ms"));
  EXPECT_FALSE(parseDuration("99999999999999999999999s"));
  EXPECT_FALSE(parseDuration("3651d"));
  EXPECT_FALSE(parseDuration("3650d1ms"));
  EXPECT_EQ(*parseDuration("3650d"), Millis(kMaxDurationMs));
}

// Each part of a duration is a count of its unit, never negative, and zero is a count too.
TEST(Durations, PartsAreCountsFromZero) {
  EXPECT_EQ(*parseDuration("1m0s"), Millis(60000));
  EXPECT_EQ(*parseDuration("0h1s"), Millis(1000));
  EXPECT_FALSE(parseDuration("2s-1ms"));
  EXPECT_FALSE(parseDuration("1m-0s"));
}

// A week is seven days, alone or with other units; 3650 days is 521 weeks and 3 days.
TEST(Durations, WeeksAreSevenDays) {
  EXPECT_EQ(*parseDuration("1w"), Millis(604800000LL));
  EXPECT_EQ(*parseDuration("2w"), Millis(1209600000LL));
  EXPECT_EQ(*parseDuration("1w1d"), Millis(691200000LL));
  EXPECT_EQ(*parseDuration("521w3d"), Millis(kMaxDurationMs));
  EXPECT_FALSE(parseDuration("521w3d1ms"));
}

TEST(ListenAddresses, Parse) {
  auto a = parseListenAddress(":9400");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->port, 9400);
  auto b = parseListenAddress("[::1]:0");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 0);
  EXPECT_FALSE(parseListenAddress("::1:9400"));
  EXPECT_FALSE(parseListenAddress("host:"));
  EXPECT_FALSE(parseListenAddress("host:65536"));
  // The top of the range is a port too.
  auto top = parseListenAddress("host:65535");
  ASSERT_TRUE(top);
  EXPECT_EQ(top->port, 65535);
  EXPECT_FALSE(parseListenAddress("host"));
}

TEST(ListenAddresses, ANegativePortIsRefused) {
  auto e = parseListenAddress("host:-1");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "bad port '-1' in 'host:-1' (0-65535)");
  EXPECT_FALSE(parseListenAddress("[::1]:-1"));
}

// A count in a URL is digits and nothing else, within its bounds: what std::stoul would have read
// as 5 ("5x"), 2^64-1 ("-1") or 7 (" 7") is refused, as is a number past 2^64.
TEST(WholeNumbers, DigitsOnlyWithinBounds) {
  EXPECT_EQ(*parseWholeNumber("1", 1, 10000), 1u);
  EXPECT_EQ(*parseWholeNumber("10000", 1, 10000), 10000u);
  EXPECT_EQ(*parseWholeNumber("0042", 1, 10000), 42u);
  EXPECT_EQ(*parseWholeNumber("18446744073709551615", 0, UINT64_MAX), UINT64_MAX);
  for (const char* bad : {"0", "10001", "", "5x", "-1", "+5", " 7", "7 ", "1e3", "0x10", "18446744073709551616",
                          "99999999999999999999999"}) {
    auto r = parseWholeNumber(bad, 1, 10000);
    EXPECT_FALSE(r.ok()) << "'" << bad << "'";
    if (!r.ok()) {
      EXPECT_EQ(r.error(), "expected a whole number from 1 to 10000") << bad;
    }
  }
}

// Twenty digits is the longest a 64-bit count can need: twenty zeros-led digits are read, a
// twenty-first is refused before any arithmetic.
TEST(WholeNumbers, TwentyDigitsAreReadTwentyOneAreNot) {
  EXPECT_EQ(*parseWholeNumber("00000000000000000001", 0, UINT64_MAX), 1u);
  EXPECT_FALSE(parseWholeNumber("000000000000000000001", 0, UINT64_MAX));
}

TEST(TimeSpecs, AllForms) {
  const std::int64_t now = 1714564800000;  // 2024-05-01T12:00:00Z
  EXPECT_EQ(*parseTimeSpec("now", now), now);
  EXPECT_EQ(*parseTimeSpec("1h", now), now - 3600000);
  EXPECT_EQ(*parseTimeSpec("-30m", now), now - 1800000);
  EXPECT_EQ(*parseTimeSpec("1714564800", now), 1714564800000);
  EXPECT_EQ(*parseTimeSpec("1714564800.25", now), 1714564800250);
  EXPECT_EQ(*parseTimeSpec("2024-05-01T12:00:00Z", now), 1714564800000);
  EXPECT_EQ(*parseTimeSpec("2024-05-01T12:00:00.5Z", now), 1714564800500);
  // A fraction that starts with a zero is still tenths, hundredths, ...: .05 s is 50 ms.
  EXPECT_EQ(*parseTimeSpec("2024-05-01T12:00:00.05Z", now), 1714564800050);
  EXPECT_EQ(*parseTimeSpec("2024-05-01T14:00:00+02:00", now), 1714564800000);
  EXPECT_EQ(*parseTimeSpec("2024-05-01T07:30:00-04:30", now), 1714564800000);
  for (const char* bad : {"", "yesterday", "2024-05-01", "2024-05-01T12:00:00", "2024-13-01T00:00:00Z", "1714564800000",
                          "1h2", "2024-05-01T12:00:00Zjunk", "12:00"}) {
    EXPECT_FALSE(parseTimeSpec(bad, now)) << bad;
  }
}

// Hour 23 is the last of the day, not past it; 24 is refused.
TEST(TimeSpecs, TheLastHourOfADayIsAValidTime) {
  const std::int64_t now = 1714564800000;  // 2024-05-01T12:00:00Z
  auto late = parseTimeSpec("2024-05-01T23:00:00Z", now);
  ASSERT_TRUE(late) << late.error();
  EXPECT_EQ(*late, 1714604400000);
  auto last = parseTimeSpec("2024-05-01T23:59:59Z", now);
  ASSERT_TRUE(last) << last.error();
  EXPECT_EQ(*last, 1714607999000);
  EXPECT_FALSE(parseTimeSpec("2024-05-01T24:00:00Z", now));
}

// Each month's length is a table of its own (timegm would roll 2024-02-31 into March): the last
// day of every month is a time exactly one day before the next month's first, the day after it is
// refused. 2023 is not a leap year, 2024 is.
TEST(TimeSpecs, EveryMonthEndsOnItsLastDay) {
  constexpr std::int64_t kDayMs = 86'400'000;
  const int last[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  char buf[64];
  for (int m = 1; m <= 12; ++m) {
    std::snprintf(buf, sizeof buf, "2023-%02d-%02dT00:00:00Z", m, last[m - 1]);
    const auto end = parseTimeSpec(buf, 0);
    ASSERT_TRUE(end) << buf << ": " << end.error();
    std::snprintf(buf, sizeof buf, "%04d-%02d-01T00:00:00Z", m == 12 ? 2024 : 2023, m == 12 ? 1 : m + 1);
    const auto next = parseTimeSpec(buf, 0);
    ASSERT_TRUE(next) << buf << ": " << next.error();
    EXPECT_EQ(*end + kDayMs, *next) << "month " << m;
    std::snprintf(buf, sizeof buf, "2023-%02d-%02dT00:00:00Z", m, last[m - 1] + 1);
    EXPECT_FALSE(parseTimeSpec(buf, 0)) << buf;
  }
  EXPECT_TRUE(parseTimeSpec("2024-02-29T00:00:00Z", 0));
  // The Gregorian rule: a century is a leap year only when it is a 400th one.
  EXPECT_FALSE(parseTimeSpec("2100-02-29T00:00:00Z", 0));
  EXPECT_TRUE(parseTimeSpec("2000-02-29T00:00:00Z", 0));
  EXPECT_TRUE(parseTimeSpec("2020-02-29T00:00:00Z", 0));
}

// Every field of a date at each edge of its range: month and day 00, the 30th of a leap February,
// minute 60; a leap second (:60) is a time (the next minute's first second), :61 is not.
TEST(TimeSpecs, EachDateFieldAtItsEdges) {
  for (const char* bad : {"2024-00-10T00:00:00Z", "2024-05-00T00:00:00Z", "2024-02-30T00:00:00Z",
                          "2024-05-01T12:60:00Z", "2024-05-01T12:00:61Z"}) {
    EXPECT_FALSE(parseTimeSpec(bad, 0)) << bad;
  }
  EXPECT_EQ(*parseTimeSpec("2024-05-01T12:59:00Z", 0), 1714568340000);
  EXPECT_EQ(*parseTimeSpec("2016-12-31T23:59:60Z", 0), 1483228800000);  // 2017-01-01T00:00:00Z
  EXPECT_EQ(*parseTimeSpec("2024-01-01T00:00:00Z", 0), 1704067200000);
}

// A bare number up to 1e11 is unix seconds (the year 5138); past it, it is a millisecond stamp
// given by mistake and refused.
TEST(TimeSpecs, UnixSecondsEndWhereMillisecondsBegin) {
  EXPECT_EQ(*parseTimeSpec("100000000000", 0), 100000000000000);
  auto e = parseTimeSpec("100000000000.5", 0);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "'100000000000.5' looks like milliseconds; give unix seconds");
  EXPECT_FALSE(parseTimeSpec("100000000001", 0));
}

TEST(TimeSpecs, StepsAndFormatting) {
  EXPECT_EQ(*parseStepMs("1m"), 60000);
  EXPECT_EQ(*parseStepMs("500ms"), 500);
  EXPECT_EQ(*parseStepMs("raw"), 0);
  EXPECT_FALSE(parseStepMs("fast"));
  EXPECT_FALSE(parseStepMs("60"));
  EXPECT_EQ(*parseTimeSpec(platform::formatRfc3339(1714564800123), 0), 1714564800123);
}

// history.flush_interval at each end of its range and one step (1 ms) past it.
TEST(Config, FlushIntervalIsBoundedAtBothEnds) {
  for (const char* ok : {"100ms", "10000ms"}) {
    auto c = parseConfig(std::string("history:\n  flush_interval: ") + ok + "\n", "a.yaml");
    ASSERT_TRUE(c) << ok << ": " << c.error();
  }
  EXPECT_EQ(parseConfig("history:\n  flush_interval: 100ms\n", "a.yaml")->flush_interval, Millis(100));
  for (const char* bad : {"99ms", "10001ms"}) {
    auto c = parseConfig(std::string("history:\n  flush_interval: ") + bad + "\n", "a.yaml");
    ASSERT_FALSE(c) << bad;
    EXPECT_NE(c.error().find("a.yaml:2: history.flush_interval: must be between 100ms and 10s"), std::string::npos)
        << c.error();
  }
}

// Every size and count limit of the file at its bounds and one step past each, and the value read
// where it is meant to land (docs/config.md).
TEST(Config, SizeLimitsAreBoundedAtBothEnds) {
  const std::string sink = "alerts:\n  sinks:\n    - type: webhook\n      url: http://a/\n      ";
  struct Limit {
    std::string prefix;  // YAML up to the key
    std::string name;    // as errors name it
    std::uint64_t min, max;
    std::function<std::uint64_t(const AgentConfig&)> read;
  } limits[] = {
      {"http:\n  max_header_bytes: ", "http.max_header_bytes", 1024, 1 << 20,
       [](const AgentConfig& c) { return c.http.max_header_bytes; }},
      {"http:\n  max_body_bytes: ", "http.max_body_bytes", 0, 1 << 20,
       [](const AgentConfig& c) { return c.http.max_body_bytes; }},
      {"http:\n  max_connections: ", "http.max_connections", 1, 65536,
       [](const AgentConfig& c) { return c.http.max_connections; }},
      {"http:\n  max_connections_per_ip: ", "http.max_connections_per_ip", 1, 65536,
       [](const AgentConfig& c) { return c.http.max_connections_per_ip; }},
      {"http:\n  max_requests_per_connection: ", "http.max_requests_per_connection", 1, 1000000,
       [](const AgentConfig& c) { return std::uint64_t{c.http.max_requests_per_connection}; }},
      {"http:\n  threads: ", "http.threads", 1, 64, [](const AgentConfig& c) { return std::uint64_t{c.http.threads}; }},
      {"events:\n  max_bytes: ", "events.max_bytes", 64 << 10, std::uint64_t{1} << 30,
       [](const AgentConfig& c) { return c.events_max_bytes; }},
      {sink + "rate_limit: ", "alerts.sinks[0].rate_limit", 0, 1000000,
       [](const AgentConfig& c) { return static_cast<std::uint64_t>(c.alerts.sinks.at(0).rate_limit); }},
  };
  for (const auto& l : limits) {
    auto parse = [&](std::uint64_t v) { return parseConfig(l.prefix + std::to_string(v) + "\n", "c.yaml"); };
    for (std::uint64_t v : {l.min, l.max}) {
      auto c = parse(v);
      ASSERT_TRUE(c) << l.name << " = " << v << ": " << c.error();
      EXPECT_EQ(l.read(*c), v) << l.name;
    }
    const std::string range = l.name + ": must be between " + std::to_string(l.min) + " and " + std::to_string(l.max);
    std::vector<std::uint64_t> past{l.max + 1};
    if (l.min > 0) past.push_back(l.min - 1);
    for (std::uint64_t v : past) {
      auto c = parse(v);
      ASSERT_FALSE(c) << l.name << " = " << v << " was accepted";
      EXPECT_NE(c.error().find(range), std::string::npos) << c.error();
    }
  }
  // Units: 64KiB is 65536 bytes.
  auto c = parseConfig("events:\n  max_bytes: 64KiB\n", "c.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->events_max_bytes, 65536u);
}

TEST(Config, TheHostLabelsNameAndValue) {
  auto c = parseConfig("metrics:\n  host_label: node\n  host_value: gpu-17\n", "a.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->host_label, "node");
  EXPECT_EQ(c->host_value, "gpu-17");
  c = parseConfig("metrics:\n  host_label: \"\"\n", "a.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->host_label, "");
  EXPECT_FALSE(c->host_value.has_value());
  for (const char* bad : {"UUID", "gpu", "state", "rule", "hpc_job", "pod", "1x", "__x"}) {
    auto e = parseConfig(std::string("metrics:\n  host_label: ") + bad + "\n", "a.yaml");
    ASSERT_FALSE(e) << bad;
    EXPECT_NE(e.error().find("a.yaml:2: metrics.host_label: '" + std::string(bad) + "' is not a label name"),
              std::string::npos)
        << e.error();
  }
  EXPECT_TRUE(parseConfig("metrics:\n  host_label: hostname\n", "a.yaml"));
  auto e = parseConfig("metrics:\n  host_value: \"\"\n", "a.yaml");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("a.yaml:2: metrics.host_value: must be 1 to 1024 bytes"), std::string::npos) << e.error();
  e = parseConfig("metrics:\n  host_label: node\n  extra_labels:\n    node: x\n", "a.yaml");
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("a.yaml:4: metrics.extra_labels.node: is the host label"), std::string::npos) << e.error();
}

TEST(Config, NodeNameFromTheEnvironmentWhenItFitsALabel) {
  ::setenv("NODE_NAME", "k8s-gpu-3", 1);
  EXPECT_EQ(nodeNameFromEnv(), "k8s-gpu-3");
  ::setenv("NODE_NAME", "bad\nname", 1);
  EXPECT_FALSE(nodeNameFromEnv().has_value());
  ::setenv("NODE_NAME", std::string(kMaxLabelValueBytes + 1, 'n').c_str(), 1);
  EXPECT_FALSE(nodeNameFromEnv().has_value());
  // Every control character is refused, the printable ones at either end of ASCII are kept.
  for (const char* bad : {"a\x1f"
                          "b",
                          "a\x7f"
                          "b",
                          "a\x01"
                          "b",
                          "a\tb"}) {
    ::setenv("NODE_NAME", bad, 1);
    EXPECT_FALSE(nodeNameFromEnv().has_value()) << bad;
  }
  for (const char* good : {"a b", "a~b",
                           "a\xc3\xa9"
                           "b"}) {
    ::setenv("NODE_NAME", good, 1);
    EXPECT_EQ(nodeNameFromEnv(), std::optional<std::string>(good)) << good;
  }
  ::setenv("NODE_NAME", std::string(1024, 'n').c_str(), 1);
  EXPECT_EQ(nodeNameFromEnv(), std::optional<std::string>(std::string(1024, 'n')));
  ::setenv("NODE_NAME", "", 1);
  EXPECT_FALSE(nodeNameFromEnv().has_value());
  ::unsetenv("NODE_NAME");
  EXPECT_FALSE(nodeNameFromEnv().has_value());
}

// dcgm-exporter's own default-counters.csv layout: comments, spaces, a label line, fields we
// do not collect.
constexpr const char* kDcgmCounters =
    "# Format\n"
    "# If line starts with a '#' it is considered a comment\n"
    "# DCGM FIELD, Prometheus metric type, help message\n"
    "\n"
    "# Clocks\n"
    "DCGM_FI_DEV_SM_CLOCK,  gauge, SM clock frequency (in MHz).\n"
    "DCGM_FI_DEV_MEM_CLOCK, gauge, Memory clock frequency (in MHz).\n"
    "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n"
    "  DCGM_FI_DEV_GPU_TEMP , gauge, again\n"
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, gauge, Current clock event reasons.\n"
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU License status\n"
    "DCGM_FI_DRIVER_VERSION, label, Driver Version\n";

TEST(CountersFile, DcgmExportersFormatSelectsTheFields) {
  auto f = parseCountersFile(kDcgmCounters, "c.csv");
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(f->fields, (std::vector<std::string>{"sm_clock", "mem_clock", "gpu_temp", "clock_event_reasons"}));
  EXPECT_TRUE(f->driver_version_label);
  EXPECT_EQ(f->skipped, std::vector<std::string>{"c.csv:11 DCGM_FI_DEV_VGPU_LICENSE_STATUS"});
  f = parseCountersFile("DCGM_FI_DEV_GPU_UTIL, gauge, x\n", "c.csv");
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->driver_version_label);  // default-counters.csv has no such line
}

// A field gpuwarden collects as a number but the file types as a label is left out (named in
// skipped), as dcgm-exporter turns it into a label rather than a series.
TEST(CountersFile, ANumericFieldTypedAsALabelIsSkipped) {
  auto f = parseCountersFile("DCGM_FI_DEV_GPU_UTIL, gauge, x\nDCGM_FI_DEV_GPU_TEMP, label, GPU temperature\n", "c.csv");
  ASSERT_TRUE(f) << f.error();
  EXPECT_EQ(f->fields, std::vector<std::string>{"gpu_util"});
  EXPECT_EQ(f->skipped, std::vector<std::string>{"c.csv:2 DCGM_FI_DEV_GPU_TEMP"});
}

TEST(CountersFile, MalformedLinesNameFileAndLine) {
  auto e = parseCountersFile("# c\nDCGM_FI_DEV_GPU_TEMP\n", "c.csv");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(),
            "c.csv:2: expected 'DCGM_FIELD, type, help' (dcgm-exporter's counters format), got "
            "'DCGM_FI_DEV_GPU_TEMP'");
  e = parseCountersFile("DCGM_FI_DEV_GPU_TEMP, histogram, x\n", "c.csv");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "c.csv:1: DCGM_FI_DEV_GPU_TEMP: type 'histogram'; expected gauge, counter or label");
  e = parseCountersFile("# only comments\n", "c.csv");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "c.csv: names no field gpuwarden collects");
  std::string many;
  for (std::size_t i = 0; i <= kMaxCountersLines; ++i) many += "# x\n";
  e = parseCountersFile(many, "c.csv");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "c.csv: more than 4096 lines");
}

// The counters file is read up to 256 KiB: exactly that is read, one byte more is refused unread.
TEST(CountersFile, AFileOf256KiBIsReadOneByteMoreIsNot) {
  ASSERT_EQ(kMaxCountersFileBytes, 262144u);
  testsupport::TempDir dir;
  const auto padded = [](std::size_t size) {
    std::string t = "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n";
    while (t.size() + 203 <= size) t += "#" + std::string(199, 'x') + "\n";
    t += "#" + std::string(size - t.size() - 2, 'x') + "\n";
    return t;
  };
  auto at = loadCountersFile(dir.write("c.csv", padded(262144)));
  ASSERT_TRUE(at) << at.error();
  EXPECT_EQ(at->fields, std::vector<std::string>{"gpu_temp"});
  auto over = loadCountersFile(dir.write("c.csv", padded(262145)));
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().find("262145 bytes; at most 262144"), std::string::npos) << over.error();
}

TEST(Config, ACountersFileBesideTheConfigurationSetsTheFields) {
  testsupport::TempDir dir;
  dir.write("counters.csv", kDcgmCounters);
  const std::string yaml = dir.write("agent.yaml", "sampling:\n  counters_file: counters.csv\n");
  auto c = loadConfig(yaml);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->fields, (std::vector<std::string>{"sm_clock", "mem_clock", "gpu_temp", "clock_event_reasons"}));
  EXPECT_TRUE(c->dcgm_driver_version_label);
  EXPECT_EQ(c->counters_skipped.size(), 1u);
  auto both = parseConfig("sampling:\n  fields: [gpu_temp]\n  counters_file: x.csv\n", "a.yaml");
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().find("a.yaml:3: sampling.counters_file: give either fields or counters_file"),
            std::string::npos)
      << both.error();
  dir.write("bad.csv", "DCGM_FI_DEV_GPU_TEMP\n");
  auto bad = loadConfig(dir.write("b.yaml", "sampling:\n  counters_file: bad.csv\n"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("b.yaml:2: sampling.counters_file: " + dir.file("bad.csv") + ":1: expected"),
            std::string::npos)
      << bad.error();
}

// The epilog's kill switch is off unless the file turns it on: what it says, both ways, is what
// the agent reports to job.end (docs/slurm.md).
TEST(Config, EpilogKillLeftoversIsReadBothWays) {
  auto on = parseConfig("jobs:\n  epilog_kill_leftovers: true\n", "a.yaml");
  ASSERT_TRUE(on) << on.error();
  EXPECT_TRUE(on->jobs.epilog_kill_leftovers);
  auto off = parseConfig("jobs:\n  epilog_kill_leftovers: off\n", "a.yaml");
  ASSERT_TRUE(off) << off.error();
  EXPECT_FALSE(off->jobs.epilog_kill_leftovers);
}

// The sampling intervals at their documented edges (docs/config.md) and one millisecond beyond.
TEST(Config, SamplingIntervalsAtTheirEdges) {
  auto ok = [](const std::string& sampling) { return parseConfig("sampling:\n" + sampling, "a.yaml").ok(); };
  EXPECT_TRUE(ok("  fast_interval: 10ms\n"));
  EXPECT_FALSE(ok("  fast_interval: 9ms\n"));
  EXPECT_TRUE(ok("  fast_interval: 3600000ms\n  slow_interval: 24h\n"));
  EXPECT_FALSE(ok("  fast_interval: 3600001ms\n  slow_interval: 24h\n"));
  EXPECT_TRUE(ok("  slow_interval: 86400000ms\n"));
  EXPECT_FALSE(ok("  slow_interval: 86400001ms\n"));
  EXPECT_TRUE(ok("  fast_interval: 2s\n  slow_interval: 2s\n"));
  EXPECT_FALSE(ok("  fast_interval: 2s\n  slow_interval: 1999ms\n"));
  EXPECT_TRUE(ok("  call_deadline: 10ms\n"));
  EXPECT_FALSE(ok("  call_deadline: 9ms\n"));
  EXPECT_TRUE(ok("  call_deadline: 60000ms\n"));
  EXPECT_FALSE(ok("  call_deadline: 60001ms\n"));
}

// Every duration limit of the file at its bounds and one millisecond past each, and the value read
// where it is meant to land (docs/config.md); every duration is positive, so 0 is refused by all.
// The bounds are written here, not read from the parser, so that moving one is a failing test.
TEST(Config, DurationLimitsAtTheirEdges) {
  constexpr std::int64_t kNone = -1;
  const std::string sink = "alerts:\n  sinks:\n    - type: webhook\n      url: http://a/\n      ";
  struct Limit {
    std::string prefix;  // YAML up to the key
    std::string name;    // as errors name it
    std::int64_t min_ms, max_ms;
    std::function<Millis(const AgentConfig&)> read;
  } limits[] = {
      {"sampling:\n  call_deadline: ", "sampling.call_deadline", 10, 60000,
       [](const AgentConfig& c) { return c.call_deadline; }},
      {"metrics:\n  xid_zero_hold: ", "metrics.xid_zero_hold", 1, 3600000,
       [](const AgentConfig& c) { return c.xid_zero_hold; }},
      {"history:\n  flush_interval: ", "history.flush_interval", 100, 10000,
       [](const AgentConfig& c) { return c.flush_interval; }},
      {"http:\n  read_timeout: ", "http.read_timeout", 100, 300000,
       [](const AgentConfig& c) { return c.http.read_timeout; }},
      {"http:\n  idle_timeout: ", "http.idle_timeout", 1000, 300000,
       [](const AgentConfig& c) { return c.http.idle_timeout; }},
      {"kubernetes:\n  refresh_interval: ", "kubernetes.refresh_interval", 100, 3600000,
       [](const AgentConfig& c) { return c.kubernetes.refresh_interval; }},
      {"kubernetes:\n  timeout: ", "kubernetes.timeout", 10, 60000,
       [](const AgentConfig& c) { return c.kubernetes.timeout; }},
      {"alerts:\n  repeat_interval: ", "alerts.repeat_interval", 10000, kNone,
       [](const AgentConfig& c) { return c.alerts.effectiveRepeatInterval(); }},
      {sink + "timeout: ", "alerts.sinks[0].timeout", 1, 300000,
       [](const AgentConfig& c) { return c.alerts.sinks.at(0).timeout; }},
  };
  for (const auto& l : limits) {
    auto parse = [&](std::int64_t ms) { return parseConfig(l.prefix + std::to_string(ms) + "ms\n", "d.yaml"); };
    auto accepted = [&](std::int64_t ms) {
      auto c = parse(ms);
      ASSERT_TRUE(c) << l.name << " = " << ms << "ms: " << c.error();
      EXPECT_EQ(l.read(*c), Millis(ms)) << l.name;
    };
    auto refused = [&](std::int64_t ms) {
      auto c = parse(ms);
      ASSERT_FALSE(c) << l.name << " = " << ms << "ms was accepted";
      EXPECT_NE(c.error().find("d.yaml:"), std::string::npos) << c.error();
      EXPECT_NE(c.error().find(l.name + ": "), std::string::npos) << c.error();
    };
    accepted(l.min_ms);
    if (l.min_ms > 0) refused(l.min_ms - 1);
    if (l.max_ms != kNone) {
      accepted(l.max_ms);
      refused(l.max_ms + 1);
    }
  }
}

// Durations in general: at most ten years, so that any deadline computed from one fits a clock.
TEST(Config, ADurationIsAtMostTenYears) {
  auto c = parseConfig("alerts:\n  repeat_interval: 3650d\n", "d.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->alerts.effectiveRepeatInterval(), Millis(3650LL * 86400000));
  auto over = parseConfig("alerts:\n  repeat_interval: 315360000001ms\n", "d.yaml");
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().find("d.yaml:2: alerts.repeat_interval:"), std::string::npos) << over.error();
}

// Retention: whole hours, the downsampled tier at least as long as the raw one (equal is fine).
TEST(Config, RetentionsAtTheirEdges) {
  auto ret = [](const std::string& raw, const std::string& down) {
    return parseConfig("history:\n  raw_retention: " + raw + "\n  downsampled_retention: " + down + "\n", "r.yaml");
  };
  auto same = ret("48h", "48h");
  ASSERT_TRUE(same) << same.error();
  EXPECT_EQ(same->raw_retention, std::chrono::hours(48));
  EXPECT_EQ(same->downsampled_retention, std::chrono::hours(48));
  auto shorter = ret("48h", "47h");
  ASSERT_FALSE(shorter);
  EXPECT_NE(shorter.error().find("history.downsampled_retention: must not be shorter than raw_retention"),
            std::string::npos)
      << shorter.error();
  auto part = ret("3599999ms", "48h");
  ASSERT_FALSE(part);
  EXPECT_NE(part.error().find("r.yaml:2: history.raw_retention: must be a whole number of hours"), std::string::npos)
      << part.error();
  auto down_part = ret("1h", "3600001ms");
  ASSERT_FALSE(down_part);
  EXPECT_NE(down_part.error().find("r.yaml:3: history.downsampled_retention: must be a whole number of hours"),
            std::string::npos)
      << down_part.error();
}

// data_dir's default is $GPUWARDEN_DATA_DIR when set and not empty; a file's data_dir wins over it.
TEST(Config, DataDirDefaultsToTheEnvironmentsFolder) {
  ::setenv("GPUWARDEN_DATA_DIR", "/srv/gw", 1);
  auto from_env = parseConfig("", "agent.yaml");
  auto from_file = parseConfig("data_dir: /data/gw\n", "agent.yaml");
  ::setenv("GPUWARDEN_DATA_DIR", "", 1);
  auto empty = parseConfig("", "agent.yaml");
  ::unsetenv("GPUWARDEN_DATA_DIR");
  ASSERT_TRUE(from_env && from_file && empty);
  EXPECT_EQ(from_env->data_dir, "/srv/gw");
  EXPECT_EQ(from_file->data_dir, "/data/gw");
  EXPECT_EQ(empty->data_dir, "/var/lib/gpuwarden");
}

// Every default of an empty file as docs/config.md's tables give it, written out here (not read
// from the structs), so that a default moved in the code and not in the docs fails.
TEST(Config, EveryDefaultIsTheDocumentedOne) {
  auto c = parseConfig("", "agent.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->data_dir, "/var/lib/gpuwarden");
  EXPECT_EQ(c->call_deadline, Millis(2000));
  EXPECT_EQ(c->xid_zero_hold, Millis(120000));
  EXPECT_FALSE(c->host_label.has_value());
  EXPECT_TRUE(c->extra_labels.empty());
  EXPECT_TRUE(c->dcgm_driver_version_label);
  EXPECT_EQ(c->events_max_bytes, std::size_t{16} << 20);
  EXPECT_TRUE(c->history_enabled);
  EXPECT_EQ(c->raw_retention, std::chrono::hours(24));
  EXPECT_EQ(c->downsampled_retention, std::chrono::hours(24 * 30));
  EXPECT_EQ(c->flush_interval, Millis(5000));
  EXPECT_EQ(c->http.read_timeout, Millis(5000));
  EXPECT_EQ(c->http.idle_timeout, Millis(10000));
  EXPECT_EQ(c->http.max_header_bytes, 8192u);
  EXPECT_EQ(c->http.max_body_bytes, 4096u);
  EXPECT_EQ(c->http.max_connections, 8192u);
  EXPECT_EQ(c->http.max_connections_per_ip, 2048u);
  EXPECT_EQ(c->http.max_requests_per_connection, 1000u);
  EXPECT_EQ(c->http.threads, 4u);
  EXPECT_TRUE(c->web_config_file.empty());
  EXPECT_TRUE(c->alerts.sinks.empty());
  EXPECT_EQ(c->alerts.min_severity, "warning");
  EXPECT_EQ(c->alerts.runbook_base, "file:///usr/share/doc/gpuwarden/knowledge-base.md");
  EXPECT_EQ(c->alerts.effectiveRepeatInterval(), Millis(4LL * 3600000));
  EXPECT_TRUE(c->jobs.hpc_job_mapping_dir.empty());
  EXPECT_FALSE(c->jobs.epilog_kill_leftovers);
  EXPECT_FALSE(c->kubernetes.pod_resources_socket.has_value());
  EXPECT_EQ(c->kubernetes.refresh_interval, Millis(10000));
  EXPECT_EQ(c->kubernetes.timeout, Millis(2000));

  // A sink's own defaults; an alertmanager sink re-sends every minute.
  auto s = parseConfig("alerts:\n  sinks:\n    - type: alertmanager\n      url: http://am:9093/\n", "agent.yaml");
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s->alerts.sinks.size(), 1u);
  const auto& sink = s->alerts.sinks[0];
  EXPECT_EQ(sink.name, "alertmanager");
  EXPECT_EQ(sink.timeout, Millis(5000));
  EXPECT_EQ(sink.rate_limit, 60);
  EXPECT_EQ(sink.rate_interval, Millis(60000));
  EXPECT_TRUE(sink.verify_tls);
  EXPECT_EQ(s->alerts.effectiveRepeatInterval(), Millis(60000));
}

// A reload names every setting that only a restart applies, each on its own, and nothing for the
// settings a reload applies (sampling, metrics naming and labels, health).
TEST(Config, EachRestartOnlySettingIsNamedOnItsOwn) {
  auto base = parseConfig("", "a.yaml");
  ASSERT_TRUE(base) << base.error();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"listen: 127.0.0.1:1\n", "listen"},
      {"data_dir: /tmp/elsewhere\n", "data_dir"},
      {"jobs:\n  hpc_job_mapping_dir: /run/jobs\n", "jobs.hpc_job_mapping_dir"},
      {"history:\n  enabled: false\n", "history.enabled"},
      {"history:\n  raw_retention: 48h\n", "history.raw_retention"},
      {"history:\n  downsampled_retention: 60d\n", "history.downsampled_retention"},
      {"history:\n  flush_interval: 1s\n", "history.flush_interval"},
      {"http:\n  read_timeout: 6s\n", "http"},
      {"http:\n  idle_timeout: 11s\n", "http"},
      {"http:\n  max_header_bytes: 9KiB\n", "http"},
      {"http:\n  max_body_bytes: 1KiB\n", "http"},
      {"http:\n  max_connections: 100\n", "http"},
      {"http:\n  max_connections_per_ip: 100\n", "http"},
      {"http:\n  max_requests_per_connection: 10\n", "http"},
      {"http:\n  threads: 2\n", "http"},
      {"web_config_file: /etc/web.yml\n", "web_config_file"},
      {"alerts:\n  min_severity: critical\n", "alerts"},
      {"alerts:\n  repeat_interval: 1h\n", "alerts"},
      {"alerts:\n  runbook_base: https://wiki/kb\n", "alerts"},
      {"alerts:\n  sinks:\n    - type: webhook\n      url: http://a/\n", "alerts"},
      {"events:\n  max_bytes: 1MiB\n", "events.max_bytes"},
      {"metrics:\n  xid_zero_hold: 1m\n", "metrics.xid_zero_hold"},
      {"kubernetes:\n  pod_resources_socket: \"\"\n", "kubernetes"},
      {"kubernetes:\n  refresh_interval: 5s\n", "kubernetes"},
      {"kubernetes:\n  timeout: 1s\n", "kubernetes"},
  };
  for (const auto& [yaml, name] : cases) {
    auto changed = parseConfig(yaml, "b.yaml");
    ASSERT_TRUE(changed) << yaml << changed.error();
    EXPECT_EQ(restartOnlyChanges(*base, *changed), std::vector<std::string>{name}) << yaml;
    EXPECT_EQ(restartOnlyChanges(*changed, *base), std::vector<std::string>{name}) << yaml;
  }
  for (const char* reloadable : {"sampling:\n  fast_interval: 2s\n", "metrics:\n  naming: native\n",
                                 "metrics:\n  extra_labels:\n    cluster: a\n", "health:\n  gpu_temp_c: 80\n"}) {
    auto changed = parseConfig(reloadable, "b.yaml");
    ASSERT_TRUE(changed) << reloadable << changed.error();
    EXPECT_TRUE(restartOnlyChanges(*base, *changed).empty()) << reloadable;
  }
  EXPECT_TRUE(restartOnlyChanges(*base, *base).empty());
}

}  // namespace
}  // namespace gw::server
