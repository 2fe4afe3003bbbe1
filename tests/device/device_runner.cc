#include "tests/device/device_runner.h"

#include <random>
#include <string>

#include "exec/device_executor.h"

namespace myriad::devtest {
namespace {

HostDeviceOptions options(uint64_t seed) {
  HostDeviceOptions o;
  o.orderSeed = seed | 1;
  o.memorySeed = seed * 0x9e3779b97f4a7c15ULL;
  // One worker runs every rank's streams: when all of them wait, nobody else can write a flag, so a short
  // stall is already a deadlock.
  o.stallTime = std::chrono::milliseconds(1000);
  o.kernelsOnHostMemory = true;  // the cases hold their buffers in host memory (tests/sim/sim_call.h)
  return o;
}

std::vector<ChannelLayout> layouts(int nranks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t kSlotBytes[] = {256, 512, 4096, 65536};
  std::vector<ChannelLayout> out(static_cast<size_t>(nranks));
  for (ChannelLayout& l : out) {
    l.slots = static_cast<uint32_t>(1 + rng() % 4);
    l.slotBytes = kSlotBytes[rng() % 4];
  }
  return out;
}

}  // namespace

LocalChannels::~LocalChannels() {
  for (auto& [key, p] : blocks_) dev_.free(p);
}

Result<uint8_t*> LocalChannels::block(int owner, int peer) {
  void*& p = blocks_[{owner, peer}];
  if (!p) {
    MYR_ASSIGN_OR_RETURN(p, dev_.alloc(layout(owner).bytes()));
    auto* b = static_cast<uint8_t*>(p);
    for (size_t i = 0; i < ChannelLayout::kFlagWords; ++i) MYR_TRY(dev_.releaseFlag(DeviceChannel::flagWord(b, i), 0));
  }
  return static_cast<uint8_t*>(p);
}

Result<std::unique_ptr<DeviceChannel>> LocalChannels::open(int me, int peer) {
  auto ch = std::make_unique<DeviceChannel>();
  ch->peer = peer;
  ch->layout = layout(me);
  ch->peerLayout = layout(peer);
  MYR_ASSIGN_OR_RETURN(ch->mine, block(me, peer));
  MYR_ASSIGN_OR_RETURN(ch->theirs, block(peer, me));
  return ch;
}

DeviceRunner::DeviceRunner(int nranks, uint64_t seed)
    : dev_(options(seed)), rec_(dev_), channels_(rec_, layouts(nranks, seed)) {
  for (int r = 0; r < nranks; ++r) {
    comms_.push_back(std::make_unique<DeviceComm>(rec_, r, nranks,
                                                  [this, r](Device&, int peer) { return channels_.open(r, peer); }));
    auto s = dev_.createStream();
    MYR_ASSERT(s.isOk());
    dev_.setName(s.value(), "rank " + std::to_string(r) + " caller's stream");
    streams_.push_back(s.value());
  }
}

DeviceRunner::~DeviceRunner() {
  comms_.clear();  // lanes first: they may still hold work of a failed call
  for (DeviceStream* s : streams_) dev_.destroyStream(s);
}

Status DeviceRunner::run(std::vector<sim::RankCall>& calls, sim::RunStats* stats) {
  (void)stats;  // no rounds here: the barrier check is the deterministic executor's
  for (size_t r = 0; r < calls.size(); ++r)
    MYR_TRY(deviceRunnable(calls[r].schedule, *comms_[r], streams_[r]).addContext("rank " + std::to_string(r)));
  for (size_t r = 0; r < calls.size(); ++r)
    MYR_TRY(enqueueSchedule(calls[r].schedule, calls[r].args, *comms_[r], streams_[r])
                .addContext("rank " + std::to_string(r) + ": enqueueing"));
  return syncAll();
}

Status DeviceRunner::syncAll() {
  for (size_t r = 0; r < streams_.size(); ++r)
    MYR_TRY(dev_.synchronize(streams_[r]).addContext("rank " + std::to_string(r)));
  return Status::ok();
}

Status DeviceRunner::capture(std::vector<sim::RankCall>& calls) {
  rec_.beginCapture();
  Status s;
  for (size_t r = 0; r < calls.size() && s.isOk(); ++r)
    s = enqueueSchedule(calls[r].schedule, calls[r].args, *comms_[r], streams_[r])
            .addContext("rank " + std::to_string(r) + ": capturing");
  rec_.endCapture();
  if (s.isOk() && rec_.recorded() == 0) return internalError("capture recorded no operation");
  return s;
}

Status DeviceRunner::replay() {
  MYR_TRY(rec_.replay());
  return syncAll();
}

}  // namespace myriad::devtest
