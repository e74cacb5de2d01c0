#include <gtest/gtest.h>
#include <sys/stat.h>
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

// A container whose entries carry headers of the given sizes (kind, arch, payload bytes, and the
// compressed flag at +48 where a header of 56 bytes has room for all of it, or the 7 bytes that fit).
std::string containerOfHeaders(const std::vector<std::pair<std::uint32_t, std::size_t>>& header_and_payload,
                               std::uint16_t kind = 1) {
  std::string body;
  for (const auto& [ehdr, payload] : header_and_payload) {
    std::string h(ehdr, '\0');
    put(h, 0, kind, 2);
    put(h, 4, ehdr, 4);
    put(h, 8, payload, 8);
    if (ehdr >= 32) put(h, 28, 80, 4);
    if (ehdr >= 55) put(h, 48, 0x2011, ehdr >= 56 ? 8 : 7);
    body += h + std::string(payload, '\x5a');
  }
  std::string c(16, '\0');
  put(c, 0, 0xBA55ED50u, 4);
  put(c, 4, 1, 2);
  put(c, 6, 16, 2);
  put(c, 8, body.size(), 8);
  return c + body;
}

// An entry header is at least 32 bytes: one of exactly 32 that ends the container is read, one of
// 31 is malformed. The compressed flag lives at +48..+56, so only a header of 56 bytes or more
// has it; a 55-byte header is never read past its end.
TEST(Fatbin, EntryHeaderSizesAtTheirEdges) {
  auto least = parseFatbinElf(elf(containerOfHeaders({{32, 0}})));
  ASSERT_TRUE(least.ok()) << least.error();
  ASSERT_EQ(least->entries.size(), 1u);
  EXPECT_EQ(least->entries[0].name(), "compute_80");

  auto short_header = parseFatbinElf(elf(containerOfHeaders({{31, 1}})));
  ASSERT_FALSE(short_header.ok());
  EXPECT_NE(short_header.error().find("(header 31, payload 1 bytes)"), std::string::npos) << short_header.error();

  auto flags = parseFatbinElf(elf(containerOfHeaders({{56, 8}, {55, 8}})));
  ASSERT_TRUE(flags.ok()) << flags.error();
  ASSERT_EQ(flags->entries.size(), 2u);
  EXPECT_TRUE(flags->entries[0].compressed);
  EXPECT_FALSE(flags->entries[1].compressed);
}

// Containers start on 8-byte boundaries: after one that ends off the grid, the next is looked for
// at the next boundary, and a container's magic one byte before it is padding, not a container.
TEST(Fatbin, TheNextContainerIsLookedForOnTheEightByteGrid) {
  std::string fat = container({{2, 80, 101}, {2, 90, 64}});  // 309 bytes: the grid is next at 312
  ASSERT_EQ(fat.size(), 309u);
  fat += std::string(2, '\0');
  fat += container({{1, 90, 33}});  // at 311, off the grid
  auto rep = parseFatbinElf(elf(fat));
  ASSERT_TRUE(rep.ok()) << rep.error();
  ASSERT_EQ(rep->entries.size(), 2u);
  EXPECT_EQ(rep->entries[0].name(), "sm_80");
  EXPECT_EQ(rep->entries[1].name(), "sm_90");
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
  // PTX JIT-compiles for its own compute capability and newer: compute_86 runs on 8.6, not on 8.5.
  std::vector<FatbinEntry> ptx86 = {{FatbinEntry::Kind::kPtx, 86, 1, 0, false, ""}};
  EXPECT_TRUE(runsOn(ptx86, 8, 6, &how));
  EXPECT_EQ(how, "compute_86 PTX (JIT)");
  EXPECT_FALSE(runsOn(ptx86, 8, 5, &how));
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
  ASSERT_EQ(checks.size(), 3u);
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
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].verdict, Verdict::kWarn);
  EXPECT_EQ(checks[1].id, "app.cuda_runtime");
  EXPECT_EQ(checks[1].verdict, Verdict::kSkip);
  EXPECT_FALSE(rep->needed.empty());  // a dynamically linked test program: libc at least
  EXPECT_NE(checks[0].found.find("no fatbin"), std::string::npos) << checks[0].found;
  auto synthetic = parseFatbinElf(elf("", ""));
  ASSERT_TRUE(synthetic.ok()) << synthetic.error();
  EXPECT_FALSE(synthetic->has_fatbin);
}

