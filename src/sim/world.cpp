#include "sim/world.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "sim/mig.h"
#include "sim/noise.h"

namespace gw::sim {

std::string formatUuid(const char* prefix, std::uint64_t a, std::uint64_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%08x-%04x-%04x-%04x-%04x%08x", prefix, static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFFF),
                static_cast<unsigned>(b >> 48), static_cast<unsigned>((b >> 32) & 0xFFFF),
                static_cast<unsigned>(b & 0xFFFFFFFF));
  return buf;
}

nvmlPciInfo_t makePciInfo(unsigned domain, unsigned bus, unsigned device, unsigned function, unsigned device_id,
                          unsigned subsystem_id) {
  nvmlPciInfo_t p{};
  p.domain = domain;
  p.bus = bus;
  p.device = device;
  p.pciDeviceId = (device_id << 16) | 0x10DE;
  p.pciSubSystemId = subsystem_id;
  std::snprintf(p.busIdLegacy, sizeof p.busIdLegacy, "%04X:%02X:%02X.%X", domain & 0xFFFF, bus, device, function);
  std::snprintf(p.busId, sizeof p.busId, "%08X:%02X:%02X.%X", domain, bus, device, function);
  return p;
}

World::World(Scenario s, std::string k, ClockSettings c) : scenario(std::move(s)), key(std::move(k)), clock(c) {
  using namespace std::chrono;
  const long long now_us = duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  epoch_us_at_zero = now_us - static_cast<long long>(c.start * 1e6);

  const auto seed = scenario.seed;
  for (const auto& g : scenario.gpus) {
    auto d = std::make_unique<Device>();
    d->world = this;
    d->index = g.index;
    d->minor = g.minor;
    d->cfg = &g;
    d->profile = g.profile;
    d->name = std::string(g.profile->name);
    d->uuid = !g.uuid.empty()
                  ? g.uuid
                  : formatUuid("GPU-", hash(seed, g.index, Signal::kUuid, 0), hash(seed, g.index, Signal::kUuid, 1));
    if (!g.serial.empty()) {
      d->serial = g.serial;
    } else if (!g.profile->serial_prefix.empty()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%07llu", std::string(g.profile->serial_prefix).c_str(),
                    static_cast<unsigned long long>(hash(seed, g.index, Signal::kSerial, 0) % 10000000ULL));
      d->serial = buf;
    }
    d->pci = makePciInfo(g.pci_domain, g.pci_bus, g.pci_device, g.pci_function, g.profile->pci_device_id,
                         g.profile->pci_subsystem_id);
    d->persistence = g.persistence;
    d->settings.ecc_current = d->settings.ecc_pending = g.ecc;
    std::vector<const FaultConfig*> faults;
    for (const auto& f : scenario.faults) {
      if (std::find(f.gpus.begin(), f.gpus.end(), g.index) == f.gpus.end()) continue;
      faults.push_back(&f);
      if (f.type == FaultType::kFallOffBus || f.type == FaultType::kHang) d->gates.push_back(&f);
    }
    d->physics = std::make_unique<GpuPhysics>(g, scenario.nvlinks[g.index], faults, seed);
    gpus.push_back(std::move(d));
  }
  for (auto& d : gpus) {
    d->mig_current = d->cfg->mig_enabled;
    std::lock_guard lock(mig_mu);
    loadScenarioMigLayout(*d);
  }
  for (const auto& f : scenario.faults) {
    if (f.type == FaultType::kDriverUnloaded) driver_faults.push_back(&f);
    if (f.type == FaultType::kCallError) call_faults.push_back(&f);
    for (unsigned gpu : f.gpus) {
      if (f.type == FaultType::kXid) events.push_back({f.at, gpu, nvmlEventTypeXidCriticalError, f.code});
      if (f.type == FaultType::kEccDbe) events.push_back({f.at, gpu, nvmlEventTypeDoubleBitEccError, 0});
      if (f.type == FaultType::kEccSbe) events.push_back({f.at, gpu, nvmlEventTypeSingleBitEccError, 0});
    }
  }
  call_counts = std::make_unique<std::atomic<std::uint64_t>[]>(call_faults.size());
  std::stable_sort(events.begin(), events.end(), [](const TimedEvent& a, const TimedEvent& b) { return a.t < b.t; });
}

bool World::driverUnloadedAt(double t) const {
  return std::any_of(driver_faults.begin(), driver_faults.end(), [&](const FaultConfig* f) { return f->activeAt(t); });
}

bool World::sessionStale(double t) const {
  const double s = session_start.load(std::memory_order_relaxed);
  return std::any_of(driver_faults.begin(), driver_faults.end(),
                     [&](const FaultConfig* f) { return s < f->at && t >= f->at; });
}

const ProcessConfig* World::findProcess(unsigned pid, double t) const {
  for (const auto& g : scenario.gpus) {
    for (const auto& p : g.processes) {
      if (p.pid == pid && processPresent(p, t)) return &p;
    }
  }
  return nullptr;
}

}  // namespace gw::sim
