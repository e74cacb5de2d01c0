// Per-job accounting (node/job_account.h) and the job tracker (node/jobs.h) on hand-made samples:
// every figure of a job's report is checked against what the samples say, to the unit.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "../support/temp_dir.h"
#include "fields/catalog.h"
#include "node/job_account.h"
#include "node/job_compare.h"
#include "node/job_store.h"
#include "node/jobs.h"
#include "nvml/nvml_abi.h"

namespace gw::node {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr std::int64_t kT0 = 1'800'000'000'000;

collect::GpuView gpu(unsigned index, const std::string& uuid, unsigned minor) {
  collect::GpuView v;
  v.id.index = index;
  v.id.uuid = uuid;
  v.id.device = "nvidia" + std::to_string(minor);
  v.values.resize(fields::all().size());
  return v;
}

void set(collect::GpuView& v, const char* key, double value) {
  const fields::Field* f = fields::findByKey(key);
  ASSERT_NE(f, nullptr) << key;
  v.values[fields::indexOf(*f)] = {value, 0, true};
}

// A sample at `ms` with the usual gauges.
collect::GpuView sample(collect::GpuView v, std::int64_t ms, double util, double power, double temp) {
  v.last_sample_ms = ms;
  set(v, "gpu_util", util);
  set(v, "power_usage", power);
  set(v, "gpu_temp", temp);
  return v;
}

TEST(JobGpuAccount, GaugesGiveMeanAndMax) {
  const auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount a("GPU-a", 0, kT0);
  a.observe(sample(g, kT0 + 1000, 50, 300, 60), kT0 + 1000);
  a.observe(sample(g, kT0 + 2000, 100, 700, 70), kT0 + 2000);
  a.observe(sample(g, kT0 + 3000, 90, 650, 80), kT0 + 3000);
  const json j = a.toJson();
  EXPECT_EQ(j["samples"], 3);
  EXPECT_DOUBLE_EQ(j["utilization_pct"]["mean"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(j["utilization_pct"]["max"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["power_w"]["mean"].get<double>(), 550.0);
  EXPECT_DOUBLE_EQ(j["power_w"]["max"].get<double>(), 700.0);
  EXPECT_DOUBLE_EQ(j["temperature_c"]["mean"].get<double>(), 70.0);
  EXPECT_DOUBLE_EQ(j["temperature_c"]["max"].get<double>(), 80.0);
}

TEST(JobGpuAccount, EnergyFromTheCounterElseFromPowerOverTime) {
  const auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount counted("GPU-a", 0, kT0);
  for (int k = 0; k < 3; ++k) {
    auto s = sample(g, kT0 + k * 1000, 50, 400, 60);
    set(s, "total_energy", 1'000'000 + k * 400'000.0);  // mJ: 400 J per second
    counted.observe(s, kT0 + k * 1000);
  }
  EXPECT_DOUBLE_EQ(counted.toJson()["energy_j"].get<double>(), 800.0);
  EXPECT_EQ(counted.toJson()["energy_source"], "counter");

  JobGpuAccount integrated("GPU-a", 0, kT0);
  integrated.observe(sample(g, kT0, 50, 400, 60), kT0);
  integrated.observe(sample(g, kT0 + 1000, 50, 500, 60), kT0 + 1000);  // 500 W for the 1 s before
  integrated.observe(sample(g, kT0 + 3000, 50, 300, 60), kT0 + 3000);  // 300 W for the 2 s before
  EXPECT_DOUBLE_EQ(integrated.toJson()["energy_j"].get<double>(), 1100.0);
  EXPECT_EQ(integrated.toJson()["energy_source"], "power");
}

TEST(JobGpuAccount, AGapLongerThanTheLimitIsNotCreditedAtTheLaterRate) {
  const auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount a("GPU-a", 0, kT0);
  a.observe(sample(g, kT0, 50, 400, 60), kT0);
  a.observe(sample(g, kT0 + kMaxSampleGapMs, 50, 400, 60), kT0 + kMaxSampleGapMs);  // at the limit: counted
  a.observe(sample(g, kT0 + 2 * kMaxSampleGapMs + 1, 50, 400, 60), kT0 + 2 * kMaxSampleGapMs + 1);  // one past
  EXPECT_DOUBLE_EQ(a.toJson()["energy_j"].get<double>(), 400.0 * kMaxSampleGapMs / 1000.0);
}

// The documented figures themselves (docs/jobs.md): a gap of exactly 10 s is credited, 10.001 s
// is not; a sample at 80 % utilisation is "at load", one at 79.99 % is not.
TEST(JobGpuAccount, TheTenSecondGapAndTheEightyPercentLoadAtTheirEdges) {
  const auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount credited("GPU-a", 0, kT0);
  credited.observe(sample(g, kT0, 50, 400, 60), kT0);
  credited.observe(sample(g, kT0 + 10'000, 50, 400, 60), kT0 + 10'000);
  EXPECT_DOUBLE_EQ(credited.toJson()["energy_j"].get<double>(), 4000.0);
  JobGpuAccount skipped("GPU-a", 0, kT0);
  skipped.observe(sample(g, kT0, 50, 400, 60), kT0);
  skipped.observe(sample(g, kT0 + 10'001, 50, 400, 60), kT0 + 10'001);
  EXPECT_DOUBLE_EQ(skipped.toJson()["energy_j"].get<double>(), 0.0);

  JobGpuAccount load("GPU-a", 0, kT0);
  load.observe(sample(g, kT0 + 1000, 80, 400, 60), kT0 + 1000);
  load.observe(sample(g, kT0 + 2000, 79.99, 500, 60), kT0 + 2000);
  const json at = load.toJson()["at_load"];
  EXPECT_EQ(at["samples"], 1);
  EXPECT_DOUBLE_EQ(at["utilization_pct"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(at["power_w"].get<double>(), 400.0);
}

// One sample is no interval: no energy is claimed from it, by counter or by power.
TEST(JobGpuAccount, OneSampleGivesNoEnergy) {
  auto s = sample(gpu(0, "GPU-a", 0), kT0, 50, 400, 60);
  set(s, "total_energy", 1'000'000);
  JobGpuAccount a("GPU-a", 0, kT0);
  a.observe(s, kT0);
  EXPECT_TRUE(a.toJson()["energy_j"].is_null()) << a.toJson().dump();
  JobGpuAccount p("GPU-a", 0, kT0);
  p.observe(sample(gpu(0, "GPU-a", 0), kT0, 50, 400, 60), kT0);
  EXPECT_TRUE(p.toJson()["energy_j"].is_null()) << p.toJson().dump();
}

TEST(JobGpuAccount, ThrottleTimeByReasonLeavesIdleOut) {
  auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount a("GPU-a", 0, kT0);
  auto at = [&](std::int64_t ms, std::uint64_t bits) {
    auto s = sample(g, ms, 50, 400, 60);
    set(s, "clock_event_reasons", static_cast<double>(bits));
    a.observe(s, ms);
  };
  at(kT0, 0);
  at(kT0 + 1000, nvmlClocksThrottleReasonSwPowerCap | nvmlClocksThrottleReasonGpuIdle);
  at(kT0 + 3000, nvmlClocksThrottleReasonSwPowerCap | nvmlClocksThrottleReasonHwThermalSlowdown);
  at(kT0 + 3500, 0);
  const json t = a.toJson()["throttled_s"];
  EXPECT_EQ(t, (json{{"sw_power_cap", 3.0}, {"hw_thermal_slowdown", 2.0}}));
}

TEST(JobGpuAccount, CountersGiveWhatTheJobAddedAcrossAReset) {
  auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount a("GPU-a", 0, kT0);
  const double sbe[] = {5, 7, 2, 3};  // a driver reload zeroes the volatile count after 7
  for (int k = 0; k < 4; ++k) {
    auto s = sample(g, kT0 + k * 1000, 50, 400, 60);
    set(s, "ecc_sbe_volatile", sbe[k]);
    set(s, "pcie_replay_counter", 100 + k);
    a.observe(s, kT0 + k * 1000);
  }
  a.addXid(48);
  a.addXid(48);
  a.addXid(79);
  const json j = a.toJson();
  EXPECT_DOUBLE_EQ(j["ecc_sbe"].get<double>(), 2 + 2 + 1);
  EXPECT_DOUBLE_EQ(j["pcie_replays"].get<double>(), 3);
  EXPECT_TRUE(j["ecc_dbe"].is_null());  // never read: unknown, not 0
  EXPECT_EQ(j["xids"], (json{{"48", 2}, {"79", 1}}));
  EXPECT_EQ(j["xid_count"], 3);
}

TEST(JobGpuAccount, PcieBytesAreTheRateOverTime) {
  auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount a("GPU-a", 0, kT0);
  for (int k = 0; k < 3; ++k) {
    auto s = sample(g, kT0 + k * 2000, 50, 400, 60);
    set(s, "pcie_tx_throughput", 1000);  // KB/s
    set(s, "pcie_rx_throughput", 2000);
    a.observe(s, kT0 + k * 2000);
  }
  EXPECT_DOUBLE_EQ(a.toJson()["pcie_tx_bytes"].get<double>(), 1000 * 1024.0 * 4);
  EXPECT_DOUBLE_EQ(a.toJson()["pcie_rx_bytes"].get<double>(), 2000 * 1024.0 * 4);
}

TEST(JobGpuAccount, OldSamplesAndGpusNotUpAreIgnored) {
  auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount a("GPU-a", 0, kT0);
  a.observe(sample(g, kT0 - 1, 10, 100, 30), kT0);  // before the job
  a.observe(sample(g, kT0 + 1000, 60, 400, 60), kT0 + 1000);
  a.observe(sample(g, kT0 + 1000, 99, 999, 99), kT0 + 1500);  // the same sample again
  auto lost = sample(g, kT0 + 2000, 99, 999, 99);
  lost.state = collect::GpuState::Lost;
  a.observe(lost, kT0 + 2000);
  EXPECT_EQ(a.samples(), 1u);
  EXPECT_DOUBLE_EQ(a.toJson()["utilization_pct"]["max"].get<double>(), 60.0);
}

TEST(JobGpuAccount, TheStoredStateCarriesOnAfterARestart) {
  auto g = gpu(0, "GPU-a", 0);
  JobGpuAccount a("GPU-a", 0, kT0);
  for (int k = 0; k < 3; ++k) {
    auto s = sample(g, kT0 + k * 1000, 40 + k, 400, 60);
    set(s, "clock_event_reasons", static_cast<double>(nvmlClocksThrottleReasonSwPowerCap));
    set(s, "total_energy", 1000.0 * k);
    a.observe(s, kT0 + k * 1000);
  }
  a.addXid(13);
  auto b = JobGpuAccount::fromJson(json::parse(a.toJson().dump()));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->toJson(), a.toJson());
  auto s = sample(g, kT0 + 3000, 43, 400, 60);
  set(s, "total_energy", 3000.0);
  a.observe(s, kT0 + 3000);
  b->observe(s, kT0 + 3000);
  EXPECT_EQ(b->toJson(), a.toJson());
  EXPECT_FALSE(JobGpuAccount::fromJson(json::array()));
  EXPECT_FALSE(JobGpuAccount::fromJson(json{{"uuid", 7}}));
}

// A stored state's Xid codes are read back only as what an Xid can be (1 to 99999, a count): a
// damaged file gives no code 0, 100000 or "48x".
TEST(JobGpuAccount, StoredXidCodesAreReadBackWithinTheirRange) {
  auto a = JobGpuAccount::fromJson(json::parse(
      R"({"uuid": "GPU-a", "state": {}, "xids": {"0": 1, "1": 2, "99999": 3, "100000": 4, "48x": 5, "79": -1}})"));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->toJson()["xids"], json::parse(R"({"1": 2, "99999": 3})"));
  EXPECT_EQ(a->toJson()["xid_count"], 5);
  // A list where the codes' map belongs (a damaged or foreign file) holds no codes, though its
  // positions would read as codes 0 and 1.
  auto list = JobGpuAccount::fromJson(json::parse(R"({"uuid": "GPU-a", "state": {}, "xids": [5, 7]})"));
  ASSERT_TRUE(list);
  EXPECT_EQ(list->toJson()["xid_count"], 0);
}

std::vector<collect::GpuView> fleet() {
  // NVML's index order differs from the driver's minor numbers, as on many machines.
  return {gpu(0, "GPU-zero", 2), gpu(1, "GPU-one", 0), gpu(2, "GPU-two", 1)};
}

TEST(JobTracker, SlurmCountsGpusInMinorOrderNvmlByIndex) {
  const auto views = fleet();
  JobStartRequest r;
  r.gpus = {"0", "2"};
  r.numbering = GpuNumbering::Slurm;
  auto s = JobTracker::resolveGpus(r, views);
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0]->id.uuid, "GPU-one");   // minor 0
  EXPECT_EQ((*s)[1]->id.uuid, "GPU-zero");  // minor 2
  r.numbering = GpuNumbering::Nvml;
  s = JobTracker::resolveGpus(r, views);
  ASSERT_TRUE(s);
  EXPECT_EQ((*s)[0]->id.uuid, "GPU-zero");
  EXPECT_EQ((*s)[1]->id.uuid, "GPU-two");
  r.gpus = {"GPU-two", "3"};
  s = JobTracker::resolveGpus(r, views);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error(), "no GPU 3 on this node");
  r.gpus = {"../x"};
  EXPECT_FALSE(JobTracker::resolveGpus(r, views));
}

TEST(JobTracker, SlurmNumbersNeedEveryMinorAndTakeALostOnesFromTheDriver) {
  // GPU 1 (minor 0) is lost: NVML names neither its minor nor its bus.
  auto views = fleet();
  views[1].id.device.clear();
  views[1].id.uuid.clear();
  views[1].state = collect::GpuState::Lost;
  JobStartRequest r;
  r.numbering = GpuNumbering::Slurm;
  r.gpus = {"1"};
  bool unmapped = false;
  auto s = JobTracker::resolveGpus(r, views, &unmapped);
  ASSERT_FALSE(s);
  EXPECT_TRUE(unmapped);
  EXPECT_EQ(s.error(),
            "Slurm's GPU 1 cannot be matched to a GPU: the device minor of GPU 1 (lost) is known neither to NVML nor "
            "to /proc/driver/nvidia/gpus, and Slurm numbers GPUs by device minor");
  // UUIDs need no minor.
  r.gpus = {"GPU-two"};
  s = JobTracker::resolveGpus(r, views, &unmapped);
  ASSERT_TRUE(s) << s.error();
  EXPECT_FALSE(unmapped);
  // The driver still lists minors 0, 1, 2: the one nobody else claims is the lost GPU's.
  r.driver_gpus = {{"0000:18:00.0", "", 2}, {"0000:28:00.0", "", 0}, {"0000:38:00.0", "", 1}};
  r.gpus = {"0", "1", "2"};
  s = JobTracker::resolveGpus(r, views, &unmapped);
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0]->id.index, 1u);  // minor 0: the lost GPU
  EXPECT_EQ((*s)[1]->id.uuid, "GPU-two");
  EXPECT_EQ((*s)[2]->id.uuid, "GPU-zero");
  // Two minors unclaimed for one unknown GPU: not guessed.
  r.driver_gpus.push_back({"0000:48:00.0", "", 3});
  s = JobTracker::resolveGpus(r, views, &unmapped);
  ASSERT_FALSE(s);
  EXPECT_TRUE(unmapped);
}

TEST(JobTracker, JobWordsAreBoundedAndPlain) {
  EXPECT_TRUE(checkJobWord("1234", "id", 64));
  EXPECT_TRUE(checkJobWord("1234_7", "id", 64));
  EXPECT_TRUE(checkJobWord("1234+1", "id", 64));
  EXPECT_TRUE(checkJobWord(std::string(64, '9'), "id", 64));
  EXPECT_FALSE(checkJobWord(std::string(65, '9'), "id", 64));
  EXPECT_FALSE(checkJobWord("", "id", 64));
  for (const char* bad : {"a b", "a\"b", "a,b", "a$b", "a/b", "a\nb", "a\\b", "a}b"})
    EXPECT_FALSE(checkJobWord(bad, "id", 64)) << bad;
  // The refusal quotes the whole word, first character to last, and says what each bound is.
  EXPECT_EQ(checkJobWord("x1234 5", "job id", 64).message(),
            "job id 'x1234 5' holds a character other than letters, digits and . _ + - : @");
  EXPECT_EQ(checkJobWord(std::string(65, '9'), "job id", 64).message(), "job id is longer than 64 bytes");
  EXPECT_EQ(checkJobWord("", "user", 64).message(), "user is empty");
}

TEST(JobTracker, StartEndAndTheLabelsInBetween) {
  testsupport::TempDir dir("gw-jobs");
  auto t = JobTracker::open(dir.file("jobs.db"));
  ASSERT_TRUE(t) << t.error();
  const auto views = fleet();
  const auto g0 = (*t)->generation();
  JobStartRequest a{"101", "alice", 1001, "slurm", {"GPU-zero", "GPU-one"}, GpuNumbering::Nvml, {}, {}};
  ASSERT_TRUE((*t)->start(a, views, kT0));
  JobStartRequest b{"102", "bob", 1002, "slurm", {"GPU-one"}, GpuNumbering::Nvml, {}, {}};
  ASSERT_TRUE((*t)->start(b, views, kT0 + 10));
  EXPECT_GT((*t)->generation(), g0);
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"GPU-zero", "101"}, {"GPU-one", "101,102"}}));
  // The same prolog twice is the same job; the same id on other GPUs is refused.
  EXPECT_TRUE((*t)->start(a, views, kT0 + 20));
  JobStartRequest other = a;
  other.gpus = {"GPU-two"};
  auto refused = (*t)->start(other, views, kT0 + 20);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "job 101 is already running on other GPUs");
  auto ended = (*t)->end("101", kT0 + 5000);
  ASSERT_TRUE(ended) << ended.error();
  EXPECT_EQ(ended->end_ms, kT0 + 5000);
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"GPU-one", "102"}}));
  EXPECT_FALSE((*t)->end("101", kT0 + 6000));  // an epilog run twice
  auto shown = (*t)->show("101");
  ASSERT_TRUE(shown && *shown);
  const json j = jobJson(**shown, kT0 + 9000);
  EXPECT_EQ(j["state"], "ended");
  EXPECT_EQ(j["user"], "alice");
  EXPECT_EQ(j["uid"], 1001);
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 5.0);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["uuid"], "GPU-zero");
  EXPECT_FALSE(j["gpus"][0].contains("state"));         // resumable state stays in the database
  EXPECT_FALSE(j["gpus"][0].contains("throttled_ms"));  // so does the running throttle total
  auto running = (*t)->show("102");
  ASSERT_TRUE(running && *running);
  EXPECT_EQ(jobJson(**running, kT0 + 9000)["state"], "running");
  auto list = (*t)->list(10);
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].job_id, "102");  // newest first
}

