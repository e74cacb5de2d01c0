#include "knowledge/xid_catalog.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace gw::knowledge {
namespace {

using C = XidCategory;
using A = XidAction;
using S = XidSeverity;

struct Row {
  int code;
  std::string_view mnemonic;
  std::string_view meaning;
  C category;
  A action;
  A escalation;
  S severity;
  bool app;
  bool legacy;
  std::string_view vendorImmediate;
  std::string_view vendorInvestigatory;
  std::string_view note;
};

constexpr XidInfo make(const Row& r) {
  XidInfo x;
  x.code = r.code;
  x.mnemonic = r.mnemonic;
  x.meaning = r.meaning;
  x.category = r.category;
  x.action = r.action;
  x.escalation = r.escalation;
  x.severity = r.severity;
  x.applicationFault = r.app;
  x.legacy = r.legacy;
  x.vendorImmediate = r.vendorImmediate;
  x.vendorInvestigatory = r.vendorInvestigatory;
  x.note = r.note;
  x.known = true;
  return x;
}

constexpr bool kApp = true;
constexpr bool kLegacy = true;

// Sorted by code. Keep one line of meaning per code: an operator reads it at 3 a.m.
constexpr std::array kTable = {
    make({8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT",
          "The GPU stopped processing work on a channel (a timeout), usually a hung or runaway kernel.", C::kDriver,
          A::kRestartApp, A::kResetGpu, S::kWarning, false, false, "RESTART_APP", "CONTACT_SUPPORT",
          "Can also follow bus errors, system memory corruption or overheating; check the Xids and "
          "temperatures around it."}),
    make({11, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW",
          "Invalid or corrupted push buffer stream sent to the graphics engine.", C::kDriver, A::kRestartApp,
          A::kRestartApp, S::kWarning, false, false, "RESTART_APP", "CHECK_APP/CUDA", ""}),
    make({13, "ROBUST_CHANNEL_GR_EXCEPTION",
          "Graphics engine exception: the application's kernel faulted (out-of-bounds access, "
          "illegal instruction or register).",
          C::kApplication, A::kRestartApp, A::kResetGpu, S::kWarning, kApp, false, "RESTART_APP", "WORKFLOW_XID_13",
          "Debug the application with compute-sanitizer or cuda-gdb. Only the same Xid on the same "
          "GPU with different, known-good applications points at the hardware (run diagnostics)."}),
    make({14, "ROBUST_CHANNEL_FAKE_ERROR", "A fake Xid injected from user space for testing.", C::kDriver, A::kNone,
          A::kNone, S::kInfo, false, false, "IGNORE", "CONTACT_SUPPORT",
          "Expected only during fault-injection tests."}),
    make({25, "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY", "Invalid or illegal push buffer stream.", C::kDriver, A::kRestartApp,
          A::kRestartApp, S::kWarning, false, false, "RESTART_APP", "CHECK_APP/CUDA", ""}),
    make({31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
          "GPU memory page fault: the application accessed an address it may not (MMU fault).", C::kApplication,
          A::kRestartApp, A::kResetGpu, S::kWarning, kApp, false, "RESTART_APP", "WORKFLOW_XID_31",
          "Usually an application bug; repeated faults on the same GPU across different "
          "applications point at the hardware (run diagnostics)."}),
    make({32, "ROBUST_CHANNEL_PBDMA_ERROR",
          "Corrupted push buffer stream reported by the DMA engine that feeds the GPU over PCIe.", C::kBus,
          A::kRestartApp, A::kDrainAndReplace, S::kWarning, false, false, "RESTART_APP", "CHECK_APP/CUDA",
          "Mostly PCIe signal quality, not the application: check the PCIe link (width, speed, "
          "AER errors) and reseat the card if it repeats."}),
    make({37, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD",
          "Driver firmware error: the context-switch firmware got a method it does not implement.", C::kFirmware,
          A::kNone, A::kRestartApp, S::kWarning, false, false, "IGNORE", "CHECK_APP/CUDA", ""}),
    make({38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT",
          "Driver firmware error: the context-switch firmware watchdog timed out.", C::kFirmware, A::kNone,
          A::kResetGpu, S::kWarning, false, false, "IGNORE", "CONTACT_SUPPORT",
          "If it repeats, update the driver and reset the GPU."}),
    make({39, "ROBUST_CHANNEL_CE0_ERROR", "Copy engine 0 exception during a memory transfer.", C::kDriver,
          A::kRestartApp, A::kResetGpu, S::kWarning, false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({40, "ROBUST_CHANNEL_CE1_ERROR", "Copy engine 1 exception during a memory transfer.", C::kDriver,
          A::kRestartApp, A::kResetGpu, S::kWarning, false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({41, "ROBUST_CHANNEL_CE2_ERROR", "Copy engine 2 exception during a memory transfer.", C::kDriver,
          A::kRestartApp, A::kResetGpu, S::kWarning, false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
          "GPU stopped processing for one application: it hit a software-induced fault and was "
          "terminated; the GPU stays healthy.",
          C::kApplication, A::kNone, A::kNone, S::kWarning, kApp, false, "IGNORE", "CONTACT_SUPPORT",
          "Look at the application (pid and name in the log line)."}),
    make({44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "Graphics engine fault while switching between contexts.",
          C::kDriver, A::kNone, A::kResetGpu, S::kWarning, false, false, "IGNORE", "CONTACT_SUPPORT",
          "Reset the GPU if it repeats; update the driver."}),
    make({45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
          "Preemptive cleanup: the driver tore down an application's GPU work because it was killed "
          "(Ctrl-C, SIGKILL, GPU reset) or after an earlier error.",
          C::kApplication, A::kNone, A::kNone, S::kInfo, kApp, false, "WORKFLOW_XID_45",
          "Solo: RESTART_FM; with others: follow the other Xid",
          "Follow the Xid logged just before it (for example 48, 94 or 95); alone it means an "
          "application was stopped."}),
    make({46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing (a GPU-wide timeout).", C::kDriver,
          A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "RESET_GPU", "CONTACT_SUPPORT", ""}),
    make({48, "ROBUST_CHANNEL_GPU_ECC_DBE",
          "Double-bit (uncorrectable) ECC error in GPU memory; applications using it get an error.", C::kMemory,
          A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "WORKFLOW_XID_48", "WORKFLOW_XID_48",
          "A GPU reset or node reboot clears it and lets row remapping take effect. Check "
          "nvidia-smi -q -d ECC,ROW_REMAPPER; an SRAM error above its threshold or a remapping "
          "failure means RMA (run field diagnostics)."}),
    make({54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING",
          "Auxiliary power is not connected to the GPU board; it runs at reduced clocks.", C::kBus, A::kDrainAndReplace,
          A::kDrainAndReplace, S::kCritical, false, false, "CHECK_MECHANICALS", "CONTACT_SUPPORT",
          "Check the board's power cables and connectors (seed 001 §3.3)."}),
    make({56, "DISPLAY_CHANNEL_EXCEPTION", "Display engine error.", C::kDriver, A::kRestartApp, A::kResetGpu,
          S::kWarning, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Display path only; not expected on data-centre GPUs."}),
    make({57, "FB_LINK_TRAINING_FAILURE_ERROR",
          "Error programming the video memory interface (memory link training failed).", C::kMemory, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Older GPUs: driver error, memory corruption or a hardware fault of the memory "
          "interface."}),
    make({58, "FB_MEMORY_ERROR", "Unstable video memory interface detected.", C::kMemory, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Older GPUs: usually a hardware fault of the memory interface."}),
    make({61, "PMU_BREAKPOINT", "Internal micro-controller (PMU) breakpoint or warning.", C::kFirmware, A::kNone,
          A::kResetGpu, S::kWarning, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Reset the GPU if it is followed by Xid 62 or the GPU misbehaves."}),
    make({62, "PMU_HALT_ERROR", "Internal micro-controller (PMU) halted.", C::kFirmware, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, false, "RESET_GPU", "CONTACT_SUPPORT",
          "Older catalogs also name overheating as a cause: check temperatures around it."}),
    make({63, "INFOROM_DRAM_RETIREMENT_EVENT",
          "An ECC memory error was handled: a row was marked for remapping (page retirement on "
          "pre-Ampere GPUs); it takes effect at the next GPU reset.",
          C::kMemory, A::kNone, A::kResetGpu, S::kWarning, false, false, "IGNORE", "IGNORE",
          "Reset the GPU when convenient to activate the remap and watch the remap counts. The "
          "seed handbook calls it a GPU-to-memory link or power error; the vendor catalog "
          "describes row remapping."}),
    make({64, "INFOROM_DRAM_RETIREMENT_FAILURE",
          "Row remapping (or page retirement) failed, e.g. a memory bank ran out of spare rows.", C::kMemory,
          A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "RESET_GPU", "CONTACT_SUPPORT",
          "A remapping failure is an RMA condition: check nvidia-smi -q -d ROW_REMAPPER."}),
    make({65, "ROBUST_CHANNEL_NVENC1_ERROR", "Video processor (encoder) exception.", C::kHardware, A::kRestartApp,
          A::kResetGpu, S::kWarning, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Older GPUs: usually a hardware error."}),
    make({66, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", "Illegal register access by the driver.", C::kDriver,
          A::kNone, A::kRestartApp, S::kWarning, false, false, "IGNORE", "INVESTIGATE_SW", ""}),
    make({67, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", "Illegal access by the driver.", C::kDriver, A::kNone,
          A::kResetGpu, S::kWarning, false, false, "IGNORE", "CONTACT_SUPPORT", ""}),
    make({68, "ROBUST_CHANNEL_NVDEC0_ERROR",
          "Video decoder (NVDEC0) exception, usually caused by the stream the application fed it.", C::kApplication,
          A::kRestartApp, A::kResetGpu, S::kWarning, kApp, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({69, "ROBUST_CHANNEL_GR_CLASS_ERROR",
          "Graphics engine class error: an invalid method or class in a command stream.", C::kDriver, A::kRestartApp,
          A::kRestartApp, S::kWarning, false, false, "RESTART_APP", "CHECK_APP/CUDA", ""}),
    make({70, "ROBUST_CHANNEL_CE3_ERROR", "Copy engine 3 error.", C::kDriver, A::kRestartApp, A::kResetGpu, S::kWarning,
          false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({71, "ROBUST_CHANNEL_CE4_ERROR", "Copy engine 4 error.", C::kDriver, A::kRestartApp, A::kResetGpu, S::kWarning,
          false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({72, "ROBUST_CHANNEL_CE5_ERROR", "Copy engine 5 error.", C::kDriver, A::kRestartApp, A::kResetGpu, S::kWarning,
          false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({73, "ROBUST_CHANNEL_NVENC2_ERROR", "Video encoder (NVENC2) error.", C::kDriver, A::kRestartApp, A::kResetGpu,
          S::kWarning, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)", ""}),
    make({74, "NVLINK_ERROR", "NVLink error on a link from this GPU to another GPU or an NVSwitch.", C::kNvLink,
          A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT",
          "A GPU reset or node reboot clears it. It can be sympathetic: when a peer GPU fails, its "
          "partners report Xid 74. Check nvidia-smi nvlink -s / -e; repeated after resets: "
          "hardware."}),
    make({78, "VGPU_START_ERROR", "A vGPU failed to start.", C::kDriver, A::kNone, A::kNone, S::kWarning, false, false,
          "UPDATE_SWFW", "UPDATE_SWFW", "Update the host driver and firmware."}),
    make({79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
          "GPU has fallen off the bus: the driver can no longer reach the GPU over PCIe.", C::kBus, A::kRebootNode,
          A::kDrainAndReplace, S::kFatal, false, false, "RESTART_BM", "CONTACT_SUPPORT",
          "Usually the PCIe link or power delivery (riser, cable, PSU), sometimes the GPU itself. "
          "Collect logs (nvidia-bug-report.sh, kernel AER messages), check power cables, reboot; if "
          "it comes back, RMA. The seed handbook calls it an internal GPU error."}),
    make({80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "Corrupted data reached the GPU (push buffer CRC mismatch).", C::kBus,
          A::kRestartApp, A::kDrainAndReplace, S::kWarning, false, false, "RESTART_APP", "CHECK_APP/CUDA",
          "Points at PCIe or system memory corruption when it repeats."}),
    make({81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR", "VGA subsystem error.", C::kHardware, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Older GPUs: a hardware error."}),
    make({82, "ROBUST_CHANNEL_NVJPG0_ERROR", "JPEG engine (NVJPG0) error.", C::kDriver, A::kRestartApp, A::kResetGpu,
          S::kWarning, false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({83, "ROBUST_CHANNEL_NVDEC1_ERROR", "Video decoder (NVDEC1) error.", C::kDriver, A::kRestartApp, A::kResetGpu,
          S::kWarning, false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({86, "ROBUST_CHANNEL_OFA0_ERROR", "Optical flow accelerator (OFA) exception.", C::kDriver, A::kRestartApp,
          A::kResetGpu, S::kWarning, false, false, "RESTART_APP", "CONTACT_SUPPORT", ""}),
    make({92, "EXCESSIVE_SBE_INTERRUPTS",
          "High rate of single-bit (corrected) ECC errors; the memory may be degrading.", C::kMemory, A::kNone,
          A::kDrainAndReplace, S::kWarning, false, false, "IGNORE", "CONTACT_SUPPORT",
          "Corrected, no immediate impact: watch the ECC counters and remap counts; rising "
          "counts mean plan a replacement."}),
    make({93, "INFOROM_ERASE_LIMIT_EXCEEDED",
          "The driver could not update the InfoROM because its provisioned wear limit was reached.", C::kFirmware,
          A::kNone, A::kNone, S::kInfo, false, false, "IGNORE", "CONTACT_SUPPORT",
          "Usually intentional wear protection set with nvflash; clear it with nvflash if "
          "needed."}),
    make({94, "ROBUST_CHANNEL_CONTAINED_ERROR",
          "Contained memory (ECC) error: only the application that touched it is affected and "
          "must be restarted.",
          C::kMemory, A::kRestartApp, A::kResetGpu, S::kWarning, false, false, "RESTART_APP", "IGNORE (sympathetic)",
          "Other applications keep running; reset the GPU when convenient. Xid 45 follows it."}),
    make({95, "ROBUST_CHANNEL_UNCONTAINED_ERROR",
          "Uncontained memory (ECC) error: every application on the GPU is affected and the GPU "
          "must be reset.",
          C::kMemory, A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "RESET_GPU",
          "IGNORE (sympathetic)", "Xid 45 follows it. Repeated after resets: RMA."}),
    make({109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR",
          "Context switch timeout: the GPU could not switch away from a running context.", C::kApplication,
          A::kResetGpu, A::kDrainAndReplace, S::kWarning, kApp, false, "RESET_GPU", "CONTACT_SUPPORT",
          "Commonly an application kernel that cannot be preempted; the vendor's immediate action "
          "is a GPU reset. Alone it does not mark the GPU bad; repeated with different "
          "applications it does."}),
    make({110, "SEC_FAULT_ERROR", "Security fault: the GPU detected a fault in its security or boot chain.",
          C::kHardware, A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "RESET_GPU", "INVESTIGATE_SW",
          "Uncommon unless hardware failed: revert recent hardware changes and cold-reset the "
          "system; if it persists contact the vendor."}),
    make({119, "GSP_RPC_TIMEOUT", "GSP RPC timeout: the GPU System Processor did not answer the driver in time.",
          C::kFirmware, A::kResetGpu, A::kRebootNode, S::kCritical, false, false, "RESET_GPU", "INVESTIGATE_SW",
          "Reset the GPU or power-cycle the node if it persists; update the driver; follow the "
          "GPU debug guidelines if it recurs after a power cycle."}),
    make({120, "GSP_ERROR", "GSP error: code running on the GPU System Processor failed.", C::kFirmware, A::kResetGpu,
          A::kRebootNode, S::kCritical, false, false, "RESET_GPU", "INVESTIGATE_SW",
          "Reset the GPU or power-cycle the node if it persists; update the driver."}),
    make({121, "C2C_ERROR", "Corrected errors on the C2C NVLink connection between the GPU and a Grace CPU.",
          C::kNvLink, A::kNone, A::kResetGpu, S::kWarning, false, false, "IGNORE", "CONTACT_SUPPORT",
          "No operational impact; reset the GPU in a service window to retrain the link."}),
    make({122, "SPI_PMU_RPC_READ_FAIL", "SPI flash read through the PMU failed.", C::kFirmware, A::kNone, A::kResetGpu,
          S::kWarning, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Firmware could not read the board's flash (VBIOS/InfoROM); contact the vendor if it "
          "repeats."}),
    make({123, "SPI_PMU_RPC_WRITE_FAIL", "SPI flash write through the PMU failed.", C::kFirmware, A::kNone,
          A::kResetGpu, S::kWarning, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Firmware could not write the board's flash; contact the vendor if it "
          "repeats."}),
    make({124, "SPI_PMU_RPC_ERASE_FAIL", "SPI flash erase through the PMU failed.", C::kFirmware, A::kNone,
          A::kResetGpu, S::kWarning, false, kLegacy, "CONTACT_SUPPORT", "N/A (unused)",
          "Firmware could not erase the board's flash; contact the vendor if it "
          "repeats."}),
    make({136, "ALI_TRAINING_FAIL", "NVLink link training failed.", C::kNvLink, A::kResetGpu, A::kDrainAndReplace,
          S::kCritical, false, false, "RESET_GPU", "INVESTIGATE_LINK_SI",
          "Investigate link signal integrity (cables, seating)."}),
    make({137, "NVLINK_PRIV_ERR",
          "NVLink privilege error: an illegal peer-to-peer access over NVLink (remote MMU fault).", C::kApplication,
          A::kNone, A::kNone, S::kWarning, kApp, false, "IGNORE", "XID_137_FLOW",
          "Typically an application bug; debug it like Xid 31."}),
    make({140, "UNRECOVERABLE_ECC_ERROR_ESCAPE",
          "Unrecovered ECC error: uncorrectable memory errors escaped page offlining or row "
          "remapping.",
          C::kMemory, A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "RESET_GPU", "CONTACT_SUPPORT",
          "If it persists after a reset, contact the hardware vendor."}),
    make({141, "ROBUST_CHANNEL_FAST_PATH_ERROR", "CUDA fast path error.", C::kDriver, A::kNone, A::kRestartApp,
          S::kWarning, false, false, "IGNORE", "CONTACT_SUPPORT", ""}),
    make({143, "GPU_INIT_ERROR", "The GPU failed to initialize.", C::kHardware, A::kResetGpu, A::kDrainAndReplace,
          S::kCritical, false, false, "RESET_GPU", "CONTACT_SUPPORT", ""}),
    make({144, "NVLINK_SAW_ERROR", "NVLink5 error in the SAW unit (memory-side NVLink logic).", C::kNvLink,
          A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
          "Decode the line: Nonfatal entries are mostly ignored; Fatal ones need a GPU reset. "
          "Blackwell and later."}),
    make({145, "NVLINK_RLW_ERROR", "NVLink5 error in the RLW unit (remote link window).", C::kNvLink, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, false, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
          "Decode the line: Nonfatal entries follow Xid 154 (or restart the application); Fatal "
          "ones need a GPU reset."}),
    make({146, "NVLINK_TLW_ERROR", "NVLink5 error in the TLW unit (transaction layer).", C::kNvLink, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, false, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
          "Decode the line: Nonfatal entries are mostly ignored; Fatal ones need a GPU reset."}),
    make({147, "NVLINK_TREX_ERROR", "NVLink5 error in the TREX unit.", C::kNvLink, A::kNone, A::kResetGpu, S::kWarning,
          false, false, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", "Non-fatal; not expected in production."}),
    make({148, "NVLINK_NVLPW_CTRL_ERROR", "NVLink5 error in the NVLPW control unit.", C::kNvLink, A::kNone,
          A::kResetGpu, S::kWarning, false, false, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
          "Non-fatal software-reported condition."}),
    make({149, "NVLINK_NETIR_ERROR", "NVLink5 NETIR error: a link went down (link fatal).", C::kNvLink, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, false, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
          "The GPU enters drain-and-reset: drain jobs, then reset. The cause may be the peer end "
          "of the link (investigate the peer, cables and link signal integrity)."}),
    make({150, "NVLINK_MSE_ERROR", "NVLink5 error reported by the MSE management firmware.", C::kNvLink, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, false, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR", ""}),
    make({151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "Key rotation error in confidential computing mode.", C::kDriver,
          A::kRebootNode, A::kRebootNode, S::kWarning, false, false, "RESTART_VM", "CONTACT_SUPPORT",
          "Restart the virtual machine."}),
    make({154, "GPU_RECOVERY_ACTION_CHANGED",
          "The driver changed the GPU's required recovery action (none, drain P2P, drain and reset, "
          "GPU reset, node reboot) because of another Xid.",
          C::kDriver, A::kNone, A::kNone, S::kWarning, false, false, "XID_154", "N/A (informational)",
          "Act on the action named in the line (gpuwarden reads it); the Xid that caused it is "
          "logged alongside."}),
    make({155, "NVLINK_SW_DEFINED_ERROR", "NVLink link went down on purpose (software-defined, e.g. put to sleep).",
          C::kNvLink, A::kResetGpu, A::kResetGpu, S::kWarning, false, false, "RESET_GPU", "INVESTIGATE_SW_USER",
          "Investigate who took the link down if it was not expected."}),
    make({156, "RESOURCE_RETIREMENT_EVENT", "The GPU retired a faulty internal resource.", C::kHardware, A::kResetGpu,
          A::kResetGpu, S::kWarning, false, false, "RESET_GPU", "IGNORE",
          "Reset the GPU to make the retirement take effect."}),
    make({157, "RESOURCE_RETIREMENT_FAILURE", "The GPU could not retire a faulty resource: no spares left.",
          C::kHardware, A::kNone, A::kDrainAndReplace, S::kCritical, false, false, "IGNORE", "CONTACT_SUPPORT",
          "Workloads may run but the same Xid can return; plan a replacement."}),
    make({158, "GPU_FATAL_TIMEOUT", "GPU fatal timeout.", C::kHardware, A::kResetGpu, A::kDrainAndReplace, S::kCritical,
          false, false, "RESET_GPU", "CONTACT_SUPPORT", ""}),
    make({159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI non-data error on the C2C link between the GPU and the CPU.",
          C::kNvLink, A::kNone, A::kResetGpu, S::kWarning, false, false, "CHECK_UVM", "SYMPATHETIC_REPORT_SOLO",
          "Usually sympathetic to another error; check UVM (unified memory) activity."}),
    make({160, "CHANNEL_RETIREMENT_EVENT", "The driver retired a GPU channel.", C::kDriver, A::kNone, A::kNone,
          S::kInfo, false, false, "IGNORE", "INVESTIGATE_SW", ""}),
    make({161, "CHANNEL_RETIREMENT_FAILURE", "The driver failed to retire a GPU channel.", C::kDriver, A::kNone,
          A::kResetGpu, S::kWarning, false, false, "IGNORE", "INVESTIGATE_SW", ""}),
    make({163, "PSHC_DISENGAGED", "Power smoothing circuitry disengaged, typically after thermal events.", C::kThermal,
          A::kNone, A::kResetGpu, S::kWarning, false, false, "", "",
          "Resolve the thermal events to regain power smoothing; if disabled by a timeout, reload "
          "the driver or reset the GPU."}),
    make({164, "PSHC_LOW_LIFETIME", "Power smoothing circuitry is near the end of its lifetime.", C::kHardware,
          A::kNone, A::kDrainAndReplace, S::kWarning, false, false, "", "",
          "Expect to replace the GPU if power smoothing is needed."}),
    make({165, "PSHC_ZERO_LIFETIME", "Power smoothing circuitry lifetime exhausted; power swings will occur.",
          C::kHardware, A::kNone, A::kDrainAndReplace, S::kWarning, false, false, "", "",
          "Replace the GPU if power swings are not acceptable."}),
    make({167, "PCIE_FATAL_TIMEOUT", "Fatal PCIe timeout talking to the GPU.", C::kBus, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, false, "", "",
          "Check the PCIe link and the kernel's AER messages."}),
    make({168, "REDUCED_GPU_MEMORY_CAPACITY",
          "Memory errors were found in the write-protected region; usable memory is reduced.", C::kMemory, A::kResetGpu,
          A::kDrainAndReplace, S::kWarning, false, false, "", "",
          "Seen with ECC disabled: enable ECC so rows can be remapped."}),
    make({169, "SEC2_HALT_ERROR", "Internal micro-controller (SEC2) halted.", C::kFirmware, A::kResetGpu,
          A::kDrainAndReplace, S::kCritical, false, false, "", "", ""}),
    make({171, "UNCORRECTABLE_DRAM_ERROR", "Uncorrectable error in DRAM (details accompanying Xid 48).", C::kMemory,
          A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "", "", "Handle as Xid 48."}),
    make({172, "UNCORRECTABLE_SRAM_ERROR", "Uncorrectable error in on-chip SRAM (details accompanying Xid 48).",
          C::kMemory, A::kResetGpu, A::kDrainAndReplace, S::kCritical, false, false, "", "",
          "Handle as Xid 48; check the SRAM error threshold flag (RMA if exceeded)."}),
};

constexpr int kIndexSize = 256;

constexpr std::array<int16_t, kIndexSize> buildIndex() {
  std::array<int16_t, kIndexSize> index{};
  for (auto& slot : index) slot = -1;
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    index[static_cast<std::size_t>(kTable[i].code)] = static_cast<int16_t>(i);
  }
  return index;
}

constexpr std::array<int16_t, kIndexSize> kIndex = buildIndex();

constexpr bool tableIsSortedAndUnique() {
  for (std::size_t i = 1; i < kTable.size(); ++i) {
    if (kTable[i - 1].code >= kTable[i].code) return false;
  }
  return kTable.back().code < kIndexSize;
}
static_assert(tableIsSortedAndUnique(), "Xid table must be sorted by code, unique, and < 256");

std::string escapeCell(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

XidInfo lookupXid(int code) {
  if (code >= 0 && code < kIndexSize) {
    const int16_t slot = kIndex[static_cast<std::size_t>(code)];
    if (slot >= 0) return kTable[static_cast<std::size_t>(slot)];
  }
  XidInfo unknown;
  unknown.code = code;
  unknown.mnemonic = "UNKNOWN";
  unknown.meaning = "Xid not in gpuwarden's catalog; look it up in NVIDIA's Xid catalog for this driver.";
  unknown.category = XidCategory::kUnknown;
  unknown.action = XidAction::kNone;
  unknown.escalation = XidAction::kResetGpu;
  unknown.severity = XidSeverity::kWarning;
  unknown.note = "Unknown code: collect nvidia-bug-report.sh output and check the driver's docs.";
  unknown.known = false;
  return unknown;
}

bool isKnownXid(int code) { return code >= 0 && code < kIndexSize && kIndex[static_cast<std::size_t>(code)] >= 0; }

std::span<const XidInfo> xidCatalog() { return {kTable.data(), kTable.size()}; }

std::string_view toString(XidCategory category) {
  switch (category) {
    case XidCategory::kApplication:
      return "application";
    case XidCategory::kDriver:
      return "driver";
    case XidCategory::kMemory:
      return "memory";
    case XidCategory::kNvLink:
      return "nvlink";
    case XidCategory::kBus:
      return "pcie-power";
    case XidCategory::kThermal:
      return "thermal";
    case XidCategory::kFirmware:
      return "firmware";
    case XidCategory::kHardware:
      return "hardware";
    case XidCategory::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view toString(XidAction action) {
  switch (action) {
    case XidAction::kNone:
      return "none";
    case XidAction::kRestartApp:
      return "restart-app";
    case XidAction::kResetGpu:
      return "reset-gpu";
    case XidAction::kRebootNode:
      return "reboot-node";
    case XidAction::kDrainAndReplace:
      return "drain-and-replace";
  }
  return "none";
}

std::string_view toString(XidSeverity severity) {
  switch (severity) {
    case XidSeverity::kInfo:
      return "info";
    case XidSeverity::kWarning:
      return "warning";
    case XidSeverity::kCritical:
      return "critical";
    case XidSeverity::kFatal:
      return "fatal";
  }
  return "warning";
}

std::string_view describe(XidAction action) {
  switch (action) {
    case XidAction::kNone:
      return "nothing to do now";
    case XidAction::kRestartApp:
      return "restart the affected application";
    case XidAction::kResetGpu:
      return "stop the GPU's processes and reset the GPU (nvidia-smi -r)";
    case XidAction::kRebootNode:
      return "drain the node and reboot it";
    case XidAction::kDrainAndReplace:
      return "drain the node and repair or replace the part (RMA)";
  }
  return "nothing to do now";
}

XidAction actionForRecoveryCode(int recoveryCode) {
  switch (recoveryCode) {
    case 0:
      return XidAction::kNone;
    case 1:
      return XidAction::kResetGpu;
    case 2:
      return XidAction::kRebootNode;
    case 3:
      return XidAction::kResetGpu;  // drain peer-to-peer traffic, then the GPU is usable
    case 4:
      return XidAction::kResetGpu;  // drain, then reset
    default:
      return XidAction::kResetGpu;
  }
}

std::string_view headline(const XidInfo& info) {
  if (!info.known) return {};
  std::string_view m = info.meaning;
  // A clause ends at a colon, a semicolon or a full stop; an example ("e.g.") ends it before its
  // own abbreviation dot could be taken for one.
  std::size_t end = m.size();
  for (std::string_view stop : {": ", "; ", ". ", ", e.g.", " (e.g."}) end = std::min(end, m.find(stop));
  m = m.substr(0, end);
  if (!m.empty() && m.back() == '.') m.remove_suffix(1);
  return m;
}

std::string xidSummaryLine(int code) {
  const XidInfo x = lookupXid(code);
  std::string s = "Xid " + std::to_string(code);
  if (!x.known) return s + ": not in gpuwarden's Xid catalog.";
  s += " (";
  s += x.mnemonic;
  s += "): ";
  s += x.meaning;
  s += " Action: ";
  s += describe(x.action);
  if (x.escalation != x.action && x.escalation != XidAction::kNone) {
    s += "; if it recurs: ";
    s += describe(x.escalation);
  }
  s += ".";
  return s;
}

std::string renderXidCatalogMarkdown() {
  std::string md;
  md += "# Xid catalog\n\n";
  md +=
      "<!-- Generated from src/knowledge/xid_catalog.cpp by renderXidCatalogMarkdown(); do not edit "
      "by hand.\n     Regenerate: GW_UPDATE_DOCS=1 ctest -R DocsInSync -->\n\n";
  md +=
      "An Xid is an error report the NVIDIA kernel driver writes to the kernel log "
      "(`dmesg | grep -i xid`):\n\n";
  md +=
      "```\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the "
      "bus.\n```\n\n";
  md +=
      "gpuwarden explains each one with this table (requirement R26). Meanings and actions "
      "follow NVIDIA's Xid catalog: **action** is the vendor's immediate action, **if it "
      "recurs** its investigatory action, both mapped onto gpuwarden's scale:\n\n";
  for (auto a : {XidAction::kNone, XidAction::kRestartApp, XidAction::kResetGpu, XidAction::kRebootNode,
                 XidAction::kDrainAndReplace}) {
    md += "- `";
    md += toString(a);
    md += "`: ";
    md += describe(a);
    md += "\n";
  }
  md +=
      "\nCategories: application, driver, memory, nvlink, pcie-power (PCIe bus and power "
      "delivery), thermal, firmware (GSP, PMU, SEC2, InfoROM), hardware.\n\n";
  md +=
      "**App fault = yes** marks Xids caused by the application (13, 31, 43, 45, 68, 109, "
      "137): on its own such an Xid never marks a GPU bad; only a pattern does (the same Xid "
      "on the same GPU with different, known-good applications).\n\n";
  md +=
      "**Legacy** codes are listed as \"Unused\" on Ampere and newer GPUs in the current vendor "
      "catalog; their meaning comes from the catalog for older GPUs.\n\n";
  md +=
      "Xid 154 carries the driver's required recovery action in its text (\"GPU recovery action "
      "changed from 0x0 (None) to 0x2 (Node Reboot Required)\"); gpuwarden reads that action "
      "from the line rather than from this table, and the agent samples the same action from NVML "
      "(field 230, `recovery_action`): the `recovery_action` health rule holds the GPU unfit until "
      "the reset or reboot is done, even when the Xid line was never seen.\n\n";
  md += "## Where the seed handbook differs\n\n";
  md +=
      "- Seed 001 §5.1 calls Xid 79 \"an internal GPU error, usually hardware\". The vendor "
      "catalog: the GPU *fell off the bus*, the driver can no longer reach it over PCIe; the "
      "cause is most often the PCIe link or power delivery, sometimes the GPU.\n";
  md +=
      "- Seed 001 §5.1 calls Xid 63 \"a link error between the GPU and its memory, possibly "
      "insufficient power\". The vendor catalog: Xid 63 records a row-remapping (page "
      "retirement on older GPUs) event after an ECC error, handled by the GPU; Xid 64 "
      "(remapping *failed*) is the one that calls for a replacement.\n";
  md +=
      "- The seed's row \"Xid 79 or Xid 63 → collect logs and RMA\" is therefore split, each "
      "code with its own action (from the table below):\n";
  for (int code : {79, 63, 64}) {
    md += "  - ";
    md += xidSummaryLine(code);
    md += "\n";
  }
  md += "\n";
  md += "## Table\n\n";
  md +=
      "| Xid | Mnemonic | Meaning | Category | Severity | Action | If it recurs | App fault | "
      "Vendor buckets | Notes |\n";
  md += "|---:|---|---|---|---|---|---|---|---|---|\n";
  for (const XidInfo& x : kTable) {
    md += "| ";
    md += std::to_string(x.code);
    md += " | `";
    md += x.mnemonic;
    md += "` | ";
    md += escapeCell(x.meaning);
    md += " | ";
    md += toString(x.category);
    md += " | ";
    md += toString(x.severity);
    md += " | ";
    md += toString(x.action);
    md += " | ";
    md += toString(x.escalation);
    md += " | ";
    md += x.applicationFault ? "yes" : "no";
    md += " | ";
    if (x.vendorImmediate.empty()) {
      md += "n/a";
    } else {
      md += escapeCell(x.vendorImmediate);
      md += " / ";
      md += escapeCell(x.vendorInvestigatory);
    }
    md += " | ";
    if (x.legacy) md += x.note.empty() ? "Legacy." : "Legacy. ";
    md += escapeCell(x.note);
    md += " |\n";
  }
  md +=
      "\nCodes not in this table are reported as \"unknown Xid\" with the code, never "
      "dropped.\n";
  return md;
}

}  // namespace gw::knowledge
