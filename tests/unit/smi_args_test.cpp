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
                                                                {"--bogus"},
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
  EXPECT_NE(parse({"--bogus"}).error.find("unknown option '--bogus'"), std::string::npos);
  EXPECT_NE(parse({"-q", "-d", "nope"}).error.find("unknown section 'NOPE'"), std::string::npos);
}

TEST(SmiArgs, SettingsAreRefusedWithExitThree) {
  for (const auto& argv : std::vector<std::vector<std::string>>{{"-pm", "1"},
                                                                {"-pl", "300"},
                                                                {"--power-limit=300"},
                                                                {"-lgc", "1000,1500"},
                                                                {"-rgc"},
                                                                {"-lmc", "1000"},
                                                                {"-rmc"},
                                                                {"-ac", "1215,1410"},
                                                                {"-rac"},
                                                                {"-c", "3"},
                                                                {"-e", "0"},
                                                                {"-r"},
                                                                {"-i", "0", "-pm", "1"},
                                                                {"mig", "-cgi", "9"}}) {
    auto p = parse(argv);
    EXPECT_EQ(p.exit, kSmiNotSupported) << argv[0];
    EXPECT_NE(p.error.find("cannot change settings yet"), std::string::npos) << p.error;
  }
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
