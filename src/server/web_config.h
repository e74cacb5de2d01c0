// The web configuration file of Prometheus exporters (--web.config.file; the exporter-toolkit
// format, docs/config.md "Web configuration"): TLS and basic authentication for the HTTP port.
// Read once at start; certificates, keys and hashes are checked here so that a mistake is an
// error at start ("file:line: field: message"), never a port that silently serves plain HTTP.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "server/http_settings.h"

namespace gw::server {

inline constexpr std::size_t kMaxWebConfigBytes = 1 << 20;  // the file and each PEM file

// `text` is the file's content; relative file names resolve against `path`'s folder.
Result<WebConfig> parseWebConfig(std::string_view text, const std::string& path);
Result<WebConfig> loadWebConfig(const std::string& path);

}  // namespace gw::server
