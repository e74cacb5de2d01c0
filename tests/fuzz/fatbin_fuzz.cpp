// libFuzzer target for the doctor's ELF / fatbin reader (src/doctor/fatbin.h), the way
// `gpuwarden doctor --binary PATH` uses it. Invariants:
//  - parseFatbinElf either fails with a message that says what is wrong (one of the reader's own
//    phrases) or gives a report that is an ELF, whose entries lie in the sections it names, whose
//    payloads fit in the input and whose kinds follow their raw kind;
//  - readFatbinFile (seek and read, the path `doctor --binary` takes) answers the same as the
//    in-memory reader, its error prefixed with the path;
//  - runsOn agrees with the rule it documents (SASS sm_XY on X.Z with Z >= Y, PTX compute_XY on
//    anything >= X.Y) and names an entry that has that rule;
//  - checkBinary reports the file, and fails the GPU compatibility check exactly for the GPUs
//    runsOn says cannot run the code.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/fatbin.h"

namespace {

using gw::doctor::FatbinEntry;
using gw::doctor::FatbinReport;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fatbin_fuzz: invariant broken: %s\n", what);
  std::abort();
}
void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

bool knownError(const std::string& e) {
  for (const char* p : {"not an ELF file", "file too short for an ELF header", "unsupported ELF: ", "malformed ELF: ",
                        "truncated ELF: ", "truncated fatbin container at ", "malformed fatbin entry at "})
    if (e.rfind(p, 0) == 0) return true;
  return false;
}

bool sameEntries(const FatbinReport& a, const FatbinReport& b) {
  if (a.is_elf != b.is_elf || a.has_fatbin != b.has_fatbin || a.sections != b.sections ||
      a.entries.size() != b.entries.size())
    return false;
  for (std::size_t i = 0; i < a.entries.size(); ++i) {
    const auto &x = a.entries[i], &y = b.entries[i];
    if (x.kind != y.kind || x.arch != y.arch || x.raw_kind != y.raw_kind || x.payload_size != y.payload_size ||
        x.compressed != y.compressed || x.section != y.section)
      return false;
  }
  return true;
}

// The documented rule, written independently of runsOn.
bool expectRuns(const std::vector<FatbinEntry>& entries, int major, int minor) {
  for (const auto& e : entries) {
    if (e.kind == FatbinEntry::Kind::kCubin && e.arch / 10 == major && e.arch % 10 <= minor) return true;
    if (e.kind == FatbinEntry::Kind::kPtx && e.arch <= major * 10 + minor) return true;
  }
  return false;
}

void checkReport(const FatbinReport& rep, std::size_t size) {
  check(rep.is_elf, "a report of a file that is not an ELF");
  check(rep.has_fatbin == !rep.sections.empty(), "has_fatbin disagrees with the sections found");
  for (const auto& s : rep.sections) check(s == ".nv_fatbin" || s == "__nv_relfatbin", "an unexpected section name");
  for (const auto& e : rep.entries) {
    bool named = false;
    for (const auto& s : rep.sections) named = named || s == e.section;
    check(named, "an entry from a section the report does not name");
    check(e.payload_size <= size, "an entry's payload is larger than the input");
    const auto want = e.raw_kind == 1   ? FatbinEntry::Kind::kPtx
                      : e.raw_kind == 2 ? FatbinEntry::Kind::kCubin
                                        : FatbinEntry::Kind::kOther;
    check(e.kind == want, "kind does not follow raw_kind");
    check(e.name() == (e.kind == FatbinEntry::Kind::kPtx ? "compute_" : "sm_") + std::to_string(e.arch),
          "name() is not sm_/compute_ and the arch");
  }
  static const int kCaps[][2] = {{3, 5}, {7, 0}, {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}, {12, 0}};
  for (const auto& cc : kCaps) {
    std::string how;
    const bool runs = gw::doctor::runsOn(rep.entries, cc[0], cc[1], &how);
    check(runs == expectRuns(rep.entries, cc[0], cc[1]), "runsOn disagrees with the documented rule");
    if (runs) {
      check(how.ends_with(" SASS") || how.ends_with(" PTX (JIT)"), "runsOn's `how` names no kind");
      bool named = false;
      for (const auto& e : rep.entries) named = named || how.rfind(e.name() + " ", 0) == 0;
      check(named, "runsOn's `how` names no entry");
    }
  }
}

// The input as a file: a memfd, rewritten for every input, read through /proc/self/fd.
int g_fd = -1;
std::string g_path;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto mem = gw::doctor::parseFatbinElf(bytes);
  if (!mem) {
    check(knownError(mem.error()), "an error that does not say what is wrong");
  } else {
    checkReport(*mem, size);
  }

  if (g_fd < 0) {
    g_fd = memfd_create("fatbin_fuzz", 0);
    if (g_fd < 0) fail("memfd_create");
    g_path = "/proc/self/fd/" + std::to_string(g_fd);
  }
  if (ftruncate(g_fd, 0) != 0 || (size && pwrite(g_fd, data, size, 0) != static_cast<ssize_t>(size)))
    fail("cannot write the input to its memfd");
  auto file = gw::doctor::readFatbinFile(g_path);
  check(static_cast<bool>(file) == static_cast<bool>(mem), "the file reader and the memory reader disagree");
  if (!file) {
    check(file.error() == g_path + ": " + mem.error(), "the file reader's error differs from the memory reader's");
  } else {
    check(sameEntries(*file, *mem), "the file reader's report differs from the memory reader's");
  }

  gw::doctor::NvmlFacts facts;
  facts.library_loaded = true;
  facts.init_return = 0;
  for (int i : {0, 1}) {
    gw::doctor::NvmlFacts::Gpu g;
    g.index = i;
    g.name = i ? "NVIDIA H100" : "NVIDIA A100";
    g.cc_major = i ? 9 : 8;
    facts.gpus.push_back(g);
  }
  auto checks = gw::doctor::checkBinary(g_path, facts);
  check(!checks.empty() && checks[0].id == "app.fatbin", "checkBinary does not report the file first");
  for (const auto& c : checks) check(!c.title.empty() && !c.found.empty(), "a check without a title or finding");
  if (!mem) {
    check(checks.size() == 1 && checks[0].verdict == gw::doctor::Verdict::kFail, "an unreadable file is not a fail");
  } else {
    // A readable file: its code checks, then the runtime it needs, always last.
    check(checks.back().id == "app.cuda_runtime", "no CUDA runtime check last");
  }
  if (mem && !mem->entries.empty()) {
    check(checks.size() == 3 && checks[1].id == "app.gpu_compat", "no GPU compatibility check");
    const bool all = gw::doctor::runsOn(mem->entries, 8, 0, nullptr) && gw::doctor::runsOn(mem->entries, 9, 0, nullptr);
    check((checks[1].verdict == gw::doctor::Verdict::kFail) == !all, "the compatibility verdict disagrees with runsOn");
  }
  return 0;
}
