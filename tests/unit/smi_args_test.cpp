// nvidia-smi's command line as `gpuwarden smi` parses it: every flag in both spellings, the
// combinations nvidia-smi refuses, and its exit codes.
#include <gtest/gtest.h>

#include "cli/smi/smi_args.h"

namespace gw::cli::smi {
namespace {

using Mode = SmiArgs::Mode;

SmiParse parse(std::vector<std::string> argv) { return parseSmiArgs(argv); }

TEST(SmiArgs, NoArgumentsIsTheSummary) {
  auto p = parse({});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.args.mode, Mode::Summary);
  EXPECT_FALSE(p.args.loop_ms);
}

TEST(SmiArgs, ListAndHelpAndVersion) {
  for (auto flag : {"-L", "--list-gpus"}) EXPECT_EQ(parse({flag}).args.mode, Mode::ListGpus) << flag;
  for (auto flag : {"-h", "--help"}) EXPECT_EQ(parse({flag}).args.mode, Mode::Help) << flag;
  EXPECT_EQ(parse({"--version"}).args.mode, Mode::Version);
}

TEST(SmiArgs, QueryGpuReachesRunQueryWithTheRequest) {
  for (const auto& argv :
       std::vector<std::vector<std::string>>{{"--query-gpu=index,name", "--format=csv,noheader"},
                                             {"--query-gpu", "index,name", "--format", "csv,noheader"},
                                             {"--format=csv,noheader", "--query-gpu", "index,name"}}) {
    auto p = parse(argv);
    ASSERT_TRUE(p.ok()) << p.error;
    EXPECT_EQ(p.args.mode, Mode::Select);
    EXPECT_EQ(p.args.query.kind, QueryRequest::Kind::Gpu);
    EXPECT_EQ(p.args.query.fields, "index,name");
    EXPECT_EQ(p.args.query.format, "csv,noheader");
    EXPECT_TRUE(p.args.query.header);
  }
}

TEST(SmiArgs, EveryQueryKindAndItsHelp) {
  const std::pair<const char*, QueryRequest::Kind> kinds[] = {{"gpu", QueryRequest::Kind::Gpu},
                                                              {"compute-apps", QueryRequest::Kind::ComputeApps},
                                                              {"retired-pages", QueryRequest::Kind::RetiredPages},
                                                              {"remapped-rows", QueryRequest::Kind::RemappedRows}};
  for (const auto& [name, kind] : kinds) {
    auto p = parse({std::string("--query-") + name + "=pid", "--format=csv", "-i", "1"});
    ASSERT_TRUE(p.ok()) << name << ": " << p.error;
    EXPECT_EQ(p.args.query.kind, kind) << name;
    EXPECT_EQ(p.args.query.ids, "1") << name;
    auto h = parse({std::string("--help-query-") + name});
    ASSERT_TRUE(h.ok()) << h.error;
    EXPECT_EQ(h.args.mode, Mode::HelpQuery);
    EXPECT_EQ(h.args.help_kind, kind);
  }
}

TEST(SmiArgs, IdFilenameAndLoopInBothForms) {
  auto a = parse({"-q", "-i", "0,GPU-abc", "-f", "/tmp/x", "-l", "2"});
  ASSERT_TRUE(a.ok()) << a.error;
  EXPECT_EQ(a.args.ids, "0,GPU-abc");
  EXPECT_EQ(a.args.filename, "/tmp/x");
  EXPECT_EQ(a.args.loop_ms, 2000u);
  auto b = parse({"-q", "--id=00000000:18:00.0", "--filename=/tmp/y", "--loop=3"});
  ASSERT_TRUE(b.ok()) << b.error;
  EXPECT_EQ(b.args.ids, "00000000:18:00.0");
  EXPECT_EQ(b.args.filename, "/tmp/y");
  EXPECT_EQ(b.args.loop_ms, 3000u);
  // -l without a number: nvidia-smi's five seconds; the next flag is not taken as its value.
  auto c = parse({"-l", "-q"});
  ASSERT_TRUE(c.ok()) << c.error;
  EXPECT_EQ(c.args.loop_ms, 5000u);
  EXPECT_EQ(c.args.mode, Mode::Query);
  auto d = parse({"--query-gpu=index", "--format=csv", "-lms", "250"});
  ASSERT_TRUE(d.ok()) << d.error;
  EXPECT_EQ(d.args.loop_ms, 250u);
  EXPECT_EQ(parse({"--loop-ms=100"}).args.loop_ms, 100u);
}

TEST(SmiArgs, QueryXmlAndSections) {
  auto p = parse({"-q", "-x", "-d", "memory,ECC"});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.args.mode, Mode::Query);
  EXPECT_TRUE(p.args.xml);
  EXPECT_EQ(p.args.sections, (std::vector<std::string>{"MEMORY", "ECC"}));
  auto q = parse({"--query", "--xml-format", "--display=POWER"});
  ASSERT_TRUE(q.ok()) << q.error;
  EXPECT_EQ(q.args.sections, std::vector<std::string>{"POWER"});
}

