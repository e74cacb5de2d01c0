// The node's web dashboard (docs/dashboard.md): `GET /` gives its page to a browser and the JSON
// endpoint index to everyone else; `GET /ui/{file}` its script and style. Behind the same TLS and
// basic authentication as the API (HttpServer applies them to every path but /healthz, /health).
#pragma once

#include <string_view>

#include "server/http_server.h"

namespace gw::server {

// True when the Accept header prefers an HTML page to JSON: text/html (or application/xhtml+xml)
// is listed by name with a weight above the one JSON gets (by name, application/*, or */*). A
// browser's `text/html,…,*/*;q=0.8` is true; curl's `*/*`, `application/json`, an absent or
// malformed header are false, so API clients keep the index.
bool prefersHtml(std::string_view accept);

// Registers `/` (the page or `json_index`) and `/ui/{}`.
void registerWebRoutes(HttpServer& h, HttpServer::Handler json_index);

}  // namespace gw::server
