// A fresh temporary directory for one test, removed with everything in it afterwards. The one
// copy every test directory includes ("../support/temp_dir.h").
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gw::testsupport {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "gw-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` inside the directory (not created).
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  // Writes `content` to `rel` (creating its directories) and returns the file's path.
  std::string write(const std::string& rel, const std::string& content) const {
    std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p.string();
  }

 private:
  std::string path_;
};

}  // namespace gw::testsupport
