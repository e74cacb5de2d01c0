// ELF (64-bit little-endian) section reader and NVIDIA fatbin container parser.
//
// Fatbin container, as embedded in .nv_fatbin (executables, shared libraries) and __nv_relfatbin
// (relocatable objects); all fields little-endian:
//   header (16 bytes): u32 magic 0xBA55ED50 (0x466243B1 in relocatable objects), u16 version,
//                      u16 header size, u64 size of the entries that follow the header
//   entry:  u16 kind (1 = PTX, 2 = ELF cubin), u16 ?, u32 entry header size, u64 payload size,
//           u32 ?, u32 ?, u16 code version minor, u16 major, u32 arch (sm number, 80 = sm_80), ...,
//           u64 flags at offset 48; the payload follows the entry header, the next entry follows it.
// A section holds one container per translation unit, each 8-byte aligned.
#include "doctor/fatbin.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "doctor/doctor_internal.h"
#include "platform/regular_file.h"

namespace gw::doctor {
namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr std::uint32_t kRelFatbinMagic = 0x466243B1u;

template <typename T>
T le(const std::string& buf, std::size_t off) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(buf[off + i])) << (8 * i));
  return v;
}

// Reads [offset, offset+len) of the input; false when that range is not inside it.
using ReadFn = std::function<bool(std::uint64_t offset, std::uint64_t len, std::string& out)>;

std::string hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

bool cubinToolkitLine(std::string_view cubin, std::string& line);
std::string releaseOf(const std::string& line);

Status parseContainers(const std::string& data, const std::string& section, FatbinReport& rep) {
  std::size_t pos = 0;
  while (pos + 16 <= data.size()) {
    const auto magic = le<std::uint32_t>(data, pos);
    if (magic != kFatbinMagic && magic != kRelFatbinMagic) {
      pos += 8 - (pos % 8);  // containers are 8-byte aligned; skip padding
      continue;
    }
    const auto hdr = le<std::uint16_t>(data, pos + 6);
    const auto fat = le<std::uint64_t>(data, pos + 8);
    if (hdr < 16 || fat > data.size() || pos + hdr + fat > data.size()) {
      return Status::Error("truncated fatbin container at " + section + "+" + hex(pos) + ": needs " +
                           std::to_string(hdr) + "+" + std::to_string(fat) + " bytes, section has " +
                           std::to_string(data.size() - pos));
    }
    std::size_t p = pos + hdr;
    const std::size_t end = pos + hdr + fat;
    while (p + 32 <= end) {
      const auto kind = le<std::uint16_t>(data, p);
      const auto ehdr = le<std::uint32_t>(data, p + 4);
      const auto payload = le<std::uint64_t>(data, p + 8);
      if (ehdr == 0 && kind == 0) break;
      if (ehdr < 32 || ehdr > end - p || payload > end - p - ehdr) {
        return Status::Error("malformed fatbin entry at " + section + "+" + hex(p) + " (header " +
                             std::to_string(ehdr) + ", payload " + std::to_string(payload) + " bytes)");
      }
      FatbinEntry e;
      e.raw_kind = kind;
      e.kind = kind == 1 ? FatbinEntry::Kind::kPtx : kind == 2 ? FatbinEntry::Kind::kCubin : FatbinEntry::Kind::kOther;
      e.arch = static_cast<int>(le<std::uint32_t>(data, p + 28));
      e.payload_size = payload;
      if (ehdr >= 56) e.compressed = (le<std::uint64_t>(data, p + 48) & 0xA000u) != 0;
      e.section = section;
      if (e.kind == FatbinEntry::Kind::kCubin && !e.compressed && rep.toolkit_line.empty()) {
        std::string line;
        if (cubinToolkitLine(std::string_view(data).substr(p + ehdr, payload), line)) {
          rep.toolkit_line = line;
          rep.toolkit_release = releaseOf(line);
        }
      }
      rep.entries.push_back(e);
      p += ehdr + payload;
    }
    pos = end;
    if (pos % 8) pos += 8 - pos % 8;
  }
  return Status::Ok();
}

struct Section {
  std::string name;
  std::uint32_t type = 0, link = 0;
  std::uint64_t offset = 0, size = 0;
};

