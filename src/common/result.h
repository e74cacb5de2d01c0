// Status and Result<T>: every fallible call returns one, in the manner of LevelDB's Status.
// (std::expected is C++23; GCC 12 on Debian 12 does not have it.)
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace gw {

class Status {
 public:
  // Where a failure's code comes from. Each origin has its own code space (NVML_ERROR_NOT_SUPPORTED
  // and SQLITE_PERM are both 3), so a code is only read through the accessor of its origin.
  // Process exit codes are not failures of a call and never travel in a Status.
  enum class Origin { None, App, Nvml, Sqlite, Errno };

  Status() = default;  // ok
  static Status Ok() { return Status(); }
  // A failure of our own, with no foreign code.
  static Status Error(std::string message) { return Status(Origin::App, 0, std::move(message)); }
  static Status Nvml(int code, std::string message) { return Status(Origin::Nvml, code, std::move(message)); }
  static Status Sqlite(int code, std::string message) { return Status(Origin::Sqlite, code, std::move(message)); }
  static Status Errno(int err, std::string message) { return Status(Origin::Errno, err, std::move(message)); }
  // The same failure (origin and code) told with more context.
  Status withMessage(std::string message) const { return Status(origin_, code_, std::move(message)); }

  bool ok() const { return origin_ == Origin::None; }
  explicit operator bool() const { return ok(); }
  Origin origin() const { return origin_; }
  // The nvmlReturn_t of an NVML failure; 0 for anything else.
  int nvmlCode() const { return origin_ == Origin::Nvml ? code_ : 0; }
  // The (extended) SQLite result code of a SQLite failure; 0 for anything else.
  int sqliteCode() const { return origin_ == Origin::Sqlite ? code_ : 0; }
  // The errno of a failed system call; 0 for anything else.
  int errnoCode() const { return origin_ == Origin::Errno ? code_ : 0; }
  const std::string& message() const { return message_; }

 private:
  Status(Origin origin, int code, std::string message) : origin_(origin), code_(code), message_(std::move(message)) {}
  Origin origin_ = Origin::None;
  int code_ = 0;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status error) : v_(std::move(error)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  T value_or(T fallback) const { return ok() ? value() : std::move(fallback); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  const std::string& error() const { return status().message(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace gw