TEST(SmiArgs, RefusedCombinationsUseNvidiaSmisSentenceAndExitTwo) {
  for (const auto& argv : std::vector<std::vector<std::string>>{{"-x"},
                                                                {"-d", "MEMORY"},
                                                                {"-L", "-q"},
                                                                {"-q", "-d", "NOPE"},
                                                                {"-i"},
                                                                {"-l", "0"},
                                                                {"-lms", "abc"},
                                                                {"--format=csv"},
                                                                {"--query-gpu=index", "--query-compute-apps=pid"},
                                                                {"-L", "-l", "1"}}) {
    auto p = parse(argv);
    EXPECT_EQ(p.exit, kSmiInvalidArgument) << argv[0];
    EXPECT_NE(p.error.find(kInvalidCombination), std::string::npos) << p.error;
  }
  // The sentence says what was wrong, too.
  // An option nvidia-smi does not know: its own sentence and 255, as a real 580.159.04 answered.
  EXPECT_EQ(parse({"--bogus"}).exit, kSmiOther);
  EXPECT_EQ(parse({"--bogus"}).error, "ERROR: Option --bogus is not recognized. Please run 'nvidia-smi -h'.\n");
  EXPECT_NE(parse({"-q", "-d", "nope"}).error.find("unknown section 'NOPE'"), std::string::npos);
}

// Each number a flag takes, at its limits and one past them.
TEST(SmiArgs, IntervalsCountsAndWattsAtTheirLimits) {
  auto refused = [](std::vector<std::string> argv) {
    auto p = parse(argv);
    EXPECT_EQ(p.exit, kSmiInvalidArgument) << argv[0] << " " << argv[1] << " " << argv.back();
  };
  EXPECT_EQ(parse({"-q", "-l", "1"}).args.loop_ms, 1000u);
  refused({"-q", "-l", "0"});
  // The longest interval whose milliseconds fit; a second more would wrap to a 704 ms loop.
  EXPECT_EQ(kMaxLoopSeconds, 4294967u);
  EXPECT_EQ(parse({"-q", "-l", "4294967"}).args.loop_ms, 4294967000u);
  refused({"-q", "-l", "4294968"});
  EXPECT_EQ(parse({"-q", "-lms", "1"}).args.loop_ms, 1u);
  refused({"-q", "-lms", "0"});
  EXPECT_EQ(parse({"-q", "-lms", "4294967295"}).args.loop_ms, 4294967295u);
  refused({"-q", "-lms", "4294967296"});

  for (const char* sub : {"dmon", "pmon"}) {
    EXPECT_EQ(parse({sub, "-d", "1"}).args.delay_s, 1u) << sub;
    EXPECT_EQ(parse({sub, "-d", "10"}).args.delay_s, 10u) << sub;
    refused({sub, "-d", "11"});
    refused({sub, "-d", "0"});
    EXPECT_EQ(parse({sub, "-c", "1"}).args.count, 1u) << sub;
    refused({sub, "-c", "0"});
  }

  EXPECT_DOUBLE_EQ(parse({"-pl", "100000"}).args.setting.watts, 100000.0);
  EXPECT_DOUBLE_EQ(parse({"-pl", "0.001"}).args.setting.watts, 0.001);
  for (const char* w : {"100000.01", "0", "nan", "inf", "250W", ""}) refused({"-pl", w});
}