struct ElfSections {
  bool has_headers = false;  // false: stripped to program headers only
  std::vector<Section> sections;
};

// The section table of a 64-bit little-endian ELF, with names. Errors say what is truncated.
Result<ElfSections> readSections(std::uint64_t file_size, const ReadFn& read) {
  ElfSections out;
  std::string eh;
  if (file_size < 64 || !read(0, 64, eh)) {
    if (file_size >= 4 && read(0, 4, eh) &&
        eh !=
            "\x7f"
            "ELF")
      return Status::Error("not an ELF file");
    return Status::Error("file too short for an ELF header (" + std::to_string(file_size) + " bytes)");
  }
  if (eh.compare(0, 4,
                 "\x7f"
                 "ELF") != 0)
    return Status::Error("not an ELF file");
  if (eh[4] != 2) return Status::Error("unsupported ELF: 32-bit (only 64-bit ELF is read)");
  if (eh[5] != 1) return Status::Error("unsupported ELF: big-endian");
  const auto shoff = le<std::uint64_t>(eh, 0x28);
  const auto shentsize = le<std::uint16_t>(eh, 0x3A);
  std::uint64_t shnum = le<std::uint16_t>(eh, 0x3C);
  std::uint64_t shstrndx = le<std::uint16_t>(eh, 0x3E);
  if (shoff == 0) return out;
  out.has_headers = true;
  if (shentsize < 64) return Status::Error("malformed ELF: section header entry size " + std::to_string(shentsize));

  std::string sh0;
  if (!read(shoff, shentsize, sh0))
    return Status::Error("truncated ELF: section headers at offset " + std::to_string(shoff) +
                         " are beyond the end of "
                         "the file (" +
                         std::to_string(file_size) + " bytes)");
  if (shnum == 0) shnum = le<std::uint64_t>(sh0, 32);             // extended numbering: count in sh_size
  if (shstrndx == 0xffff) shstrndx = le<std::uint32_t>(sh0, 40);  // and the index in sh_link
  if (shnum > 1000000) return Status::Error("malformed ELF: " + std::to_string(shnum) + " sections");
  std::string table;
  if (!read(shoff, shnum * shentsize, table))
    return Status::Error("truncated ELF: section header table (" + std::to_string(shnum) + " entries at offset " +
                         std::to_string(shoff) + ") extends past the end of the file (" + std::to_string(file_size) +
                         " bytes)");
  std::vector<std::uint32_t> name_offsets;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::size_t b = static_cast<std::size_t>(i * shentsize);
    Section sec;
    name_offsets.push_back(le<std::uint32_t>(table, b));
    sec.type = le<std::uint32_t>(table, b + 4);
    sec.offset = le<std::uint64_t>(table, b + 24);
    sec.size = le<std::uint64_t>(table, b + 32);
    sec.link = le<std::uint32_t>(table, b + 40);
    out.sections.push_back(sec);
  }
  if (shstrndx >= out.sections.size()) return Status::Error("malformed ELF: section name table index out of range");
  std::string names;
  const Section& strsec = out.sections[shstrndx];
  if (strsec.size > (64u << 20) || !read(strsec.offset, strsec.size, names))
    return Status::Error("truncated ELF: section name table extends past the end of the file");
  for (std::size_t i = 0; i < out.sections.size(); ++i)
    if (name_offsets[i] < names.size()) out.sections[i].name = names.c_str() + name_offsets[i];
  return out;
}

Result<std::string> sectionBytes(const Section& s, std::uint64_t file_size, const ReadFn& read) {
  std::string data;
  if (s.type == 8 /* SHT_NOBITS */ || s.size == 0) return data;
  if (!read(s.offset, s.size, data))
    return Status::Error("truncated ELF: section " + s.name + " (" + std::to_string(s.size) + " bytes at offset " +
                         std::to_string(s.offset) + ") extends past the end of the file (" + std::to_string(file_size) +
                         " bytes)");
  return data;
}

