/* The floor for `smi --query-gpu`: a bare NVML client, in C, that loads the library the same way
 * (dlopen), reads the same ten fields of every GPU and prints one CSV line per GPU, with no
 * deadline threads, no field catalog and no command line. bench/smi_start.sh runs it beside
 * `gpuwarden smi --query-gpu` in one hyperfine run (issue 15 item 5: within 1.3x).
 * Declarations are written from NVML's ABI (the same facts as src/nvml/nvml_abi.h), by hand
 * because this program must stay free of our own libraries. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef void* Dev;
typedef struct {
  unsigned long long total, free, used;
} Memory;
typedef struct {
  unsigned int gpu, memory;
} Utilization;

#define LOAD(var, name)                                  \
  do {                                                   \
    *(void**)(&var) = dlsym(lib, name);                  \
    if (!var) {                                          \
      fprintf(stderr, "bare_client: no %s\n", name);     \
      return 3;                                          \
    }                                                    \
  } while (0)

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "libnvidia-ml.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "bare_client: %s\n", dlerror());
    return 3;
  }
  int (*init)(void), (*shutdown)(void), (*count)(unsigned*), (*handle)(unsigned, Dev*);
  int (*name)(Dev, char*, unsigned), (*uuid)(Dev, char*, unsigned), (*temp)(Dev, int, unsigned*);
  int (*mem)(Dev, Memory*), (*util)(Dev, Utilization*), (*power)(Dev, unsigned*);
  int (*clock)(Dev, int, unsigned*), (*pstate)(Dev, int*);
  LOAD(init, "nvmlInit_v2");
  LOAD(shutdown, "nvmlShutdown");
  LOAD(count, "nvmlDeviceGetCount_v2");
  LOAD(handle, "nvmlDeviceGetHandleByIndex_v2");
  LOAD(name, "nvmlDeviceGetName");
  LOAD(uuid, "nvmlDeviceGetUUID");
  LOAD(temp, "nvmlDeviceGetTemperature");
  LOAD(mem, "nvmlDeviceGetMemoryInfo");
  LOAD(util, "nvmlDeviceGetUtilizationRates");
  LOAD(power, "nvmlDeviceGetPowerUsage");
  LOAD(clock, "nvmlDeviceGetClockInfo");
  LOAD(pstate, "nvmlDeviceGetPerformanceState");
  if (init() != 0) return 3;
  unsigned n = 0;
  if (count(&n) != 0) return 3;
  for (unsigned i = 0; i < n; ++i) {
    Dev d;
    if (handle(i, &d) != 0) return 1;
    char nm[96] = "", id[96] = "";
    unsigned t = 0, mw = 0, sm = 0;
    int ps = 0;
    Memory m = {0, 0, 0};
    Utilization u = {0, 0};
    name(d, nm, sizeof nm);
    uuid(d, id, sizeof id);
    temp(d, 0 /* NVML_TEMPERATURE_GPU */, &t);
    mem(d, &m);
    util(d, &u);
    power(d, &mw);
    clock(d, 1 /* NVML_CLOCK_SM */, &sm);
    pstate(d, &ps);
    printf("%u, %s, %s, %u, %llu MiB, %llu MiB, %u %%, %.2f W, %u MHz, P%d\n", i, nm, id, t, m.total >> 20,
           m.used >> 20, u.gpu, mw / 1000.0, sm, ps);
  }
  shutdown();
  return 0;
}
