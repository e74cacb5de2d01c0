// TEMPORARY: stands in for smi_query.cpp (the --query-* views) until that branch is merged; it is
// deleted on merge. It only says that the view is missing, so nothing here is mistaken for output.
#include <string>

#include "cli/smi/smi.h"

namespace gw::cli::smi {

int runQuery(Context&, const QueryRequest&, std::ostream&, std::ostream& err) {
  err << "gpuwarden smi: the --query-* views are not in this build yet.\n";
  return kSmiNotSupported;
}

std::string queryHelp(QueryRequest::Kind) { return "The --query-* views are not in this build yet.\n"; }

}  // namespace gw::cli::smi
