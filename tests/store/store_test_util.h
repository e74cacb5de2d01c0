// A fresh temporary directory per test, removed afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "../support/temp_dir.h"
#include "store/store.h"

namespace gw::store::testing {

class TempDir : public testsupport::TempDir {
 public:
  TempDir() : testsupport::TempDir("gw_store") {}
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
