// The dashboard's files (src/server/web/), embedded in the binary at build time by
// src/server/web/embed.cmake: a compute node has no internet and no web root to install.
#pragma once

#include <span>
#include <string_view>

namespace gw::server {

struct WebAsset {
  std::string_view name;   // "index.html", "app.js", "app.css"
  std::string_view bytes;  // the file as it is in the source tree
};

std::span<const WebAsset> webAssets();

}  // namespace gw::server