// --binary naming a FIFO, a device or a folder fails the check at once, naming why; it does not
// wait in open(2) for a writer or read a device as an ELF.
TEST(Fatbin, OnlyARegularFileIsRead) {
  char dir[] = "/tmp/gw-fatbin-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), std::string(dir)}) {
    auto rep = readFatbinFile(path);
    ASSERT_FALSE(rep.ok()) << path;
    EXPECT_EQ(rep.error(), path + ": not a regular file");
    auto checks = checkBinary(path, NvmlFacts{});
    ASSERT_EQ(checks.size(), 1u) << path;
    EXPECT_EQ(checks[0].verdict, Verdict::kFail);
    EXPECT_EQ(checks[0].found, "cannot read: " + path + ": not a regular file");
  }
  std::filesystem::remove_all(dir);
}

// A .nv_fatbin section with nothing in it is told apart from none: the program was built for the
// GPU but carries no code for any, and the check says which of the two it saw.
TEST(Fatbin, AnEmptyFatbinSectionIsNamedAsSuch) {
  const std::string path = writeTemp(elf(""));
  auto rep = readFatbinFile(path);
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_TRUE(rep->has_fatbin);
  EXPECT_TRUE(rep->entries.empty());
  auto checks = checkBinary(path, NvmlFacts{});
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].id, "app.fatbin");
  EXPECT_EQ(checks[0].verdict, Verdict::kWarn);
  EXPECT_EQ(checks[0].found, "fatbin section present but empty");
  std::filesystem::remove(path);
}

// ELF's extended numbering (more than 0xff00 sections): e_shnum 0 and e_shstrndx SHN_XINDEX, the
// real count in section 0's sh_size and the name table's index in its sh_link.
TEST(Fatbin, ExtendedSectionNumberingIsRead) {
  const std::string plain = elf(container({{2, 80, 200}, {1, 80, 100}}));
  auto want = parseFatbinElf(plain);
  ASSERT_TRUE(want.ok()) << want.error();
  std::string ext = plain;
  std::uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = (shoff << 8) | static_cast<unsigned char>(ext[0x28 + i]);
  put(ext, 0x3C, 0, 2);
  put(ext, 0x3E, 0xffff, 2);
  put(ext, shoff + 32, 4, 8);  // four sections
  put(ext, shoff + 40, 3, 4);  // .shstrtab is the last
  auto got = parseFatbinElf(ext);
  ASSERT_TRUE(got.ok()) << got.error();
  ASSERT_EQ(got->entries.size(), want->entries.size());
  for (std::size_t i = 0; i < got->entries.size(); ++i) EXPECT_EQ(got->entries[i].name(), want->entries[i].name());
  EXPECT_EQ(got->sections, std::vector<std::string>{".nv_fatbin"});
}

// Extended numbering lets a header claim any section count; more than a million is taken as
// damage before anything is read, while exactly a million is read (and found truncated here).
TEST(Fatbin, AMillionSectionsIsTheMost) {
  const std::string plain = elf(container({{2, 80, 200}}));
  std::uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = (shoff << 8) | static_cast<unsigned char>(plain[0x28 + i]);
  for (std::uint64_t count : {1000000ull, 1000001ull}) {
    std::string ext = plain;
    put(ext, 0x3C, 0, 2);
    put(ext, shoff + 32, count, 8);
    auto got = parseFatbinElf(ext);
    ASSERT_FALSE(got.ok()) << count;
    const std::string want =
        count == 1000000 ? "truncated ELF: section header table (1000000 entries" : "malformed ELF: 1000001 sections";
    EXPECT_NE(got.error().find(want), std::string::npos) << got.error();
  }
}

