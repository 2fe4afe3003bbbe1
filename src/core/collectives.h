// Entry points of the collectives inside the library: validate (a bad call enqueues nothing), choose an
// algorithm, and run the planned Task now (no stream) or on a host stream.
#pragma once

#include "algorithms/algorithm.h"
#include "core/host_stream.h"

namespace myriad {

Status validateCollective(const CollArgs& args, const Comm& comm);
Status issueCollective(Comm& comm, const CollArgs& args, HostStream* stream);

}  // namespace myriad
