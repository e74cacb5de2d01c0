// gzip for /metrics responses (Prometheus sends Accept-Encoding: gzip).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gw::exporter {

// gzip member (RFC 1952) of `data`. Level 1 by default: /metrics text compresses ~10x even at the
// fastest level, and the scrape stays cheap. Throws std::runtime_error if zlib fails (out of memory).
std::string gzipCompress(std::string_view data, int level = 1);
// The same into a caller-owned buffer (cleared first), so a server can reuse its capacity.
void gzipCompress(std::string_view data, std::string& out, int level = 1);

// One gzip member built from a part compressed once and a short part compressed per response, so
// that a cached page plus a per-scrape tail costs one small deflate instead of the whole page.
// The prefix is a raw deflate stream ended with a full flush: byte-aligned, no final block, and
// nothing after it may refer back into it. The suffix then starts a fresh raw stream that ends
// the member, and the trailer's CRC-32 joins both halves with crc32_combine (as pigz does).
struct GzipPrefix {
  std::string deflated;    // raw deflate blocks, none of them final
  unsigned long crc = 0;   // CRC-32 of the uncompressed prefix
  std::uint64_t size = 0;  // its length in bytes
};
void gzipPrefix(std::string_view data, GzipPrefix& out, int level = 1);
// gzip header + prefix + the suffix compressed as the final blocks + trailer, into `out` (cleared).
void gzipWithPrefix(const GzipPrefix& prefix, std::string_view suffix, std::string& out, int level = 1);

// True when an Accept-Encoding header allows gzip: "gzip" / "x-gzip" or "*" with q > 0, and gzip
// not explicitly refused with q=0. Tokens and parameters are case-insensitive.
bool acceptsGzip(std::string_view accept_encoding);

}  // namespace gw::exporter
