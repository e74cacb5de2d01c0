// Test doubles for the pure-logic tests: an in-memory DiagNvml and a backend that returns
// recorded measurements. Production reaches NVML through the CLI's adapter and the GPU through
// the dlopen'd CUDA part; these only feed measured values into the judgement.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "diag/diag.h"

namespace gw::diag::test {

struct FakeGpu {
  std::string name = "NVIDIA H100 80GB HBM3";
  uint32_t pci_device_id = 0x233010DE;
  std::string bus_id = "00000000:17:00.0";
  PcieLink link{5, 16, 5, 16};
  double power_limit = 700, power_draw = 650;
  unsigned temp = 60;
  Clocks clocks{1980, 2619};
  uint64_t reasons = 0;
  EccCounts ecc{};
  Result<RetiredPages> retired = Status::Nvml(kNvmlNotSupported, "not supported");
  Result<RowRemap> remap = RowRemap{};
  bool persistence = true;
  bool inforom = true;
  std::vector<GpuProcess> procs;
  int nvlinks = 18;
  // Injected during tests: after `polls_before_xid` polls, this Xid appears once.
  uint64_t xid = 0;
  int polls_before_xid = 1;
  unsigned temp_during_test = 0;  // if set, temperature after the first sample
  uint64_t dbe_during_test = 0;   // if set, volatile DBE from the 3rd read (after r1 ecc + first watch)
  double ramp_power_draw = -1;    // if set, the draw while targeted power ramps up (load < 0.5)
};

class FakeNvml : public DiagNvml {
 public:
  std::vector<FakeGpu> gpus;
  int polls = 0;
  std::map<int, int> temp_reads;

  Result<int> gpuCount() override { return static_cast<int>(gpus.size()); }
  Result<std::string> name(int g) override { return gpus[g].name; }
  Result<std::string> uuid(int g) override { return "GPU-" + std::to_string(g); }
  Result<std::string> pciBusId(int g) override { return gpus[g].bus_id; }
  Result<uint32_t> pciDeviceId(int g) override { return gpus[g].pci_device_id; }
  Result<PcieLink> pcieLink(int g) override { return gpus[g].link; }
  Result<double> powerLimitW(int g) override { return gpus[g].power_limit; }
  Result<double> powerDrawW(int g) override {
    std::lock_guard lk(*reads_mu_);
    const auto r = ramp.find(g);
    const bool ramping = r != ramp.end() && r->second < 0.5 && gpus[g].ramp_power_draw >= 0;
    return ramping ? gpus[g].ramp_power_draw : gpus[g].power_draw;
  }
  // The load targeted power last asked of each GPU (set by a backend that knows this NVML).
  std::map<int, double> ramp;
  void setLoad(int g, double f) {
    std::lock_guard lk(*reads_mu_);
    ramp[g] = f;
  }
  // The diag runner reads from a thread per GPU and the watcher at once: the read counters are
  // shared, so they are guarded (an unguarded std::map insert loses nodes, which LSan reports).
  Result<unsigned> temperatureC(int g) override {
    std::lock_guard lk(*reads_mu_);
    int n = temp_reads[g]++;
    return (n > 0 && gpus[g].temp_during_test) ? gpus[g].temp_during_test : gpus[g].temp;
  }
  Result<Clocks> clocks(int g) override { return gpus[g].clocks; }
  Result<uint64_t> clockEventReasons(int g) override { return gpus[g].reasons; }
  Result<EccCounts> ecc(int g) override {
    EccCounts e = gpus[g].ecc;
    std::lock_guard lk(*reads_mu_);
    if (ecc_reads_[g]++ > 1 && gpus[g].dbe_during_test) e.volatile_dbe = gpus[g].dbe_during_test;
    return e;
  }
  Result<RetiredPages> retiredPages(int g) override { return gpus[g].retired; }
  Result<RowRemap> rowRemap(int g) override { return gpus[g].remap; }
  Result<bool> persistenceMode(int g) override { return gpus[g].persistence; }
  Result<bool> inforomValid(int g) override { return gpus[g].inforom; }
  Result<std::vector<GpuProcess>> computeProcesses(int g) override { return gpus[g].procs; }
  Result<int> nvlinkActiveLinks(int g) override { return gpus[g].nvlinks; }
  Result<std::string> serial(int g) override { return "165" + std::to_string(2000 + g); }
  Result<std::string> vbiosVersion(int) override { return std::string("96.00.74.00.01"); }
  Result<std::string> driverVersion() override { return std::string("550.54.15"); }
  Result<int> cudaDriverVersion() override { return 12040; }
  std::vector<XidEvent> pollXids() override {
    ++polls;
    std::vector<XidEvent> out;
    for (size_t g = 0; g < gpus.size(); ++g)
      if (gpus[g].xid && polls == gpus[g].polls_before_xid + 1) out.push_back({static_cast<int>(g), gpus[g].xid});
    return out;
  }

