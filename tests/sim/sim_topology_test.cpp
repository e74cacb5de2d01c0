// Topology (PCIe ancestry, affinity), NVLink and MIG.
#include <cstring>
#include <string>

#include "sim_harness.h"

namespace simtest {
namespace {

using Topology = SimTest;

nvmlGpuTopologyLevel_t Level(Api& nv, nvmlDevice_t a, nvmlDevice_t b) {
  nvmlGpuTopologyLevel_t l = 999;
  EXPECT_EQ(nv.nvmlDeviceGetTopologyCommonAncestor(a, b, &l), NVML_SUCCESS);
  return l;
}

bool Bit(const unsigned long* set, unsigned bit) { return (set[bit / 64] >> (bit % 64)) & 1ul; }

TEST_F(Topology, DgxH100PcieTreeAndAffinity) {
  Start(ShippedPath("dgx-h100"));
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(0)), NVML_TOPOLOGY_INTERNAL);
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(1)), NVML_TOPOLOGY_SINGLE);
  EXPECT_EQ(Level(nv, Gpu(6), Gpu(7)), NVML_TOPOLOGY_SINGLE);
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(2)), NVML_TOPOLOGY_NODE);
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(4)), NVML_TOPOLOGY_SYSTEM);
  EXPECT_EQ(Level(nv, Gpu(5), Gpu(3)), NVML_TOPOLOGY_SYSTEM);

  unsigned long cpus[4] = {};
  ASSERT_EQ(nv.nvmlDeviceGetCpuAffinity(Gpu(1), 4, cpus), NVML_SUCCESS);
  EXPECT_TRUE(Bit(cpus, 0));
  EXPECT_TRUE(Bit(cpus, 55));
  EXPECT_FALSE(Bit(cpus, 56));
  EXPECT_TRUE(Bit(cpus, 112));
  EXPECT_TRUE(Bit(cpus, 167));
  EXPECT_FALSE(Bit(cpus, 168));
  ASSERT_EQ(nv.nvmlDeviceGetCpuAffinity(Gpu(4), 4, cpus), NVML_SUCCESS);
  EXPECT_FALSE(Bit(cpus, 0));
  EXPECT_TRUE(Bit(cpus, 56));
  EXPECT_TRUE(Bit(cpus, 223));
  unsigned long nodes[1] = {};
  ASSERT_EQ(nv.nvmlDeviceGetMemoryAffinity(Gpu(4), 1, nodes, NVML_AFFINITY_SCOPE_NODE), NVML_SUCCESS);
  EXPECT_EQ(nodes[0], 2ul);

  nvmlDevice_t by_bus = nullptr;
  ASSERT_EQ(nv.nvmlDeviceGetHandleByPciBusId_v2("0000:9A:00.0", &by_bus), NVML_SUCCESS);
  EXPECT_EQ(by_bus, Gpu(4));
  ASSERT_EQ(nv.nvmlDeviceGetHandleByPciBusId_v2("00000000:db:00.0", &by_bus), NVML_SUCCESS);
  EXPECT_EQ(by_bus, Gpu(7));
  EXPECT_EQ(nv.nvmlDeviceGetHandleByPciBusId_v2("0000:99:00.0", &by_bus), NVML_ERROR_NOT_FOUND);
}

