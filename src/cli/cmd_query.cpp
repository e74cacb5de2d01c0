// gpuwarden query --query-gpu=... --format=csv: nvidia-smi's scripting interface, same names.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "fields/catalog.h"
#include "platform/deadline.h"

namespace gw::cli {
namespace {

struct QueryOptions {
  std::string fields;
  std::string format = "csv";
  std::string ids;
  double loop = 0;
  int count = 0;
  bool help_fields = false;
};

void printQueryHelp() {
  std::cout << "Fields for --query-gpu (nvidia-smi's names; our keys and DCGM names are accepted too):\n\n";
  for (const auto& f : fields::all()) {
    std::string name = f.smi_name.empty() ? std::string(f.key) : std::string(f.smi_name);
    std::string unit = f.smi_unit.empty() ? "" : " [" + std::string(f.smi_unit) + "]";
    std::cout << fmt::format("  {:<42} {}{}\n", name, f.help, unit);
  }
}

std::string validNames() {
  std::string s;
  for (const auto& f : fields::all()) {
    s += s.empty() ? "" : ", ";
    s += f.smi_name.empty() ? f.key : f.smi_name;
  }
  return s;
}

}  // namespace

void addQuery(CLI::App& app, Run& run) {
  auto o = std::make_shared<QueryOptions>();
  auto* cmd = app.add_subcommand("query", "Query GPU fields for scripts, like nvidia-smi --query-gpu");
  cmd->add_option("--query-gpu", o->fields, "Comma-separated fields, e.g. index,name,memory.used,utilization.gpu");
  cmd->add_option("--format", o->format, "csv[,noheader][,nounits] (default csv)");
  cmd->add_option("-i,--id", o->ids, "GPUs to show: indexes, UUIDs or PCI bus ids, comma-separated");
  cmd->add_option("-l,--loop", o->loop, "Repeat every SECONDS until interrupted");
  cmd->add_option("-c,--count", o->count, "With --loop: stop after COUNT rounds");
  cmd->add_flag("--help-query-gpu", o->help_fields, "List the fields --query-gpu accepts");
  cmd->footer("Example: gpuwarden query --query-gpu=index,memory.total,memory.used,utilization.gpu --format=csv");
  cmd->callback([&run, o]() {
    if (o->help_fields) {
      printQueryHelp();
      return;
    }
    if (o->fields.empty()) {
      printError("query needs --query-gpu=FIELD[,FIELD...]; see --help-query-gpu");
      run.exit_code = kExitUsage;
      return;
    }
    std::vector<const fields::Field*> selected;
    std::vector<std::string> names;
    std::stringstream ss(o->fields);
    for (std::string name; std::getline(ss, name, ',');) {
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      if (name.empty()) continue;
      const fields::Field* f = fields::findAny(name);
      if (!f) {
        printError("unknown field '" + name + "' in --query-gpu. Valid fields: " + validNames());
        run.exit_code = kExitUsage;
        return;
      }
      selected.push_back(f);
      names.push_back(name);
    }
    bool header = true, units = true;
    {
      std::stringstream fs(o->format);
      std::string part;
      std::getline(fs, part, ',');
      if (part != "csv" && !run.ctx.options.json) {
        printError("unsupported --format '" + o->format + "': use csv[,noheader][,nounits] or --json");
        run.exit_code = kExitUsage;
        return;
      }
      while (std::getline(fs, part, ',')) {
        if (part == "noheader")
          header = false;
        else if (part == "nounits")
          units = false;
        else {
          printError("unknown --format option '" + part + "' (expected noheader or nounits)");
          run.exit_code = kExitUsage;
          return;
        }
      }
    }
    auto devices = run.ctx.devices(&run.exit_code);
    if (!devices) return;
    nvml::Session* s = devices->session;
    const unsigned count = devices->count;
    const GpuSelection sel = parseSelection(o->ids);
    installStopHandlers();
    int rounds = 0;
    bool any_error = false;
    do {
      nlohmann::json rows = nlohmann::json::array();
      if (header && !run.ctx.options.json && rounds == 0) {
        std::string line;
        for (std::size_t i = 0; i < selected.size(); ++i) {
          line += i ? ", " : "";
          line += names[i];
          if (units && !selected[i]->smi_unit.empty()) line += " [" + std::string(selected[i]->smi_unit) + "]";
        }
        std::cout << line << "\n";
      }
      // Every GPU on its own thread under the call deadline: a hung GPU shows as [N/A] and holds
      // up neither the others nor the command.
      struct Row {
        bool matched = false;
        bool error = false;
        std::vector<std::string> values;
      };
      auto rowsRead = platform::runEachWithDeadline<Row>(
          count,
          [s, sel, selected, units](std::size_t idx) {
            const unsigned i = static_cast<unsigned>(idx);
            Row row;
            auto dev = s->deviceByIndex(i);
            nvml::Device d = dev ? *dev : nvml::Device();
            std::string uuid, bus;
            if (!sel.empty() && dev) {
              uuid = d.uuid().value_or("");
              if (auto p = d.pciInfo()) bus = p->bus_id;
            }
            if (!sel.matches(i, uuid, bus)) return row;
            row.matched = true;
            fields::ReadContext ctx{*s, d, i};
            for (const auto* f : selected) {
              // A GPU that cannot even be opened still has its index; every other value is unknown.
              std::string v = dev || f->key == "index"                ? fields::formatForSmi(*f, ctx, units)
                              : nvml::isLost(dev.status().nvmlCode()) ? "[GPU is lost]"
                                                                      : "[Unknown Error]";
              if (v == "[GPU is lost]" || v == "[Unknown Error]") row.error = true;
              row.values.push_back(std::move(v));
            }
            return row;
          },
          kCallDeadline);
      bool matched = false;
      for (unsigned i = 0; i < count; ++i) {
        Row row;
        if (rowsRead[i]) {
          row = std::move(*rowsRead[i]);
        } else {
          // Stalled past the deadline: only what needs no call is known.
          if (!sel.empty() && !sel.matches(i, "", "")) continue;
          row.matched = true;
          row.error = true;
          for (const auto* f : selected) row.values.push_back(f->key == "index" ? std::to_string(i) : "[N/A]");
        }
        if (!row.matched) continue;
        matched = true;
        any_error = any_error || row.error;
        std::string line;
        nlohmann::json jrow;
        for (std::size_t k = 0; k < selected.size(); ++k) {
          line += k ? ", " : "";
          line += row.values[k];
          jrow[names[k]] = row.values[k];
        }
        if (run.ctx.options.json) {
          rows.push_back(jrow);
        } else {
          std::cout << line << "\n";
        }
      }
      if (!matched) {
        printError("no GPU matches -i " + o->ids);
        run.exit_code = kExitUsage;
        return;
      }
      if (run.ctx.options.json) std::cout << rows.dump() << "\n";
      std::cout.flush();
      ++rounds;
      if (o->loop <= 0 || (o->count > 0 && rounds >= o->count)) break;
    } while (sleepInterruptible(o->loop));
    run.exit_code = any_error ? kExitPartial : kExitOk;
  });
}

}  // namespace gw::cli
