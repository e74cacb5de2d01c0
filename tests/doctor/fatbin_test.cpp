#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "doctor/fatbin.h"

namespace gw::doctor {
namespace {

// ---- a tiny 64-bit little-endian ELF writer for synthetic inputs ----
void put(std::string& b, std::size_t off, std::uint64_t v, int n) {
  if (b.size() < off + n) b.resize(off + n, '\0');
  for (int i = 0; i < n; ++i) b[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

struct Entry {
  std::uint16_t kind;
  std::uint32_t arch;
  std::size_t payload;
};

std::string container(const std::vector<Entry>& entries) {
  std::string body;
  for (const auto& e : entries) {
    std::string h(64, '\0');
    put(h, 0, e.kind, 2);
    put(h, 2, 0x0101, 2);
    put(h, 4, 64, 4);
    put(h, 8, e.payload, 8);
    put(h, 24, e.kind == 1 ? 0 : 8, 2);
    put(h, 26, e.kind == 1 ? 9 : 1, 2);
    put(h, 28, e.arch, 4);
    put(h, 48, 0x11, 8);
    body += h + std::string(e.payload, '\x5a');
  }
  std::string c(16, '\0');
  put(c, 0, 0xBA55ED50u, 4);
  put(c, 4, 1, 2);
  put(c, 6, 16, 2);
  put(c, 8, body.size(), 8);
  return c + body;
}

// ELF with sections: [0] null, [1] .text, [2] <fatbin_name> (if given), [last] .shstrtab.
std::string elf(const std::string& fatbin, const std::string& fatbin_name = ".nv_fatbin") {
  std::string names = std::string("\0.text\0", 7);
  const std::size_t text_name = 1;
  std::size_t fat_name = 0;
  if (!fatbin_name.empty()) {
    fat_name = names.size();
    names += fatbin_name + '\0';
  }
  const std::size_t shstr_name = names.size();
  names += std::string(".shstrtab\0", 10);

  std::string b(64, '\0');
  b[0] = 0x7f;
  b[1] = 'E';
  b[2] = 'L';
  b[3] = 'F';
  b[4] = 2;
  b[5] = 1;
  b[6] = 1;
  put(b, 16, 2, 2);   // ET_EXEC
  put(b, 18, 62, 2);  // x86-64
  put(b, 20, 1, 4);
  put(b, 52, 64, 2);  // e_ehsize
  const std::size_t text_off = b.size();
  b += std::string(32, '\x90');
  const std::size_t fat_off = b.size();
  b += fatbin;
  while (b.size() % 8) b += '\0';
  const std::size_t str_off = b.size();
  b += names;
  while (b.size() % 8) b += '\0';
  const std::size_t shoff = b.size();
  struct S {
    std::size_t name;
    std::uint32_t type;
    std::size_t off, size;
  };
  std::vector<S> secs = {{0, 0, 0, 0}, {text_name, 1, text_off, 32}};
  if (!fatbin_name.empty()) secs.push_back({fat_name, 1, fat_off, fatbin.size()});
  secs.push_back({shstr_name, 3, str_off, names.size()});
  for (const auto& s : secs) {
    std::string h(64, '\0');
    put(h, 0, s.name, 4);
    put(h, 4, s.type, 4);
    put(h, 24, s.off, 8);
    put(h, 32, s.size, 8);
    b += h;
  }
  put(b, 0x28, shoff, 8);
  put(b, 0x3A, 64, 2);
  put(b, 0x3C, secs.size(), 2);
  put(b, 0x3E, secs.size() - 1, 2);
  return b;
}

TEST(Fatbin, SyntheticEntriesAndContainers) {
  // Two containers (as from two translation units), the second after 8-byte alignment padding.
  std::string fat = container({{2, 80, 101}, {2, 90, 64}});
  while (fat.size() % 8) fat += '\0';
  fat += container({{1, 90, 33}});
  auto rep = parseFatbinElf(elf(fat));
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_TRUE(rep->is_elf);
  EXPECT_TRUE(rep->has_fatbin);
  ASSERT_EQ(rep->entries.size(), 3u);
  EXPECT_EQ(rep->entries[0].name(), "sm_80");
  EXPECT_EQ(rep->entries[0].kind, FatbinEntry::Kind::kCubin);
  EXPECT_EQ(rep->entries[0].payload_size, 101u);
  EXPECT_EQ(rep->entries[1].name(), "sm_90");
  EXPECT_EQ(rep->entries[2].name(), "compute_90");
  EXPECT_EQ(rep->entries[2].kind, FatbinEntry::Kind::kPtx);
}

TEST(Fatbin, RelocatableSectionName) {
  auto rep = parseFatbinElf(elf(container({{2, 86, 8}}), "__nv_relfatbin"));
  ASSERT_TRUE(rep.ok()) << rep.error();
  ASSERT_EQ(rep->entries.size(), 1u);
  EXPECT_EQ(rep->entries[0].section, "__nv_relfatbin");
}

TEST(Fatbin, CompatibilityRules) {
  std::vector<FatbinEntry> sass80 = {{FatbinEntry::Kind::kCubin, 80, 2, 0, false, ""}};
  std::string how;
  EXPECT_TRUE(runsOn(sass80, 8, 0, &how));
  EXPECT_EQ(how, "sm_80 SASS");
  EXPECT_TRUE(runsOn(sass80, 8, 6, &how));   // same major, higher minor
  EXPECT_FALSE(runsOn(sass80, 9, 0, &how));  // SASS never crosses a major
  EXPECT_FALSE(runsOn(sass80, 7, 5, &how));
  std::vector<FatbinEntry> sass86 = {{FatbinEntry::Kind::kCubin, 86, 2, 0, false, ""}};
  EXPECT_FALSE(runsOn(sass86, 8, 0, &how));  // sm_86 does not run on 8.0
  std::vector<FatbinEntry> ptx80 = {{FatbinEntry::Kind::kPtx, 80, 1, 0, false, ""}};
  EXPECT_TRUE(runsOn(ptx80, 9, 0, &how));  // JIT forward
  EXPECT_EQ(how, "compute_80 PTX (JIT)");
  EXPECT_FALSE(runsOn(ptx80, 7, 5, &how));  // PTX never runs backwards
  std::vector<FatbinEntry> sass120 = {{FatbinEntry::Kind::kCubin, 120, 2, 0, false, ""}};
  EXPECT_TRUE(runsOn(sass120, 12, 0, &how));
  EXPECT_FALSE(runsOn(sass120, 10, 0, &how));
}

std::string writeTemp(const std::string& bytes) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gw-fatbin-XXXXXX").string();
  int fd = ::mkstemp(tmpl.data());
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(tmpl, std::ios::binary | std::ios::trunc) << bytes;
  return tmpl;
}

TEST(Fatbin, CheckBinaryAgainstGpus) {
  const std::string path = writeTemp(elf(container({{2, 80, 16}})));
  NvmlFacts nvml;
  nvml.library_loaded = true;
  nvml.init_return = 0;
  nvml.gpus = {{0, "NVIDIA A10", "00000000:17:00.0", 8, 6, true, false},
               {1, "NVIDIA H100 80GB HBM3", "00000000:18:00.0", 9, 0, true, false}};
  auto checks = checkBinary(path, nvml);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].id, "app.fatbin");
  EXPECT_EQ(checks[0].verdict, Verdict::kPass);
  EXPECT_EQ(checks[1].id, "app.gpu_compat");
  EXPECT_EQ(checks[1].layer, Layer::kApplication);
  EXPECT_EQ(checks[1].verdict, Verdict::kFail) << checks[1].found;
  EXPECT_NE(checks[1].found.find("GPU 1 (NVIDIA H100 80GB HBM3, 9.0)"), std::string::npos) << checks[1].found;
  EXPECT_EQ(checks[1].found.find("GPU 0"), std::string::npos) << checks[1].found;
  EXPECT_NE(checks[1].explain.find("no kernel image is available for execution on the device"), std::string::npos);
  EXPECT_NE(checks[1].fix.find("-gencode arch=compute_90,code=sm_90"), std::string::npos) << checks[1].fix;
  std::filesystem::remove(path);
}

TEST(Fatbin, NonCudaElfReportsNoFatbin) {
  auto rep = readFatbinFile("/proc/self/exe");  // this test program: an ELF without GPU code
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_TRUE(rep->is_elf);
  EXPECT_FALSE(rep->has_fatbin);
  EXPECT_TRUE(rep->entries.empty());
  auto checks = checkBinary("/proc/self/exe", NvmlFacts{});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].verdict, Verdict::kWarn);
  EXPECT_NE(checks[0].found.find("no fatbin"), std::string::npos) << checks[0].found;
  auto synthetic = parseFatbinElf(elf("", ""));
  ASSERT_TRUE(synthetic.ok()) << synthetic.error();
  EXPECT_FALSE(synthetic->has_fatbin);
}