// A node runs at most 1024 jobs at once (docs/jobs.md); the 1025th is refused, naming the limit.
// A user name is at most 64 bytes; a GPU number at most six digits.
TEST(JobTracker, TheNodesJobUserAndGpuNumberLimitsAtTheirValues) {
  auto t = JobTracker::open("");
  ASSERT_TRUE(t) << t.error();
  const auto views = fleet();
  for (int i = 1; i <= 1024; ++i) {
    JobStartRequest r{std::to_string(i), "u", 1000, "api", {"GPU-zero"}, GpuNumbering::Nvml, {}, {}};
    ASSERT_TRUE((*t)->start(r, views, kT0 + i)) << i;
  }
  JobStartRequest more{"1025", "u", 1000, "api", {"GPU-zero"}, GpuNumbering::Nvml, {}, {}};
  auto refused = (*t)->start(more, views, kT0 + 2000);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), "already 1024 jobs running on this node");

  auto u = JobTracker::open("");
  ASSERT_TRUE(u);
  JobStartRequest r{"1", std::string(64, 'u'), 1000, "api", {"000000"}, GpuNumbering::Nvml, {}, {}};
  auto ok = (*u)->start(r, views, kT0);
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->gpus[0]["uuid"], "GPU-zero");  // 000000 is NVML's GPU 0
  r.job_id = "2";
  r.user = std::string(65, 'u');
  auto long_user = (*u)->start(r, views, kT0);
  ASSERT_FALSE(long_user);
  EXPECT_EQ(long_user.error(), "the user is longer than 64 bytes");
  r.user = "u";
  r.gpus = {"0000000"};
  auto long_number = (*u)->start(r, views, kT0);
  ASSERT_FALSE(long_number);
  EXPECT_EQ(long_number.error(), "GPU '0000000' is neither a number nor a GPU-/MIG- UUID");
}

