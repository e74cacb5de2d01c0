#include "server/counters_file.h"

#include <algorithm>
#include <cctype>

#include "fields/catalog.h"
#include "platform/regular_file.h"

namespace gw::server {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<CountersFile> parseCountersFile(std::string_view text, const std::string& filename) {
  CountersFile out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (++line_no > kMaxCountersLines)
      return Status::Error(filename + ": more than " + std::to_string(kMaxCountersLines) + " lines");
    auto at = [&](const std::string& what) {
      return Status::Error(filename + ":" + std::to_string(line_no) + ": " + what);
    };
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    const auto c1 = line.find(',');
    if (c1 == std::string_view::npos)
      return at("expected 'DCGM_FIELD, type, help' (dcgm-exporter's counters format), got '" +
                std::string(line.substr(0, 80)) + "'");
    const std::string_view name = trim(line.substr(0, c1));
    std::string_view rest = line.substr(c1 + 1);
    const auto c2 = rest.find(',');
    const std::string type = lower(trim(rest.substr(0, c2)));
    if (name.empty()) return at("the field name is empty");
    if (type != "gauge" && type != "counter" && type != "label")
      return at(std::string(name) + ": type '" + type.substr(0, 40) + "'; expected gauge, counter or label");
    if (name == "DCGM_FI_DRIVER_VERSION") {
      out.driver_version_label = type == "label";
      continue;
    }
    const fields::Field* f = fields::findByDcgmName(name);
    if (!f) {
      out.skipped.push_back(filename + ":" + std::to_string(line_no) + " " + std::string(name.substr(0, 96)));
      continue;
    }
    if (type == "label" || f->type == fields::Type::Label) {
      // dcgm-exporter turns text fields into labels; gpuwarden's series carry their own identity.
      out.skipped.push_back(filename + ":" + std::to_string(line_no) + " " + std::string(name));
      continue;
    }
    std::string key(f->key);
    if (std::find(out.fields.begin(), out.fields.end(), key) == out.fields.end()) out.fields.push_back(key);
  }
  if (out.fields.empty()) return Status::Error(filename + ": names no field gpuwarden collects");
  return out;
}

Result<CountersFile> loadCountersFile(const std::string& path) {
  auto text = platform::readRegularFile(path, kMaxCountersFileBytes, "the counters file");
  if (!text) return text.status();
  return parseCountersFile(*text, path);
}

}  // namespace gw::server
