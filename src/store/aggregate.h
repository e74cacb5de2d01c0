// Step aggregation shared by queries and downsampling.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "store/store_types.h"

namespace gw::store {

// Start of the step that contains ts (floor division, also for negative ts).
inline int64_t stepStart(int64_t ts_ms, int64_t step_ms) {
  int64_t q = ts_ms / step_ms;
  if (ts_ms % step_ms != 0 && ts_ms < 0) --q;
  return q * step_ms;
}

// min/max/sum/count of one step: exactly what a downsampled row stores, so buckets from raw data
// and from downsampled rows merge the same way.
struct Bucket {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;
  double count = 0;

  void add(double v) {
    if (std::isnan(v)) return;
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
    count += 1;
  }
  void merge(double other_min, double other_max, double other_sum, double other_count) {
    if (other_count <= 0) return;
    if (other_min < min) min = other_min;
    if (other_max > max) max = other_max;
    sum += other_sum;
    count += other_count;
  }
  bool empty() const { return count <= 0; }
  double value(Agg agg) const {
    switch (agg) {
      case Agg::Min:
        return min;
      case Agg::Max:
        return max;
      case Agg::Sum:
        return sum;
      case Agg::Count:
        return count;
      case Agg::Avg:
        break;
    }
    return sum / count;
  }
};

}  // namespace gw::store