 private:
  std::map<int, int> ecc_reads_;
  std::unique_ptr<std::mutex> reads_mu_ = std::make_unique<std::mutex>();  // a pointer: FakeNvml is moved
};

inline FakeNvml fleet(int n) {
  FakeNvml f;
  for (int i = 0; i < n; ++i) {
    FakeGpu g;
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x17 + i);
    g.bus_id = bus;
    f.gpus.push_back(g);
  }
  return f;
}

// Returns recorded measurements; every device healthy unless overridden.
class RecordedBackend : public GpuBackend {
 public:
  BackendState st = BackendState::Ready;
  std::string why = "ready (recorded)";
  std::vector<GwDeviceProps> devs;
  std::map<int, Result<GwVecAddResult>> vecadd;
  std::map<int, Result<GwMemtestResult>> mem;
  std::map<int, GwBandwidthResult> bw;
  std::map<int, GwGemmResult> gemm;
  std::map<int, GwTriadResult> triad;
  std::map<int, uint64_t> power_failures;
  double default_gflops = 700000;
  std::mutex mu;
  std::vector<std::string> calls;
  FakeNvml* live = nullptr;  // told the load targeted power asks, so its power draw can follow

  explicit RecordedBackend(const FakeNvml& nvml) {
    // CUDA order deliberately reversed against NVML order: mapping goes by PCI bus id.
    for (int i = static_cast<int>(nvml.gpus.size()) - 1; i >= 0; --i) {
      GwDeviceProps p{};
      std::snprintf(p.pci_bus_id, sizeof p.pci_bus_id, "%s", nvml.gpus[i].bus_id.c_str() + 4);
      p.free_mem = size_t(80) << 30;
      p.peak_mem_bw_gbps = 3352;
      devs.push_back(p);
    }
  }
  int nvmlOf(int dev) const { return static_cast<int>(devs.size()) - 1 - dev; }
  void log(const std::string& s) {
    std::lock_guard<std::mutex> lk(mu);
    calls.push_back(s);
  }

  BackendState state() const override { return st; }
  std::string reason() const override { return why; }
  Result<std::vector<GwDeviceProps>> devices() override { return devs; }
  Result<GwVecAddResult> vectorAdd(int dev, size_t n) override {
    log("vecadd" + std::to_string(nvmlOf(dev)));
    auto it = vecadd.find(nvmlOf(dev));
    if (it != vecadd.end()) return it->second;
    GwVecAddResult r{};
    r.n = n;
    return r;
  }
  Result<GwMemtestResult> memtest(int dev, double, unsigned, double, const ProgressFn& pf) override {
    log("memtest" + std::to_string(nvmlOf(dev)));
    pf(0.5);
    auto it = mem.find(nvmlOf(dev));
    if (it != mem.end()) return it->second;
    GwMemtestResult r{};
    r.bytes_tested = size_t(70) << 30;
    r.rounds = 1;
    return r;
  }
  Result<GwBandwidthResult> hostBandwidth(int dev, size_t bytes, int it) override {
    log("bw" + std::to_string(nvmlOf(dev)));
    auto f = bw.find(nvmlOf(dev));
    if (f != bw.end()) return f->second;
    return GwBandwidthResult{bytes, it, 55, 53, 54, 52};
  }
  Result<GwP2PResult> p2pBandwidth(int src, int dst, size_t, int) override {
    log("p2p" + std::to_string(nvmlOf(src)) + std::to_string(nvmlOf(dst)));
    return GwP2PResult{src, dst, 1, 380, 375};
  }
  Result<GwGemmResult> gemmBurn(int dev, double seconds, int precision, const GemmProgressFn& pf) override {
    log("gemm" + std::to_string(nvmlOf(dev)));
    auto f = gemm.find(nvmlOf(dev));
    if (f != gemm.end()) {
      pf(1.0, f->second);
      return f->second;
    }
    GwGemmResult g{};
    g.precision = precision;
    g.used_cublas = 1;
    g.n = 8192;
    g.iterations = 1000;
    g.checksum = 42;
    g.gflops = default_gflops;
    g.seconds = seconds;
    pf(1.0, g);
    return g;
  }
  Result<GwTriadResult> streamTriad(int dev, size_t bytes, int it) override {
    log("triad" + std::to_string(nvmlOf(dev)));
    auto f = triad.find(nvmlOf(dev));
    if (f != triad.end()) return f->second;
    return GwTriadResult{bytes, it, 3000, 2950, 0};
  }
  Result<GwPowerResult> targetedPower(int dev, double seconds, int, const PowerControlFn& c) override {
    log("power" + std::to_string(nvmlOf(dev)));
    GwPowerResult r{};
    double duty = 0;
    for (int i = 0; i <= 10; ++i) {
      if (live) live->setLoad(nvmlOf(dev), i / 10.0);
      duty += c(i / 10.0);
    }
    r.seconds = seconds;
    r.mean_duty = duty / 11;
    r.iterations = 100;
    const auto pf = power_failures.find(nvmlOf(dev));  // find, not []: called from a thread per GPU
    r.failed_iterations = pf == power_failures.end() ? 0 : pf->second;
    r.used_cublas = 1;
    return r;
  }
};

}  // namespace gw::diag::test