// An empty section name table may sit exactly at the end of the file: reading nothing there is not
// reading past the end, and the file is an ELF without names (so without a fatbin).
TEST(Fatbin, AnEmptyNameTableAtTheEndOfTheFileIsNoTruncation) {
  std::string b = elf("", "");
  std::uint64_t shoff = 0;
  for (int i = 7; i >= 0; --i) shoff = (shoff << 8) | static_cast<unsigned char>(b[0x28 + i]);
  const std::uint64_t end = b.size();
  put(b, shoff + 2 * 64 + 24, end, 8);  // .shstrtab, the last of the three sections
  put(b, shoff + 2 * 64 + 32, 0, 8);
  ASSERT_EQ(b.size(), end);
  auto rep = parseFatbinElf(b);
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_TRUE(rep->is_elf);
  EXPECT_FALSE(rep->has_fatbin);
  EXPECT_TRUE(rep->sections.empty());
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
  // At the edge: a payload that fills its container to the last byte is read; one byte more is not.
  std::string exact = container({{2, 80, 64}});
  auto fits = parseFatbinElf(elf(exact));
  ASSERT_TRUE(fits.ok()) << fits.error();
  ASSERT_EQ(fits->entries.size(), 1u);
  EXPECT_EQ(fits->entries[0].payload_size, 64u);
  put(exact, 16 + 8, 65, 8);
  auto over = parseFatbinElf(elf(exact));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().find("malformed fatbin entry at .nv_fatbin+0x10 (header 64, payload 65 bytes)"),
            std::string::npos)
      << over.error();
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

// ---- ELF files with any sections, for the CUDA runtime check ----
struct Sec {
  std::string name;
  std::uint32_t type;
  std::uint32_t link;  // index into the final section list ([0] is the null section)
  std::string bytes;
};

// ELF with sections: [0] null, then `secs` in order, then .shstrtab.
std::string elfWith(const std::vector<Sec>& secs) {
  std::string names(1, '\0');
  std::vector<std::size_t> name_at;
  for (const auto& s : secs) {
    name_at.push_back(names.size());
    names += s.name + '\0';
  }
  const std::size_t shstr_name = names.size();
  names += std::string(".shstrtab\0", 10);
  std::string b(64, '\0');
  b.replace(0, 7,
            "\x7f"
            "ELF\x02\x01\x01");
  put(b, 16, 3, 2);   // ET_DYN
  put(b, 18, 62, 2);  // x86-64
  put(b, 20, 1, 4);
  put(b, 52, 64, 2);
  std::vector<std::size_t> offs;
  for (const auto& s : secs) {
    offs.push_back(b.size());
    b += s.bytes;
    while (b.size() % 8) b += '\0';
  }
  const std::size_t str_off = b.size();
  b += names;
  while (b.size() % 8) b += '\0';
  const std::size_t shoff = b.size();
  b += std::string(64, '\0');  // [0] null
  for (std::size_t i = 0; i < secs.size(); ++i) {
    std::string h(64, '\0');
    put(h, 0, name_at[i], 4);
    put(h, 4, secs[i].type, 4);
    put(h, 24, offs[i], 8);
    put(h, 32, secs[i].bytes.size(), 8);
    put(h, 40, secs[i].link, 4);
    b += h;
  }
  std::string h(64, '\0');
  put(h, 0, shstr_name, 4);
  put(h, 4, 3, 4);
  put(h, 24, str_off, 8);
  put(h, 32, names.size(), 8);
  b += h;
  put(b, 0x28, shoff, 8);
  put(b, 0x3A, 64, 2);
  put(b, 0x3C, secs.size() + 2, 2);
  put(b, 0x3E, secs.size() + 1, 2);
  return b;
}

