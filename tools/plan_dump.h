// myriad-info --plan: one algorithm's Schedule for given ranks, planned from a CommView and CollArgs made up
// on the command line (no communicator, no transport, no memory: the buffers are made-up addresses that
// only say which buffer a step touches and whether the call is in place).
#pragma once

#include <string>
#include <vector>

namespace myriad::tools {

// Parses the options after --plan (argv-style, without the program name and "--plan"), plans and returns
// the text to print; false with *error (a usage or planning error) otherwise.
bool planDump(const std::vector<std::string>& args, std::string* out, std::string* error);

extern const char* const kPlanUsage;

}  // namespace myriad::tools
