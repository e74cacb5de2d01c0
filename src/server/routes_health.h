// /api/v1/health, /api/v1/incidents[/{id}] and /api/v1/events: read-only views of what the
// monitor owns. Changes go through the control socket (server/control_server.h).
#pragma once

#include "node/monitor.h"
#include "server/http_server.h"

namespace gw::server {

void registerHealthRoutes(HttpServer& h, node::Monitor& monitor);

}  // namespace gw::server