// DT_NEEDED names of the dynamic section (SHT_DYNAMIC), whose strings are in the section sh_link
// names. A file without one (static, relocatable object) needs nothing.
Status readNeeded(const ElfSections& elf, std::uint64_t file_size, const ReadFn& read, FatbinReport& rep) {
  for (const auto& s : elf.sections) {
    if (s.type != 6 /* SHT_DYNAMIC */ || s.size > (16u << 20)) continue;
    if (s.link >= elf.sections.size()) return Status::Error("malformed ELF: .dynamic names no string table");
    auto dyn = sectionBytes(s, file_size, read);
    if (!dyn) return dyn.status();
    auto strs = sectionBytes(elf.sections[s.link], file_size, read);
    if (!strs) return strs.status();
    for (std::size_t p = 0; p + 16 <= dyn->size(); p += 16) {
      const auto tag = le<std::uint64_t>(*dyn, p);
      if (tag == 0 /* DT_NULL */) break;
      const auto val = le<std::uint64_t>(*dyn, p + 8);
      if (tag == 1 /* DT_NEEDED */ && val < strs->size()) rep.needed.emplace_back(strs->c_str() + val);
    }
  }
  return Status::Ok();
}

// The toolkit note NVIDIA's linker writes into a cubin (an SHT_NOTE section, owner "NVIDIA Corp",
// type 2000): NUL-separated strings, one of them "Cuda compilation tools, release 13.0, V13.0.88".
// Sets `line` to that string; false when the cubin carries none.
bool cubinToolkitLine(std::string_view cubin, std::string& line) {
  const std::uint64_t size = cubin.size();
  auto read = [cubin](std::uint64_t off, std::uint64_t len, std::string& out) {
    if (off > cubin.size() || len > cubin.size() - off) return false;
    out.assign(cubin.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(len)));
    return true;
  };
  auto elf = readSections(size, read);
  if (!elf) return false;
  for (const auto& s : elf->sections) {
    if (s.type != 7 /* SHT_NOTE */) continue;
    auto notes = sectionBytes(s, size, read);
    if (!notes) continue;
    const std::string& n = *notes;
    std::size_t p = 0;
    while (p + 12 <= n.size()) {
      const auto namesz = le<std::uint32_t>(n, p);
      const auto descsz = le<std::uint32_t>(n, p + 4);
      const auto type = le<std::uint32_t>(n, p + 8);
      const std::size_t name_at = p + 12;
      const std::size_t desc_at = name_at + ((namesz + 3u) & ~std::size_t{3});
      if (namesz > n.size() || descsz > n.size() || desc_at + descsz > n.size()) break;
      const std::string owner = n.substr(name_at, namesz).c_str();
      if (owner == "NVIDIA Corp" && type == 2000) {
        const std::string desc = n.substr(desc_at, descsz);
        const std::size_t at = desc.find("Cuda compilation tools, release ");
        if (at != std::string::npos) {
          line = desc.c_str() + at;
          return true;
        }
      }
      p = desc_at + ((descsz + 3u) & ~std::size_t{3});
    }
  }
  return false;
}

// "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0"
std::string releaseOf(const std::string& line) {
  const std::string key = "release ";
  const auto at = line.find(key);
  if (at == std::string::npos) return "";
  std::string v;
  for (std::size_t i = at + key.size();
       i < line.size() && (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '.'); ++i)
    v += line[i];
  return detail::parseVersion(v).size() >= 2 ? v : "";
}

Result<FatbinReport> parseElf(std::uint64_t file_size, const ReadFn& read) {
  FatbinReport rep;
  auto elf = readSections(file_size, read);
  if (!elf) return elf.status();
  rep.is_elf = true;
  if (!elf->has_headers) return rep;
  if (Status st = readNeeded(*elf, file_size, read, rep); !st.ok()) return st;
  for (const auto& s : elf->sections) {
    const std::string& name = s.name;
    if (name != ".nv_fatbin" && name != "__nv_relfatbin") continue;
    rep.has_fatbin = true;
    rep.sections.push_back(name);
    auto data = sectionBytes(s, file_size, read);
    if (!data) return data.status();
    if (data->empty()) continue;
    Status st = parseContainers(*data, name, rep);
    if (!st.ok()) return st;
  }
  return rep;
}