// .dynstr and .dynamic with DT_NEEDED for each library (sections 1 and 2 when placed first).
std::vector<Sec> dynamicNeeding(const std::vector<std::string>& libs) {
  std::string strs(1, '\0');
  std::string dyn;
  for (const auto& l : libs) {
    std::string e(16, '\0');
    put(e, 0, 1, 8);  // DT_NEEDED
    put(e, 8, strs.size(), 8);
    dyn += e;
    strs += l + '\0';
  }
  dyn += std::string(16, '\0');  // DT_NULL
  return {{".dynstr", 3, 0, strs}, {".dynamic", 6, 1, dyn}};
}

// A cubin whose toolkit note (owner "NVIDIA Corp", type 2000) holds the strings NVIDIA's linker
// writes there, as seen in nvcc 13.0's output: tool, version line, build, options.
// One ELF note: owner (with its NUL), type and the toolkit's strings as its descriptor.
std::string toolkitNote(const std::string& version_line, const std::string& owner = std::string("NVIDIA Corp\0", 12),
                        std::uint32_t type = 2000) {
  std::string desc(24, '\0');
  put(desc, 0, 2, 4);
  std::string strings =
      std::string("\0nvlink\0", 8) + version_line + '\0' + "Build cuda_x" + '\0' + "-arch sm_90" + '\0';
  desc += strings;
  std::string note(12, '\0');
  put(note, 0, owner.size(), 4);
  put(note, 4, desc.size(), 4);
  put(note, 8, type, 4);
  note += owner;
  while (note.size() % 4) note += '\0';
  note += desc;
  while (note.size() % 4) note += '\0';
  return note;
}

std::string cubinWithToolkitNote(const std::string& version_line) {
  return elfWith({{".note.nv.tkinfo", 7, 0, toolkitNote(version_line)}});
}

// A fatbin container with one entry whose payload is `payload`.
std::string containerOf(std::uint16_t kind, std::uint32_t arch, const std::string& payload, bool compressed = false) {
  std::string h(64, '\0');
  put(h, 0, kind, 2);
  put(h, 2, 0x0101, 2);
  put(h, 4, 64, 4);
  put(h, 8, payload.size(), 8);
  put(h, 24, 8, 2);
  put(h, 26, 1, 2);
  put(h, 28, arch, 4);
  put(h, 48, compressed ? 0x2011 : 0x11, 8);
  std::string body = h + payload;
  std::string c(16, '\0');
  put(c, 0, 0xBA55ED50u, 4);
  put(c, 4, 1, 2);
  put(c, 6, 16, 2);
  put(c, 8, body.size(), 8);
  return c + body;
}

NvmlFacts driverSupporting(int cuda, const std::string& driver) {
  NvmlFacts n;
  n.library_loaded = true;
  n.init_return = 0;
  n.driver_version = driver;
  n.cuda_driver_version = cuda;
  n.gpus = {{0, "NVIDIA H100 80GB HBM3", "00000000:18:00.0", 9, 0, true, false}};
  return n;
}

const Check& runtimeCheckOf(const std::vector<Check>& checks) {
  static const Check kNone{"none", Layer::kApplication, Verdict::kSkip, "", "", "", ""};
  for (const auto& c : checks)
    if (c.id == "app.cuda_runtime") return c;
  ADD_FAILURE() << "no app.cuda_runtime check";
  return kNone;
}

