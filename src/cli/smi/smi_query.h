// The query views' table before it becomes nvidia-smi's CSV: `gpuwarden query --json` prints the
// same rows as JSON, so both read them here (one home for selecting, reading and marking GPUs).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/smi/smi.h"

namespace gw::cli::smi {

struct QueryTable {
  std::vector<std::string> names;   // as the caller spelled them
  std::vector<std::string> header;  // names with " [unit]" unless nounits
  std::vector<std::vector<std::string>> rows;
  bool header_wanted = true;  // false with --format=csv,noheader
  bool any_lost = false;      // a GPU fell off the bus
  bool any_stalled = false;   // a GPU did not answer within the call deadline
  bool any_error = false;     // some value could not be read ([GPU is lost], [Unknown Error])
};

// Parses the request, reads every selected GPU (each on its own thread under the call deadline)
// and returns the table; on failure writes nvidia-smi's wording to `err`, sets *exit (an SmiExit)
// and returns nullopt.
std::optional<QueryTable> queryTable(Context& ctx, const QueryRequest& request, std::ostream& err, int* exit);

// The table as nvidia-smi's CSV (header when `with_header`).
void writeCsv(const QueryTable& t, bool with_header, std::ostream& out);

}  // namespace gw::cli::smi