// Two PCI domains with the same bus numbers in each: only the domain tells GPU 0 from GPU 4.
// NVML writes the domain with 8 hex digits in busId and 4 in busIdLegacy (nvmlPciInfo_t,
// NVML_DEVICE_PCI_BUS_ID_FMT "%08X:%02X:%02X.0" and _LEGACY_FMT "%04X:%02X:%02X.0").
TEST_F(Topology, GpusInTwoPciDomains) {
  Start(ShippedPath("l40s-pci-domains"));
  unsigned n = 0;
  ASSERT_EQ(nv.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
  ASSERT_EQ(n, 8u);
  const char* bus_ids[8] = {"00000000:18:00.0", "00000000:1A:00.0", "00000000:3A:00.0", "00000000:3C:00.0",
                            "00000001:18:00.0", "00000001:1A:00.0", "00000001:3A:00.0", "00000001:3C:00.0"};
  for (unsigned i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    nvmlPciInfo_t pci{};
    ASSERT_EQ(nv.nvmlDeviceGetPciInfo_v3(Gpu(i), &pci), NVML_SUCCESS);
    EXPECT_STREQ(pci.busId, bus_ids[i]);
    EXPECT_STREQ(pci.busIdLegacy, bus_ids[i] + 4);  // "0001:18:00.0"
    EXPECT_EQ(pci.domain, i < 4 ? 0u : 1u);
    nvmlDevice_t by_bus = nullptr;
    ASSERT_EQ(nv.nvmlDeviceGetHandleByPciBusId_v2(bus_ids[i], &by_bus), NVML_SUCCESS);
    EXPECT_EQ(by_bus, Gpu(i));
    ASSERT_EQ(nv.nvmlDeviceGetHandleByPciBusId_v2(bus_ids[i] + 4, &by_bus), NVML_SUCCESS);
    EXPECT_EQ(by_bus, Gpu(i));
  }
  // Same bus, switch peers, other domain: one PCIe switch in each domain, nothing shared across.
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(1)), NVML_TOPOLOGY_SINGLE);
  EXPECT_EQ(Level(nv, Gpu(4), Gpu(5)), NVML_TOPOLOGY_SINGLE);
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(2)), NVML_TOPOLOGY_NODE);
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(4)), NVML_TOPOLOGY_SYSTEM);
  EXPECT_EQ(Level(nv, Gpu(3), Gpu(7)), NVML_TOPOLOGY_SYSTEM);
  nvmlDevice_t none = nullptr;
  EXPECT_EQ(nv.nvmlDeviceGetHandleByPciBusId_v2("00000002:18:00.0", &none), NVML_ERROR_NOT_FOUND);
}

TEST_F(Topology, PcieMixedLevels) {
  Start(ShippedPath("pcie-mixed"));
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(1)), NVML_TOPOLOGY_SINGLE);    // PIX: one switch
  EXPECT_EQ(Level(nv, Gpu(2), Gpu(3)), NVML_TOPOLOGY_MULTIPLE);  // PXB: two switches, one bridge
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(2)), NVML_TOPOLOGY_SYSTEM);    // SYS: across sockets
  EXPECT_EQ(Level(nv, Gpu(1), Gpu(3)), NVML_TOPOLOGY_SYSTEM);
  nvmlEnableState_t active;
  EXPECT_EQ(nv.nvmlDeviceGetNvLinkState(Gpu(0), 0, &active), NVML_ERROR_NOT_SUPPORTED);
  char name[96];
  ASSERT_EQ(nv.nvmlDeviceGetName(Gpu(3), name, sizeof name), NVML_SUCCESS);
  EXPECT_STREQ(name, "NVIDIA GeForce RTX 4090");
}

TEST_F(Topology, HostBridgeAndNodeLevels) {
  StartYaml(R"(
host: {numa_nodes: {0: "0-15"}}
count: 3
defaults: {profile: L40S}
gpus:
  - {host_bridge: 0}
  - {host_bridge: 0, pcie_switch: 4}
  - {host_bridge: 1}
)");
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(1)), NVML_TOPOLOGY_HOSTBRIDGE);
  EXPECT_EQ(Level(nv, Gpu(0), Gpu(2)), NVML_TOPOLOGY_NODE);
}