// Linked against libcudart.so.13 on a driver that supports CUDA 12.4: the known failure, with
// the driver that would do.
TEST(CudaRuntime, SharedRuntimeNewerMajorThanDriverFails) {
  auto secs = dynamicNeeding({"libstdc++.so.6", "libcudart.so.13", "libc.so.6"});
  secs.push_back({".nv_fatbin", 1, 0, container({{2, 90, 16}})});
  const std::string path = writeTemp(elfWith(secs));
  auto rep = readFatbinFile(path);
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_EQ(rep->needed, (std::vector<std::string>{"libstdc++.so.6", "libcudart.so.13", "libc.so.6"}));
  const auto need = cudaRuntimeNeed(*rep);
  EXPECT_EQ(need.how, RuntimeNeed::How::kShared);
  EXPECT_EQ(need.library, "libcudart.so.13");
  EXPECT_EQ(need.version, "13");

  auto checks = checkBinary(path, driverSupporting(12040, "550.54.15"));
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[1].verdict, Verdict::kPass);  // sm_90 on the H100: the architecture is fine
  const Check& c = runtimeCheckOf(checks);
  EXPECT_EQ(c.verdict, Verdict::kFail) << c.found;
  EXPECT_EQ(c.layer, Layer::kApplication);
  EXPECT_EQ(c.found,
            "needs the CUDA 13 runtime (libcudart.so.13); the driver supports CUDA up to 12.4 (driver 550.54.15)");
  EXPECT_NE(c.explain.find("CUDA driver version is insufficient for CUDA runtime version"), std::string::npos);
  EXPECT_NE(c.fix.find("supports CUDA 13.0 (driver >= 580.65.06)"), std::string::npos) << c.fix;
  EXPECT_NE(c.fix.find("for CUDA <= 12.4"), std::string::npos) << c.fix;
  EXPECT_NE(c.fix.find("cuda-compat-13-*"), std::string::npos) << c.fix;

  // The same binary on a driver of CUDA 13.0: passes.
  const Check ok = runtimeCheckOf(checkBinary(path, driverSupporting(13000, "580.65.06")));
  EXPECT_EQ(ok.verdict, Verdict::kPass) << ok.found;
  // libcudart.so.12 names every 12.x runtime: a 12.2 driver runs it (minor-version compatibility).
  auto secs12 = dynamicNeeding({"libcudart.so.12"});
  const std::string path12 = writeTemp(elfWith(secs12));
  const Check c12 = runtimeCheckOf(checkBinary(path12, driverSupporting(12020, "535.54.03")));
  EXPECT_EQ(c12.verdict, Verdict::kPass) << c12.found;
  EXPECT_EQ(c12.found,
            "needs the CUDA 12 runtime (libcudart.so.12); the driver supports CUDA up to 12.2 (driver 535.54.03)");
  // Driver's CUDA version unknown: skip, saying what it needs.
  const Check unknown = runtimeCheckOf(checkBinary(path12, NvmlFacts{}));
  EXPECT_EQ(unknown.verdict, Verdict::kSkip);
  EXPECT_NE(unknown.found.find("libcudart.so.12"), std::string::npos);
  std::filesystem::remove(path);
  std::filesystem::remove(path12);
}

// Before CUDA 11 the soname carried the minor and there was no minor-version compatibility.
TEST(CudaRuntime, PreElevenRuntimeNeedsItsMinor) {
  const std::string path = writeTemp(elfWith(dynamicNeeding({"libcudart.so.10.2"})));
  NvmlFacts n = driverSupporting(10010, "418.87.01");
  const Check c = runtimeCheckOf(checkBinary(path, n));
  EXPECT_EQ(c.verdict, Verdict::kFail) << c.found;
  EXPECT_NE(c.found.find("CUDA 10.2 runtime (libcudart.so.10.2)"), std::string::npos) << c.found;
  std::filesystem::remove(path);
}

// CUDA 11 is the first release named by its major alone: libcudart.so.11.0 serves every 11.x, so
// an 11.0 soname on a driver of CUDA 11.0 is not held to a minor it does not have.
TEST(CudaRuntime, ElevenIsTheFirstRuntimeNamedByItsMajor) {
  const std::string path = writeTemp(elfWith(dynamicNeeding({"libcudart.so.11.0"})));
  auto rep = readFatbinFile(path);
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_EQ(cudaRuntimeNeed(*rep).version, "11");
  const Check c = runtimeCheckOf(checkBinary(path, driverSupporting(11000, "450.36.06")));
  EXPECT_EQ(c.verdict, Verdict::kPass) << c.found;
  EXPECT_EQ(c.found,
            "needs the CUDA 11 runtime (libcudart.so.11.0); the driver supports CUDA up to 11.0 (driver 450.36.06)");
  std::filesystem::remove(path);
}

