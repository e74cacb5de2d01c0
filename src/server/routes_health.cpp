#include "server/routes_health.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>

#include "server/api_params.h"
#include "node/health_json.h"
#include "platform/clock.h"

namespace gw::server {

using json = nlohmann::json;

namespace {
constexpr std::uint64_t kMaxEventsLimit = 1'000'000;
}  // namespace

void registerHealthRoutes(HttpServer& h, node::Monitor& monitor) {
  node::Monitor* m = &monitor;
  h.get("/api/v1/incidents", [m](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {"state", "limit"})) return;
    std::string state = req.hasParam("state") ? req.param("state") : "open";
    if (state != "open" && state != "all")
      return jsonError(res, 400, "state must be open or all, got '" + state + "'", "state");
    int limit = 100;
    if (req.hasParam("limit")) {
      auto n = parseWholeNumber(req.param("limit"), 1, 10000);
      if (!n) return jsonError(res, 400, "limit must be 1..10000", "limit");
      limit = static_cast<int>(*n);
    }
    auto list = state == "open" ? m->incidents()->unresolved() : m->incidents()->recent(limit);
    json arr = json::array();
    for (const auto& i : list) arr.push_back(node::incidentJson(i, true));
    sendJson(res, json{{"state", state}, {"count", arr.size()}, {"incidents", arr}});
  });
  h.get("/api/v1/incidents/{}", [m](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    auto n = parseWholeNumber(req.matches[1], 1, INT64_MAX);
    if (!n) return jsonError(res, 404, "no incident '" + req.matches[1].substr(0, 40) + "'", "id");
    const auto id = static_cast<std::int64_t>(*n);
    auto i = m->incidents()->get(id);
    if (!i) return jsonError(res, 404, "no incident " + std::to_string(id), "id");
    sendJson(res, node::incidentJson(*i, true));
  });
  h.get("/api/v1/events", [m](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {"since", "limit"})) return;
    const auto now = platform::wallMs();
    std::int64_t since = now - kDefaultEventsWindowMs;
    if (req.hasParam("since")) {
      auto r = parseTimeSpec(req.param("since"), now);
      if (!r) return jsonError(res, 400, r.error(), "since");
      since = *r;
    }
    std::size_t limit = 0;
    if (req.hasParam("limit")) {
      auto n = parseWholeNumber(req.param("limit"), 1, kMaxEventsLimit);
      if (!n)
        return jsonError(res, 400, "limit must be a whole number from 1 to " + std::to_string(kMaxEventsLimit),
                         "limit");
      limit = static_cast<std::size_t>(*n);
    }
    json arr = json::array();
    for (const auto& e : m->eventLog().since(since, limit)) {
      try {
        arr.push_back(json::parse(events::eventToJsonLine(e)));
      } catch (const std::exception&) {
      }
    }
    json sources = json::object();
    sources["kernel_log"] = m->kernelLogFollowed();
    sources["nvml"] = m->nvmlEventsHealthy();
    sendJson(res, json{{"since_ms", since}, {"count", arr.size()}, {"sources", sources}, {"events", arr}});
  });
  h.get("/api/v1/health", [m](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    sendJson(res, m->healthReport());
  });
}

}  // namespace gw::server
