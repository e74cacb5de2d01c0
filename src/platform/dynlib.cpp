#include "platform/dynlib.h"

#include <dlfcn.h>

namespace gw::platform {

DynamicLibrary::~DynamicLibrary() {
  // Deliberately not dlclose()d: NVML keeps threads and atexit handlers alive, and unloading it
  // while they run crashes at exit. The OS reclaims the mapping.
  handle_ = nullptr;
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(other.handle_), path_(std::move(other.path_)) {
  other.handle_ = nullptr;
}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  handle_ = other.handle_;
  path_ = std::move(other.path_);
  other.handle_ = nullptr;
  return *this;
}

Result<DynamicLibrary> DynamicLibrary::open(const std::string& path_or_soname) {
  dlerror();
  void* h = ::dlopen(path_or_soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return Status::Error(e ? e : ("cannot load " + path_or_soname));
  }
  DynamicLibrary lib;
  lib.handle_ = h;
  lib.path_ = path_or_soname;
  return lib;
}

void* DynamicLibrary::symbol(const char* name) const {
  if (!handle_) return nullptr;
  return ::dlsym(handle_, name);
}

}  // namespace gw::platform