// From CUDA 11 on, a newer minor than the driver's runs (minor-version compatibility) and only
// warns: a static 11.8 runtime on a driver of CUDA 11.4 warns, where a 10.2 on a 10.1 fails.
TEST(CudaRuntime, ElevenIsTheFirstReleaseWithMinorVersionCompatibility) {
  const std::string line = "Cuda compilation tools, release 11.8, V11.8.89";
  auto secs = dynamicNeeding({"libc.so.6"});
  secs.push_back({".nv_fatbin", 1, 0, containerOf(2, 80, cubinWithToolkitNote(line))});
  const std::string path = writeTemp(elfWith(secs));
  const Check c = runtimeCheckOf(checkBinary(path, driverSupporting(11040, "470.42.01")));
  EXPECT_EQ(c.verdict, Verdict::kWarn) << c.found;
  EXPECT_NE(c.found.find("(same major)"), std::string::npos) << c.found;
  EXPECT_NE(c.fix.find("supports CUDA 11.8 (driver >= 520.61.05)"), std::string::npos) << c.fix;
  std::filesystem::remove(path);
}

// The ELF header is 64 bytes: a file of exactly that (no section table) is an ELF without a
// fatbin, one byte less is too short. Four bytes are enough to tell a file that is no ELF at all.
TEST(Fatbin, ElfHeaderSizeEdges) {
  std::string header(64, '\0');
  header.replace(0, 7,
                 "\x7f"
                 "ELF\x02\x01\x01");
  auto whole = parseFatbinElf(header);
  ASSERT_TRUE(whole.ok()) << whole.error();
  EXPECT_TRUE(whole->is_elf);
  EXPECT_FALSE(whole->has_fatbin);

  auto cut = parseFatbinElf(header.substr(0, 63));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().find("file too short for an ELF header (63 bytes)"), std::string::npos) << cut.error();

  auto four = parseFatbinElf("abcd");
  ASSERT_FALSE(four.ok());
  EXPECT_NE(four.error().find("not an ELF file"), std::string::npos) << four.error();
  auto three = parseFatbinElf("abc");
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.error().find("file too short for an ELF header (3 bytes)"), std::string::npos) << three.error();
}

// A .dynamic section that ends without its DT_NULL still has its last entry read to the end.
TEST(CudaRuntime, TheLastDynamicEntryIsReadWithoutATerminator) {
  std::string strs = std::string("\0libcudart.so.12\0", 17);
  std::string dyn(16, '\0');
  put(dyn, 0, 1, 8);  // DT_NEEDED
  put(dyn, 8, 1, 8);
  auto rep = parseFatbinElf(elfWith({{".dynstr", 3, 0, strs}, {".dynamic", 6, 1, dyn}}));
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_EQ(rep->needed, (std::vector<std::string>{"libcudart.so.12"}));
}

