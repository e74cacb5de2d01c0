#include "server/routes_web.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "export/header_tokens.h"
#include "server/web_assets.h"

namespace gw::server {
namespace {

using exporter::detail::forEachElement;
using exporter::detail::iequals;
using exporter::detail::trim;
using exporter::detail::weightOf;

struct Asset {
  const WebAsset* asset;
  const char* type;
  std::string etag;
};

const char* contentTypeOf(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// FNV-1a: the files are fixed for the life of the process, so their tags are computed once.
std::string etagOf(std::string_view bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

// Scripts, styles and data from this origin only; no inline script or style, no plugins, no
// framing (the page shows untrusted strings: GPU names, process names, kernel-log lines).
constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

bool matchesTag(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    const std::size_t comma = if_none_match.find(',');
    std::string_view t = trim(if_none_match.substr(0, comma));
    if (t.starts_with("W/")) t.remove_prefix(2);
    if (t == etag || t == "*") return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

void serve(const Asset& a, const HttpRequest& req, HttpResponse& res) {
  // Revalidated on every load (a node's binary is upgraded in place), answered 304 when unchanged.
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("ETag", a.etag);
  res.setHeader("Content-Security-Policy", kCsp);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Frame-Options", "DENY");
  if (matchesTag(req.header("If-None-Match").substr(0, 1024), a.etag)) {
    res.status = 304;
    res.setContent("", a.type);
    return;
  }
  res.setContent(std::string(a.asset->bytes), a.type);
}

}  // namespace

bool prefersHtml(std::string_view accept) {
  double html = 0, json = 0;
  bool named_html = false, malformed = false;
  forEachElement(accept, [&](std::string_view range, std::string_view params) {
    const std::optional<double> q = weightOf(params);
    if (!q) {
      malformed = true;  // an API client with a broken header keeps its JSON
      return;
    }
    if (iequals(range, "text/html") || iequals(range, "application/xhtml+xml")) {
      named_html = true;
      html = std::max(html, *q);
    } else if (iequals(range, "application/json") || iequals(range, "application/*") || range == "*/*") {
      json = std::max(json, *q);
    }
  });
  if (malformed) return false;
  return named_html && html > 0 && html > json;
}

void registerWebRoutes(HttpServer& h, HttpServer::Handler json_index) {
  auto assets = std::make_shared<std::vector<Asset>>();
  const Asset* page = nullptr;
  for (const auto& w : webAssets()) assets->push_back({&w, contentTypeOf(w.name), etagOf(w.bytes)});
  for (const auto& a : *assets)
    if (a.asset->name == "index.html") page = &a;
  h.get("/", [assets, page, json_index](const HttpRequest& req, HttpResponse& res) {
    res.setHeader("Vary", "Accept");
    if (page && prefersHtml(req.header("Accept").substr(0, 4096))) {
      if (!onlyParams(req, res, {})) return;
      return serve(*page, req, res);
    }
    json_index(req, res);
  });
  h.get("/ui/{}", [assets](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    for (const auto& a : *assets)
      if (a.asset->name == req.matches[1]) return serve(a, req, res);
    jsonError(res, 404, "no such file: /ui/" + req.matches[1].substr(0, 100), "");
  });
}

}  // namespace gw::server
