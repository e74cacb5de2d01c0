// The doctor on fixture trees where the driver's numbering and NVML's differ (PCI domains).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "doctor/doctor.h"
#include "fixture.h"

namespace gw::doctor {
namespace {

using testing::findCheck;
using testing::Machine;

#define EXPECT_HAS(haystack, needle)                                                                                \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "expected to find [" << (needle) << "] in:\n" \
                                                                   << (haystack)

// sysfs names a PCI domain with at least 4 hex digits, NVML with 8: domain 1 is "0001:" and
// "00000001:", and a domain past 0xFFFF (Intel VMD) keeps all its digits.
TEST(PciDomains, GpusOfOtherDomainsAreToldApart) {
  auto m = Machine::healthy();
  m->pciGpu("0001:3b:00.0");
  m->pciGpu("10000:3b:00.0");
  m->fx.write("/dev/nvidia2", "");
  m->fx.write("/dev/nvidia3", "");
  m->nvml.gpus.push_back({2, "NVIDIA A100-SXM4-80GB", "00000001:3B:00.0", 8, 0, true, false});
  m->nvml.gpus.push_back({3, "NVIDIA A100-SXM4-80GB", "00010000:3B:00.0", 8, 0, true, false});
  auto checks = m->run();
  const Check* c = findCheck(checks, "hw.pci_devices");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(verdictName(c->verdict), verdictName(Verdict::kPass)) << c->found;

  // NVML lost the domain-1 GPU: that one is missing, not its domain-0 namesake on bus 3b.
  m->nvml.gpus.erase(m->nvml.gpus.begin() + 2);
  checks = m->run();
  c = findCheck(checks, "hw.pci_devices");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(verdictName(c->verdict), verdictName(Verdict::kFail)) << c->found;
  EXPECT_HAS(c->found, "(missing: 0001:3b:00.0)");
}

}  // namespace
}  // namespace gw::doctor
