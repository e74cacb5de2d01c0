// Reads the GPU code embedded in an ELF executable, shared library or object (the fatbin in
// .nv_fatbin / __nv_relfatbin) and says which GPUs can run it ("no kernel image is available for
// execution on the device"). The ELF and fatbin layouts are parsed here, without a library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doctor/doctor.h"

namespace gw::doctor {

struct FatbinEntry {
  enum class Kind { kPtx, kCubin, kOther };
  Kind kind = Kind::kOther;
  int arch = 0;  // sm number: 80 for sm_80 / compute_80
  std::uint16_t raw_kind = 0;
  std::uint64_t payload_size = 0;
  bool compressed = false;
  std::string section;  // ".nv_fatbin" or "__nv_relfatbin"

  std::string name() const;  // "sm_80" (SASS) or "compute_90" (PTX)
};

struct FatbinReport {
  bool is_elf = false;
  bool has_fatbin = false;            // a fatbin section was found
  std::vector<std::string> sections;  // fatbin sections found
  std::vector<FatbinEntry> entries;
  std::vector<std::string> needed;  // DT_NEEDED of its dynamic section: "libcudart.so.12", ...
  // The toolkit that built its GPU code, from the note NVIDIA's linker leaves in each cubin
  // ("Cuda compilation tools, release 13.0, V13.0.88" -> "13.0"); "" when no uncompressed cubin
  // carries one (compressed fatbins, older toolkits).
  std::string toolkit_line;
  std::string toolkit_release;
};

// The CUDA runtime a binary needs, from its dynamic dependencies or, linked statically, from the
// toolkit that built it. GPU code with neither libcudart nor libcuda.so.1 among its DT_NEEDED
// entries is taken for a static runtime (nvcc's default); with libcuda.so.1 it is the driver API.
struct RuntimeNeed {
  enum class How { kNone, kShared, kStatic };
  How how = How::kNone;
  std::string library;  // "libcudart.so.12" (kShared)
  std::string version;  // "12" from a soname of CUDA 11+ (every 12.x runtime shares it), "10.1", "13.0" (static)
};
RuntimeNeed cudaRuntimeNeed(const FatbinReport& rep);

// Parses bytes of a file (64-bit little-endian ELF). Error for malformed/truncated input;
// a valid ELF without GPU code gives has_fatbin=false.
Result<FatbinReport> parseFatbinElf(std::string_view bytes);
Result<FatbinReport> readFatbinFile(const std::string& path);

// Whether code for `entries` runs on a GPU of compute capability major.minor:
// SASS sm_XY runs on X.Z with Z >= Y (same major); PTX compute_XY is JIT-compiled for any GPU with
// capability >= X.Y. Sets `how` to e.g. "sm_80 SASS" or "compute_90 PTX (JIT)".
bool runsOn(const std::vector<FatbinEntry>& entries, int cc_major, int cc_minor, std::string* how);

// Application-layer checks for --binary PATH against the GPUs in `nvml`: the GPU code's
// architectures (app.fatbin, app.gpu_compat) and the CUDA runtime it needs against the highest
// CUDA version the driver supports (app.cuda_runtime).
std::vector<Check> checkBinary(const std::string& path, const NvmlFacts& nvml);

}  // namespace gw::doctor