std::string kindName(const FatbinEntry& e) {
  switch (e.kind) {
    case FatbinEntry::Kind::kCubin:
      return "SASS";
    case FatbinEntry::Kind::kPtx:
      return "PTX";
    case FatbinEntry::Kind::kOther:
      break;
  }
  return "kind " + std::to_string(e.raw_kind);
}

}  // namespace

std::string FatbinEntry::name() const { return (kind == Kind::kPtx ? "compute_" : "sm_") + std::to_string(arch); }

Result<FatbinReport> parseFatbinElf(std::string_view bytes) {
  return parseElf(bytes.size(), [bytes](std::uint64_t off, std::uint64_t len, std::string& out) {
    if (off > bytes.size() || len > bytes.size() - off) return false;
    out.assign(bytes.substr(static_cast<std::size_t>(off), static_cast<std::size_t>(len)));
    return true;
  });
}

Result<FatbinReport> readFatbinFile(const std::string& path) {
  platform::RegularFile file(path);  // --binary naming a FIFO must not hang, nor a device be read
  if (!file.ok()) return Status::Error(file.whyNot());
  const std::uint64_t size = file.size();
  auto r = parseElf(size, [fd = file.fd(), size](std::uint64_t off, std::uint64_t len, std::string& out) {
    if (off > size || len > size - off || len > (std::uint64_t{1} << 32)) return false;
    out.resize(static_cast<std::size_t>(len));
    std::size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(off + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;  // an error, or the file shrank under us
      got += static_cast<std::size_t>(n);
    }
    return true;
  });
  if (!r) return Status::Error(path + ": " + r.error());
  return r;
}

bool runsOn(const std::vector<FatbinEntry>& entries, int cc_major, int cc_minor, std::string* how) {
  const int cc = cc_major * 10 + cc_minor;
  for (const auto& e : entries) {
    if (e.kind == FatbinEntry::Kind::kCubin && e.arch / 10 == cc_major && e.arch % 10 <= cc_minor) {
      if (how) *how = e.name() + " SASS";
      return true;
    }
  }
  for (const auto& e : entries) {
    if (e.kind == FatbinEntry::Kind::kPtx && e.arch <= cc) {
      if (how) *how = e.name() + " PTX (JIT)";
      return true;
    }
  }
  return false;
}

RuntimeNeed cudaRuntimeNeed(const FatbinReport& rep) {
  RuntimeNeed need;
  const std::string prefix = "libcudart.so.";
  for (const auto& lib : rep.needed) {
    if (!detail::startsWith(lib, prefix)) continue;
    need.how = RuntimeNeed::How::kShared;
    need.library = lib;
    const std::string v = lib.substr(prefix.size());
    // CUDA 11 and later name the library by major only (libcudart.so.11.0 serves every 11.x,
    // libcudart.so.12 every 12.x): only the major is known. Before 11 the soname was major.minor.
    need.version = detail::majorOf(v) >= 11 ? std::to_string(detail::majorOf(v)) : v;
    return need;
  }
  // A static runtime loads libcuda with dlopen; a program that links libcuda itself drives the GPU
  // through the driver API and needs no runtime.
  const bool driver_api = std::find(rep.needed.begin(), rep.needed.end(), "libcuda.so.1") != rep.needed.end();
  if (!rep.entries.empty() && !driver_api) {
    need.how = RuntimeNeed::How::kStatic;
    need.version = rep.toolkit_release;
  }
  return need;
}

