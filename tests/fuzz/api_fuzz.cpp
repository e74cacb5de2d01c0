// libFuzzer target for the HTTP API's parameters, after libmicrohttpd has split and decoded the
// query string (http_fuzz covers that part). Each input is a query string, "k=v&k=v..." taken
// byte for byte (any byte may be in a name or a value, as after percent-decoding):
//  - every value goes through parseTimeSpec, parseStepMs, parseDuration and parseListenAddress;
//  - the parameters go through GET /api/v1/history as the agent serves it: onlyParams, the
//    HistoryQuery it builds, runHistoryQuery against a real history store (11 500 samples of one
//    GPU), and the JSON answer or error it writes.
// Invariants: a duration is positive, at most kMaxDurationMs and renders back ("<n>ms") to itself;
// a step is a duration or 0; a time is "now", unix seconds, a duration before now, or an RFC3339
// time that formatRfc3339 renders back to the same instant and, given in UTC, the same calendar
// date and time; a listen address has a port in 0..65535 and renders back to itself; an answer is
// 200 with at most kMaxHistoryPoints points inside [since - step, until + step], or a 400/404
// naming the parameter at fault; every response body is valid JSON.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fields/catalog.h"
#include "platform/clock.h"
#include "server/api_params.h"
#include "server/config.h"
#include "server/history_query.h"
#include "server/history_sink.h"
#include "server/http_server.h"

namespace {

using gw::server::HttpRequest;
using gw::server::HttpResponse;

constexpr std::int64_t kT0 = 1'700'000'000'000;
constexpr std::int64_t kNow = kT0 + 24 * 3600 * 1000;
constexpr std::int64_t kYearZeroMs = -62'167'219'200'000;  // 0000-01-01T00:00:00Z

std::string_view g_input;
std::string g_dir;
std::unique_ptr<gw::store::Store> g_store;
std::unique_ptr<gw::server::HistorySink> g_sink;
std::vector<gw::collect::GpuView> g_views;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "api_fuzz: invariant broken: %s\n--- input ---\n%.*s\n", what.c_str(),
               static_cast<int>(g_input.size()), g_input.data());
  std::abort();
}

void checkDuration(const std::string& v) {
  auto d = gw::server::parseDuration(v);
  if (!d) {
    check(!d.error().empty(), "a duration error without a message");
    return;
  }
  check(d->count() > 0 && d->count() <= gw::server::kMaxDurationMs, "duration '" + v + "' out of range");
  auto again = gw::server::parseDuration(std::to_string(d->count()) + "ms");
  check(again && *again == *d, "duration '" + v + "' does not render back");
}

void checkStep(const std::string& v) {
  auto s = gw::server::parseStepMs(v);
  if (!s) return;
  check(*s >= 0, "a negative step from '" + v + "'");
  if (v == "0" || v == "raw") return check(*s == 0, "'" + v + "' is not a raw step");
  auto d = gw::server::parseDuration(v);
  check(d && d->count() == *s, "step '" + v + "' is not its duration");
}

void checkTime(const std::string& v) {
  auto t = gw::server::parseTimeSpec(v, kNow);
  if (!t) {
    check(!t.error().empty(), "a time error without a message");
    return;
  }
  if (v == "now") return check(*t == kNow, "now is not now");
  if (v.find_first_not_of("0123456789.") == std::string::npos) {
    check(*t >= 0 && *t <= 100'000'000'000'000, "unix seconds '" + v + "' out of range");
    return;
  }
  if (v.size() >= 10 && v[4] == '-') {
    // RFC3339: the instant renders and parses back to itself (when RFC3339 can write it: from
    // 0000-01-01T00:00:00Z on; "0000-01-01T00:00:00+01:00" is an hour before that) ...
    if (*t < kYearZeroMs) return;
    const std::string shown = gw::platform::formatRfc3339(*t);
    auto back = gw::server::parseTimeSpec(shown, kNow);
    check(back && *back == *t, "time '" + v + "' renders as '" + shown + "', which does not parse back");
    // ... and a UTC time without a fraction or leap second is the date and time it says.
    if (v.size() == 20 && (v[19] == 'Z' || v[19] == 'z') && v.compare(17, 2, "60") != 0) {
      std::string want = v.substr(0, 19);
      want[10] = 'T';
      check(shown.compare(0, 19, want) == 0, "time '" + v + "' is read as " + shown);
    }
    return;
  }
  std::string_view rel = v;
  if (rel.starts_with("-")) rel.remove_prefix(1);
  auto d = gw::server::parseDuration(rel);
  check(d && *t == kNow - d->count(), "time '" + v + "' is not a duration before now");
}

