#include "server/history_query.h"

#include <algorithm>

#include "fields/catalog.h"
#include "server/api_params.h"

namespace gw::server {
namespace {

using json = nlohmann::json;

Result<store::Agg> parseAgg(const std::string& s) {
  if (s == "avg") return store::Agg::Avg;
  if (s == "min") return store::Agg::Min;
  if (s == "max") return store::Agg::Max;
  if (s == "sum") return store::Agg::Sum;
  if (s == "count") return store::Agg::Count;
  return Status::Error("agg must be avg, min, max, sum or count, got '" + s + "'");
}

HistoryAnswer refuse(int status, std::string error, std::string param = "") {
  HistoryAnswer a;
  a.status = status;
  a.error = std::move(error);
  a.param = std::move(param);
  return a;
}

}  // namespace

const collect::GpuView* findGpu(const std::vector<collect::GpuView>& views, const std::string& id) {
  bool numeric =
      !id.empty() && id.size() <= 6 && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
  for (const auto& v : views) {
    if (numeric ? (!v.id.is_mig && std::to_string(v.id.index) == id) : v.id.uuid == id) return &v;
  }
  return nullptr;
}

HistoryAnswer runHistoryQuery(const HistoryQuery& q, const store::Store* store, const HistorySink* sink,
                              const std::vector<collect::GpuView>& views, std::int64_t now) {
  if (!store || !sink) return refuse(404, "history is disabled in the configuration (history.enabled: false)");
  if (!q.gpu || q.gpu->empty()) return refuse(400, "missing parameter 'gpu'", "gpu");
  if (!q.field || q.field->empty()) return refuse(400, "missing parameter 'field'", "field");
  const std::string& gpu = *q.gpu;
  const fields::Field* f = fields::findAny(*q.field);
  if (!f || f->type == fields::Type::Label)
    return refuse(400, "unknown numeric field '" + *q.field + "' (see `gpuwarden fields`)", "field");
  std::int64_t since = now - 3600 * 1000, until = now, step = 0;
  if (q.since) {
    auto r = parseTimeSpec(*q.since, now);
    if (!r) return refuse(400, r.error(), "since");
    since = *r;
  }
  if (q.until) {
    auto r = parseTimeSpec(*q.until, now);
    if (!r) return refuse(400, r.error(), "until");
    until = *r;
  }
  if (since > until) return refuse(400, "since is after until", "since");
  const std::string too_many = "more than " + std::to_string(kMaxHistoryPoints) + " points; use a larger step";
  if (q.step) {
    auto r = parseStepMs(*q.step);
    if (!r) return refuse(400, r.error(), "step");
    step = *r;
    // Refused before the store computes them (30 days at 1 ms would be billions of steps).
    if (step > 0 && (until - since) / step > static_cast<std::int64_t>(kMaxHistoryPoints))
      return refuse(400, too_many, "step");
  }
  store::Agg agg = store::Agg::Avg;
  if (q.agg) {
    auto r = parseAgg(*q.agg);
    if (!r) return refuse(400, r.error(), "agg");
    agg = *r;
  }
  // The GPU: an index of a GPU seen now, or any UUID (history outlives a GPU).
  std::string uuid;
  json gpu_json;
  if (const auto* v = findGpu(views, gpu)) {
    uuid = v->id.uuid;
    gpu_json = json{{"index", v->id.index}, {"uuid", uuid}};
  } else if (gpu.starts_with("GPU-") || gpu.starts_with("MIG-")) {
    uuid = gpu;
    gpu_json = json{{"index", nullptr}, {"uuid", uuid}};
  } else {
    return refuse(404, "no GPU '" + gpu + "' (give an index or a UUID; see /api/v1/gpus)", "gpu");
  }
  json points = json::array();
  if (auto id = sink->find(uuid, f->key)) {
    auto r = store->query(*id, since, until, step, agg);
    if (!r) return refuse(500, "history query failed: " + r.error());
    // Aligned steps may reach one step outside the range at each end; a raw range may hold any
    // number of samples. Either way the answer stays within the cap.
    if (r->size() > kMaxHistoryPoints) {
      if (step > 0) return refuse(400, too_many, "step");
      return refuse(400,
                    std::to_string(r->size()) + " samples between since and until, more than " +
                        std::to_string(kMaxHistoryPoints) + "; give a step (one point per step) or a shorter range",
                    "step");
    }
    for (const auto& p : *r) points.push_back(json::array({p.ts_ms, p.value}));
  }
  static const char* kAggNames[] = {"avg", "min", "max", "sum", "count"};
  HistoryAnswer a;
  a.body = json{{"gpu", gpu_json},
                {"field", {{"key", f->key}, {"dcgm_name", f->dcgm_name}, {"unit", f->unit}}},
                {"since_ms", since},
                {"until_ms", until},
                {"step_ms", step},
                {"agg", step > 0 ? json(kAggNames[static_cast<int>(agg)]) : json(nullptr)},
                {"points", std::move(points)}};
  return a;
}

}  // namespace gw::server
