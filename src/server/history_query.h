// A field's history for one GPU: the one implementation behind `GET /api/v1/history` and the
// control socket's `history` operation (docs/api.md), so that both answer the same document and
// refuse the same requests with the same words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/gpu_view.h"
#include "server/history_sink.h"
#include "store/store.h"

namespace gw::server {

// The most points one answer carries, with or without a step: a raw range holding more samples is
// refused (give a step or a shorter range), never cut short silently.
inline constexpr std::size_t kMaxHistoryPoints = 11000;

// The request as the caller gave it; an absent or empty gpu/field is "missing".
struct HistoryQuery {
  std::optional<std::string> gpu, field, since, until, step, agg;
};

// status 200: `body` is the answer; else `error` says why and `param` names the parameter at
// fault (empty when none is): 400 a bad request, 404 no such GPU or history disabled, 500 the
// store failed.
struct HistoryAnswer {
  int status = 200;
  nlohmann::json body;
  std::string error;
  std::string param;
};

// `store` and `sink` are null when history is disabled; `views` are the sampler's GPUs now.
HistoryAnswer runHistoryQuery(const HistoryQuery& query, const store::Store* store, const HistorySink* sink,
                              const std::vector<collect::GpuView>& views, std::int64_t now_ms);

// A GPU by index ("3") or UUID (GPU-… or MIG-…); full GPUs only for an index.
const collect::GpuView* findGpu(const std::vector<collect::GpuView>& views, const std::string& id);

}  // namespace gw::server
