#include "server/yaml_check.h"

#include <algorithm>
#include <map>

namespace gw::server {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

Status checkKeys(const Checker& c, const YAML::Node& map, const std::string& prefix,
                 const std::vector<std::string>& known) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return c.error(kv.first, prefix.empty() ? key : prefix + "." + key, "unknown key (known: " + join(known) + ")");
    }
  }
  return Status::Ok();
}

Status checkDuplicateKeys(const Checker& c, const YAML::Node& n, const std::string& path, int depth) {
  if (depth > 64) return c.error(n, path.empty() ? "(top level)" : path, "nested too deeply");
  if (n.IsMap()) {
    std::map<std::string, int> seen;
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("(complex key)");
      const std::string field = path.empty() ? key : path + "." + key;
      const int line = kv.first.Mark().line + 1;
      if (auto [it, fresh] = seen.emplace(key, line); !fresh)
        return c.error(kv.first, field,
                       "duplicate key (first given on line " + std::to_string(it->second) + "); give each key once");
      if (Status s = checkDuplicateKeys(c, kv.second, field, depth + 1); !s) return s;
    }
  } else if (n.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : n)
      if (Status s = checkDuplicateKeys(c, item, path + "[" + std::to_string(i++) + "]", depth + 1); !s) return s;
  }
  return Status::Ok();
}

Status needScalar(const Checker& c, const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) return c.error(n, field, "expected a single value");
  return Status::Ok();
}

}  // namespace gw::server
