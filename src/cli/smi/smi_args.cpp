#include "cli/smi/smi_args.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>
#include <set>

namespace gw::cli::smi {
namespace {

const std::vector<std::string> kSections = {"MEMORY",
                                            "UTILIZATION",
                                            "ECC",
                                            "TEMPERATURE",
                                            "POWER",
                                            "CLOCK",
                                            "COMPUTE",
                                            "PIDS",
                                            "PERFORMANCE",
                                            "SUPPORTED_CLOCKS",
                                            "PAGE_RETIREMENT",
                                            "ACCOUNTING",
                                            "ENCODER_STATS",
                                            "SUPPORTED_GPU_TARGET_TEMP",
                                            "VOLTAGE",
                                            "FBC_STATS",
                                            "ROW_REMAPPER",
                                            "RESET_STATUS",
                                            "GSP_FIRMWARE_VERSION"};

// The setting flags this build changes (through NVML, or the agent's control socket: R24).
const std::map<std::string, SettingRequest::Kind> kChangeFlags = {
    {"-pm", SettingRequest::Kind::Persistence},
    {"--persistence-mode", SettingRequest::Kind::Persistence},
    {"-pl", SettingRequest::Kind::PowerLimit},
    {"--power-limit", SettingRequest::Kind::PowerLimit},
    {"-lgc", SettingRequest::Kind::LockGpuClocks},
    {"--lock-gpu-clocks", SettingRequest::Kind::LockGpuClocks},
    {"-rgc", SettingRequest::Kind::ResetGpuClocks},
    {"--reset-gpu-clocks", SettingRequest::Kind::ResetGpuClocks},
    {"-lmc", SettingRequest::Kind::LockMemoryClocks},
    {"--lock-memory-clocks", SettingRequest::Kind::LockMemoryClocks},
    {"-rmc", SettingRequest::Kind::ResetMemoryClocks},
    {"--reset-memory-clocks", SettingRequest::Kind::ResetMemoryClocks},
    {"-ac", SettingRequest::Kind::ApplicationsClocks},
    {"--applications-clocks", SettingRequest::Kind::ApplicationsClocks},
    {"-rac", SettingRequest::Kind::ResetApplicationsClocks},
    {"--reset-applications-clocks", SettingRequest::Kind::ResetApplicationsClocks},
    {"-c", SettingRequest::Kind::ComputeMode},
    {"--compute-mode", SettingRequest::Kind::ComputeMode},
    {"-e", SettingRequest::Kind::Ecc},
    {"--ecc-config", SettingRequest::Kind::Ecc},
    {"-r", SettingRequest::Kind::Reset},
    {"--gpu-reset", SettingRequest::Kind::Reset},
    {"-mig", SettingRequest::Kind::MigMode},
    {"--multi-instance-gpu", SettingRequest::Kind::MigMode},
};
// nvidia-smi mig's actions, one per command line.
const std::map<std::string, SettingRequest::Kind> kMigActions = {
    {"-lgip", SettingRequest::Kind::MigListGpuProfiles},
    {"--list-gpu-instance-profiles", SettingRequest::Kind::MigListGpuProfiles},
    {"-lgipp", SettingRequest::Kind::MigListPlacements},
    {"--list-gpu-instance-possible-placements", SettingRequest::Kind::MigListPlacements},
    {"-lgi", SettingRequest::Kind::MigListGpuInstances},
    {"--list-gpu-instances", SettingRequest::Kind::MigListGpuInstances},
    {"-cgi", SettingRequest::Kind::MigCreateGpuInstances},
    {"--create-gpu-instance", SettingRequest::Kind::MigCreateGpuInstances},
    {"-dgi", SettingRequest::Kind::MigDestroyGpuInstances},
    {"--destroy-gpu-instance", SettingRequest::Kind::MigDestroyGpuInstances},
    {"-lcip", SettingRequest::Kind::MigListComputeProfiles},
    {"--list-compute-instance-profiles", SettingRequest::Kind::MigListComputeProfiles},
    {"-lci", SettingRequest::Kind::MigListComputeInstances},
    {"--list-compute-instances", SettingRequest::Kind::MigListComputeInstances},
    {"-cci", SettingRequest::Kind::MigCreateComputeInstances},
    {"--create-compute-instance", SettingRequest::Kind::MigCreateComputeInstances},
    {"-dci", SettingRequest::Kind::MigDestroyComputeInstances},
    {"--destroy-compute-instance", SettingRequest::Kind::MigDestroyComputeInstances},
};
// Setting flags this build recognises but does not change: refused, so that none is silently
// taken for something else.
const std::set<std::string> kSettingFlags = {"-am",  "--accounting-mode",    "-caa", "--clear-accounted-apps",
                                             "-p",   "--reset-ecc-errors",   "-cc",  "--cuda-clocks",
                                             "-dm",  "--driver-model",       "-fdm", "--force-driver-model",
                                             "-gom", "--gpu-operation-mode", "-acp", "--applications-clocks-permission",
                                             "-t",   "--toggle-led"};
// Subcommands that change settings (mig) or that this build does not show yet.
const std::set<std::string> kSettingSubcommands = {"drain", "conf-compute", "gpm-config"};
const std::set<std::string> kUnsupportedSubcommands = {"nvlink",       "clocks",     "encodersessions",
                                                       "fbcsessions",  "vgpu",       "c2c",
                                                       "boost-slider", "power-hint", "power-smoothing"};

struct Token {
  std::string name;                  // "-i", "--id"
  std::optional<std::string> value;  // from "--id=0"
};

Token split(const std::string& word) {
  if (word.starts_with("--")) {
    auto eq = word.find('=');
    if (eq != std::string::npos) return {word.substr(0, eq), word.substr(eq + 1)};
  }
  return {word, std::nullopt};
}

bool isNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::optional<unsigned> toUnsigned(const std::string& s) {
  if (!isNumber(s)) return std::nullopt;
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

class Parser {
 public:
  explicit Parser(const std::vector<std::string>& argv) : argv_(argv) {}

  SmiParse run() {
    if (!argv_.empty()) {
      const std::string& first = argv_[0];
      if (first == "dmon") return monitor(SmiArgs::Mode::Dmon);
      if (first == "pmon") return monitor(SmiArgs::Mode::Pmon);
      if (first == "topo") return topo();
      if (first == "mig") return mig();
      if (kSettingSubcommands.contains(first)) return settings("nvidia-smi " + first);
      if (kUnsupportedSubcommands.contains(first))
        return fail(kSmiNotSupported, "gpuwarden smi: the '" + first + "' view is not available in this build.");
    }
    return main();
  }

 private:
  const std::vector<std::string>& argv_;
  std::size_t pos_ = 0;
  SmiParse out_;

  SmiParse fail(int code, std::string message) {
    SmiParse p;
    p.exit = code;
    p.error = std::move(message);
    return p;
  }
  SmiParse invalid(const std::string& what) {
    return fail(kSmiInvalidArgument, "gpuwarden smi: " + what + "\n" + kInvalidCombination);
  }
  SmiParse settings(const std::string& flag) {
    return fail(kSmiNotSupported, "gpuwarden smi: " + flag +
                                      " is not available in this build (it changes -pm, -pl, -lgc, -rgc, -lmc, -rmc, "
                                      "-ac, -rac, -c, -e, -r, -mig and the mig subcommand); nothing was changed.");
  }

  // The value of a setting flag, checked for form; the range is the board's (NVML checks it).
  std::optional<SmiParse> settingValue(const Token& t, SettingRequest::Kind kind) {
    using K = SettingRequest::Kind;
    SettingRequest& r = out_.args.setting;
    r.kind = kind;
    r.flag = t.name;
    if (kind == K::ResetGpuClocks || kind == K::ResetMemoryClocks || kind == K::ResetApplicationsClocks ||
        kind == K::Reset)
      return std::nullopt;
    auto v = value(t);
    if (!v || v->empty()) return invalid(t.name + " needs a value");
    std::string upper = *v;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    auto pair = [&](bool one_allowed) -> bool {
      const auto comma = v->find(',');
      auto first = toUnsigned(v->substr(0, comma));
      if (!first) return false;
      r.a = r.b = *first;
      if (comma == std::string::npos) return one_allowed;
      auto second = toUnsigned(v->substr(comma + 1));
      if (!second) return false;
      r.b = *second;
      return true;
    };
    switch (kind) {
      case K::Persistence:
      case K::Ecc:
      case K::MigMode:
        if (upper == "1" || upper == "ENABLED") {
          r.on = true;
        } else if (upper == "0" || upper == "DISABLED") {
          r.on = false;
        } else {
          return invalid(t.name + " takes 0/DISABLED or 1/ENABLED, not '" + *v + "'");
        }
        return std::nullopt;
      case K::PowerLimit: {
        char* end = nullptr;
        const double w = std::strtod(v->c_str(), &end);
        if (end == v->c_str() || *end != '\0' || !(w > 0) || w > 1e5)
          return invalid(t.name + " takes a power limit in watts, not '" + *v + "'");
        r.watts = w;
        return std::nullopt;
      }
      case K::LockGpuClocks:
      case K::LockMemoryClocks:
        if (!pair(true) || r.a > r.b)
          return invalid(t.name + " takes MIN,MAX clocks in MHz (MIN no higher than MAX), not '" + *v + "'");
        return std::nullopt;
      case K::ApplicationsClocks:
        if (!pair(false)) return invalid(t.name + " takes MEMORY,GRAPHICS clocks in MHz, not '" + *v + "'");
        return std::nullopt;
      case K::ComputeMode:
        for (unsigned m = 0; m <= 3; ++m)
          if (upper == std::to_string(m) || upper == computeModeWord(m)) {
            r.a = m;
            return std::nullopt;
          }
        return invalid(t.name + " takes 0/DEFAULT, 1/EXCLUSIVE_THREAD, 2/PROHIBITED or 3/EXCLUSIVE_PROCESS, not '" +
                       *v + "'");
      default:
        return std::nullopt;
    }
  }

  // A comma list of ids (-gi, -ci).
  std::optional<SmiParse> idList(const Token& t, std::vector<unsigned>* out) {
    auto v = value(t);
    if (!v || v->empty()) return invalid(t.name + " needs a comma-separated list of instance ids");
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = v->find(',', start);
      const std::string item = v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      auto id = toUnsigned(item);
      if (!id) return invalid(t.name + " takes instance ids such as 1,2, not '" + *v + "'");
      out->push_back(*id);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return std::nullopt;
  }

  // nvidia-smi mig: one action, with -i, -gi, -ci and -C as it allows.
  SmiParse mig() {
    using K = SettingRequest::Kind;
    SmiArgs& a = out_.args;
    SettingRequest& r = a.setting;
    bool action = false;
    pos_ = 1;
    while (pos_ < argv_.size()) {
      const std::string word = argv_[pos_++];
      const Token t = split(word);
      const std::string& n = t.name;
      if (auto act = kMigActions.find(n); act != kMigActions.end()) {
        if (action) return invalid("mig takes one action at a time (" + r.flag + " and " + n + ")");
        action = true;
        r.kind = act->second;
        r.flag = "mig " + n;
        if (r.kind == K::MigCreateGpuInstances || r.kind == K::MigCreateComputeInstances) {
          // -cgi needs its profiles; -cci's are optional (the default compute instance).
          std::optional<std::string> v = t.value;
          if (!v && pos_ < argv_.size() && !argv_[pos_].starts_with("-")) v = argv_[pos_++];
          if (!v && r.kind == K::MigCreateGpuInstances)
            return invalid(n + " needs GPU instance profiles (ids or names such as 19 or 1g.10gb, comma-separated)");
          if (v) {
            std::size_t start = 0;
            while (true) {
              const std::size_t comma = v->find(',', start);
              std::string item = v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
              if (item.empty()) return invalid(n + " has an empty profile in '" + *v + "'");
              r.profiles.push_back(std::move(item));
              if (comma == std::string::npos) break;
              start = comma + 1;
            }
          }
        }
      } else if (n == "-C" || n == "--default-compute-instance") {
        r.default_ci = true;
      } else if (n == "-i" || n == "--id") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(n + " needs a GPU index, UUID or PCI bus id");
        a.ids = *v;
      } else if (n == "-gi" || n == "--gpu-instance-id") {
        if (auto bad = idList(t, &r.gpu_instances)) return *bad;
      } else if (n == "-ci" || n == "--compute-instance-id") {
        if (auto bad = idList(t, &r.compute_instances)) return *bad;
      } else if (n == "-h" || n == "--help") {
        a.mode = SmiArgs::Mode::Help;
        return out_;
      } else {
        return invalid("unknown mig option '" + word + "'");
      }
    }
    if (!action) return invalid("mig needs an action: -lgip, -lgipp, -lgi, -cgi, -dgi, -lcip, -lci, -cci or -dci");
    if (r.default_ci && r.kind != K::MigCreateGpuInstances) return invalid("-C goes with -cgi");
    const bool takes_gi = r.kind == K::MigDestroyGpuInstances || r.kind == K::MigListComputeProfiles ||
                          r.kind == K::MigListComputeInstances || r.kind == K::MigCreateComputeInstances ||
                          r.kind == K::MigDestroyComputeInstances;
    if (!r.gpu_instances.empty() && !takes_gi) return invalid("-gi does not go with " + r.flag);
    if (!r.compute_instances.empty() && r.kind != K::MigDestroyComputeInstances) return invalid("-ci goes with -dci");
    a.mode = SmiArgs::Mode::Setting;
    return out_;
  }

  // The value of an option that needs one: after '=' or the next word.
  std::optional<std::string> value(const Token& t) {
    if (t.value) return t.value;
    if (pos_ < argv_.size()) return argv_[pos_++];
    return std::nullopt;
  }
  // The value of an option whose value may be left out (-l, -lms): only a number is taken.
  std::optional<std::string> optionalValue(const Token& t) {
    if (t.value) return t.value;
    if (pos_ < argv_.size() && isNumber(argv_[pos_])) return argv_[pos_++];
    return std::nullopt;
  }

  SmiParse main() {
    SmiArgs& a = out_.args;
    bool list = false, query = false, help = false, version = false;
    std::optional<QueryRequest::Kind> select, help_query;
    std::string format;
    bool have_format = false, have_sections = false, setting = false;
    while (pos_ < argv_.size()) {
      const std::string word = argv_[pos_++];
      const Token t = split(word);
      const std::string& n = t.name;
      if (kSettingFlags.contains(n)) return settings(n);
      if (auto change = kChangeFlags.find(n); change != kChangeFlags.end()) {
        if (setting) return invalid("one setting at a time (" + out_.args.setting.flag + " and " + n + ")");
        setting = true;
        if (auto bad = settingValue(t, change->second)) return *bad;
        continue;
      }
      if (n == "-h" || n == "--help") {
        help = true;
      } else if (n == "--version") {
        version = true;
      } else if (n == "-L" || n == "--list-gpus") {
        list = true;
      } else if (n == "-q" || n == "--query") {
        query = true;
      } else if (n == "-x" || n == "--xml-format") {
        a.xml = true;
      } else if (n == "-i" || n == "--id") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(n + " needs a GPU index, UUID or PCI bus id");
        a.ids = *v;
      } else if (n == "-f" || n == "--filename") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(n + " needs a file name");
        a.filename = *v;
      } else if (n == "-d" || n == "--display") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(n + " needs a list of sections");
        have_sections = true;
        std::size_t start = 0;
        while (start <= v->size()) {
          std::size_t comma = v->find(',', start);
          std::string s = v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
          std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
          if (std::find(kSections.begin(), kSections.end(), s) == kSections.end())
            return invalid("unknown section '" + s + "' in " + n);
          a.sections.push_back(s);
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
      } else if (n == "-l" || n == "--loop") {
        auto v = optionalValue(t);
        // nvidia-smi's documented default interval.
        unsigned seconds = 5;
        if (v) {
          auto s = toUnsigned(*v);
          // The interval is kept in milliseconds: a count of seconds whose milliseconds do not fit
          // would wrap to a short loop.
          if (!s || *s == 0 || *s > kMaxLoopSeconds)
            return invalid(n + " needs a whole number of seconds from 1 to " + std::to_string(kMaxLoopSeconds) +
                           ", not '" + *v + "'");
          seconds = *s;
        }
        a.loop_ms = seconds * 1000;
      } else if (n == "-lms" || n == "--loop-ms") {
        auto v = optionalValue(t);
        // No default is documented for -lms; -l's five seconds keeps the two alike.
        unsigned ms = 5000;
        if (v) {
          auto s = toUnsigned(*v);
          if (!s || *s == 0) return invalid(n + " needs a whole number of milliseconds above 0, not '" + *v + "'");
          ms = *s;
        }
        a.loop_ms = ms;
      } else if (n == "--query-gpu" || n == "--query-compute-apps" || n == "--query-retired-pages" ||
                 n == "--query-remapped-rows") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(n + " needs a list of fields");
        if (select) return invalid("only one --query-* view at a time");
        select = n == "--query-gpu"             ? QueryRequest::Kind::Gpu
                 : n == "--query-compute-apps"  ? QueryRequest::Kind::ComputeApps
                 : n == "--query-retired-pages" ? QueryRequest::Kind::RetiredPages
                                                : QueryRequest::Kind::RemappedRows;
        a.query.fields = *v;
      } else if (n == "--format" || n == "-u") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(n + " needs a format such as csv,noheader");
        format = *v;
        have_format = true;
      } else if (n == "--help-query-gpu" || n == "--help-query-compute-apps" || n == "--help-query-retired-pages" ||
                 n == "--help-query-remapped-rows") {
        help_query = n == "--help-query-gpu"             ? QueryRequest::Kind::Gpu
                     : n == "--help-query-compute-apps"  ? QueryRequest::Kind::ComputeApps
                     : n == "--help-query-retired-pages" ? QueryRequest::Kind::RetiredPages
                                                         : QueryRequest::Kind::RemappedRows;
      } else {
        // A real 580.159.04 answers an option it does not know with this sentence and 255; a stray
        // word that is no option stays an invalid combination.
        if (!word.starts_with("-")) return invalid("unexpected word '" + word + "'");
        return fail(kSmiOther, "ERROR: Option " + word + " is not recognized. Please run 'nvidia-smi -h'.\n");
      }
    }
    if (help) {
      a.mode = SmiArgs::Mode::Help;
      return out_;
    }
    if (version) {
      a.mode = SmiArgs::Mode::Version;
      return out_;
    }
    if (help_query) {
      a.mode = SmiArgs::Mode::HelpQuery;
      a.help_kind = *help_query;
      return out_;
    }
    if (setting) {
      // As nvidia-smi: a setting goes with -i alone.
      if (list || query || select || a.xml || have_sections || have_format || a.loop_ms || !a.filename.empty())
        return invalid(out_.args.setting.flag + " goes with -i only");
      a.mode = SmiArgs::Mode::Setting;
      return out_;
    }
    const int views = int(list) + int(query) + int(select.has_value());
    if (views > 1) return invalid("-L, -q and --query-* cannot be combined");
    if (a.xml && !query) return invalid("-x goes with -q");
    if (have_sections && !query) return invalid("-d goes with -q");
    if (have_format && !select) return invalid("--format goes with a --query-* option");
    if (list && a.loop_ms) return invalid("-L does not loop");
    if (list) {
      a.mode = SmiArgs::Mode::ListGpus;
    } else if (query) {
      a.mode = SmiArgs::Mode::Query;
    } else if (select) {
      a.mode = SmiArgs::Mode::Select;
      a.query.kind = *select;
      a.query.format = format;
      a.query.ids = a.ids;
    }
    return out_;
  }

  // dmon and pmon: -i, -d, -c, -s, -f. Both accept only their own metric groups.
  SmiParse monitor(SmiArgs::Mode mode) {
    SmiArgs& a = out_.args;
    a.mode = mode;
    const std::string name = mode == SmiArgs::Mode::Dmon ? "dmon" : "pmon";
    const std::string groups = mode == SmiArgs::Mode::Dmon ? "pucvmet" : "um";
    pos_ = 1;
    while (pos_ < argv_.size()) {
      const std::string word = argv_[pos_++];
      const Token t = split(word);
      const std::string& n = t.name;
      if (n == "-h" || n == "--help") {
        a.mode = SmiArgs::Mode::Help;
        return out_;
      }
      if (n == "-i" || n == "--id") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(name + " " + n + " needs a GPU index, UUID or PCI bus id");
        a.ids = *v;
      } else if (n == "-f" || n == "--filename") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(name + " " + n + " needs a file name");
        a.filename = *v;
      } else if (n == "-d" || n == "--delay") {
        auto v = value(t);
        auto s = v ? toUnsigned(*v) : std::nullopt;
        // nvidia-smi's range for the sampling interval.
        if (!s || *s < 1 || *s > 10)
          return invalid(name + " " + n + " needs a whole number of seconds from 1 to 10, not '" + v.value_or("") +
                         "'");
        a.delay_s = *s;
      } else if (n == "-c" || n == "--count") {
        auto v = value(t);
        auto s = v ? toUnsigned(*v) : std::nullopt;
        if (!s || *s == 0)
          return invalid(name + " " + n + " needs a number of samples above 0, not '" + v.value_or("") + "'");
        a.count = *s;
      } else if (n == "-s" || n == "--select") {
        auto v = value(t);
        if (!v || v->empty()) return invalid(name + " " + n + " needs metric groups (" + groups + ")");
        for (char g : *v)
          if (groups.find(g) == std::string::npos)
            return invalid(name + " " + n + ": unknown metric group '" + std::string(1, g) + "' (valid: " + groups +
                           ")");
        a.select = *v;
      } else {
        return invalid("unknown " + name + " option '" + word + "'");
      }
    }
    return out_;
  }

  SmiParse topo() {
    SmiArgs& a = out_.args;
    a.mode = SmiArgs::Mode::Topo;
    bool matrix = false;
    for (pos_ = 1; pos_ < argv_.size(); ++pos_) {
      const std::string& w = argv_[pos_];
      if (w == "-m" || w == "--matrix") {
        matrix = true;
      } else if (w == "-h" || w == "--help") {
        a.mode = SmiArgs::Mode::Help;
        return out_;
      } else if (w == "-mp" || w == "--matrix_pci" || w == "-p2p" || w == "-p" || w == "-n" || w == "-c" || w == "-i" ||
                 w == "--nearest_cpu") {
        return fail(kSmiNotSupported, "gpuwarden smi: topo " + w + " is not available in this build; topo -m is.");
      } else {
        return invalid("unknown topo option '" + w + "'");
      }
    }
    // nvidia-smi prints topo's help without -m; the matrix is the one view this build has.
    if (!matrix) return invalid("topo needs -m");
    return out_;
  }
};

}  // namespace

const std::vector<std::string>& querySections() { return kSections; }

bool changesSettings(const std::string& word) { return word == "mig" || kChangeFlags.contains(split(word).name); }

bool isMigList(SettingRequest::Kind kind) {
  using K = SettingRequest::Kind;
  return kind == K::MigListGpuProfiles || kind == K::MigListPlacements || kind == K::MigListGpuInstances ||
         kind == K::MigListComputeProfiles || kind == K::MigListComputeInstances;
}

bool isMigCommand(SettingRequest::Kind kind) {
  using K = SettingRequest::Kind;
  return isMigList(kind) || kind == K::MigCreateGpuInstances || kind == K::MigDestroyGpuInstances ||
         kind == K::MigCreateComputeInstances || kind == K::MigDestroyComputeInstances;
}

const char* computeModeWord(unsigned mode) {
  switch (mode) {
    case 0:
      return "DEFAULT";
    case 1:
      return "EXCLUSIVE_THREAD";
    case 2:
      return "PROHIBITED";
    case 3:
      return "EXCLUSIVE_PROCESS";
    default:
      return "UNKNOWN";
  }
}

SmiParse parseSmiArgs(const std::vector<std::string>& argv) { return Parser(argv).run(); }

}  // namespace gw::cli::smi