TEST(SmiArgs, SettingsParseTheirValuesInNvidiaSmisForms) {
  using K = SettingRequest::Kind;
  auto setting = [](std::vector<std::string> argv) {
    auto p = parse(argv);
    EXPECT_TRUE(p.ok()) << p.error;
    EXPECT_EQ(p.args.mode, SmiArgs::Mode::Setting) << argv[0];
    return p.args;
  };
  auto pm = setting({"-i", "0", "-pm", "1"});
  EXPECT_EQ(pm.ids, "0");
  EXPECT_EQ(pm.setting.kind, K::Persistence);
  EXPECT_TRUE(pm.setting.on);
  EXPECT_FALSE(setting({"--persistence-mode=DISABLED"}).setting.on);
  auto pl = setting({"--power-limit=250.5"});
  EXPECT_EQ(pl.setting.kind, K::PowerLimit);
  EXPECT_DOUBLE_EQ(pl.setting.watts, 250.5);
  auto lgc = setting({"-lgc", "1000,1500"});
  EXPECT_EQ(lgc.setting.kind, K::LockGpuClocks);
  EXPECT_EQ(lgc.setting.a, 1000u);
  EXPECT_EQ(lgc.setting.b, 1500u);
  auto lmc = setting({"-lmc", "1593"});  // one value: min and max alike
  EXPECT_EQ(lmc.setting.kind, K::LockMemoryClocks);
  EXPECT_EQ(lmc.setting.a, 1593u);
  EXPECT_EQ(lmc.setting.b, 1593u);
  auto ac = setting({"-ac", "2619,1410"});
  EXPECT_EQ(ac.setting.kind, K::ApplicationsClocks);
  EXPECT_EQ(ac.setting.a, 2619u);
  EXPECT_EQ(ac.setting.b, 1410u);
  EXPECT_EQ(setting({"-c", "EXCLUSIVE_PROCESS"}).setting.a, 3u);
  EXPECT_EQ(setting({"-c", "0"}).setting.a, 0u);
  EXPECT_TRUE(setting({"-e", "1"}).setting.on);
  EXPECT_EQ(setting({"-rgc"}).setting.kind, K::ResetGpuClocks);
  EXPECT_EQ(setting({"-rmc"}).setting.kind, K::ResetMemoryClocks);
  EXPECT_EQ(setting({"-rac"}).setting.kind, K::ResetApplicationsClocks);
  EXPECT_EQ(setting({"-r", "-i", "1"}).setting.kind, K::Reset);
}

TEST(SmiArgs, BadSettingValuesAndCombinationsExitTwo) {
  for (const auto& argv : std::vector<std::vector<std::string>>{{"-pm", "2"},
                                                                {"-pm"},
                                                                {"-pl", "abc"},
                                                                {"-pl", "-5"},
                                                                {"-lgc", "1500,1000"},
                                                                {"-lgc", "x"},
                                                                {"-ac", "1215"},
                                                                {"-c", "4"},
                                                                {"-e", "yes"},
                                                                {"-pm", "1", "-pl", "300"},
                                                                {"-pm", "1", "-q"},
                                                                {"-pl", "300", "-L"},
                                                                {"-r", "-f", "/tmp/x"}}) {
    auto p = parse(argv);
    EXPECT_EQ(p.exit, kSmiInvalidArgument) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "");
    EXPECT_NE(p.error.find(kInvalidCombination), std::string::npos) << p.error;
  }
}

TEST(SmiArgs, OtherSettingsAreStillRefusedWithExitThree) {
  for (const auto& argv : std::vector<std::vector<std::string>>{{"-am", "1"}, {"-gom", "0"}, {"drain", "-p", "0"}}) {
    auto p = parse(argv);
    EXPECT_EQ(p.exit, kSmiNotSupported) << argv[0];
    EXPECT_NE(p.error.find("nothing was changed"), std::string::npos) << p.error;
  }
}

