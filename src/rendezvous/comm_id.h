// MYRIAD_COMM_ID rendezvous: every rank derives the same unique id from "host:port" (and MYRIAD_COMM_SECRET)
// without talking to anyone, and rank 0 starts the root there in myrCommInitRank. Invariant: the k-th
// communicator a process makes from one such id uses the k-th namespace of that root, so every process of
// the job must create its MYRIAD_COMM_ID communicators in the same order.
#pragma once

#include <memory>
#include <string>

#include "rendezvous/store.h"
#include "rendezvous/unique_id.h"

namespace myriad {

// 128 bits of HKDF-SHA256 over the bytes: deterministic, one-way, but anyone who knows the inputs knows
// the result (MYRIAD_COMM_SECRET goes through PBKDF2 instead; docs/security.md).
Secret deriveSecret(const std::string& bytes);

// The id of MYRIAD_COMM_ID=commId: kind tcp, root at init, address parsed from commId, secret derived from
// commId and `secret` (MYRIAD_COMM_SECRET, may be empty). The same on every rank that sees the same strings.
Result<UniqueId> uniqueIdFromCommId(const std::string& commId, const std::string& secret);

// Before the rendezvous of a root-at-init id: rank 0 starts the root on id->tcpRoot unless this process
// already did; from the second communicator on, *store gets a namespace and *id a secret of its own.
Status prepareRootAtInit(int rank, UniqueId* id, std::shared_ptr<Store>* store);

}  // namespace myriad