TEST_F(Topology, DgxNvlinkGoesToNvswitch) {
  Start(FreshShipped("dgx-h100"));
  for (unsigned link = 0; link < 18; ++link) {
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    ASSERT_EQ(nv.nvmlDeviceGetNvLinkState(Gpu(3), link, &active), NVML_SUCCESS);
    EXPECT_EQ(active, NVML_FEATURE_ENABLED);
    unsigned version = 0;
    ASSERT_EQ(nv.nvmlDeviceGetNvLinkVersion(Gpu(3), link, &version), NVML_SUCCESS);
    EXPECT_EQ(version, 4u);
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    ASSERT_EQ(nv.nvmlDeviceGetNvLinkRemoteDeviceType(Gpu(3), link, &type), NVML_SUCCESS);
    EXPECT_EQ(type, NVML_NVLINK_DEVICE_TYPE_SWITCH);
    nvmlPciInfo_t pci{};
    ASSERT_EQ(nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(Gpu(3), link, &pci), NVML_SUCCESS);
    EXPECT_EQ(pci.pciDeviceId, 0x22A310DEu);
  }
  nvmlEnableState_t active;
  EXPECT_EQ(nv.nvmlDeviceGetNvLinkState(Gpu(3), 18, &active), NVML_ERROR_INVALID_ARGUMENT);
  // Training traffic accumulates on the links.
  At(10);
  auto tx10 = Field(Gpu(0), NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX).value.ullVal;
  At(20);
  auto tx20 = Field(Gpu(0), NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX).value.ullVal;
  EXPECT_GT(tx20, tx10 + 1000000);
}

TEST_F(Topology, PeerNvlinkBridgeOnA100) {
  Start(ShippedPath("mig-a100"));
  nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkRemoteDeviceType(Gpu(0), 11, &type), NVML_SUCCESS);
  EXPECT_EQ(type, NVML_NVLINK_DEVICE_TYPE_GPU);
  nvmlPciInfo_t remote{}, gpu1{};
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkRemotePciInfo_v2(Gpu(0), 0, &remote), NVML_SUCCESS);
  ASSERT_EQ(nv.nvmlDeviceGetPciInfo_v3(Gpu(1), &gpu1), NVML_SUCCESS);
  EXPECT_STREQ(remote.busId, gpu1.busId);
  unsigned version = 0;
  ASSERT_EQ(nv.nvmlDeviceGetNvLinkVersion(Gpu(0), 0, &version), NVML_SUCCESS);
  EXPECT_EQ(version, 3u);
}

