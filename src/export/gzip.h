// gzip for /metrics responses (Prometheus sends Accept-Encoding: gzip).
#pragma once

#include <string>
#include <string_view>

namespace gw::exporter {

// gzip member (RFC 1952) of `data`. Level 1 by default: /metrics text compresses ~10x even at the
// fastest level, and the scrape stays cheap. Throws std::runtime_error if zlib fails (out of memory).
std::string gzipCompress(std::string_view data, int level = 1);
// The same into a caller-owned buffer (cleared first), so a server can reuse its capacity.
void gzipCompress(std::string_view data, std::string& out, int level = 1);

// True when an Accept-Encoding header allows gzip: "gzip" / "x-gzip" or "*" with q > 0, and gzip
// not explicitly refused with q=0. Tokens and parameters are case-insensitive.
bool acceptsGzip(std::string_view accept_encoding);

}  // namespace gw::exporter
