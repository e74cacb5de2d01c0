// libFuzzer target for the kernel-log parser: any input must parse to an event, "not an event" or
// a parse error, without crashing, and events must satisfy the parser's invariants.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "events/kmsg_parser.h"

namespace {

bool validBusId(const std::string& id) {
  // "00000000:3B:00.0" or empty (a "fallen off the bus" line without an address).
  if (id.empty()) return true;
  if (id.size() != 16 || id[8] != ':' || id[11] != ':' || id[14] != '.') return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (i == 8 || i == 11 || i == 14) continue;
    const char c = id[i];
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto result = gw::events::parseKernelLine(line);
  if (!result.ok()) {
    if (result.error().empty()) __builtin_trap();
    return 0;
  }
  if (!result->has_value()) return 0;
  const gw::events::KernelEvent& ev = **result;
  if (!validBusId(ev.pciBusId)) __builtin_trap();
  if (ev.raw.size() > size) __builtin_trap();
  if (ev.code < 0) __builtin_trap();
  if (ev.inferred && ev.code != 79) __builtin_trap();
  if (ev.kind == gw::events::KernelEventKind::kGpuUuid && ev.uuid.rfind("GPU-", 0) != 0) {
    __builtin_trap();
  }
  // Normalising a normalised id is the identity.
  if (!ev.pciBusId.empty()) {
    auto again = gw::events::normalizePciBusId(ev.pciBusId);
    if (!again || *again != ev.pciBusId) __builtin_trap();
  }
  return 0;
}