// uid 0 is root, an owner like any other; only -1 means the caller did not say.
TEST(JobTracker, RootsUidIsShownAndAnUntoldOneIsNull) {
  JobRun r;
  r.job_id = "7";
  r.uid = 0;
  r.start_ms = kT0;
  r.gpus = json::array();
  json j = jobJson(r, kT0 + 1000);
  ASSERT_TRUE(j["uid"].is_number_integer()) << j.dump();
  EXPECT_EQ(j["uid"], 0);
  r.uid = -1;
  j = jobJson(r, kT0 + 1000);
  EXPECT_TRUE(j["uid"].is_null()) << j.dump();
}

TEST(JobTracker, ARunningJobCarriesOnAcrossAnAgentRestart) {
  testsupport::TempDir dir("gw-jobs");
  auto views = fleet();
  {
    auto t = JobTracker::open(dir.file("jobs.db"));
    ASSERT_TRUE(t);
    ASSERT_TRUE((*t)->start({"7", "", -1, "slurm", {"GPU-two"}, GpuNumbering::Nvml, {}, {}}, views, kT0));
    views[2] = sample(views[2], kT0 + 1000, 80, 500, 70);
    (*t)->observe(views, kT0 + 1000);
    ASSERT_TRUE((*t)->checkpoint());
  }
  auto t = JobTracker::open(dir.file("jobs.db"));
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"GPU-two", "7"}}));
  views[2] = sample(views[2], kT0 + 2000, 100, 600, 72);
  (*t)->observe(views, kT0 + 2000);
  auto r = (*t)->end("7", kT0 + 2500);
  ASSERT_TRUE(r) << r.error();
  const json g = r->gpus[0];
  EXPECT_DOUBLE_EQ(g["utilization_pct"]["mean"].get<double>(), 90.0);
  // 500 W for the second before the restart, 600 W for the one after: nothing lost, nothing twice.
  EXPECT_DOUBLE_EQ(g["energy_j"].get<double>(), 1100.0);
}

