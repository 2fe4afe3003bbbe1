// unit tier: myriad-info --plan (tools/plan_dump.h). The expected dump of allreduce.ring is derived here from
// the algorithm's description (algorithms/allreduce/ring.cc), not pasted from a run.
#include "tools/plan_dump.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace myriad::tools {
namespace {

std::string plan(const std::vector<std::string>& args) {
  std::string out, error;
  EXPECT_TRUE(planDump(args, &out, &error)) << error;
  return out;
}

std::string planError(const std::vector<std::string>& args) {
  std::string out, error;
  EXPECT_FALSE(planDump(args, &out, &error)) << out;
  return error;
}

// allreduce.ring, 3 ranks on one host, 7 floats, sum, rank 0, the default 128 KiB chunk.
// - Segments: Blocks::even(7, 3) gives counts {3, 2, 2} at element offsets {0, 3, 5}: bytes 12, 8, 8 at
//   byte offsets 0, 12, 20. A chunk is 131072 / 4 = 32768 elements, so every segment is one slice (S = 1)
//   and there are 2 * (n - 1) * S = 4 units; staging is kWindow (4) chunks: 4 * 32768 * 4 = 524288 B.
// - Rank 0 receives from prev = 2 and sends to next = 1. Unit u is step u (S = 1); each unit adds its
//   receive first, then its send.
// - Reduce-scatter steps s = 0, 1 receive segment (r - s - 1) mod 3 = 2, then 1, reduced on arrival into
//   recv with this rank's input (recv-reduce ... = in sum send+off), staged in slot u of the window
//   (scratch + u * 131072); they send segment (r - s) mod 3 = 0, then 2. Unit 0 sends the input itself
//   (send+0) and waits for nothing; unit 1 sends what unit 0 reduced (recv+20), after step 0.
// - All-gather steps s = 2, 3 receive segment (r - (s - 2)) mod 3 = 0, then 2 straight into recv, and send
//   segment (r + 1 - (s - 2)) mod 3 = 1, then 0, from recv, each after the receive of the unit before it
//   (unit u - S): step 5 after 2, step 7 after 4.
// - No step waits on the window (u < kWindow), and there is no scale step (sum, not avg).
TEST(PlanDump, AllReduceRingThreeRanksSevenFloats) {
  const std::string expected =
      "# rank 0 of 3, hosts 3, allreduce count 7 float sum root 0\n"
      "allreduce.ring: 8 steps, scratch 524288 B\n"
      "0 recv-reduce from 2 recv+20 = in sum send+20 8 B float staging scratch+0\n"
      "1 send to 1 send+0 12 B\n"
      "2 recv-reduce from 2 recv+12 = in sum send+12 8 B float staging scratch+131072\n"
      "3 send to 1 recv+20 8 B after 0\n"
      "4 recv from 2 recv+0 12 B\n"
      "5 send to 1 recv+12 8 B after 2\n"
      "6 recv from 2 recv+20 8 B\n"
      "7 send to 1 recv+0 12 B after 4\n";
  EXPECT_EQ(plan({"--plan", "allreduce.ring", "--nranks", "3", "--count", "7"}), expected);
  // The same from the host options: one host of 3, given as sizes or as each rank's host.
  EXPECT_EQ(plan({"--plan", "allreduce.ring", "--hosts", "3", "--count", "7", "--rank", "0"}), expected);
  EXPECT_EQ(plan({"--plan", "allreduce.ring", "--hosts-of", "0,0,0", "--count", "7"}), expected);
}

// One rank alone: the ring has nothing to send; out of place it copies the input (7 * 4 bytes), in place
// it has no step at all.
TEST(PlanDump, OneRankCopiesUnlessInPlace) {
  EXPECT_EQ(plan({"--plan", "allreduce.ring", "--nranks", "1", "--count", "7"}),
            "# rank 0 of 1, hosts 1, allreduce count 7 float sum root 0\n"
            "allreduce.ring: 1 steps, scratch 0 B\n"
            "0 copy recv+0 = send+0 28 B\n");
  EXPECT_EQ(plan({"--plan", "allreduce.ring", "--nranks", "1", "--count", "7", "--in-place"}),
            "# rank 0 of 1, hosts 1, allreduce count 7 float sum root 0 in place\n"
            "allreduce.ring: 0 steps, scratch 0 B\n");
}

TEST(PlanDump, AllRanksAndTheTuner) {
  const std::string all = plan({"--plan", "broadcast.ring", "--hosts", "2+1", "--count", "5", "--rank", "all"});
  for (const char* head : {"# rank 0 of 3, hosts 2+1,", "# rank 1 of 3,", "# rank 2 of 3,"})
    EXPECT_NE(all.find(head), std::string::npos) << all;
  const std::string tuned = plan({"--plan", "tuner", "--coll", "allreduce", "--nranks", "4", "--count", "1024"});
  EXPECT_NE(tuned.find("the tuner's choice\nallreduce."), std::string::npos) << tuned;
}

TEST(PlanDump, ErrorsSayWhatIsWrong) {
  EXPECT_NE(planError({"--plan", "allreduce.bogus", "--nranks", "2", "--count", "1"}).find("allreduce.ring"),
            std::string::npos);
  EXPECT_NE(planError({"--plan", "allreduce.ring", "--nranks", "2"}).find("--count"), std::string::npos);
  EXPECT_NE(planError({"--plan", "allreduce.ring", "--nranks", "4", "--hosts", "2+1", "--count", "1"}).find("3 ranks"),
            std::string::npos);
  EXPECT_NE(planError({"--plan", "tuner", "--nranks", "2", "--count", "1"}).find("--coll"), std::string::npos);
}

// The hierarchical algorithms plan on uneven hosts: 2+1, rank 2 (alone on its host) serves both lanes, so
// it sits on two rails and talks only to ranks 0 and 1, the members of those rails.
TEST(PlanDump, HierarchicalOnUnevenHosts) {
  std::string out = plan({"--plan", "allreduce.hier", "--hosts", "2+1", "--count", "8", "--rank", "2"});
  EXPECT_NE(out.find("allreduce.hier:"), std::string::npos) << out;
  EXPECT_NE(out.find(" to 0 "), std::string::npos) << out;
  EXPECT_NE(out.find(" to 1 "), std::string::npos) << out;
}

}  // namespace
}  // namespace myriad::tools