namespace {

// app.cuda_runtime: the runtime the binary needs against the highest CUDA version the driver
// supports. Since CUDA 11, minor-version compatibility lets a runtime run on any driver of its
// major release, so only a newer major fails; a newer minor warns (its PTX cannot be JIT-compiled,
// APIs of the newer minor return cudaErrorCallRequiresNewerDriver). Before 11 the minor counted.
Check runtimeCheck(const FatbinReport& rep, const NvmlFacts& nvml) {
  constexpr Layer kL = Layer::kApplication;
  const std::string title = "CUDA runtime it needs supported by the driver";
  const RuntimeNeed need = cudaRuntimeNeed(rep);
  std::string what;
  switch (need.how) {
    case RuntimeNeed::How::kNone:
      return {"app.cuda_runtime",
              kL,
              Verdict::kSkip,
              title,
              std::find(rep.needed.begin(), rep.needed.end(), "libcuda.so.1") != rep.needed.end()
                  ? "no CUDA runtime: it links libcuda.so.1 (the driver API) and not libcudart"
                  : "no CUDA runtime: libcudart is not among its dynamic dependencies and it carries no GPU code",
              "",
              ""};
    case RuntimeNeed::How::kShared:
      what = "CUDA " + need.version + " runtime (" + need.library + ")";
      break;
    case RuntimeNeed::How::kStatic:
      what = "CUDA " + (need.version.empty() ? std::string("?") : need.version) +
             " runtime, linked statically (libcudart is not among its dynamic dependencies" +
             (need.version.empty() ? std::string("; the version is not readable: its GPU code is compressed")
                                   : "; version from its GPU code: " + rep.toolkit_line) +
             ")";
      break;
  }
  if (need.version.empty()) return {"app.cuda_runtime", kL, Verdict::kSkip, title, "needs the " + what, "", ""};
  const std::string drv = detail::cudaVersionString(nvml.cuda_driver_version);
  if (drv.empty())
    return {"app.cuda_runtime",
            kL,
            Verdict::kSkip,
            title,
            "needs the " + what + "; the driver's CUDA version is unknown (NVML did not say)",
            "",
            ""};
  const int need_major = detail::majorOf(need.version);
  const bool minor_known = detail::parseVersion(need.version).size() >= 2;
  const bool too_new_major = need_major > detail::majorOf(drv);
  const bool no_minor_compat = need_major < 11;
  const bool too_new_minor =
      !too_new_major && minor_known && detail::compareVersions(detail::majorMinor(need.version), drv) > 0;
  const std::string found = "needs the " + what + "; the driver supports CUDA up to " + drv + " (driver " +
                            (nvml.driver_version.empty() ? std::string("?") : nvml.driver_version) + ")";
  if (!too_new_major && !too_new_minor) return {"app.cuda_runtime", kL, Verdict::kPass, title, found, "", ""};

  const std::string want = minor_known ? detail::majorMinor(need.version) : need.version + ".0";
  const std::string min_driver = detail::minimumDriverFor(want);
  std::string fix = "Upgrade the driver to one that supports CUDA " + want +
                    (min_driver.empty() ? std::string() : " (driver >= " + min_driver + ")") +
                    ",\nor use a build of the application for CUDA <= " + drv +
                    " (e.g. a wheel for that CUDA version, or rebuild with that toolkit)";
  if (too_new_major)
    fix += ",\nor, on a data-centre GPU, NVIDIA's forward-compatibility package (cuda-compat-" +
           std::to_string(need_major) + "-*) with its libcuda.so first on LD_LIBRARY_PATH";
  if (too_new_major || no_minor_compat)
    return {"app.cuda_runtime",
            kL,
            Verdict::kFail,
            title,
            found,
            fix,
            "It fails at its first CUDA call with \"CUDA driver version is insufficient for CUDA runtime "
            "version\" (cudaErrorInsufficientDriver): the runtime is newer than the driver."};
  return {"app.cuda_runtime",
          kL,
          Verdict::kWarn,
          title,
          found + " (same major)",
          fix,
          "Within a major release CUDA's minor-version compatibility lets it run on this driver, but PTX built by "
          "the newer toolkit cannot be JIT-compiled (\"the provided PTX was compiled with an unsupported "
          "toolchain\") and APIs of the newer minor release return cudaErrorCallRequiresNewerDriver."};
}

// app.fatbin and app.gpu_compat: which GPUs its code runs on.
void codeChecks(const std::string& path, const Result<FatbinReport>& rep, const NvmlFacts& nvml,
                std::vector<Check>& out) {
  constexpr Layer kL = Layer::kApplication;
  const std::string title = "GPU code in " + path;
  if (!rep->has_fatbin || rep->entries.empty()) {
    out.push_back(
        {"app.fatbin", kL, Verdict::kWarn, title,
         rep->has_fatbin ? "fatbin section present but empty" : "no fatbin (.nv_fatbin) section: no CUDA kernels",
         "If the program runs CUDA kernels, they live in a shared library it loads (libtorch_cuda.so, "
         "your own .so):\ncheck that library with --binary. `ldd " +
             path + "` lists them.",
         "Only binaries with embedded GPU code can be matched against the GPUs."});
    return;
  }
  // Distinct kinds/architectures, SASS first then PTX, by arch.
  std::set<std::pair<int, int>> seen;
  std::vector<FatbinEntry> distinct;
  for (const auto& e : rep->entries)
    if (seen.insert({static_cast<int>(e.kind), e.arch}).second) distinct.push_back(e);
  std::sort(distinct.begin(), distinct.end(), [](const FatbinEntry& a, const FatbinEntry& b) {
    return a.kind != b.kind ? static_cast<int>(a.kind) > static_cast<int>(b.kind) : a.arch < b.arch;
  });
  std::vector<std::string> names;
  for (const auto& e : distinct) names.push_back(e.name() + " " + kindName(e));
  out.push_back({"app.fatbin", kL, Verdict::kPass, title,
                 std::to_string(rep->entries.size()) + " entries: " + detail::join(names, ", "), "", ""});

  const std::string ctitle = "GPU code runs on every GPU";
  if (nvml.gpus.empty()) {
    out.push_back({"app.gpu_compat", kL, Verdict::kSkip, ctitle, "no GPU known (NVML reported none)", "", ""});
    return;
  }
  std::vector<std::string> ok, jit, bad;
  std::set<std::string> bad_cc;
  for (const auto& g : nvml.gpus) {
    std::string how;
    const std::string label = "GPU " + std::to_string(g.index) + " (" + g.name + ", " + std::to_string(g.cc_major) +
                              "." + std::to_string(g.cc_minor) + ")";
    if (runsOn(rep->entries, g.cc_major, g.cc_minor, &how)) {
      (detail::contains(how, "JIT") ? jit : ok).push_back(label + ": " + how);
    } else {
      bad.push_back(label);
      bad_cc.insert(std::to_string(g.cc_major) + std::to_string(g.cc_minor));
    }
  }
  if (!bad.empty()) {
    std::string fix = "Rebuild for these GPUs:";
    for (const auto& cc : bad_cc) fix += " -gencode arch=compute_" + cc + ",code=sm_" + cc;
    fix += "\nand embed PTX of the newest architecture for GPUs yet to come, e.g. -gencode arch=compute_" +
           *bad_cc.rbegin() + ",code=compute_" + *bad_cc.rbegin() +
           "\n(CMake: set CMAKE_CUDA_ARCHITECTURES; PyTorch extensions: TORCH_CUDA_ARCH_LIST)";
    out.push_back({"app.gpu_compat", kL, Verdict::kFail, ctitle,
                   "no code for " + detail::join(bad, ", ") + " (binary has " + detail::join(names, ", ") + ")", fix,
                   "\"no kernel image is available for execution on the device\" (cudaErrorNoKernelImageForDevice): "
                   "SASS sm_XY runs only on GPUs of the same major with minor >= Y, PTX needs capability >= its "
                   "arch."});
  } else {
    std::vector<std::string> all = ok;
    all.insert(all.end(), jit.begin(), jit.end());
    out.push_back({"app.gpu_compat", kL, Verdict::kPass, ctitle,
                   detail::join(all, "; ") +
                       (jit.empty() ? "" : " (PTX is JIT-compiled at first launch, cached in ~/.nv/ComputeCache)"),
                   "", ""});
  }
}

}  // namespace

std::vector<Check> checkBinary(const std::string& path, const NvmlFacts& nvml) {
  std::vector<Check> out;
  auto rep = readFatbinFile(path);
  if (!rep) {
    out.push_back({"app.fatbin", Layer::kApplication, Verdict::kFail, "GPU code in " + path,
                   "cannot read: " + rep.error(),
                   "Check the path and that the file is a complete 64-bit ELF executable or library.", ""});
    return out;
  }
  codeChecks(path, rep, nvml, out);
  out.push_back(runtimeCheck(*rep, nvml));
  return out;
}

}  // namespace gw::doctor