TEST(SmiArgs, MigModeAndTheMigSubcommand) {
  using K = SettingRequest::Kind;
  auto mode = parse({"-i", "0", "-mig", "1"});
  ASSERT_TRUE(mode.ok()) << mode.error;
  EXPECT_EQ(mode.args.mode, Mode::Setting);
  EXPECT_EQ(mode.args.setting.kind, K::MigMode);
  EXPECT_TRUE(mode.args.setting.on);
  EXPECT_EQ(parse({"--multi-instance-gpu", "2"}).exit, kSmiInvalidArgument);

  auto cgi = parse({"mig", "-cgi", "19,1g.10gb", "-C", "-i", "0"});
  ASSERT_TRUE(cgi.ok()) << cgi.error;
  EXPECT_EQ(cgi.args.setting.kind, K::MigCreateGpuInstances);
  EXPECT_EQ(cgi.args.setting.profiles, (std::vector<std::string>{"19", "1g.10gb"}));
  EXPECT_TRUE(cgi.args.setting.default_ci);
  EXPECT_EQ(cgi.args.ids, "0");
  EXPECT_FALSE(isMigList(cgi.args.setting.kind));

  auto cci = parse({"mig", "-cci", "-gi", "7,8"});  // no profile: the default compute instance
  ASSERT_TRUE(cci.ok()) << cci.error;
  EXPECT_TRUE(cci.args.setting.profiles.empty());
  EXPECT_EQ(cci.args.setting.gpu_instances, (std::vector<unsigned>{7, 8}));
  auto dci = parse({"mig", "--destroy-compute-instance", "--compute-instance-id=0", "-gi", "7"});
  ASSERT_TRUE(dci.ok()) << dci.error;
  EXPECT_EQ(dci.args.setting.kind, K::MigDestroyComputeInstances);
  EXPECT_EQ(dci.args.setting.compute_instances, (std::vector<unsigned>{0}));
  auto lgip = parse({"mig", "-lgip"});
  ASSERT_TRUE(lgip.ok()) << lgip.error;
  EXPECT_TRUE(isMigList(lgip.args.setting.kind));

  for (const auto& argv : std::vector<std::vector<std::string>>{{"mig"},
                                                                {"mig", "-cgi"},
                                                                {"mig", "-lgi", "-lci"},
                                                                {"mig", "-lgi", "-C"},
                                                                {"mig", "-lgip", "-gi", "1"},
                                                                {"mig", "-dgi", "-ci", "0"},
                                                                {"mig", "-dgi", "-gi", "x"},
                                                                {"mig", "-lgi", "-gi", "x"}}) {
    auto p = parse(argv);
    EXPECT_EQ(p.exit, kSmiInvalidArgument) << argv.back();
    EXPECT_NE(p.error.find(kInvalidCombination), std::string::npos) << p.error;
  }
}

TEST(SmiArgs, ChangesSettingsNamesTheFlagsThatChangeAGpu) {
  for (const char* w : {"-pm", "--power-limit=300", "-pl", "-lgc", "-rgc", "-lmc", "-rmc", "-ac", "-rac", "-c", "-e",
                        "-r", "--gpu-reset", "-mig", "mig"})
    EXPECT_TRUE(changesSettings(w)) << w;
  for (const char* w : {"-L", "-q", "-i", "--query-gpu=power.limit", "dmon", "300", "-am"})
    EXPECT_FALSE(changesSettings(w)) << w;
}

TEST(SmiArgs, DmonFlags) {
  auto p = parse({"dmon", "-s", "pucm", "-c", "3", "-d", "2", "-i", "0,1"});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.args.mode, Mode::Dmon);
  EXPECT_EQ(p.args.select, "pucm");
  EXPECT_EQ(p.args.count, 3u);
  EXPECT_EQ(p.args.delay_s, 2u);
  EXPECT_EQ(p.args.ids, "0,1");
  auto q = parse({"dmon", "--select=et", "--count=1", "--delay=1", "--id=GPU-x", "-f", "/tmp/d"});
  ASSERT_TRUE(q.ok()) << q.error;
  EXPECT_EQ(q.args.select, "et");
  EXPECT_EQ(q.args.filename, "/tmp/d");
  EXPECT_EQ(parse({"dmon", "-s", "pz"}).exit, kSmiInvalidArgument);
  EXPECT_EQ(parse({"dmon", "-d", "0"}).exit, kSmiInvalidArgument);
  EXPECT_EQ(parse({"dmon", "-c", "x"}).exit, kSmiInvalidArgument);
  EXPECT_EQ(parse({"dmon", "-q"}).exit, kSmiInvalidArgument);
}

TEST(SmiArgs, PmonFlags) {
  auto p = parse({"pmon", "-c", "1", "-s", "um", "-d", "1", "-i", "3"});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.args.mode, Mode::Pmon);
  EXPECT_EQ(p.args.select, "um");
  EXPECT_EQ(p.args.count, 1u);
  EXPECT_EQ(p.args.ids, "3");
  EXPECT_EQ(parse({"pmon", "-s", "p"}).exit, kSmiInvalidArgument);
}

TEST(SmiArgs, TopoMatrixOnly) {
  EXPECT_EQ(parse({"topo", "-m"}).args.mode, Mode::Topo);
  EXPECT_EQ(parse({"topo", "--matrix"}).args.mode, Mode::Topo);
  EXPECT_EQ(parse({"topo"}).exit, kSmiInvalidArgument);
  EXPECT_EQ(parse({"topo", "-p2p", "r"}).exit, kSmiNotSupported);
  EXPECT_EQ(parse({"nvlink", "-s"}).exit, kSmiNotSupported);
}

}  // namespace
}  // namespace gw::cli::smi