TEST(Fatbin, TruncatedAndMalformedInputsGiveClearErrors) {
  const std::string good = elf(container({{2, 80, 200}, {1, 80, 100}}));
  // Cut inside the section header table (at the end of the file).
  auto cut = parseFatbinElf(std::string_view(good).substr(0, good.size() - 10));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().find("truncated ELF"), std::string::npos) << cut.error();
  // Every prefix: never crashes, always a result or an error.
  for (std::size_t n = 0; n < good.size(); n += 7) {
    auto r = parseFatbinElf(std::string_view(good).substr(0, n));
    EXPECT_FALSE(r.ok() && !r->entries.empty() && n < good.size() - 200) << n;
  }
  auto tiny = parseFatbinElf(
      "\x7f"
      "ELF\x02");
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.error().find("too short"), std::string::npos) << tiny.error();
  auto text = parseFatbinElf("#!/bin/sh\necho this is a script, not an ELF file\n");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error(), "not an ELF file");
  // A container whose size runs past the section.
  std::string fat = container({{2, 80, 64}});
  put(fat, 8, 100000, 8);
  auto bad = parseFatbinElf(elf(fat));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("truncated fatbin container"), std::string::npos) << bad.error();
  // An entry whose payload runs past its container.
  std::string fat2 = container({{2, 80, 64}});
  put(fat2, 16 + 8, 1u << 30, 8);
  auto bad2 = parseFatbinElf(elf(fat2));
  ASSERT_FALSE(bad2.ok());
  EXPECT_NE(bad2.error().find("malformed fatbin entry"), std::string::npos) << bad2.error();
  // Through the file API: a real file cut short, and a missing file.
  const std::string path = writeTemp(good.substr(0, good.size() / 2));
  auto f = readFatbinFile(path);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().find(path), std::string::npos);
  EXPECT_NE(f.error().find("truncated"), std::string::npos) << f.error();
  auto checks = checkBinary(path, NvmlFacts{});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].verdict, Verdict::kFail);
  EXPECT_NE(checks[0].found.find("truncated"), std::string::npos);
  std::filesystem::remove(path);
  auto missing = readFatbinFile("/nonexistent/gw-doctor-binary");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("No such file"), std::string::npos) << missing.error();
}

