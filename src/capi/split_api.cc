// myrCommSplit: the ranks exchange (colour, key) with an all-gather on the parent, each colour's members
// are ordered by key (ties by parent rank), and every new communicator bootstraps through the parent's
// store under a prefix of its own ("split<k>.c<colour>."), with the parent's secret (capi/child_comm.cc).
#include <algorithm>

#include "capi/handles.h"
#include "dispatch/collectives.h"

namespace myriad::capi {
namespace {

struct Member {
  int32_t key;
  int parentRank;
};

Status commSplit(myrComm_t comm, int color, int key, myrComm_t* newcomm, myrConfig_t* userConfig) {
  MYR_ASSIGN_OR_RETURN(Comm * parent, startChild(comm, newcomm, "myrCommSplit"));
  if (color < 0 && color != MYR_SPLIT_NOCOLOR)
    return invalidArgument("color " + std::to_string(color) + " is negative (MYR_SPLIT_NOCOLOR is " +
                           std::to_string(MYR_SPLIT_NOCOLOR) + ")");
  MYR_ASSIGN_OR_RETURN(Config config, applyUserConfig(parent->config(), userConfig));

  // Calls queued on streams go first, so that every rank's all-gather meets the others'.
  parent->waitIdle();
  int n = parent->nranks();
  int32_t mine[2] = {color, key};
  std::vector<int32_t> all(2 * static_cast<size_t>(n));
  CollArgs gather;
  gather.kind = CollKind::kAllGather;
  gather.sendbuff = mine;
  gather.recvbuff = all.data();
  gather.count = 2;
  gather.dtype = myrInt32;
  MYR_TRY(issueCollective(*parent, std::move(gather), CallStream{}).addContext("myrCommSplit"));
  int split = parent->nextSplit();
  if (color == MYR_SPLIT_NOCOLOR) return Status::ok();

  std::vector<Member> members;
  for (int r = 0; r < n; ++r)
    if (all[2 * static_cast<size_t>(r)] == color) members.push_back(Member{all[2 * static_cast<size_t>(r) + 1], r});
  std::stable_sort(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.key < b.key; });
  int newRank = 0;
  while (members[static_cast<size_t>(newRank)].parentRank != parent->rank()) ++newRank;
  return initChild(*parent, "split" + std::to_string(split) + ".c" + std::to_string(color) + ".",
                   "s" + std::to_string(split) + "c" + std::to_string(color), static_cast<int>(members.size()), newRank,
                   config, userConfig, newcomm, /*endWithParent=*/true);
}

}  // namespace
}  // namespace myriad::capi

extern "C" myrResult_t myrCommSplit(myrComm_t comm, int color, int key, myrComm_t* newcomm, myrConfig_t* config) {
  return myriad::capi::finish(comm, myriad::capi::commSplit(comm, color, key, newcomm, config), __func__);
}