// A running job's figures are written every minute (docs/jobs.md): a look 59.999 s after the last
// write leaves the stored run as it was, one at 60 s writes it.
TEST(JobTracker, ARunningJobIsWrittenEveryMinute) {
  testsupport::TempDir dir("gw-jobs-checkpoint");
  auto views = fleet();
  auto t = JobTracker::open(dir.file("jobs.db"));
  ASSERT_TRUE(t) << t.error();
  ASSERT_TRUE((*t)->start({"7", "", -1, "slurm", {"GPU-two"}, GpuNumbering::Nvml, {}, {}}, views, kT0));
  const auto storedSamples = [&] {
    auto store = JobStore::open(dir.file("jobs.db"));
    EXPECT_TRUE(store) << store.error();
    if (!store) return -1;
    auto running = (*store)->running();
    EXPECT_TRUE(running && running->size() == 1u);
    if (!running || running->empty()) return -1;
    return (*running)[0].gpus[0]["samples"].get<int>();
  };
  const auto look = [&](std::int64_t ms) {
    views[2] = sample(views[2], ms, 80, 500, 70);
    (*t)->observe(views, ms);
  };
  look(kT0 + 1000);  // the first look writes
  const int first = storedSamples();
  look(kT0 + 1000 + 59'999);
  EXPECT_EQ(storedSamples(), first);
  look(kT0 + 1000 + 60'000);
  EXPECT_EQ(storedSamples(), first + 2);
}

TEST(JobTracker, XidsCountOnTheJobsGpusFromItsStart) {
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  ASSERT_TRUE((*t)->start({"9", "", -1, "api", {"GPU-one"}, GpuNumbering::Nvml, {}, {}}, fleet(), kT0));
  events::GpuEvent e;
  e.kind = events::EventKind::Xid;
  e.code = 48;
  e.gpu_uuid = "GPU-one";
  e.timestamp_ms = kT0 + 1;
  (*t)->onEvent(e);
  e.timestamp_ms = kT0 - 1;  // before the job
  (*t)->onEvent(e);
  e.gpu_uuid = "GPU-two";  // another GPU
  e.timestamp_ms = kT0 + 2;
  (*t)->onEvent(e);
  events::GpuEvent by_index;  // the kernel log knew only the index
  by_index.kind = events::EventKind::FallenOffBus;
  by_index.gpu_index = 1;
  by_index.timestamp_ms = kT0 + 3;
  (*t)->onEvent(by_index);
  auto r = (*t)->end("9", kT0 + 10);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->gpus[0]["xids"], (json{{"48", 1}, {"79", 1}}));
}

// An Xid named by UUID lands on that GPU's account only: the job's GPU gets its own Xid, not the
// one of a GPU beside it.
TEST(JobTracker, AnXidByUuidCountsOnlyOnThatGpu) {
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  ASSERT_TRUE((*t)->start({"9", "", -1, "api", {"GPU-one"}, GpuNumbering::Nvml, {}, {}}, fleet(), kT0));
  events::GpuEvent mine;
  mine.kind = events::EventKind::Xid;
  mine.code = 48;
  mine.gpu_uuid = "GPU-one";
  mine.timestamp_ms = kT0 + 1;
  (*t)->onEvent(mine);
  events::GpuEvent other = mine;
  other.code = 79;
  other.gpu_uuid = "GPU-two";
  other.timestamp_ms = kT0 + 2;
  (*t)->onEvent(other);
  auto r = (*t)->end("9", kT0 + 10);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->gpus.size(), 1u);
  EXPECT_EQ(r->gpus[0]["xids"], (json{{"48", 1}}));
  EXPECT_EQ(r->gpus[0]["xid_count"], 1);
}

