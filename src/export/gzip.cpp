#include "export/gzip.h"
#include "export/header_tokens.h"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>

namespace gw::exporter {

void gzipCompress(std::string_view data, std::string& out, int level) {
  out.clear();
  z_stream zs{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: deflateInit2 failed");
  out.resize(deflateBound(&zs, static_cast<uLong>(data.size())) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  const std::size_t produced = out.size() - zs.avail_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate failed");
  out.resize(produced);
}

namespace {

// Raw deflate (no zlib/gzip framing) of `data` appended to `out`, ending with `flush`
// (Z_FULL_FLUSH: byte-aligned, more may follow; Z_FINISH: the final block).
void rawDeflate(std::string_view data, std::string& out, int level, int window_bits, int mem_level, int flush) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, -window_bits, mem_level, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("gzip: deflateInit2 failed");
  const std::size_t start = out.size();
  // deflateBound covers Z_FINISH; a full flush adds an empty stored block (5 bytes) at most.
  out.resize(start + deflateBound(&zs, static_cast<uLong>(data.size())) + 16);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  zs.avail_out = static_cast<uInt>(out.size() - start);
  const int rc = deflate(&zs, flush);
  const bool done = flush == Z_FINISH ? rc == Z_STREAM_END : (rc == Z_OK && zs.avail_in == 0 && zs.avail_out > 0);
  const std::size_t produced = out.size() - start - zs.avail_out;
  deflateEnd(&zs);
  if (!done) throw std::runtime_error("gzip: deflate failed");
  out.resize(start + produced);
}

void appendLe32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

void gzipPrefix(std::string_view data, GzipPrefix& out, int level) {
  out.deflated.clear();
  rawDeflate(data, out.deflated, level, 15, 8, Z_FULL_FLUSH);
  out.crc = crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
  out.size = data.size();
}

void gzipWithPrefix(const GzipPrefix& prefix, std::string_view suffix, std::string& out, int level) {
  out.clear();
  // RFC 1952 header: magic, deflate, no flags, no mtime, no extra flags, OS = Unix.
  static constexpr char kHeader[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, 3};
  out.append(kHeader, sizeof kHeader);
  out += prefix.deflated;
  // The suffix is a few kilobytes: a 4 KiB window and small hash tables keep its set-up cheap.
  rawDeflate(suffix, out, level, 12, 4, Z_FINISH);
  const uLong suffix_crc = crc32(0L, reinterpret_cast<const Bytef*>(suffix.data()), static_cast<uInt>(suffix.size()));
  appendLe32(out,
             static_cast<std::uint32_t>(crc32_combine(prefix.crc, suffix_crc, static_cast<z_off_t>(suffix.size()))));
  appendLe32(out, static_cast<std::uint32_t>((prefix.size + suffix.size()) & 0xffffffffu));
}

std::string gzipCompress(std::string_view data, int level) {
  std::string out;
  gzipCompress(data, out, level);
  return out;
}

using detail::forEachElement;
using detail::iequals;
using detail::weightOf;

bool acceptsGzip(std::string_view header) {
  double gzip = -1, star = -1;
  forEachElement(header, [&](std::string_view coding, std::string_view params) {
    const double q = weightOf(params).value_or(0);  // a malformed q refuses
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
      gzip = std::max(gzip, q);
    } else if (coding == "*") {
      star = std::max(star, q);
    }
  });
  if (gzip >= 0) return gzip > 0;  // named explicitly: its q decides
  return star > 0;
}

}  // namespace gw::exporter