// A binary built by the real nvcc at build time (see CMakeLists.txt):
//   -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
TEST(Fatbin, RealNvccBinary) {
#ifndef GW_DOCTOR_FATBIN_SAMPLE
  GTEST_SKIP() << "nvcc not found at configure time: the real-binary fatbin test is skipped";
#else
  const std::string path = GW_DOCTOR_FATBIN_SAMPLE;
  auto rep = readFatbinFile(path);
  ASSERT_TRUE(rep.ok()) << rep.error();
  ASSERT_TRUE(rep->has_fatbin);
  bool sm80 = false, sm90 = false, ptx90 = false;
  for (const auto& e : rep->entries) {
    sm80 |= e.kind == FatbinEntry::Kind::kCubin && e.arch == 80;
    sm90 |= e.kind == FatbinEntry::Kind::kCubin && e.arch == 90;
    ptx90 |= e.kind == FatbinEntry::Kind::kPtx && e.arch == 90;
    EXPECT_NE(e.kind == FatbinEntry::Kind::kPtx && e.arch == 80, true) << "no compute_80 PTX was requested";
  }
  EXPECT_TRUE(sm80);
  EXPECT_TRUE(sm90);
  EXPECT_TRUE(ptx90);

  NvmlFacts nvml;
  nvml.library_loaded = true;
  nvml.init_return = 0;
  nvml.gpus = {{0, "NVIDIA A10", "00000000:17:00.0", 8, 6, true, false},     // sm_80 SASS
               {1, "NVIDIA H200", "00000000:18:00.0", 9, 0, true, false},    // sm_90 SASS
               {2, "NVIDIA B200", "00000000:19:00.0", 10, 0, true, false}};  // compute_90 PTX JIT
  auto checks = checkBinary(path, nvml);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].verdict, Verdict::kPass) << checks[0].found;
  EXPECT_NE(checks[0].found.find("sm_80 SASS, sm_90 SASS, compute_90 PTX"), std::string::npos) << checks[0].found;
  EXPECT_EQ(checks[1].verdict, Verdict::kPass) << checks[1].found;
  EXPECT_NE(checks[1].found.find("GPU 2 (NVIDIA B200, 10.0): compute_90 PTX (JIT)"), std::string::npos)
      << checks[1].found;

  nvml.gpus = {{0, "Tesla T4", "00000000:17:00.0", 7, 5, true, false}};  // older than everything inside
  checks = checkBinary(path, nvml);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[1].verdict, Verdict::kFail);
  EXPECT_NE(checks[1].fix.find("-gencode arch=compute_75,code=sm_75"), std::string::npos) << checks[1].fix;

  // The same binary cut in half: a clear error, no crash.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto cut = parseFatbinElf(std::string_view(bytes).substr(0, bytes.size() / 2));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().find("truncated"), std::string::npos) << cut.error();
#endif
}

}  // namespace
}  // namespace gw::doctor