// A job the mapping folder started and ended is forgotten by the folder: when Slurm requeues it
// under the same id and its prolog starts it, the next poll of the folder (which no longer names
// it) does not end the prolog's run.
TEST(JobTracker, AnIdTheMappingFolderEndedCanRunAgainFromAProlog) {
  testsupport::TempDir dir("gw-jobmap-requeue");
  const std::string map = dir.file("map");
  fs::create_directories(map);
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  const auto views = fleet();
  dir.write("map/0", "8001\n");
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0), "");
  ASSERT_EQ((*t)->runningJobs().size(), 1u);
  fs::remove(map + "/0");
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0 + 1000), "");
  EXPECT_TRUE((*t)->runningJobs().empty());
  JobStartRequest again{"8001", "alice", 1001, "slurm", {"GPU-one"}, GpuNumbering::Nvml, {}, {}};
  ASSERT_TRUE((*t)->start(again, views, kT0 + 2000));
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0 + 3000), "");
  ASSERT_EQ((*t)->runningJobs().size(), 1u);
  EXPECT_EQ((*t)->runningJobs()[0].source, "slurm");
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"GPU-one", "8001"}}));
}

// Mapping files written on Windows or by hand: CR LF endings, spaces and tabs around an id.
TEST(JobTracker, MappingIdsAreTrimmedOfLineEndsAndBlanks) {
  testsupport::TempDir dir("gw-jobmap-crlf");
  const std::string map = dir.file("map");
  fs::create_directories(map);
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  dir.write("map/0", "5001\r\n  5002 \t\r\n\t5003\r\n");
  EXPECT_EQ((*t)->pollMappingDir(map, fleet(), kT0), "");
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"GPU-zero", "5001,5002,5003"}}));
}

