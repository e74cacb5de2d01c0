// Checking a YAML file an operator wrote (the agent's configuration, the web configuration):
// every error names the file, the line, the field and what is wrong; unknown keys and keys given
// twice are refused, so that a typo never silently changes a setting.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace gw::server {

class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}
  Status error(const YAML::Node& n, const std::string& field, const std::string& message) const {
    int line = n.IsDefined() ? n.Mark().line + 1 : 0;
    if (line <= 0) line = 1;
    return Status::Error(file_ + ":" + std::to_string(line) + ": " + field + ": " + message);
  }
  const std::string& file() const { return file_; }
  Status errorAtLine(int line, const std::string& field, const std::string& message) const {
    return Status::Error(file_ + ":" + std::to_string(line) + ": " + field + ": " + message);
  }

 private:
  std::string file_;
};

std::string join(const std::vector<std::string>& v);

// Rejects keys that are not in `known`.
Status checkKeys(const Checker& c, const YAML::Node& map, const std::string& prefix,
                 const std::vector<std::string>& known);

// yaml-cpp keeps every pair of a mapping and answers a lookup with the first one, so a key given
// twice would silently lose the second value. Refused anywhere in the document, naming both lines.
Status checkDuplicateKeys(const Checker& c, const YAML::Node& n, const std::string& path, int depth = 0);

Status needScalar(const Checker& c, const YAML::Node& n, const std::string& field);

}  // namespace gw::server