// No libcudart among its dependencies but GPU code inside: the runtime was linked statically
// (nvcc's default), and the toolkit note of its cubin says which.
TEST(CudaRuntime, StaticRuntimeVersionFromTheCubinNote) {
  const std::string line = "Cuda compilation tools, release 12.8, V12.8.93";
  auto secs = dynamicNeeding({"libc.so.6"});
  secs.push_back({".nv_fatbin", 1, 0, containerOf(2, 90, cubinWithToolkitNote(line))});
  const std::string path = writeTemp(elfWith(secs));
  auto rep = readFatbinFile(path);
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_EQ(rep->toolkit_line, line);
  EXPECT_EQ(rep->toolkit_release, "12.8");
  EXPECT_EQ(cudaRuntimeNeed(*rep).how, RuntimeNeed::How::kStatic);

  // Same major, newer minor than the driver: runs, with a warning.
  const Check warn = runtimeCheckOf(checkBinary(path, driverSupporting(12040, "550.54.15")));
  EXPECT_EQ(warn.verdict, Verdict::kWarn) << warn.found;
  EXPECT_NE(warn.found.find("CUDA 12.8 runtime, linked statically"), std::string::npos) << warn.found;
  EXPECT_NE(warn.found.find(line), std::string::npos) << warn.found;
  EXPECT_NE(warn.fix.find("(driver >= 570.26)"), std::string::npos) << warn.fix;
  // An older major: fails.
  const Check fail = runtimeCheckOf(checkBinary(path, driverSupporting(11080, "520.61.05")));
  EXPECT_EQ(fail.verdict, Verdict::kFail) << fail.found;
  EXPECT_NE(fail.explain.find("CUDA driver version is insufficient for CUDA runtime version"), std::string::npos);
  const Check pass = runtimeCheckOf(checkBinary(path, driverSupporting(12080, "570.86.10")));
  EXPECT_EQ(pass.verdict, Verdict::kPass) << pass.found;
  std::filesystem::remove(path);

  // A compressed cubin hides its note: the runtime is static, its version unknown - skipped.
  auto hidden = dynamicNeeding({"libc.so.6"});
  hidden.push_back({".nv_fatbin", 1, 0, containerOf(2, 90, cubinWithToolkitNote(line), true)});
  const std::string hpath = writeTemp(elfWith(hidden));
  const Check skip = runtimeCheckOf(checkBinary(hpath, driverSupporting(12040, "550.54.15")));
  EXPECT_EQ(skip.verdict, Verdict::kSkip) << skip.found;
  EXPECT_NE(skip.found.find("not readable"), std::string::npos) << skip.found;
  std::filesystem::remove(hpath);
}

// Only NVIDIA's toolkit note (owner "NVIDIA Corp", type 2000) names the toolkit: another owner's
// note of that type, or NVIDIA's of another type, is stepped over (owners of every padding).
TEST(CudaRuntime, OnlyNvidiasToolkitNoteIsRead) {
  const std::string line = "Cuda compilation tools, release 12.4, V12.4.131";
  const std::string notes =
      toolkitNote("Cuda compilation tools, release 9.0, V9.0.1", std::string("GNU\0", 4)) +
      toolkitNote("Cuda compilation tools, release 10.1, V10.1.1", std::string("Xy\0", 3)) +
      toolkitNote("Cuda compilation tools, release 11.2, V11.2.1", std::string("NVIDIA Corp\0", 12), 1) +
      toolkitNote(line, std::string("NVIDIA Corpor\0", 14), 7) + toolkitNote(line);
  auto secs = dynamicNeeding({"libc.so.6"});
  secs.push_back({".nv_fatbin", 1, 0, containerOf(2, 90, elfWith({{".note.nv.tkinfo", 7, 0, notes}}))});
  const std::string path = writeTemp(elfWith(secs));
  auto rep = readFatbinFile(path);
  ASSERT_TRUE(rep.ok()) << rep.error();
  EXPECT_EQ(rep->toolkit_line, line);
  EXPECT_EQ(rep->toolkit_release, "12.4");
  std::filesystem::remove(path);
}

