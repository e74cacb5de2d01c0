// Inflates one gzip member with zlib, which checks the header, the CRC-32 and the length: a test
// failure (not an exception) when the input is not exactly one valid member.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace gw::testsupport {

inline std::string gunzip(const std::string& gz) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);  // gzip only
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buf[16384];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc == Z_OK);
  EXPECT_EQ(rc, Z_STREAM_END);
  EXPECT_EQ(zs.avail_in, 0u) << "trailing bytes after the gzip member";
  inflateEnd(&zs);
  return out;
}

}  // namespace gw::testsupport
