// A fresh temporary directory per test, removed afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "store/store.h"

namespace gw::store::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gw_store_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline StoreOptions testOptions(const std::string& path) {
  StoreOptions o;
  o.path = path;
  o.background = false;  // tests drive flush() and compact() themselves
  return o;
}

inline std::unique_ptr<Store> openOrDie(const StoreOptions& o) {
  auto s = Store::open(o);
  EXPECT_TRUE(s.ok()) << s.error();
  return s.ok() ? std::move(s.value()) : nullptr;
}

}  // namespace gw::store::testing
