// Who gets the dashboard at `/` (routes_web.h): a browser's Accept prefers HTML; API clients
// (curl's */*, application/json, none, anything malformed) keep the JSON index.
#include <gtest/gtest.h>

#include "server/routes_web.h"
#include "server/web_assets.h"

namespace gw::server {
namespace {

TEST(WebRoutes, BrowsersPreferHtml) {
  for (const char* a : {"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
                        "text/html", "application/xhtml+xml", "TEXT/HTML; q=1.0", "application/json;q=0.5, text/html",
                        "text/html;level=1;q=0.9, */*;q=0.1"})
    EXPECT_TRUE(prefersHtml(a)) << a;
}

TEST(WebRoutes, ApiClientsKeepJson) {
  for (const char* a : {"", "*/*", "application/json", "application/json, text/html", "text/*",
                        "text/html;q=0.5, application/json", "text/html;q=0, */*", "text/html;q=0.5, */*",
                        "text/html;q=x", "text/html;q=1.5", "text/html;q=0.12345", "application/*, text/html;q=0.9"})
    EXPECT_FALSE(prefersHtml(a)) << a;
}

TEST(WebRoutes, TheAssetsAreEmbedded) {
  bool page = false, script = false, style = false;
  for (const auto& a : webAssets()) {
    EXPECT_FALSE(a.bytes.empty()) << a.name;
    page |= a.name == "index.html";
    script |= a.name == "app.js";
    style |= a.name == "app.css";
  }
  EXPECT_TRUE(page && script && style);
}

}  // namespace
}  // namespace gw::server
