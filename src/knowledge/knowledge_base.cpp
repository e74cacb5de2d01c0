#include "knowledge/knowledge_base.h"

#include <algorithm>
#include <string>

namespace gw::knowledge {
namespace {

std::vector<KbEntry> buildEntries() {
  std::vector<KbEntry> v;

  v.push_back(
      KbEntry{.id = "no-devices",
              .symptom = "nvidia-smi says \"No devices were found\"",
              .symptomZh = "nvidia-smi报No devices were found",
              .causes = {"The nvidia kernel module is not loaded",
                         "The module was built for another kernel (kernel upgraded, DKMS did not rebuild)",
                         "nouveau holds the device", "The GPU fell off the bus or is not enumerated on PCIe"},
              .checks = {"lsmod | grep nvidia", "modprobe nvidia; dmesg | grep -i -e nvrm -e nvidia",
                         "uname -r against the kernel the driver was built for (dkms status)", "lsmod | grep nouveau",
                         "lspci -nn | grep -i nvidia"},
              .actions = {"modprobe nvidia", "If it fails, rebuild or reinstall the driver for the running kernel",
                          "Blacklist nouveau and rebuild the initramfs",
                          "If lspci does not list the GPU: reseat it / check power (hardware)"},
              .keywords = {"no devices were found", "no devices found", "no nvidia gpu found", "nvidia-smi has failed",
                           "couldn't communicate with the nvidia driver", "nouveau", "modprobe", "驱动未加载",
                           "内核模块", "找不到显卡"},
              .xids = {79},
              .requirement = "R33",
              .source = "seed 001 §5.1, §2.1",
              .autoDetectable = true,
              .detection = "NVML reports no devices or fails to initialise while lspci lists NVIDIA "
                           "devices; the doctor's driver checks name the layer"});

  v.push_back(KbEntry{.id = "oom-free-memory",
                      .symptom = "CUDA out of memory although nvidia-smi shows free memory",
                      .symptomZh = "CUDA out of memory但显存显示有剩余",
                      .causes = {"Memory fragmentation in the framework's caching allocator",
                                 "A leftover process from an earlier job still holds memory",
                                 "Another process (or container) on the same GPU"},
                      .checks = {"nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
                                 "nvidia-smi pmon -c 1", "torch.cuda.memory_summary() in the job"},
                      .actions = {"Kill the leftover PIDs; memory is freed when they exit",
                                  "Reduce fragmentation (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, smaller "
                                  "batches)"},
                      .keywords = {"cuda out of memory", "out of memory", "oom", "cudaerrormemoryallocation",
                                   "tried to allocate", "显存不足", "显存", "碎片", "残留进程"},
                      .xids = {},
                      .requirement = "R33",
                      .source = "seed 001 §5.1, §1.2",
                      .autoDetectable = true,
                      .detection = "Memory held, per NVML's process list, by a process /proc no longer has, "
                                   "or by a live one on a GPU that has stayed idle (a job that never exited)"});

  v.push_back(KbEntry{.id = "bus-error-shm",
                      .symptom = "Training dies with \"Bus error\" (DataLoader worker killed) in a container",
                      .symptomZh = "训练中途Bus error",
                      .causes = {"The container's /dev/shm is too small (Docker's default is 64 MB) for PyTorch "
                                 "DataLoader workers"},
                      .checks = {"df -h /dev/shm inside the container",
                                 "docker inspect --format "
                                 "'{{.HostConfig.ShmSize}}' CONTAINER"},
                      .actions = {"Restart the container with --shm-size=16g (or mount a larger tmpfs on "
                                  "/dev/shm)"},
                      .keywords = {"bus error", "sigbus", "shm", "shm-size", "/dev/shm", "dataloader worker",
                                   "shared memory", "共享内存", "容器"},
                      .xids = {},
                      .requirement = "R33",
                      .source = "seed 001 §5.1, §2.3",
                      .autoDetectable = false,
                      .detection = "The error is in the application's output, which gpuwarden does not see; a "
                                   "container check could compare /dev/shm size with the job's needs"});

  v.push_back(KbEntry{.id = "hot-and-loud",
                      .symptom = "Fans run at full speed but the GPU stays hot",
                      .symptomZh = "系统风扇狂转但温度仍高",
                      .causes = {"Airflow problem in the chassis or rack (blocked intake, dust)",
                                 "Dried-out thermal paste on the GPU", "Room / cold-aisle temperature too high"},
                      .checks = {"nvidia-smi -q -d TEMPERATURE,PERFORMANCE (clocks event reasons: thermal "
                                 "slowdown)",
                                 "nvidia-smi dmon -s pucvmet -d 1 to watch temperature against fan and clocks",
                                 "Compare with peer GPUs in the same node and rack"},
                      .actions = {"Clean the dust", "If severe, remove the card and replace the thermal paste",
                                  "Fix the airflow / cooling of the room"},
                      .keywords = {"hot", "loud", "fan", "fans", "overheat", "overheating", "temperature", "thermal",
                                   "thermal slowdown", "风扇狂转", "风扇", "温度", "过热", "散热", "硅脂"},
                      .xids = {},
                      .requirement = "R33",
                      .source = "seed 001 §5.1, §3.3",
                      .autoDetectable = true,
                      .detection = "GPU temperature above the alert line (85 °C core, 95 °C memory) with fan "
                                   "speed high, or thermal slowdown clock-event reasons"});

  v.push_back(KbEntry{
      .id = "fans-not-spinning",
      .symptom = "GPU fans do not spin after power-on",
      .symptomZh = "开机后GPU风扇不转",
      .causes = {"Low load: many boards stop their fans when cool (normal)", "A power problem (cable, connector)"},
      .checks = {"nvidia-smi --query-gpu=fan.speed,temperature.gpu --format=csv",
                 "Run a load (gpu-burn 60) and watch whether the fans start as the temperature "
                 "rises"},
      .actions = {"If the fans start under load: nothing to do",
                  "If they do not and the temperature climbs: stop the load, check power cables, "
                  "replace the fan or card"},
      .keywords = {"fan not spinning", "fans not spinning", "fan stopped", "fan 0%", "风扇不转", "风扇", "供电"},
      .xids = {},
      .requirement = "R33",
      .source = "seed 001 §5.1",
      .autoDetectable = true,
      .detection = "Fan speed 0 % while the temperature rises under load (boards without fans "
                   "report no fan and are skipped)"});

  v.push_back(KbEntry{.id = "one-gpu-idle",
                      .symptom = "In a multi-GPU job one card sits at 0 % while its peers are busy",
                      .symptomZh = "多卡任务时某张卡利用率归零",
                      .causes = {"NVLink or PCIe link with poor contact (degraded width or speed, link down)",
                                 "The card hung or fell off the bus"},
                      .checks = {"nvidia-smi -q (PCI > GPU Link Info: current vs max generation and width)",
                                 "nvidia-smi nvlink -s and nvidia-smi nvlink -e", "dmesg | grep -i xid (74, 79)"},
                      .actions = {"Reseat the card / NVLink bridge",
                                  "Check that the link width and speed are back "
                                  "to the maximum"},
                      .keywords = {"0%", "zero utilization", "utilization 0", "one gpu idle", "idle gpu", "one card",
                                   "stuck at 0", "nvlink", "pcie link", "利用率归零", "利用率", "某张卡"},
                      .xids = {74, 79},
                      .requirement = "R33",
                      .source = "seed 001 §5.1",
                      .autoDetectable = true,
                      .detection = "Within one job (or node), one GPU's utilisation stays near 0 % while its "
                                   "peers are busy; degraded PCIe link width/generation; NVLink down"});

  v.push_back(
      KbEntry{.id = "nan-irreproducible",
              .symptom = "Training produces NaN, or re-running gives different results",
              .symptomZh = "训练结果出现NaN重新跑结果不同",
              .causes = {"Accumulating ECC errors or unstable GPU memory",
                         "A GPU that computes wrong (silent data corruption)"},
              .checks = {"nvidia-smi -q -d ECC (volatile and aggregate counts)", "nvidia-smi -q -d ROW_REMAPPER",
                         "Run the same computation on every GPU and compare (gpu-burn, dcgmi diag -r 3)"},
              .actions = {"Take the GPU out of service if its ECC counts rise or it computes differently",
                          "Replace it if diagnostics fail"},
              .keywords = {"nan", "nans", "loss is nan", "irreproducible", "not reproducible", "different results",
                           "silent data corruption", "sdc", "重新跑结果不同", "结果不同", "不稳定"},
              .xids = {48, 63, 64, 94, 95},
              .requirement = "R33",
              .source = "seed 001 §5.1",
              .autoDetectable = false,
              .detection = "NaNs are in the application; gpuwarden sees the correlates (ECC counts, row "
                           "remaps, Xid 48/94/95) and the stress test's cross-GPU comparison (R27)"});

  v.push_back(KbEntry{.id = "xid79-fell-off-bus",
                      .symptom = "Kernel log shows Xid 79: GPU has fallen off the bus",
                      .symptomZh = "内核日志刷Xid 79",
                      .causes = {"PCIe link failure (riser, slot, signal integrity)",
                                 "Power delivery (loose or single power cable, PSU)", "Overheating", "A failing GPU"},
                      .checks = {"dmesg | grep -i -e xid -e 'fallen off' -e AER",
                                 "Temperature, power and PCIe link at that moment (gpuwarden history)",
                                 "nvidia-bug-report.sh", "Power cables seated on the card"},
                      .actions = {"Drain the node, collect the logs, reboot", "Check power cables and seating",
                                  "If it recurs: RMA the card"},
                      .keywords = {"xid 79", "xid79", "fallen off the bus", "fell off the bus", "off the bus", "掉卡",
                                   "掉驱动", "黑屏", "返修"},
                      .xids = {79},
                      .requirement = "R26, R33",
                      .source = "seed 001 §5.1, §3.3",
                      .autoDetectable = true,
                      .detection = "Xid 79 in the kernel log or NVML's Xid events; the GPU becomes lost to NVML"});

  v.push_back(
      KbEntry{.id = "xid63-row-remap",
              .symptom = "Kernel log shows Xid 63 / 64 (row remapping)",
              .symptomZh = "内核日志刷Xid 63",
              // What each code means and calls for is the Xid catalog's (shown with the entry), not
              // written again here.
              .causes = {"ECC errors in a row of GPU memory, which the GPU remaps to a spare row; a bank "
                         "can run out of spare rows"},
              .checks = {"nvidia-smi -q -d ROW_REMAPPER (pending, failure, counts per bank)", "nvidia-smi -q -d ECC"},
              .actions = {"Take the action of the Xid that was logged (the related Xids below)",
                          "Watch the remap counts; a remapping failure means RMA"},
              .keywords = {"xid 63", "xid63", "xid 64", "xid64", "row remap", "row remapping", "row remapper",
                           "remapped", "page retirement", "retired pages", "显存故障"},
              .xids = {63, 64},
              .requirement = "R26, R33",
              .source = "seed 001 §5.1 (meaning corrected from the vendor catalog)",
              .autoDetectable = true,
              .detection = "Xid 63/64 events; NVML row-remapping counters and pending/failure flags"});

  v.push_back(KbEntry{.id = "driver-lib-mismatch",
                      .symptom = "\"Failed to initialize NVML: Driver/library version mismatch\"",
                      .symptomZh = "",
                      .causes = {"The driver was upgraded but the old kernel module is still loaded (no reboot)",
                                 "A container ships user-space driver libraries of another version"},
                      .checks = {"cat /proc/driver/nvidia/version (loaded kernel module)",
                                 "ls -l /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.* (user-space library)",
                                 "dmesg | grep -i 'API mismatch'"},
                      .actions = {"Reboot (or unload and reload the nvidia modules when no process uses them)",
                                  "Restart the GPU containers after a driver upgrade",
                                  "Never bake driver libraries into images; let the container toolkit inject "
                                  "them"},
                      .keywords = {"driver/library version mismatch", "version mismatch", "library version",
                                   "api mismatch", "failed to initialize nvml", "版本不一致", "驱动升级"},
                      .xids = {},
                      .requirement = "R33",
                      .source = "seed 001 §2.3",
                      .autoDetectable = true,
                      .detection = "The loaded module's version (/proc/driver/nvidia/version) differs from the "
                                   "NVML library's"});

  v.push_back(
      KbEntry{.id = "no-kernel-image",
              .symptom = "\"no kernel image is available for execution on the device\"",
              .symptomZh = "",
              .causes = {"The framework or program was built without code for this GPU's compute "
                         "capability (sm_XX), e.g. an old wheel on a new GPU"},
              .checks = {"nvidia-smi --query-gpu=name,compute_cap --format=csv",
                         "python3 -c 'import torch; print(torch.cuda.get_arch_list())'", "cuobjdump --list-elf BINARY"},
              .actions = {"Install a build that includes this architecture (a newer CUDA wheel)",
                          "Or rebuild with -gencode for the GPU's compute capability"},
              .keywords = {"no kernel image is available", "no kernel image", "kernel image",
                           "cudaerrornokernelimagefordevice", "compute capability", "arch list"},
              .xids = {},
              .requirement = "R33",
              .source = "seed 001 §2.2, §2.3",
              .autoDetectable = true,
              .detection = "The doctor compares the GPUs' compute capability with the architectures of "
                           "the installed framework"});

  v.push_back(KbEntry{
      .id = "driver-too-old",
      .symptom = "\"CUDA driver version is insufficient for CUDA runtime version\"",
      .symptomZh = "",
      .causes = {"The application's CUDA runtime is newer than the highest CUDA version the "
                 "driver supports (the \"CUDA Version\" nvidia-smi shows)"},
      .checks = {"nvidia-smi | grep 'CUDA Version' (the driver's maximum)",
                 "nvcc --version or the framework's torch.version.cuda (the runtime)"},
      .actions = {"Use a CUDA toolkit / wheel no newer than the driver's CUDA version", "Or upgrade the driver"},
      .keywords = {"driver version is insufficient", "insufficient for cuda runtime", "cuda driver version",
                   "cudaerrorinsufficientdriver", "runtime version", "驱动版本", "版本匹配"},
      .xids = {},
      .requirement = "R33",
      .source = "seed 001 §2.2",
      .autoDetectable = true,
      .detection = "The doctor compares the driver's CUDA version with the runtimes it finds"});

  v.push_back(KbEntry{.id = "ecc-rising",
                      .symptom = "ECC error counts keep rising",
                      .symptomZh = "ECC错误累积",
                      .causes = {"GPU memory cells degrading: uncorrectable errors predict failure"},
                      .checks = {"nvidia-smi --query-gpu=ecc.errors.uncorrected.volatile.total --format=csv",
                                 "nvidia-smi -q -d ECC,ROW_REMAPPER", "dmesg | grep -i xid (the related Xids below)"},
                      .actions = {"Migrate work off the GPU before it fails",
                                  "Reset to activate pending remaps; RMA on remapping failure or a rising "
                                  "uncorrectable count"},
                      .keywords = {"ecc", "ecc errors", "uncorrectable", "uncorrected", "double bit", "single bit",
                                   "dbe", "sbe", "纠错", "显存颗粒", "不可纠正"},
                      .xids = {48, 63, 64, 92, 94, 95, 140},
                      .requirement = "R33, R34",
                      .source = "seed 001 §1.2, §5.2",
                      .autoDetectable = true,
                      .detection = "NVML volatile/aggregate ECC counters rising between samples; Xid 48/92/94/95"});

  v.push_back(KbEntry{
      .id = "low-power-under-load",
      .symptom = "At full load the card draws far less than its rated power (e.g. 180 W of 300 W)",
      .symptomZh = "标称300W结果跑满只有180W",
      .causes = {"Clocks throttled (thermal or power cap)", "A power cable missing or loose",
                 "The power limit was set low (nvidia-smi -pl)"},
      .checks = {"nvidia-smi -q -d POWER,PERFORMANCE (limits and clock event reasons)", "Power cables on the card"},
      .actions = {"Restore the power limit", "Fix cooling or cabling"},
      .keywords = {"low power", "power draw", "power limit", "power cap", "throttle", "throttling", "功耗", "降频",
                   "功耗墙", "供电"},
      .xids = {54},
      .requirement = "R33",
      .source = "seed 001 §1.2, §3.3",
      .autoDetectable = true,
      .detection = "Power well below the limit while utilisation is high, with clock-event "
                   "reasons"});

  v.push_back(KbEntry{
      .id = "low-utilization-input-bound",
      .symptom = "GPU utilisation low or swinging (3–20 %) during training",
      .symptomZh = "GPU利用率不高",
      .causes = {"Data loading on the CPU is the bottleneck (num_workers=0, slow disk)",
                 "Logging or checkpointing in the hot loop", "Multi-GPU communication over PCIe without NVLink"},
      .checks = {"nvidia-smi dmon -s u", "iostat -x 1 (disk)", "top (DataLoader workers busy?)"},
      .actions = {"Raise num_workers and set pin_memory=True", "Move the data set to SSD or a memory cache",
                  "Log and checkpoint less often"},
      .keywords = {"low utilization", "utilization low", "gpu util", "slow training", "dataloader", "num_workers",
                   "利用率不高", "喂不动", "卡成ppt"},
      .xids = {},
      .requirement = "R33",
      .source = "seed 001 §3.2",
      .autoDetectable = true,
      .detection = "Utilisation of a GPU with a running job staying low, with idle-clock reasons"});

  return v;
}

const std::vector<KbEntry>& entries() {
  static const std::vector<KbEntry> kEntries = buildEntries();
  return kEntries;
}

char asciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
bool isWordChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isAsciiPhrase(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// A phrase occurs in the lower-cased text; ASCII phrases only at word boundaries.
bool occurs(std::string_view text, std::string_view phrase) {
  if (!isAsciiPhrase(phrase)) return text.find(phrase) != std::string_view::npos;
  for (std::size_t pos = text.find(phrase); pos != std::string_view::npos; pos = text.find(phrase, pos + 1)) {
    const bool left = pos == 0 || !isWordChar(phrase.front()) || !isWordChar(text[pos - 1]);
    const std::size_t end = pos + phrase.size();
    const bool right = end == text.size() || !isWordChar(phrase.back()) || !isWordChar(text[end]);
    if (left && right) return true;
  }
  return false;
}

int weight(std::string_view phrase) {
  if (!isAsciiPhrase(phrase)) return 2;
  return 1 + static_cast<int>(std::count(phrase.begin(), phrase.end(), ' '));
}

std::string bulletList(const std::vector<std::string_view>& items) {
  std::string out;
  for (auto item : items) {
    out += "- ";
    out += item;
    out += "\n";
  }
  return out;
}

}  // namespace

std::span<const KbEntry> knowledgeBase() { return {entries().data(), entries().size()}; }

const KbEntry* findKbEntry(std::string_view id) {
  for (const KbEntry& e : entries()) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

std::vector<KbMatch> explain(std::string_view text, std::size_t maxResults) {
  std::string lowered(text);
  for (char& c : lowered) c = asciiLower(c);
  // Collapse runs of whitespace so "Bus  error" matches "bus error".
  std::string norm;
  norm.reserve(lowered.size());
  for (char c : lowered) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space) {
      if (!norm.empty() && norm.back() != ' ') norm += ' ';
    } else {
      norm += c;
    }
  }
  std::vector<KbMatch> matches;
  for (const KbEntry& e : entries()) {
    int score = 0;
    for (auto kw : e.keywords) {
      if (occurs(norm, kw)) score += weight(kw);
    }
    if (score > 0) matches.push_back({&e, score});
  }
  std::stable_sort(matches.begin(), matches.end(),
                   [](const KbMatch& a, const KbMatch& b) { return a.score > b.score; });
  if (matches.size() > maxResults) matches.resize(maxResults);
  return matches;
}

XidExplanation explainXid(int code) {
  XidExplanation out;
  out.xid = lookupXid(code);
  for (const KbEntry& e : entries()) {
    if (std::find(e.xids.begin(), e.xids.end(), code) != e.xids.end()) out.related.push_back(&e);
  }
  return out;
}

const KbEntry* kbEntryForXid(int code) {
  const std::string spaced = "xid " + std::to_string(code);
  const std::string joined = "xid" + std::to_string(code);
  const KbEntry* detectable = nullptr;
  const KbEntry* first = nullptr;
  for (const KbEntry& e : entries()) {
    if (std::find(e.xids.begin(), e.xids.end(), code) == e.xids.end()) continue;
    for (auto kw : e.keywords)
      if (kw == spaced || kw == joined) return &e;
    if (!first) first = &e;
    if (!detectable && e.autoDetectable) detectable = &e;
  }
  return detectable ? detectable : first;
}

std::string renderKnowledgeBaseMarkdown(const RulesForEntry& rulesFor) {
  std::string md;
  md += "# Fault knowledge base\n\n";
  md +=
      "<!-- Generated from src/knowledge/knowledge_base.cpp by renderKnowledgeBaseMarkdown(); do "
      "not edit by hand.\n     Regenerate: GW_UPDATE_DOCS=1 ctest -R DocsInSync -->\n\n";
  md +=
      "The quick-lookup table of seed 001 §5.1 (requirement R33) and a few neighbours from the "
      "same handbook, one entry per symptom. gpuwarden's explain lookup scores these entries by "
      "keyword overlap with an error message or a description (English or Chinese); an Xid "
      "number is explained from the [Xid catalog](xid.md) together with the entries below "
      "that list it.\n\n";
  md +=
      "The seed's row \"Xid 79 or Xid 63\" is split in two, because the vendor's guidance "
      "differs (see [where the seed handbook differs](xid.md#where-the-seed-handbook-differs)). "
      "What an Xid means and calls for is written once, in the Xid catalog; each entry below "
      "quotes it for its related Xids.\n\n";
  md += "| id | Symptom | Detected automatically | Requirement |\n|---|---|---|---|\n";
  for (const KbEntry& e : entries()) {
    md += "| [`";
    md += e.id;
    md += "`](#";
    md += e.id;
    md += ") | ";
    md += e.symptom;
    md += " | ";
    md += e.autoDetectable ? "yes" : "no (explained)";
    md += " | ";
    md += e.requirement;
    md += " |\n";
  }
  for (const KbEntry& e : entries()) {
    md += "\n## ";
    md += e.id;
    md += "\n\n**";
    md += e.symptom;
    md += "**";
    if (!e.symptomZh.empty()) {
      md += " (";
      md += e.symptomZh;
      md += ")";
    }
    md += "\n\nLikely causes:\n\n";
    md += bulletList(e.causes);
    md += "\nChecks:\n\n";
    md += bulletList(e.checks);
    md += "\nActions:\n\n";
    md += bulletList(e.actions);
    md += "\n";
    if (!e.xids.empty()) {
      md += "Related Xids (from the [Xid catalog](xid.md)):\n\n";
      for (int x : e.xids) {
        md += "- ";
        md += xidSummaryLine(x);
        md += "\n";
      }
      md += "\n";
    }
    md += "Detection: ";
    md += e.autoDetectable ? "automatic — " : "not automatic — ";
    md += e.detection;
    if (rulesFor) {
      const std::string rules = rulesFor(e);
      md += ". Rule: ";
      md += rules.empty() ? std::string("(not yet implemented)") : rules;
    }
    md += ".\n\nTraces to ";
    md += e.requirement;
    md += " (";
    md += e.source;
    md += ").\n";
  }
  return md;
}

}  // namespace gw::knowledge