// dcgm-exporter's folder names a MIG instance's file by its MIG- UUID: that instance's job, labelled
// on it alone (its board runs other jobs on other instances). A name that merely contains "MIG-"
// is not a GPU's.
TEST(JobTracker, AMappingFileNamedByAMigUuidMapsThatInstance) {
  testsupport::TempDir dir("gw-jobmap-mig");
  const std::string map = dir.file("map");
  fs::create_directories(map);
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  auto views = fleet();
  collect::GpuView mig = gpu(0, "MIG-zero-slice", 2);
  mig.id.is_mig = true;
  views.push_back(mig);
  dir.write("map/MIG-zero-slice", "7001\n");
  dir.write("map/xMIG-zero-slice", "7002\n");
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0), "");
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"MIG-zero-slice", "7001"}}));
  ASSERT_EQ((*t)->runningJobs().size(), 1u);
  EXPECT_EQ((*t)->runningJobs()[0].job_id, "7001");
}

// The mapping folder's bounds (docs/jobs.md): a file of 4096 bytes is read, one of 4097 is not;
// a file's first 16 ids are taken, the 17th is not.
TEST(JobTracker, MappingFilesOfFourKibibytesAndSixteenIds) {
  testsupport::TempDir dir("gw-jobmap-bounds");
  const std::string map = dir.file("map");
  fs::create_directories(map);
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  const auto padded = [](const std::string& id, std::size_t size) { return id + std::string(size - id.size(), '\n'); };
  dir.write("map/0", padded("5001\n", 4096));
  dir.write("map/1", padded("5002\n", 4097));
  std::string seventeen;
  for (int i = 1; i <= 17; ++i) seventeen += std::to_string(6000 + i) + "\n";
  dir.write("map/2", seventeen);
  EXPECT_EQ((*t)->pollMappingDir(map, fleet(), kT0), "");
  const auto labels = (*t)->gpuJobLabels();
  EXPECT_EQ(labels.at("GPU-zero"), "5001");
  EXPECT_FALSE(labels.contains("GPU-one"));
  std::string sixteen;
  for (int i = 1; i <= 16; ++i) sixteen += (i > 1 ? "," : "") + std::to_string(6000 + i);
  EXPECT_EQ(labels.at("GPU-two"), sixteen);
}