// Neither libcudart nor GPU code: nothing to compare.
TEST(CudaRuntime, NoRuntimeIsSkipped) {
  const std::string path = writeTemp(elfWith(dynamicNeeding({"libc.so.6"})));
  auto checks = checkBinary(path, driverSupporting(12040, "550.54.15"));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].verdict, Verdict::kWarn);  // no fatbin
  EXPECT_EQ(runtimeCheckOf(checks).verdict, Verdict::kSkip);
  std::filesystem::remove(path);
  // GPU code driven through the driver API (libcuda.so.1 linked, no libcudart): no runtime, even
  // though its cubin names a toolkit newer than the driver.
  auto secs = dynamicNeeding({"libcuda.so.1", "libc.so.6"});
  secs.push_back(
      {".nv_fatbin", 1, 0, containerOf(2, 90, cubinWithToolkitNote("Cuda compilation tools, release 13.0, V13.0.88"))});
  const std::string dpath = writeTemp(elfWith(secs));
  const Check c = runtimeCheckOf(checkBinary(dpath, driverSupporting(12040, "550.54.15")));
  EXPECT_EQ(c.verdict, Verdict::kSkip) << c.found;
  EXPECT_EQ(c.found, "no CUDA runtime: it links libcuda.so.1 (the driver API) and not libcudart");
  std::filesystem::remove(dpath);
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
  nvml.cuda_driver_version = 99000;  // the runtime check passes whatever nvcc built it
  auto checks = checkBinary(path, nvml);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].verdict, Verdict::kPass) << checks[0].found;
  EXPECT_NE(checks[0].found.find("sm_80 SASS, sm_90 SASS, compute_90 PTX"), std::string::npos) << checks[0].found;
  EXPECT_EQ(checks[1].verdict, Verdict::kPass) << checks[1].found;
  EXPECT_NE(checks[1].found.find("GPU 2 (NVIDIA B200, 10.0): compute_90 PTX (JIT)"), std::string::npos)
      << checks[1].found;

  nvml.gpus = {{0, "Tesla T4", "00000000:17:00.0", 7, 5, true, false}};  // older than everything inside
  checks = checkBinary(path, nvml);
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[1].verdict, Verdict::kFail);
  EXPECT_NE(checks[1].fix.find("-gencode arch=compute_75,code=sm_75"), std::string::npos) << checks[1].fix;

  // nvcc links the runtime statically by default; the toolkit note of its cubins names the
  // release, which must be nvcc's own.
  const std::string release = GW_DOCTOR_NVCC_RELEASE;
  ASSERT_FALSE(release.empty());
  EXPECT_EQ(rep->toolkit_release, release) << rep->toolkit_line;
  for (const auto& lib : rep->needed) EXPECT_NE(lib.rfind("libcudart.so", 0), 0u) << lib;
  auto need = cudaRuntimeNeed(*rep);
  EXPECT_EQ(need.how, RuntimeNeed::How::kStatic);
  EXPECT_EQ(need.version, release);
  const int major = std::stoi(release);
  nvml = {};
  nvml.library_loaded = true;
  nvml.init_return = 0;
  nvml.cuda_driver_version = (major - 1) * 1000 + 40;  // the major before nvcc's
  checks = checkBinary(path, nvml);
  EXPECT_EQ(checks.back().id, "app.cuda_runtime");
  EXPECT_EQ(checks.back().verdict, Verdict::kFail) << checks.back().found;

  // Linked with -cudart shared: libcudart.so.<major> among its dependencies.
  auto shared = readFatbinFile(GW_DOCTOR_FATBIN_SAMPLE_SHARED);
  ASSERT_TRUE(shared.ok()) << shared.error();
  need = cudaRuntimeNeed(*shared);
  EXPECT_EQ(need.how, RuntimeNeed::How::kShared);
  EXPECT_EQ(need.library, "libcudart.so." + std::to_string(major));
  EXPECT_EQ(need.version, std::to_string(major));
  checks = checkBinary(GW_DOCTOR_FATBIN_SAMPLE_SHARED, nvml);
  EXPECT_EQ(checks.back().verdict, Verdict::kFail) << checks.back().found;
  nvml.cuda_driver_version = major * 1000;
  checks = checkBinary(GW_DOCTOR_FATBIN_SAMPLE_SHARED, nvml);
  EXPECT_EQ(checks.back().verdict, Verdict::kPass) << checks.back().found;

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
