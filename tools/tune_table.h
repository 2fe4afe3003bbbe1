// myriad-info --tune: the tuner's table (every candidate's predicted time and the choice) for a call shape
// given on the command line, computed as a communicator would (MYRIAD_TUNER_FILE, MYRIAD_TUNER_PLUGIN,
// MYRIAD_DISABLE_SHM, MYRIAD_NET, MYRIAD_CHUNK_BYTES from the environment) without running anything.
#pragma once

#include <string>
#include <vector>

namespace myriad::tools {

// The options after --tune; false with *error (usage or a bad setting) otherwise.
bool tuneTable(const std::vector<std::string>& args, std::string* out, std::string* error);

extern const char* const kTuneUsage;

}  // namespace myriad::tools