// At most 1024 mapping files are read in one poll, whatever order the folder lists them in: 1025
// GPUs each with its file label 1024 of them.
TEST(JobTracker, AtMostAThousandAndTwentyFourMappingFilesAreRead) {
  testsupport::TempDir dir("gw-jobmap-files");
  const std::string map = dir.file("map");
  fs::create_directories(map);
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  std::vector<collect::GpuView> views;
  for (unsigned i = 0; i < 1025; ++i) {
    const std::string uuid = "GPU-" + std::to_string(100000 + i);
    views.push_back(gpu(i, uuid, i));
    dir.write("map/" + uuid, std::to_string(7000 + i / 64) + "\n");  // 64 GPUs a job, a job's most
  }
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0), "");
  EXPECT_EQ((*t)->gpuJobLabels().size(), 1024u);
}

TEST(JobTracker, TheDcgmMappingFolderStartsAndEndsJobs) {
  testsupport::TempDir dir("gw-jobmap");
  const std::string map = dir.file("map");
  fs::create_directories(map);
  auto t = JobTracker::open("");
  ASSERT_TRUE(t);
  const auto views = fleet();
  dir.write("map/0", "5001\n");
  dir.write("map/2", "5001\n5002\n");
  dir.write("map/notes.txt", "6000\n");               // not a GPU's name
  dir.write("map/1", std::string(5000, '1') + "\n");  // larger than a mapping file may be
  dir.write("secret", "7000\n");
  fs::create_symlink(dir.file("secret"), map + "/GPU-one");  // a link is not followed
  dir.write("map/GPU-zero", "bad id\n$(x)\n");               // ids that are not plain words
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0), "");
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"GPU-zero", "5001"}, {"GPU-two", "5001,5002"}}));
  for (const auto& r : (*t)->runningJobs()) EXPECT_EQ(r.source, "dcgm-map");
  // Unchanged files: the same runs.
  const auto before = (*t)->runningJobs();
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0 + 500), "");
  EXPECT_EQ((*t)->runningJobs().size(), before.size());
  EXPECT_EQ((*t)->runningJobs()[0].start_ms, kT0);
  fs::remove(map + "/2");
  EXPECT_EQ((*t)->pollMappingDir(map, views, kT0 + 1000), "");
  EXPECT_EQ((*t)->gpuJobLabels(), (std::map<std::string, std::string>{{"GPU-zero", "5001"}}));
  auto again = (*t)->show("5001");
  ASSERT_TRUE(again && *again);
  EXPECT_EQ((*again)->start_ms, kT0 + 1000);  // its GPUs changed: a new run from now
  auto ended = (*t)->show("5002");
  ASSERT_TRUE(ended);
  EXPECT_FALSE(*ended);  // no database here: an ended job is gone
  EXPECT_NE((*t)->pollMappingDir(dir.file("missing"), views, kT0), "");
}

}  // namespace
}  // namespace gw::node

