// A hand-built node for the rule tests: GpuViews of healthy, busy H100s whose fields a test sets.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "collect/gpu_view.h"
#include "fields/catalog.h"

namespace gw::health::test {

struct Gpu {
  collect::GpuView v;
  explicit Gpu(unsigned i) {
    v.id.index = i;
    v.id.uuid = "GPU-0000000" + std::to_string(i);
    v.id.name = "NVIDIA H100 80GB HBM3";
    v.values.assign(fields::all().size(), collect::FieldValue{});
    // a healthy, busy H100
    set("gpu_util", 95).set("gpu_temp", 68).set("memory_temp", 72).set("power_usage", 690).set("power_limit", 700);
    set("enforced_power_limit", 700).set("power_default_limit", 700).set("sm_clock", 1980).set("max_sm_clock", 1980);
    set("clock_event_reasons", 0x4).set("pstate", 0).set("pcie_link_gen", 5).set("pcie_link_width", 16);
    set("pcie_max_link_gen", 5).set("pcie_max_link_width", 16).set("pcie_replay_counter", 0);
    set("ecc_sbe_volatile", 0).set("ecc_dbe_volatile", 0).set("retired_pages_sbe", 0).set("retired_pages_dbe", 0);
    set("retired_pages_pending", 0).set("remapped_rows_uncorrectable", 0).set("row_remap_pending", 0);
    set("row_remap_failure", 0).set("nvlink_active_links", 18).set("nvlink_crc_flit_errors", 0);
    set("nvlink_crc_data_errors", 0).set("nvlink_replay_errors", 0).set("nvlink_recovery_errors", 0);
    set("persistence_mode", 1).set("fb_used", 70000).set("slowdown_temp", 89);
  }
  Gpu& set(std::string_view key, double value) {
    const auto* f = fields::findByKey(key);
    EXPECT_NE(f, nullptr) << key;
    if (f) v.values[fields::indexOf(*f)] = {value, 0, true};
    return *this;
  }
  Gpu& unset(std::string_view key) {
    v.values[fields::indexOf(*fields::findByKey(key))].valid = false;
    return *this;
  }
};

inline std::vector<collect::GpuView> views(std::vector<Gpu>& gs) {
  std::vector<collect::GpuView> out;
  for (auto& g : gs) out.push_back(g.v);
  return out;
}

inline std::vector<Gpu> node(int n = 4) {
  std::vector<Gpu> gs;
  for (int i = 0; i < n; ++i) gs.emplace_back(i);
  return gs;
}

}  // namespace gw::health::test