TEST_F(Topology, MigDevicesHaveTheirOwnIdentityMemoryAndProcesses) {
  Start(ShippedPath("mig-a100"));
  nvmlDevice_t gpu0 = Gpu(0);
  unsigned cur = 0, pend = 0, max = 0;
  ASSERT_EQ(nv.nvmlDeviceGetMigMode(gpu0, &cur, &pend), NVML_SUCCESS);
  EXPECT_EQ(cur, unsigned(NVML_DEVICE_MIG_ENABLE));
  ASSERT_EQ(nv.nvmlDeviceGetMaxMigDeviceCount(gpu0, &max), NVML_SUCCESS);
  EXPECT_EQ(max, 7u);

  const unsigned want_gi[] = {1, 5, 13, 14};
  const char* want_profile[] = {"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"};
  const unsigned want_sms[] = {42, 28, 14, 14};
  const unsigned long long want_mem[] = {40192, 19968, 9728, 9728};
  const unsigned long long want_used[] = {30720, 12288, 6144, 0};
  for (unsigned i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    nvmlDevice_t mig = nullptr;
    ASSERT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(gpu0, i, &mig), NVML_SUCCESS);
    unsigned is_mig = 0, gi = 0, ci = 9;
    ASSERT_EQ(nv.nvmlDeviceIsMigDeviceHandle(mig, &is_mig), NVML_SUCCESS);
    EXPECT_EQ(is_mig, 1u);
    nvmlDevice_t parent = nullptr;
    ASSERT_EQ(nv.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(mig, &parent), NVML_SUCCESS);
    EXPECT_EQ(parent, gpu0);
    ASSERT_EQ(nv.nvmlDeviceGetGpuInstanceId(mig, &gi), NVML_SUCCESS);
    EXPECT_EQ(gi, want_gi[i]);
    ASSERT_EQ(nv.nvmlDeviceGetComputeInstanceId(mig, &ci), NVML_SUCCESS);
    EXPECT_EQ(ci, 0u);
    char name[96], uuid[96];
    ASSERT_EQ(nv.nvmlDeviceGetName(mig, name, sizeof name), NVML_SUCCESS);
    EXPECT_EQ(std::string(name), std::string("NVIDIA A100-SXM4-80GB MIG ") + want_profile[i]);
    ASSERT_EQ(nv.nvmlDeviceGetUUID(mig, uuid, sizeof uuid), NVML_SUCCESS);
    EXPECT_EQ(std::string(uuid).substr(0, 4), "MIG-");
    nvmlDeviceAttributes_t attr{};
    ASSERT_EQ(nv.nvmlDeviceGetAttributes_v2(mig, &attr), NVML_SUCCESS);
    EXPECT_EQ(attr.multiprocessorCount, want_sms[i]);
    EXPECT_EQ(attr.memorySizeMB, want_mem[i]);
    nvmlMemory_v2_t mem{};
    mem.version = nvmlMemory_v2;
    ASSERT_EQ(nv.nvmlDeviceGetMemoryInfo_v2(mig, &mem), NVML_SUCCESS);
    EXPECT_EQ(mem.total, want_mem[i] << 20);
    EXPECT_EQ(mem.used, want_used[i] << 20);
    nvmlUtilization_t u;
    EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(mig, &u), NVML_ERROR_NOT_SUPPORTED);
    unsigned mw = 0;
    EXPECT_EQ(nv.nvmlDeviceGetPowerUsage(mig, &mw), NVML_ERROR_NOT_SUPPORTED);
  }
  nvmlDevice_t none = nullptr;
  EXPECT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(gpu0, 4, &none), NVML_ERROR_NOT_FOUND);
  nvmlDevice_t slice1 = nullptr;
  ASSERT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(gpu0, 1, &slice1), NVML_SUCCESS);
  unsigned n = 4;
  nvmlProcessInfo_t infos[4];
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(slice1, &n, infos), NVML_SUCCESS);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(infos[0].pid, 61002u);
  EXPECT_EQ(infos[0].gpuInstanceId, 5u);
  EXPECT_EQ(infos[0].computeInstanceId, 0u);
  n = 4;
  ASSERT_EQ(nv.nvmlDeviceGetComputeRunningProcesses_v3(gpu0, &n, infos), NVML_SUCCESS);
  EXPECT_EQ(n, 3u);
  // The parent in MIG mode has no whole-GPU utilisation, as on real hardware.
  nvmlUtilization_t u;
  EXPECT_EQ(nv.nvmlDeviceGetUtilizationRates(gpu0, &u), NVML_ERROR_NOT_SUPPORTED);
  // A MIG handle is found by its UUID too.
  char uuid[96];
  ASSERT_EQ(nv.nvmlDeviceGetUUID(slice1, uuid, sizeof uuid), NVML_SUCCESS);
  nvmlDevice_t by_uuid = nullptr;
  ASSERT_EQ(nv.nvmlDeviceGetHandleByUUID(uuid, &by_uuid), NVML_SUCCESS);
  EXPECT_EQ(by_uuid, slice1);

  nvmlDevice_t gpu1 = Gpu(1);
  ASSERT_EQ(nv.nvmlDeviceGetMigMode(gpu1, &cur, &pend), NVML_SUCCESS);
  EXPECT_EQ(cur, unsigned(NVML_DEVICE_MIG_DISABLE));
  EXPECT_EQ(nv.nvmlDeviceGetMigDeviceHandleByIndex(gpu1, 0, &none), NVML_ERROR_NOT_FOUND);
  unsigned is_mig = 1;
  ASSERT_EQ(nv.nvmlDeviceIsMigDeviceHandle(gpu1, &is_mig), NVML_SUCCESS);
  EXPECT_EQ(is_mig, 0u);
  EXPECT_GT(Util(gpu1).gpu, 80u);
}

}  // namespace
}  // namespace simtest
