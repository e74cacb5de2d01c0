// Pinned on-disk formats: the committed goldens in this folder (docs/testing.md, "Pinned formats").
//
// For every format — history chunks, history.db, incidents.db, the alert queue — two kinds of test:
//  * every committed golden of every version still reads, through the real code, to exactly the
//    values written down independently of that code (golden_inputs.cpp for the inputs, the tables
//    below for what the incident store and the queue must list);
//  * today's code writes the current version exactly as its golden: chunks byte for byte; SQLite
//    files by their schema, version and meta rows (history.db also by every row and chunk blob).
//
// GW_UPDATE_GOLDEN=1 bin/golden_tests writes the goldens of versions that have none, then runs the
// tests. It never overwrites one: a golden that no longer matches means the format changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>

#include "../support/temp_dir.h"
#include "alert/queue.h"
#include "golden_inputs.h"
#include "fields/catalog.h"
#include "health/incidents.h"
#include "node/jobs.h"
#include "node/records.h"
#include "platform/sqlite.h"
#include "store/aggregate.h"
#include "store/chunk_codec.h"
#include "store/store.h"

namespace gw::golden {
namespace {

namespace fs = std::filesystem;
const fs::path kGoldenDir = GW_GOLDEN_DIR;

constexpr const char* kBumpRule =
    "the on-disk format changed: bump the format version (chunk_codec kChunkFormat... / the file's schema "
    "version), keep decoding the old version (migration), and add a golden for the new version "
    "(GW_UPDATE_GOLDEN=1 bin/golden_tests writes only versions that have no golden yet; it never overwrites a "
    "committed one, so regenerating cannot make this pass). See docs/testing.md, \"Pinned formats\".";

uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

std::string hexBits(double v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(bits(v)));
  return buf;
}

// ---- Golden files ----

struct GoldenFile {
  fs::path path;
  int version = 0;
  std::string name;  // chunk goldens: the input's name
};

// The committed goldens of one kind: "<kind>-v<N>.<ext>" or "<kind>-v<N>-<name>.<ext>".
std::vector<GoldenFile> goldens(const std::string& kind, const std::string& ext) {
  const std::regex pattern(kind + R"(-v([0-9]+)(?:-(.+))?\.)" + ext);
  std::vector<GoldenFile> out;
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, m, pattern)) out.push_back({entry.path(), std::stoi(m[1].str()), m[2].str()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

std::vector<uint8_t> readBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A golden is only ever opened as a copy in a temporary folder (SQLite writes next to the file it
// opens; the source tree is never written by a test).
std::string copyOf(const fs::path& golden, const testsupport::TempDir& dir, const std::string& as) {
  const std::string to = dir.file(as);
  fs::copy_file(golden, to, fs::copy_options::overwrite_existing);
  return to;
}

// ---- SQLite files, read through the one wrapper ----

std::unique_ptr<platform::Database> openReadOnly(const std::string& path) {
  auto db = platform::Database::open(path, "golden", {.read_only = true});
  EXPECT_TRUE(db.ok()) << db.error();
  return db.ok() ? std::move(db.value()) : nullptr;
}

// Rows of `sql` as text, columns joined by '|'.
std::vector<std::string> rows(platform::Database& db, const std::string& sql, int columns) {
  std::vector<std::string> out;
  auto st = db.prepare(sql);
  EXPECT_TRUE(st.ok()) << sql << ": " << st.error();
  if (!st.ok()) return out;
  platform::Query q = st->use();
  while (q.step()) {
    std::string line;
    for (int c = 0; c < columns; ++c) line += (c ? "|" : "") + (q.isNull(c) ? std::string("NULL") : q.text(c));
    out.push_back(line);
  }
  EXPECT_TRUE(q.status().ok()) << sql << ": " << q.status().message();
  return out;
}

int64_t userVersion(const std::string& path) {
  auto db = openReadOnly(path);
  return db ? db->queryInt("PRAGMA user_version").value_or(-1) : -1;
}

// What a SQLite file's format is: its tables and indexes, its version, and `extra` (meta rows).
std::vector<std::string> fileFormat(const std::string& path, const std::vector<std::pair<std::string, int>>& extra) {
  auto db = openReadOnly(path);
  if (!db) return {};
  std::vector<std::string> out = {"user_version " + std::to_string(db->queryInt("PRAGMA user_version").value_or(-1))};
  for (auto& r : rows(*db, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name", 4))
    out.push_back("schema " + r);
  for (const auto& [sql, columns] : extra)
    for (auto& r : rows(*db, sql, columns)) out.push_back(sql + ": " + r);
  return out;
}

// Fails naming the first difference between the golden's format and what today's code wrote.
void expectSameFormat(const std::vector<std::string>& golden, const std::vector<std::string>& fresh,
                      const fs::path& golden_file) {
  ASSERT_FALSE(golden.empty());
  if (golden == fresh) return;
  size_t i = 0;
  while (i < golden.size() && i < fresh.size() && golden[i] == fresh[i]) ++i;
  ADD_FAILURE() << golden_file.filename().string() << " differs from what today's code writes:\n  golden: "
                << (i < golden.size() ? golden[i] : "(nothing more)")
                << "\n  today:  " << (i < fresh.size() ? fresh[i] : "(nothing more)") << "\n"
                << kBumpRule;
}

// ---- Chunks ----

const ChunkInput* inputNamed(const std::vector<ChunkInput>& inputs, const std::string& name) {
  for (const auto& in : inputs)
    if (in.name == name) return &in;
  return nullptr;
}

TEST(Golden, ChunkBlobsOfEveryFormatVersionDecodeExactly) {
  const auto inputs = chunkInputs();
  const auto files = goldens("chunk", "bin");
  ASSERT_FALSE(files.empty()) << "no chunk goldens in " << kGoldenDir;
  for (const GoldenFile& g : files) {
    SCOPED_TRACE(g.path.filename().string());
    const ChunkInput* in = inputNamed(inputs, g.name);
    ASSERT_NE(in, nullptr) << "no reference input named '" << g.name << "' (golden_inputs.cpp)";
    ASSERT_LE(g.version, store::kChunkFormat) << "a chunk format newer than this code knows";
    const std::vector<uint8_t> blob = readBytes(g.path);
    ASSERT_FALSE(blob.empty());
    ASSERT_EQ(blob[0], g.version) << "byte 0 (the format) is not the version in the file's name";
    auto reader = store::ChunkReader::open(blob);
    ASSERT_TRUE(reader.ok()) << "a committed chunk of format " << g.version << " no longer opens: " << reader.error()
                             << "\n"
                             << kBumpRule;
    ASSERT_EQ(reader->columns(), in->columns);
    ASSERT_EQ(reader->count(), in->rows.size());
    double v[store::kMaxChunkColumns];
    int64_t ts = 0;
    size_t i = 0;
    while (reader->next(ts, v)) {
      ASSERT_LT(i, in->rows.size());
      const ChunkRow& want = in->rows[i];
      ASSERT_EQ(ts, want.ts) << "sample " << i << " of a committed format-" << g.version
                             << " chunk decodes to another timestamp\n"
                             << kBumpRule;
      for (int c = 0; c < in->columns; ++c)
        ASSERT_EQ(bits(v[c]), bits(want.values[c])) << "sample " << i << " column " << c << ": " << hexBits(v[c])
                                                    << ", want " << hexBits(want.values[c]) << "\n"
                                                    << kBumpRule;
      ++i;
    }
    ASSERT_TRUE(reader->status().ok()) << "a committed format-" << g.version
                                       << " chunk no longer decodes: " << reader->status().message() << "\n"
                                       << kBumpRule;
    EXPECT_EQ(i, in->rows.size());
  }
}

TEST(Golden, ChunkEncodingOfTheCurrentFormatIsByteIdentical) {
  for (const ChunkInput& in : chunkInputs()) {
    const fs::path golden = kGoldenDir / ("chunk-v" + std::to_string(store::kChunkFormat) + "-" + in.name + ".bin");
    SCOPED_TRACE(golden.filename().string());
    ASSERT_TRUE(fs::exists(golden)) << "no golden for chunk format " << int{store::kChunkFormat}
                                    << ": run GW_UPDATE_GOLDEN=1 bin/golden_tests, then commit " << golden;
    const std::vector<uint8_t> want = readBytes(golden), got = encodeChunk(in);
    ASSERT_FALSE(got.empty()) << "today's encoder refuses the reference input";
    if (got == want) continue;
    size_t at = 0;
    while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
    ADD_FAILURE() << "today's encoder writes " << got.size() << " bytes where the golden has " << want.size()
                  << "; first difference at byte " << at << "\n"
                  << kBumpRule;
  }
}

// ---- history.db ----

struct Rollup {
  int64_t step;
  double min, max, sum, count;
};

// The downsampled rows the store must hold: each step's min/max/sum/count of the non-NaN samples,
// summed in time order from zero, steps without a number left out.
std::vector<Rollup> expectedRollups(const SeriesInput& in) {
  std::vector<Rollup> out;
  const int64_t until = store::stepStart(kHistoryCompactAt, kHistoryStepMs);
  for (const HistorySample& x : in.samples) {
    if (x.ts >= until || std::isnan(x.value)) continue;
    const int64_t step = store::stepStart(x.ts, kHistoryStepMs);
    if (out.empty() || out.back().step != step)
      out.push_back({step, x.value, x.value, 0.0 + x.value, 1});
    else {
      Rollup& r = out.back();
      if (x.value < r.min) r.min = x.value;
      if (x.value > r.max) r.max = x.value;
      r.sum += x.value;
      r.count += 1;
    }
  }
  return out;
}

void expectHistory(const std::string& path) {
  auto opened = store::Store::open(historyOptions(path));
  ASSERT_TRUE(opened.ok()) << opened.error();
  store::Store& s = **opened;
  const auto inputs = historyInputs();
  const auto series = s.listSeries();
  ASSERT_EQ(series.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const SeriesInput& in = inputs[i];
    SCOPED_TRACE(in.field);
    EXPECT_EQ(series[i].id, i + 1);
    EXPECT_EQ(series[i].gpu_uuid, in.gpu_uuid);
    EXPECT_EQ(series[i].field, in.field);
    auto id = s.series(in.gpu_uuid, in.field);  // found by name, the same id
    ASSERT_TRUE(id.ok());
    ASSERT_EQ(*id, series[i].id);

    // Full resolution: every sample, bit for bit; the retired series' chunks were past retention.
    auto raw = s.query(*id, kT0 - 100 * 86'400'000LL, kT0 + 100 * 86'400'000LL);
    ASSERT_TRUE(raw.ok()) << raw.error();
    const std::vector<HistorySample> want = in.field == "retired" ? std::vector<HistorySample>{} : in.samples;
    ASSERT_EQ(raw->size(), want.size()) << "full-resolution samples read back (" << s.stats().corrupt_chunks
                                        << " chunks did not decode)\n"
                                        << kBumpRule;
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ((*raw)[k].ts_ms, want[k].ts) << "sample " << k << "\n" << kBumpRule;
      ASSERT_EQ(bits((*raw)[k].value), bits(want[k].value))
          << "sample " << k << ": " << hexBits((*raw)[k].value) << ", want " << hexBits(want[k].value) << "\n"
          << kBumpRule;
    }

    // Downsampled rows, one column per aggregation, every step before the compaction.
    const auto rollups = expectedRollups(in);
    ASSERT_FALSE(rollups.empty());
    const int64_t until = store::stepStart(kHistoryCompactAt, kHistoryStepMs) - 1;
    for (auto [agg, name] : {std::pair{store::Agg::Min, "min"}, std::pair{store::Agg::Max, "max"},
                             std::pair{store::Agg::Sum, "sum"}, std::pair{store::Agg::Count, "count"}}) {
      auto points = s.query(*id, rollups.front().step, until, kHistoryStepMs, agg);
      ASSERT_TRUE(points.ok()) << points.error();
      ASSERT_EQ(points->size(), rollups.size())
          << name << " steps read back (" << s.stats().corrupt_chunks << " chunks did not decode)\n"
          << kBumpRule;
      for (size_t k = 0; k < rollups.size(); ++k) {
        const Rollup& r = rollups[k];
        const double want_v = agg == store::Agg::Min   ? r.min
                              : agg == store::Agg::Max ? r.max
                              : agg == store::Agg::Sum ? r.sum
                                                       : r.count;
        ASSERT_EQ((*points)[k].ts_ms, r.step) << name << " step " << k;
        ASSERT_EQ(bits((*points)[k].value), bits(want_v))
            << name << " step " << k << ": " << hexBits((*points)[k].value) << ", want " << hexBits(want_v) << "\n"
            << kBumpRule;
      }
    }
  }
  EXPECT_EQ(s.stats().corrupt_chunks, 0u);
}

TEST(Golden, HistoryDbOfEverySchemaVersionReadsExactly) {
  const auto files = goldens("history", "db");
  ASSERT_FALSE(files.empty()) << "no history goldens in " << kGoldenDir;
  for (const GoldenFile& g : files) {
    SCOPED_TRACE(g.path.filename().string());
    ASSERT_LE(g.version, store::kHistorySchemaVersion) << "a history schema newer than this code knows";
    testsupport::TempDir dir("gw-golden");
    const std::string path = copyOf(g.path, dir, "history.db");
    ASSERT_EQ(userVersion(path), g.version) << "the file's user_version is not the version in its name";
    expectHistory(path);
    EXPECT_EQ(userVersion(path), store::kHistorySchemaVersion) << "opening did not migrate the file";
  }
}

// The schema, the version and every row: the chunk blobs are the codec's format inside the file.
std::vector<std::string> historyFormat(const std::string& path) {
  return fileFormat(path, {{"SELECT id, gpu_uuid, field, rolled_until FROM series ORDER BY id", 4},
                           {"SELECT series_id, start_ms, end_ms, count, hex(data) FROM chunks "
                            "ORDER BY series_id, start_ms",
                            5},
                           {"SELECT series_id, start_ms, end_ms, count, hex(data) FROM rollups "
                            "ORDER BY series_id, start_ms",
                            5}});
}

TEST(Golden, HistoryDbOfTheCurrentVersionIsWrittenTheSameWay) {
  const fs::path golden = kGoldenDir / ("history-v" + std::to_string(store::kHistorySchemaVersion) + ".db");
  ASSERT_TRUE(fs::exists(golden)) << "no golden for history schema " << store::kHistorySchemaVersion
                                  << ": run GW_UPDATE_GOLDEN=1 bin/golden_tests, then commit " << golden;
  testsupport::TempDir dir("gw-golden");
  const std::string fresh = dir.file("fresh/history.db");
  fs::create_directories(dir.file("fresh"));
  ASSERT_TRUE(writeHistoryDb(fresh).ok());
  EXPECT_EQ(userVersion(fresh), store::kHistorySchemaVersion);
  expectSameFormat(historyFormat(copyOf(golden, dir, "history.db")), historyFormat(fresh), golden);
}

// ---- incidents.db ----

using health::IncidentStatus;
using health::Severity;

const std::string kGpu0 = "GPU-0a0a0a0a-0000-4000-8000-000000000000";
const std::string kGpu1 = "GPU-0a0a0a0a-0000-4000-8000-000000000001";
const std::string kGpu2 = "GPU-0a0a0a0a-0000-4000-8000-000000000002";
const std::string kQuoted = ": \"quoted\", ünïcode, a\nnewline";
constexpr int64_t kT = kT0 + 1000;

health::Incident incident(int64_t id, const std::string& rule, int gpu, const std::string& uuid, Severity severity,
                          const std::string& key_detail, int xid, bool sticky, bool escalated, IncidentStatus status,
                          std::array<int64_t, 4> opened_seen_updated_resolved, const std::string& resolved_by,
                          int64_t boot, int occurrences) {
  health::Incident i;
  i.id = id;
  i.key = rule + "|" + uuid + key_detail;
  i.rule = rule;
  i.gpu_index = gpu;
  i.gpu_uuid = uuid;
  i.severity = severity;
  i.summary = rule + " on GPU " + std::to_string(gpu) + kQuoted;
  i.action = "Check " + rule;
  i.kb_id = "kb-" + rule;
  i.evidence = rule + " evidence " + std::to_string(gpu);
  i.xid = xid;
  i.sticky = sticky;
  i.escalated = escalated;
  i.status = status;
  i.opened_ms = opened_seen_updated_resolved[0];
  i.last_seen_ms = opened_seen_updated_resolved[1];
  i.updated_ms = opened_seen_updated_resolved[2];
  i.resolved_ms = opened_seen_updated_resolved[3];
  i.resolved_by = resolved_by;
  i.boot = boot;
  i.occurrences = occurrences;
  return i;
}

// What writeIncidentsDb leaves, newest first, worked out by hand from its calls.
std::vector<health::Incident> expectedIncidents() {
  auto lost = incident(6, "gpu_lost", 2, kGpu2, Severity::Fatal, "", 0, true, false, IncidentStatus::Resolved,
                       {kT + 400'000, kT + 400'000, kT + 401'000, kT + 401'000}, "mark-healthy", 2, 1);
  auto escalated = incident(5, "xid", 1, kGpu1, Severity::Fatal, "|79", 79, true, true, IncidentStatus::Open,
                            {kT + 400'000, kT + 400'000, kT + 400'000, 0}, "", 2, 1);
  escalated.summary += " It recurred after a restart: hardware inspection needed.";
  escalated.action = "Hardware inspection: drain the node and repair or replace the part (RMA)";
  auto power = incident(4, "power_brake", 1, kGpu1, Severity::Critical, "", 0, false, false, IncidentStatus::Open,
                        {kT, kT + 400'000, kT + 5000, 0}, "", 1, 5);
  power.summary = "power_brake got worse";
  auto ecc = incident(3, "ecc_dbe", 0, kGpu0, Severity::Critical, "", 0, true, false, IncidentStatus::Acknowledged,
                      {kT, kT + 20'000, kT + 6000, 0}, "", 1, 3);
  auto xid = incident(2, "xid", 1, kGpu1, Severity::Critical, "|79", 79, true, false, IncidentStatus::Resolved,
                      {kT, kT + 5000, kT + 7000, kT + 7000}, "operator", 1, 2);
  auto thermal = incident(1, "thermal_slowdown", 0, kGpu0, Severity::Warning, "", 0, false, false,
                          IncidentStatus::Resolved, {kT, kT + 5000, kT + 200'000, kT + 200'000}, "auto", 1, 2);
  return {lost, escalated, power, ecc, xid, thermal};
}

void expectIncident(const health::Incident& got, const health::Incident& want) {
  SCOPED_TRACE("incident " + std::to_string(want.id));
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.key, want.key);
  EXPECT_EQ(got.rule, want.rule);
  EXPECT_EQ(got.gpu_index, want.gpu_index);
  EXPECT_EQ(got.gpu_uuid, want.gpu_uuid);
  EXPECT_EQ(got.severity, want.severity);
  EXPECT_EQ(got.summary, want.summary);
  EXPECT_EQ(got.action, want.action);
  EXPECT_EQ(got.kb_id, want.kb_id);
  EXPECT_EQ(got.evidence, want.evidence);
  EXPECT_EQ(got.xid, want.xid);
  EXPECT_EQ(got.sticky, want.sticky);
  EXPECT_EQ(got.escalated, want.escalated);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.opened_ms, want.opened_ms);
  EXPECT_EQ(got.last_seen_ms, want.last_seen_ms);
  EXPECT_EQ(got.updated_ms, want.updated_ms);
  EXPECT_EQ(got.resolved_ms, want.resolved_ms);
  EXPECT_EQ(got.resolved_by, want.resolved_by);
  EXPECT_EQ(got.boot, want.boot);
  EXPECT_EQ(got.occurrences, want.occurrences);
  EXPECT_EQ(got.context_json, want.context_json);
}

TEST(Golden, IncidentsDbOfEverySchemaVersionListsExactly) {
  const auto files = goldens("incidents", "db");
  ASSERT_FALSE(files.empty()) << "no incident goldens in " << kGoldenDir;
  for (const GoldenFile& g : files) {
    SCOPED_TRACE(g.path.filename().string());
    ASSERT_LE(g.version, health::IncidentStore::kSchemaVersion) << "an incidents schema newer than this code knows";
    testsupport::TempDir dir("gw-golden");
    const std::string path = copyOf(g.path, dir, "incidents.db");
    ASSERT_EQ(userVersion(path), g.version) << "the file's user_version is not the version in its name";
    auto opened = health::IncidentStore::open(path);
    ASSERT_TRUE(opened.ok()) << "a committed incidents.db of schema " << g.version
                             << " no longer opens: " << opened.error() << "\n"
                             << kBumpRule;
    health::IncidentStore& s = **opened;
    EXPECT_EQ(s.bootId(), 3);  // two lifetimes in the file, and this one
    const auto want = expectedIncidents();
    const auto got = s.recent(100);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) expectIncident(got[i], want[i]);
    std::vector<int64_t> unresolved;
    for (const auto& i : s.unresolved()) unresolved.push_back(i.id);
    EXPECT_EQ(unresolved, (std::vector<int64_t>{5, 4, 3}));
    EXPECT_EQ(s.healthOf(kGpu1), health::HealthState::Fatal);
    EXPECT_EQ(s.healthOf(kGpu2), health::HealthState::Healthy);
    EXPECT_EQ(userVersion(path), health::IncidentStore::kSchemaVersion) << "opening did not migrate the file";
  }
}

TEST(Golden, IncidentsDbOfTheCurrentVersionHasTheSameSchema) {
  testsupport::TempDir dir("gw-golden");
  const std::string fresh = dir.file("fresh/incidents.db");
  ASSERT_TRUE(writeIncidentsDb(fresh).ok());
  const int version = health::IncidentStore::kSchemaVersion;
  ASSERT_EQ(userVersion(fresh), version) << "today's incidents.db does not carry IncidentStore::kSchemaVersion";
  const fs::path golden = kGoldenDir / ("incidents-v" + std::to_string(version) + ".db");
  ASSERT_TRUE(fs::exists(golden)) << "no golden for incidents schema " << version
                                  << ": run GW_UPDATE_GOLDEN=1 bin/golden_tests, then commit " << golden;
  const std::vector<std::pair<std::string, int>> meta = {{"SELECT k, v FROM meta ORDER BY k", 2}};
  expectSameFormat(fileFormat(copyOf(golden, dir, "incidents.db"), meta), fileFormat(fresh, meta), golden);
}

// ---- alerts.db (the alert queue) ----

void expectAlert(const alert::Alert& got, const alert::Alert& want) {
  SCOPED_TRACE("alert " + want.id);
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.rule, want.rule);
  EXPECT_EQ(got.severity, want.severity);
  EXPECT_EQ(got.summary, want.summary);
  EXPECT_EQ(got.action, want.action);
  EXPECT_EQ(got.gpu_uuid, want.gpu_uuid);
  EXPECT_EQ(got.hostname, want.hostname);
  EXPECT_EQ(got.gpu_index, want.gpu_index);
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.annotations, want.annotations);
  EXPECT_EQ(got.starts_at_ms, want.starts_at_ms);
  EXPECT_EQ(got.ends_at_ms, want.ends_at_ms);
}

TEST(Golden, AlertQueueOfEverySchemaVersionLoadsExactly) {
  const auto files = goldens("alerts", "db");
  ASSERT_FALSE(files.empty()) << "no alert queue goldens in " << kGoldenDir;
  for (const GoldenFile& g : files) {
    SCOPED_TRACE(g.path.filename().string());
    ASSERT_LE(g.version, alert::DiskQueue::kSchemaVersion) << "an alert queue schema newer than this code knows";
    testsupport::TempDir dir("gw-golden");
    const std::string path = copyOf(g.path, dir, "alerts.db");
    ASSERT_EQ(userVersion(path), g.version) << "the file's user_version is not the version in its name";
    auto opened = alert::DiskQueue::open(path);
    ASSERT_TRUE(opened.ok()) << "a committed alert queue of schema " << g.version
                             << " no longer opens: " << opened.error() << "\n"
                             << kBumpRule;
    alert::DiskQueue& q = **opened;
    EXPECT_EQ(q.pending(), 4);
    EXPECT_EQ(q.pending("webhook"), 3);
    EXPECT_EQ(q.pending("alertmanager"), 1);
    EXPECT_EQ(q.pending("command"), 0);
    EXPECT_EQ(q.rejected(), 1);
    // The dedupe table came along: the same states again within the repeat interval are not resent.
    for (auto [which, at] : {std::pair{1, kT0 + 2001}, std::pair{2, kT0 + 5001}, std::pair{3, kT0 + 6001}}) {
      auto r = q.submit(goldenAlert(which), {"webhook"}, at, 3'600'000);
      ASSERT_TRUE(r.ok()) << r.error();
      EXPECT_FALSE(*r) << "alert " << which << " was not deduplicated";
    }
    // Each sink's entries in order, exactly: (seq, alert).
    const std::vector<std::pair<std::string, std::vector<std::pair<int64_t, int>>>> want = {
        {"webhook", {{1, 0}, {3, 1}, {4, 2}}}, {"alertmanager", {{5, 2}}}, {"command", {}}};
    for (const auto& [sink, entries] : want) {
      for (const auto& [seq, which] : entries) {
        auto head = q.head(sink);
        ASSERT_TRUE(head.has_value()) << sink << " seq " << seq;
        EXPECT_EQ(head->seq, seq) << sink;
        EXPECT_EQ(head->sink, sink);
        expectAlert(head->alert, goldenAlert(which));
        ASSERT_TRUE(q.ack(head->seq).ok());
      }
      EXPECT_FALSE(q.head(sink).has_value()) << sink;
    }
    // AUTOINCREMENT carried on past the rejected seq 6.
    auto r = q.submit(goldenAlert(0), {"webhook"}, kT0 + 7000, 3'600'000);
    ASSERT_TRUE(r.ok() && *r);
    auto head = q.head("webhook");
    ASSERT_TRUE(head.has_value());
    EXPECT_EQ(head->seq, 7);
    EXPECT_EQ(userVersion(path), alert::DiskQueue::kSchemaVersion) << "opening did not migrate the file";
  }
}

TEST(Golden, AlertQueueOfTheCurrentVersionHasTheSameSchema) {
  testsupport::TempDir dir("gw-golden");
  const std::string fresh = dir.file("alerts.db");
  ASSERT_TRUE(writeAlertsDb(fresh).ok());
  const int version = alert::DiskQueue::kSchemaVersion;
  ASSERT_EQ(userVersion(fresh), version) << "today's alert queue does not carry DiskQueue::kSchemaVersion";
  const fs::path golden = kGoldenDir / ("alerts-v" + std::to_string(version) + ".db");
  ASSERT_TRUE(fs::exists(golden)) << "no golden for alert queue schema " << version
                                  << ": run GW_UPDATE_GOLDEN=1 bin/golden_tests, then commit " << golden;
  expectSameFormat(fileFormat(copyOf(golden, dir, "golden-alerts.db"), {}), fileFormat(fresh, {}), golden);
}

// ---- jobs.db ----

// What writeJobsDb's inputs add up to, worked out by hand: 5 samples at 1 s (k = 0..4).
TEST(Golden, JobsDbOfEverySchemaVersionReadsExactly) {
  const auto files = goldens("jobs", "db");
  ASSERT_FALSE(files.empty()) << "no jobs goldens in " << kGoldenDir;
  for (const GoldenFile& g : files) {
    SCOPED_TRACE(g.path.filename().string());
    ASSERT_LE(g.version, node::JobStore::kSchemaVersion) << "a jobs schema newer than this code knows";
    testsupport::TempDir dir("gw-golden");
    const std::string path = copyOf(g.path, dir, "jobs.db");
    ASSERT_EQ(userVersion(path), g.version) << "the file's user_version is not the version in its name";
    auto opened = node::JobTracker::open(path);
    ASSERT_TRUE(opened.ok()) << "a committed jobs.db of schema " << g.version << " no longer opens: " << opened.error()
                             << "\n"
                             << kBumpRule;
    node::JobTracker& t = **opened;
    auto shown = t.show("17");
    ASSERT_TRUE(shown && *shown);
    const nlohmann::json j = node::jobJson(**shown, kT0 + 10'000);
    EXPECT_EQ(j["run"], 1);
    EXPECT_EQ(j["user"], "alice");
    EXPECT_EQ(j["uid"], 1000);
    EXPECT_EQ(j["source"], "slurm");
    EXPECT_EQ(j["state"], "ended");
    EXPECT_EQ(j["start_ms"], kT0);
    EXPECT_EQ(j["end_ms"], kT0 + 4000);
    EXPECT_EQ(
        j["fingerprint"]["install"],
        (nlohmann::json{{"install_record", 2}, {"driver_version", "550.54.15"}, {"cuda_driver_version", "12.4"}}));
    ASSERT_EQ(j["gpus"].size(), 2u);
    // Slurm's GPU 0 is minor 0: GPU-golden-b comes first.
    const nlohmann::json& b = j["gpus"][0];
    const nlohmann::json& a = j["gpus"][1];
    EXPECT_EQ(b["uuid"], "GPU-golden-b");
    EXPECT_EQ(b["index"], 1);
    EXPECT_EQ(a["uuid"], "GPU-golden-a");
    EXPECT_EQ(a["index"], 0);
    EXPECT_EQ(a["samples"], 5);
    EXPECT_EQ(a["utilization_pct"], (nlohmann::json{{"mean", 80.0}, {"max", 100.0}}));
    EXPECT_EQ(a["power_w"], (nlohmann::json{{"mean", 340.0}, {"max", 400.0}}));
    EXPECT_EQ(a["temperature_c"], (nlohmann::json{{"mean", 62.0}, {"max", 64.0}}));
    EXPECT_EQ(a["energy_j"], 1600.0);
    EXPECT_EQ(a["energy_source"], "counter");
    EXPECT_EQ(a["memory_used_max_bytes"], 45056.0 * 1024 * 1024);
    EXPECT_EQ(a["pcie_replays"], 4.0);
    EXPECT_EQ(a["xids"], (nlohmann::json{{"79", 1}}));
    EXPECT_EQ(a["xid_count"], 1);
    EXPECT_TRUE(a["ecc_sbe"].is_null());
    EXPECT_EQ(a["at_load"], (nlohmann::json{{"samples", 4},
                                            {"utilization_pct", 100.0},
                                            {"sm_clock_mhz", 1980.0},
                                            {"power_w", 400.0},
                                            {"temperature_c", 62.5}}));
    EXPECT_EQ(b["utilization_pct"], (nlohmann::json{{"mean", 40.0}, {"max", 50.0}}));
    EXPECT_EQ(b["energy_j"], 1000.0);
    EXPECT_EQ(b["ecc_sbe"], 3.0);
    EXPECT_EQ(b["xid_count"], 0);
    EXPECT_TRUE(b["at_load"]["utilization_pct"].is_null());
    // Job 18 was running: its account carries on from the stored state.
    auto running = t.runningJobs();
    ASSERT_EQ(running.size(), 1u);
    EXPECT_EQ(running[0].job_id, "18");
    EXPECT_EQ(running[0].run, 2);
    collect::GpuView v;
    v.id.index = 1;
    v.id.uuid = "GPU-golden-b";
    v.id.device = "nvidia0";
    v.values.resize(fields::all().size());
    v.last_sample_ms = kT0 + 7000;
    v.values[fields::indexOf(*fields::findByKey("gpu_util"))] = {70, kT0 + 7000, true};
    v.values[fields::indexOf(*fields::findByKey("total_energy"))] = {3'500'000, kT0 + 7000, true};
    t.observe({v}, kT0 + 7000);
    auto ended = t.end("18", kT0 + 7000);
    ASSERT_TRUE(ended) << ended.error();
    const nlohmann::json e = node::jobJson(*ended, kT0 + 7000);
    EXPECT_TRUE(e["uid"].is_null());
    EXPECT_EQ(e["source"], "api");
    ASSERT_EQ(e["gpus"].size(), 1u);
    EXPECT_EQ(e["gpus"][0]["samples"], 2);
    EXPECT_EQ(e["gpus"][0]["utilization_pct"], (nlohmann::json{{"mean", 60.0}, {"max", 70.0}}));
    EXPECT_EQ(e["gpus"][0]["energy_j"], 250.0);  // 3.25 MJ stored, 3.5 MJ now
    EXPECT_EQ(userVersion(path), node::JobStore::kSchemaVersion) << "opening did not migrate the file";
  }
}

const std::vector<std::pair<std::string, int>> kJobRows = {
    {"SELECT run, job_id, user, uid, source, start_ms, end_ms, gpus, fingerprint FROM jobs ORDER BY run", 9}};

TEST(Golden, JobsDbOfTheCurrentVersionIsWrittenTheSameWay) {
  testsupport::TempDir dir("gw-golden");
  const std::string fresh = dir.file("fresh/jobs.db");
  ASSERT_TRUE(writeJobsDb(fresh).ok());
  const int version = node::JobStore::kSchemaVersion;
  ASSERT_EQ(userVersion(fresh), version) << "today's jobs.db does not carry JobStore::kSchemaVersion";
  const fs::path golden = kGoldenDir / ("jobs-v" + std::to_string(version) + ".db");
  ASSERT_TRUE(fs::exists(golden)) << "no golden for jobs schema " << version
                                  << ": run GW_UPDATE_GOLDEN=1 bin/golden_tests, then commit " << golden;
  // Rows too: the per-GPU accounts' JSON (and their resumable state) is part of the format.
  expectSameFormat(fileFormat(copyOf(golden, dir, "jobs.db"), kJobRows), fileFormat(fresh, kJobRows), golden);
}

// ---- records.db ----

TEST(Golden, RecordsDbOfEverySchemaVersionListsExactly) {
  const auto files = goldens("records", "db");
  ASSERT_FALSE(files.empty()) << "no records goldens in " << kGoldenDir;
  for (const GoldenFile& g : files) {
    SCOPED_TRACE(g.path.filename().string());
    ASSERT_LE(g.version, node::RecordStore::kSchemaVersion) << "a records schema newer than this code knows";
    testsupport::TempDir dir("gw-golden");
    const std::string path = copyOf(g.path, dir, "records.db");
    ASSERT_EQ(userVersion(path), g.version) << "the file's user_version is not the version in its name";
    auto opened = node::RecordStore::open(path);
    ASSERT_TRUE(opened.ok()) << "a committed records.db of schema " << g.version
                             << " no longer opens: " << opened.error() << "\n"
                             << kBumpRule;
    node::RecordStore& s = **opened;
    auto all = s.list(10);
    ASSERT_TRUE(all) << all.error();
    ASSERT_EQ(all->size(), 3u);
    const nlohmann::json want = nlohmann::json::array(
        {{{"id", 3},
          {"time_ms", kT0 + 90'000'000},
          {"kind", "setting"},
          {"who", "uid 0 (root) pid 4242"},
          {"summary", "GPU 0 power limit 700 W -> 500 W"},
          {"state", {{"power_limit_w", 500}}},
          {"changes", {{{"what", "power_limit_w"}, {"before", 700}, {"after", 500}}}}},
         {{"id", 2},
          {"time_ms", kT0 + 86'400'000},
          {"kind", "install"},
          {"who", "agent"},
          {"summary", "driver_version 550.54.15 -> 560.28.03"},
          {"state", {{"driver_version", "560.28.03"}, {"gpus", {{{"serial", "1650023000001"}}}}}},
          {"changes", {{{"what", "driver_version"}, {"before", "550.54.15"}, {"after", "560.28.03"}}}}},
         {{"id", 1},
          {"time_ms", kT0},
          {"kind", "install"},
          {"who", "agent"},
          {"summary", "first record: driver 550.54.15, 1 GPU(s)"},
          {"state", {{"driver_version", "550.54.15"}, {"gpus", {{{"serial", "1650023000001"}}}}}},
          {"changes", nlohmann::json::array()}}});
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(node::recordJson((*all)[i]), want[i]) << i;
    auto latest = s.latest("install");
    ASSERT_TRUE(latest && *latest);
    EXPECT_EQ((*latest)->id, 2);
    auto settings = s.list(10, "setting");
    ASSERT_TRUE(settings);
    ASSERT_EQ(settings->size(), 1u);
    // AUTOINCREMENT carries on.
    auto id =
        s.append({0, kT0 + 100'000'000, "install", "agent", "x", nlohmann::json::object(), nlohmann::json::array()});
    ASSERT_TRUE(id);
    EXPECT_EQ(*id, 4);
    EXPECT_EQ(userVersion(path), node::RecordStore::kSchemaVersion) << "opening did not migrate the file";
  }
}

const std::vector<std::pair<std::string, int>> kRecordRows = {
    {"SELECT id, time_ms, kind, who, summary, state, changes FROM records ORDER BY id", 7}};

TEST(Golden, RecordsDbOfTheCurrentVersionIsWrittenTheSameWay) {
  testsupport::TempDir dir("gw-golden");
  const std::string fresh = dir.file("fresh/records.db");
  ASSERT_TRUE(writeRecordsDb(fresh).ok());
  const int version = node::RecordStore::kSchemaVersion;
  ASSERT_EQ(userVersion(fresh), version) << "today's records.db does not carry RecordStore::kSchemaVersion";
  const fs::path golden = kGoldenDir / ("records-v" + std::to_string(version) + ".db");
  ASSERT_TRUE(fs::exists(golden)) << "no golden for records schema " << version
                                  << ": run GW_UPDATE_GOLDEN=1 bin/golden_tests, then commit " << golden;
  expectSameFormat(fileFormat(copyOf(golden, dir, "records.db"), kRecordRows), fileFormat(fresh, kRecordRows), golden);
}

// ---- GW_UPDATE_GOLDEN=1: write the goldens of versions that have none ----

// Installs `from` as `name` in the golden folder unless a golden of that name exists.
bool install(const fs::path& from, const std::string& name) {
  const fs::path to = kGoldenDir / name;
  if (fs::exists(to)) {
    std::cout << "golden: kept " << name << " (a committed golden is never overwritten)\n";
    return true;
  }
  std::error_code ec;
  fs::copy_file(from, to, ec);
  if (ec) {
    std::cerr << "golden: cannot write " << to << ": " << ec.message() << "\n";
    return false;
  }
  std::cout << "golden: wrote " << name << " (new: review and commit it)\n";
  return true;
}

bool writeMissingGoldens() {
  testsupport::TempDir dir("gw-golden-update");
  bool ok = true;
  for (const ChunkInput& in : chunkInputs()) {
    const std::vector<uint8_t> blob = encodeChunk(in);
    if (blob.empty()) {
      std::cerr << "golden: the encoder refuses input " << in.name << "\n";
      return false;
    }
    const std::string name = "chunk-v" + std::to_string(blob[0]) + "-" + in.name + ".bin";
    std::ofstream(dir.file(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(blob.data()), static_cast<std::streamsize>(blob.size()));
    ok = install(dir.file(name), name) && ok;
  }
  // Each SQLite file is named by the version it carries (PRAGMA user_version).
  const std::pair<std::string, Status (*)(const std::string&)> files[] = {{"history", writeHistoryDb},
                                                                          {"incidents", writeIncidentsDb},
                                                                          {"alerts", writeAlertsDb},
                                                                          {"jobs", writeJobsDb},
                                                                          {"records", writeRecordsDb}};
  for (const auto& [kind, write] : files) {
    fs::create_directories(dir.file(kind));
    const std::string path = dir.file(kind + "/" + kind + ".db");
    if (Status st = write(path); !st.ok()) {
      std::cerr << "golden: cannot write " << kind << ": " << st.message() << "\n";
      return false;
    }
    if (fs::exists(path + "-wal") && fs::file_size(path + "-wal") > 0) {
      std::cerr << "golden: " << path << " left a write-ahead log; the golden would be incomplete\n";
      return false;
    }
    ok = install(path, kind + "-v" + std::to_string(userVersion(path)) + ".db") && ok;
  }
  return ok;
}

}  // namespace
}  // namespace gw::golden

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (const char* update = std::getenv("GW_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    if (!gw::golden::writeMissingGoldens()) return 1;
  }
  return RUN_ALL_TESTS();
}
