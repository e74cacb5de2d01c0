// A deliberately old, minimal NVML: only the un-versioned entry points of early drivers and a
// handful of getters. It proves the loader falls back from _v2/_v3 to plain names and that a
// symbol the driver lacks becomes "not supported" rather than a crash.
#include <cstdio>
#include <cstring>

#include "nvml/nvml_abi.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

struct nvmlDevice_st {
  int index;
};
namespace {
int g_init = 0;
nvmlDevice_st g_dev{0};
}  // namespace

EXPORT nvmlReturn_t nvmlInit() {
  ++g_init;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlShutdown() {
  if (g_init == 0) return NVML_ERROR_UNINITIALIZED;
  --g_init;
  return NVML_SUCCESS;
}
EXPORT const char* nvmlErrorString(nvmlReturn_t r) { return r == NVML_SUCCESS ? "Success" : "Unknown Error"; }
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned len) {
  std::snprintf(v, len, "%s", "418.87.01");
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned* n) {
  if (!g_init) return NVML_ERROR_UNINITIALIZED;
  *n = 1;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t* d) {
  if (i != 0) return NVML_ERROR_INVALID_ARGUMENT;
  *d = &g_dev;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t, char* name, unsigned len) {
  std::snprintf(name, len, "%s", "Tesla V100-SXM2-16GB");
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t, char* uuid, unsigned len) {
  std::snprintf(uuid, len, "%s", "GPU-00000000-1111-2222-3333-444444444444");
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t, nvmlPciInfo_t* p) {
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->busId, sizeof p->busId, "%s", "0000:06:00.0");
  p->bus = 6;
  p->pciDeviceId = 0x1DB110DE;
  return NVML_SUCCESS;
}
// A getter of a field that newer drivers also answer as a field id.
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t, unsigned long long* mj) {
  *mj = 123456789ULL;
  return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t* m) {
  m->total = 16ULL << 30;
  m->used = 1ULL << 30;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}
