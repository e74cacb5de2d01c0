// gpuwarden query --query-gpu=... --format=csv: nvidia-smi's scripting interface, same names. A
// thin wrapper over smi's query views (one home), keeping gpuwarden's --json, loop and exit codes.
#include <iostream>
#include <utility>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/smi/smi_query.h"

namespace gw::cli {
namespace {

struct QueryOptions {
  std::string fields, apps, retired, remapped;
  std::string format = "csv";
  std::string ids;
  double loop = 0;
  int count = 0;
  bool help_fields = false, help_apps = false, help_retired = false, help_remapped = false;
};

// gpuwarden's exit codes (docs/cli.md) from nvidia-smi's.
int gwExit(int smi_exit) {
  switch (smi_exit) {
    case smi::kSmiOk:
      return kExitOk;
    case smi::kSmiInvalidArgument:
    case smi::kSmiNotFound:
      return kExitUsage;
    case smi::kSmiDriverNotLoaded:
    case smi::kSmiLibraryNotFound:
    case smi::kSmiFunctionNotFound:
    case smi::kSmiLibraryMismatch:
      return kExitNoDriver;
    default:
      return kExitPartial;
  }
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
  cmd->add_option("--query-compute-apps", o->apps, "Comma-separated properties of the compute processes");
  cmd->add_option("--query-retired-pages", o->retired, "Comma-separated properties of the retired memory pages");
  cmd->add_option("--query-remapped-rows", o->remapped, "Comma-separated properties of the remapped rows");
  cmd->add_flag("--help-query-gpu", o->help_fields, "List the fields --query-gpu accepts");
  cmd->add_flag("--help-query-compute-apps", o->help_apps, "List the properties --query-compute-apps accepts");
  cmd->add_flag("--help-query-retired-pages", o->help_retired, "List the properties --query-retired-pages accepts");
  cmd->add_flag("--help-query-remapped-rows", o->help_remapped, "List the properties --query-remapped-rows accepts");
  cmd->footer("Example: gpuwarden query --query-gpu=index,memory.total,memory.used,utilization.gpu --format=csv\n" +
              std::string(kInventoryExitCodes));
  cmd->callback([&run, o]() {
    using Kind = smi::QueryRequest::Kind;
    for (auto [wanted, kind] :
         {std::pair{o->help_fields, Kind::Gpu}, std::pair{o->help_apps, Kind::ComputeApps},
          std::pair{o->help_retired, Kind::RetiredPages}, std::pair{o->help_remapped, Kind::RemappedRows}}) {
      if (!wanted) continue;
      std::cout << smi::queryHelp(kind);
      return;
    }
    smi::QueryRequest request;
    int given = 0;
    for (auto [list, kind] :
         {std::pair{&o->fields, Kind::Gpu}, std::pair{&o->apps, Kind::ComputeApps},
          std::pair{&o->retired, Kind::RetiredPages}, std::pair{&o->remapped, Kind::RemappedRows}}) {
      if (list->empty()) continue;
      ++given;
      request.kind = kind;
      request.fields = *list;
    }
    if (given != 1) {
      printError(given ? "query takes one of --query-gpu, --query-compute-apps, --query-retired-pages and "
                         "--query-remapped-rows"
                       : "query needs --query-gpu=FIELD[,FIELD...]; see --help-query-gpu");
      run.exit_code = kExitUsage;
      return;
    }
    request.format = o->format;
    request.ids = o->ids;
    installStopHandlers();
    int rounds = 0;
    bool any_error = false;
    do {
      int smi_exit = smi::kSmiOk;
      auto table = smi::queryTable(run.ctx, request, std::cerr, &smi_exit);
      if (!table) {
        run.exit_code = gwExit(smi_exit);
        return;
      }
      any_error = any_error || table->any_lost || table->any_stalled || table->any_error;
      if (run.ctx.options.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& row : table->rows) {
          nlohmann::json j;
          for (std::size_t k = 0; k < table->names.size(); ++k) j[table->names[k]] = row[k];
          rows.push_back(j);
        }
        std::cout << rows.dump() << "\n";
      } else {
        smi::writeCsv(*table, rounds == 0, std::cout);
      }
      std::cout.flush();
      ++rounds;
      // A full disk or a closed file ends the loop; parseAndRun says so.
      if (!std::cout || o->loop <= 0 || (o->count > 0 && rounds >= o->count)) break;
    } while (sleepInterruptible(o->loop));
    run.exit_code = any_error ? kExitPartial : kExitOk;
  });
}

}  // namespace gw::cli
