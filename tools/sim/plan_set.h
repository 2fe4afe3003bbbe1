// PlanSet: every rank's plan of one call in the form the simulator runs, shared between ranks whose plans
// have the same shape. Of a Schedule the simulator reads only each step's kind, peer, size and dependencies
// (buffers carry sizes, not bytes); a PlanShape keeps exactly that, with each peer replaced by a slot (the
// rank's distinct peers in the order it first names them), and every rank keeps its shape's id and its own
// slot -> peer table. Two ranks whose shapes are equal field by field share one: all ranks of a ring
// all-reduce share one shape (when its segments are equal), a tree's ranks a few (leaf, inner, root), so
// memory grows with the distinct plans and the peers each rank talks to, not with ranks x steps. The
// sharing is exact: a shape is shared only when equal, never because an algorithm says it would be.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "plan/schedule.h"

namespace myriad::netsim {

struct PlanShape {
  using Kind = Schedule::Kind;
  std::vector<Kind> kind;         // per step
  std::vector<uint32_t> slot;     // per step: a message step's peer slot (0 otherwise)
  std::vector<uint64_t> bytes;    // per step: message and copy bytes, reduce and scale data bytes
  std::vector<uint32_t> ordinal;  // per step: a message's place among the slot's sends (or receives)
  std::vector<uint32_t> numDeps;  // per step
  std::vector<uint32_t> afterAt;  // size()+1: the steps step i unblocks are after[afterAt[i], afterAt[i+1])
  std::vector<int32_t> after;     //
  std::vector<int32_t> roots;     // the steps with no dependency, in order
  std::vector<std::vector<int32_t>> sendsTo, recvsFrom;  // per slot: its send (receive) steps, in order
  uint64_t hash = 0;

  size_t size() const { return kind.size(); }
  // From kind, slot, bytes, afterAt and after: numDeps, ordinal, roots, the slot lists and the hash.
  void finish();
  // Memory bytes a compute step reads and writes (reduce: two read, one written; copy and scale: one and
  // one); 0 for messages and joins. A receive-reduce's reduction counts the same as a reduce of its bytes.
  double touched(size_t step) const;
  bool operator==(const PlanShape& o) const;
};

class PlanSet {
 public:
  explicit PlanSet(std::string algorithm = "") : algorithm_(std::move(algorithm)) {}
  // Every rank's Schedule in rank order.
  static Result<PlanSet> of(const std::vector<Schedule>& schedules);

  // Adds the next rank's plan (ranks in order 0, 1, ...; n: the number of ranks). Refuses a two-stage plan
  // (data-dependent: the simulator runs one-stage plans only) and a message to itself or to no rank.
  Status add(const Schedule& plan, int n);
  // Adds the next rank (r) as rank `like`'s plan moved by r - like: the same shape, each peer p of `like`
  // becoming p + (r - like) mod n (Algorithm::planClass). `like` must be added already.
  void addMoved(int like, int n);
  // Whether rank r's stored plan (shape and peers) is exactly `plan`: internal error naming the first
  // difference otherwise. Checks a planClass claim on a rank added by addMoved.
  Status check(int r, const Schedule& plan, int n);

  const std::string& algorithm() const { return algorithm_; }
  int nranks() const { return static_cast<int>(shapeOf_.size()); }
  const PlanShape& shape(int rank) const { return shapes_[shapeOf_[static_cast<size_t>(rank)]]; }
  size_t shapes() const { return shapes_.size(); }
  int peer(int rank, uint32_t slot) const { return peers_[peerAt_[static_cast<size_t>(rank)] + slot]; }
  uint32_t slots(int rank) const { return peerAt_[static_cast<size_t>(rank) + 1] - peerAt_[static_cast<size_t>(rank)]; }
  // Index of a rank's slot among all ranks' slots (for per-slot tables beside this one).
  size_t slotIndex(int rank, uint32_t slot) const { return peerAt_[static_cast<size_t>(rank)] + slot; }
  size_t totalSlots() const { return peers_.size(); }
  uint64_t steps() const { return steps_; }
  uint32_t shapeId(int rank) const { return shapeOf_[static_cast<size_t>(rank)]; }
  const PlanShape& shapeAt(size_t id) const { return shapes_[id]; }
  // The same ranks and peers, shape i replaced by shapes[i] (one per shape; a shape's slots must stay).
  PlanSet withShapes(std::vector<PlanShape> shapes) const;

 private:
  std::string algorithm_;
  std::vector<PlanShape> shapes_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> byHash_;  // shape hash -> shapes with it
  std::vector<uint32_t> shapeOf_;                               // per rank
  std::vector<uint32_t> peerAt_{0};                             // per rank + 1: its slots in peers_
  std::vector<int32_t> peers_;
  std::vector<int32_t> slotOf_;  // scratch for compact(): peer -> slot, -1 when not named yet

  // `plan` of rank r as a shape, its peers in slot order appended to *peers.
  Result<PlanShape> compact(const Schedule& plan, int n, int r, std::vector<int32_t>* peers);
  uint64_t steps_ = 0;
};

}  // namespace myriad::netsim