void checkListen(const std::string& v) {
  auto a = gw::server::parseListenAddress(v);
  if (!a) return;
  check(a->port >= 0 && a->port <= 65535 && !a->host.empty(), "listen address '" + v + "' out of range");
  const std::string again =
      (a->host.find(':') != std::string::npos ? "[" + a->host + "]" : a->host) + ":" + std::to_string(a->port);
  auto b = gw::server::parseListenAddress(again);
  check(b && b->host == a->host && b->port == a->port, "listen address '" + v + "' does not render back");
}

void checkJsonBody(const HttpResponse& res) {
  check(res.content_type == "application/json", "a JSON answer of another type");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(res.body);
  } catch (const std::exception& e) {
    check(false, std::string("the body is not JSON: ") + e.what());
  }
  if (res.status != 200) check(j.contains("error") && j.contains("field"), "an error body without error and field");
}

// GET /api/v1/history as Agent::registerRoutes serves it (src/server/agent.cpp).
void history(const HttpRequest& req) {
  HttpResponse res;
  bool known = false;
  try {
    known = gw::server::onlyParams(req, res, {"gpu", "field", "since", "until", "step", "agg"});
  } catch (const std::exception& e) {
    check(false, std::string("onlyParams threw: ") + e.what());
  }
  if (!known) {
    check(res.status == 400, "an unknown or repeated parameter is not a 400");
    return checkJsonBody(res);
  }
  gw::server::HistoryQuery q;
  for (auto [name, slot] : {std::pair{"gpu", &q.gpu}, std::pair{"field", &q.field}, std::pair{"since", &q.since},
                            std::pair{"until", &q.until}, std::pair{"step", &q.step}, std::pair{"agg", &q.agg}})
    if (req.hasParam(name)) *slot = req.param(name);
  auto a = gw::server::runHistoryQuery(q, g_store.get(), g_sink.get(), g_views, kNow);
  try {
    if (a.status != 200)
      gw::server::jsonError(res, a.status, a.error, a.param);
    else
      gw::server::sendJson(res, a.body);
  } catch (const std::exception& e) {
    check(false, std::string("writing the answer threw: ") + e.what());
  }
  checkJsonBody(res);
  if (a.status != 200) {
    check(a.status == 400 || a.status == 404, "status " + std::to_string(a.status) + ": " + a.error);
    check(!a.error.empty(), "a refusal without a message");
    const std::string& p = a.param;
    check(p == "gpu" || p == "field" || p == "since" || p == "until" || p == "step" || p == "agg",
          "a refusal that names no parameter: " + a.error);
    return;
  }
  const auto& b = a.body;
  const std::int64_t since = b["since_ms"], until = b["until_ms"], step = b["step_ms"];
  check(since <= until && step >= 0, "since after until, or a negative step");
  check(b["points"].size() <= gw::server::kMaxHistoryPoints, "more points than the cap");
  check(b["agg"].is_null() == (step == 0), "an aggregation without a step, or a step without one");
  for (const auto& p : b["points"]) {
    const std::int64_t ts = p[0];
    check(ts >= since - step && ts <= until + step, "a point outside the range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/gw-api-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) std::abort();
  g_dir = tmpl;
  gw::store::StoreOptions so;
  so.path = g_dir + "/history.db";
  so.background = false;
  auto s = gw::store::Store::open(so);
  if (!s) {
    std::fprintf(stderr, "api_fuzz: cannot open the store: %s\n", s.error().c_str());
    std::abort();
  }
  g_store = std::move(s).value();
  g_sink = std::make_unique<gw::server::HistorySink>(*g_store);
  gw::collect::GpuView v;
  v.id.index = 0;
  v.id.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  g_views.push_back(v);
  gw::collect::GpuView mig = v;
  mig.id.is_mig = true;
  mig.id.uuid = "MIG-00000000-1111-2222-3333-555555555555";
  g_views.push_back(mig);
  const auto* f = gw::fields::findByKey("gpu_temp");
  for (int i = 0; i < 11500; ++i) g_sink->onSample(v.id, *f, kT0 + i * 1000, 40 + i % 7);
  if (!g_store->flush()) std::abort();
  std::atexit([] {
    g_sink.reset();
    g_store.reset();
    std::error_code ec;
    std::filesystem::remove_all(g_dir, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  g_input = std::string_view(reinterpret_cast<const char*>(data), size);
  HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/history";
  std::string_view rest = g_input;
  while (!rest.empty() && req.params.size() < 64) {
    const std::size_t amp = rest.find('&');
    std::string_view item = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const std::size_t eq = item.find('=');
    std::string name(item.substr(0, eq)), value(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    checkDuration(value);
    checkStep(value);
    checkTime(value);
    checkListen(value);
    req.params.emplace_back(std::move(name), std::move(value));
  }
  history(req);
  return 0;
}
