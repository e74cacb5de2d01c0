// Extra entry points exported by libnvml-sim.so beside the NVML ABI. gpuwarden looks them up
// with dlsym and uses them only when present, so the real libnvidia-ml.so.1 never needs them.
//
// Environment read by the simulator in nvmlInit:
//   GPUWARDEN_SIM_SCENARIO  path of the scenario file (required; nvmlInit fails without it)
//   GPUWARDEN_SIM_START     simulated seconds already elapsed at nvmlInit (default 0), so a
//                           command can look at a scenario "after the fault at t=30s"
//   GPUWARDEN_SIM_SPEED     simulated seconds per wall-clock second (default 1)
//   GPUWARDEN_SIM_CLOCK     "manual": time moves only through gwSimSetTime (tests);
//                           "file:PATH": the simulated seconds written in PATH (a test steps
//                           another process's clock by rewriting it)
#pragma once

extern "C" {
// Why the last failing call failed, in words ("scenarios/x.yaml:12: gpus[0].profile: unknown
// profile 'H300'"), or "" when nothing failed. The string stays valid for the life of the process.
const char* gwSimLastError(void);
// Simulated seconds since the scenario started.
double gwSimGetTime(void);
// Sets the simulated time (seconds since start). Time never runs backwards: a smaller value is
// ignored. Works in any clock mode; in manual mode it is the only way time moves.
void gwSimSetTime(double seconds);
}