namespace gw::node {
namespace {

json jobWith(const std::string& driver, std::int64_t record,
             const std::vector<std::pair<std::string, double>>& clocks) {
  json gpus = json::array();
  int i = 0;
  for (const auto& [uuid, mhz] : clocks)
    gpus.push_back({{"uuid", uuid}, {"index", i++}, {"at_load", {{"sm_clock_mhz", mhz > 0 ? json(mhz) : json()}}}});
  return {{"fingerprint", {{"install", {{"driver_version", driver}, {"install_record", record}}}, {"gpus", gpus}}}};
}

TEST(JobCompare, EachVerdictAtItsEdge) {
  const std::vector<std::pair<std::string, double>> fast = {{"A", 2000}, {"B", 2000}, {"C", 2000}, {"D", 2000}};
  // 3 % slower is slower; 2.9 % is not.
  auto slow = [](double f) {
    return std::vector<std::pair<std::string, double>>{
        {"A", 2000 * f}, {"B", 2000 * f}, {"C", 2000 * f}, {"D", 2000 * f}};
  };
  EXPECT_EQ(compareJobs(jobWith("550", 1, fast), jobWith("560", 2, slow(0.97)))["verdict"], "driver_regression");
  EXPECT_EQ(compareJobs(jobWith("550", 1, fast), jobWith("560", 2, slow(0.971)))["verdict"], "no_difference");
  // The same install slower is not a driver regression.
  EXPECT_EQ(compareJobs(jobWith("550", 1, fast), jobWith("550", 1, slow(0.9)))["verdict"], "no_difference");
  // Half the GPUs slower is not "most".
  const std::vector<std::pair<std::string, double>> half = {{"A", 1800}, {"B", 1800}, {"C", 2000}, {"D", 2000}};
  EXPECT_EQ(compareJobs(jobWith("550", 1, fast), jobWith("560", 2, half))["verdict"], "no_difference");
  // One GPU below its peers in both runs.
  const std::vector<std::pair<std::string, double>> worn = {{"A", 2000}, {"B", 1940}, {"C", 2000}, {"D", 2000}};
  const json ageing = compareJobs(jobWith("550", 1, worn), jobWith("550", 1, worn));
  EXPECT_EQ(ageing["verdict"], "ageing_hardware");
  EXPECT_EQ(ageing["ageing_gpus"], json::array({"B"}));
  const std::vector<std::pair<std::string, double>> barely = {{"A", 2000}, {"B", 1941}, {"C", 2000}, {"D", 2000}};
  EXPECT_EQ(compareJobs(jobWith("550", 1, barely), jobWith("550", 1, barely))["verdict"], "no_difference");
  // Slow in one run only: not the card.
  EXPECT_EQ(compareJobs(jobWith("550", 1, worn), jobWith("550", 1, fast))["verdict"], "no_difference");
  // Both at once.
  const std::vector<std::pair<std::string, double>> worn_slow = {{"A", 1800}, {"B", 1740}, {"C", 1800}, {"D", 1800}};
  EXPECT_EQ(compareJobs(jobWith("550", 1, worn), jobWith("560", 2, worn_slow))["verdict"], "both");
  // Nothing shared at load.
  EXPECT_EQ(compareJobs(jobWith("550", 1, {{"A", 2000}}), jobWith("550", 1, {{"B", 2000}}))["verdict"],
            "not_comparable");
  EXPECT_EQ(compareJobs(jobWith("550", 1, {{"A", 0}}), jobWith("550", 1, {{"A", 2000}}))["verdict"], "not_comparable");
  EXPECT_EQ(compareJobs(json::object(), json::array())["verdict"], "not_comparable");
}

// The per-GPU rows give each clock against the median of the other GPUs of its run in percent, the
// numbers an operator weighs a card by: 1940 MHz beside three at 2000 is 3 % below, in both runs.
TEST(JobCompare, PeersArePercentAgainstTheMedianOfTheOthers) {
  const std::vector<std::pair<std::string, double>> worn = {{"A", 2000}, {"B", 1940}, {"C", 2000}, {"D", 2000}};
  const json c = compareJobs(jobWith("550", 1, worn), jobWith("550", 1, worn));
  ASSERT_EQ(c["gpus"].size(), 4u) << c.dump();
  const json& b = c["gpus"][1];
  ASSERT_EQ(b["uuid"], "B") << c.dump();
  EXPECT_NEAR(b["peers_a_pct"].get<double>(), -3.0, 1e-9);
  EXPECT_NEAR(b["peers_b_pct"].get<double>(), -3.0, 1e-9);
  EXPECT_NEAR(b["change_pct"].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(c["gpus"][0]["peers_a_pct"].get<double>(), 0.0, 1e-9) << "A's peers' median is 2000 too";
  EXPECT_EQ(c["summary"], "ageing hardware: GPU 1 (B) -3.0 % / -3.0 % against its peers in both runs");
}

// The peers' median of an even count is the mean of the middle two: beside 1900 and 2000, a GPU at
// 2000 is 2000/1950 - 1 above its peers; an odd count's median is its middle value.
TEST(JobCompare, AnEvenCountOfPeersHasTheMeanOfTheMiddleTwoAsMedian) {
  const std::vector<std::pair<std::string, double>> three = {{"A", 2000}, {"B", 1900}, {"C", 2000}};
  const json c = compareJobs(jobWith("550", 1, three), jobWith("550", 1, three));
  ASSERT_EQ(c["gpus"].size(), 3u) << c.dump();
  EXPECT_NEAR(c["gpus"][0]["peers_a_pct"].get<double>(), (2000.0 / 1950.0 - 1) * 100, 1e-9);
  EXPECT_NEAR(c["gpus"][1]["peers_a_pct"].get<double>(), -5.0, 1e-9);
  const std::vector<std::pair<std::string, double>> five = {
      {"A", 2000}, {"B", 1900}, {"C", 2100}, {"D", 1800}, {"E", 2000}};
  const json d = compareJobs(jobWith("550", 1, five), jobWith("550", 1, five));
  ASSERT_EQ(d["gpus"].size(), 5u) << d.dump();
  // A's peers 1800, 1900, 2000, 2100: median 1950.
  EXPECT_NEAR(d["gpus"][0]["peers_a_pct"].get<double>(), (2000.0 / 1950.0 - 1) * 100, 1e-9);
}

// The ageing summary prints each run's shortfall as given in the rows: 1800 MHz beside three at
// 2000 is 10 % below (a shortfall large enough that a wrong scale shows in the one decimal).
TEST(JobCompare, AgeingSummaryGivesTheShortfallOfBothRuns) {
  const std::vector<std::pair<std::string, double>> worn = {{"A", 2000}, {"B", 1800}, {"C", 2000}, {"D", 2000}};
  const json c = compareJobs(jobWith("550", 1, worn), jobWith("550", 1, worn));
  EXPECT_EQ(c["verdict"], "ageing_hardware");
  EXPECT_EQ(c["summary"], "ageing hardware: GPU 1 (B) -10.0 % / -10.0 % against its peers in both runs");
}

}  // namespace
}  // namespace gw::node
