// dlopen/dlsym with the error text kept, so a missing library or symbol is explained, never fatal.
#pragma once

#include <string>

#include "common/result.h"

namespace gw::platform {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;

  static Result<DynamicLibrary> open(const std::string& path_or_soname);

  // nullptr when the library lacks the symbol.
  void* symbol(const char* name) const;
  bool isOpen() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace gw::platform
