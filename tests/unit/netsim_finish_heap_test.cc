// FinishHeap against an ordered set of (time, id) kept by the test: random sets, moves, erases and pops,
// with many equal times (ties go to the lower id).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <utility>

#include "tools/sim/finish_heap.h"

namespace myriad::netsim {
namespace {

TEST(NetsimFinishHeap, PopsInTheOrderOfAnOrderedSetThroughMovesAndErases) {
  std::mt19937 rng(41);
  for (int trial = 0; trial < 30; ++trial) {
    FinishHeap heap;
    std::set<std::pair<double, int>> ref;
    std::map<int, double> at;  // the reference's entry per id
    const int ids = 1 + static_cast<int>(rng() % 200);
    for (int op = 0; op < 3000; ++op) {
      const int id = static_cast<int>(rng() % static_cast<unsigned>(ids));
      const unsigned what = rng() % 10;
      if (what < 6) {  // set (insert or move); few distinct times, so ties are common
        const double t = static_cast<double>(rng() % 16);
        if (auto it = at.find(id); it != at.end()) ref.erase({it->second, id});
        heap.set(id, t), ref.insert({t, id}), at[id] = t;
      } else if (what < 8) {
        heap.erase(id);
        if (auto it = at.find(id); it != at.end()) ref.erase({it->second, id}), at.erase(it);
      } else if (!ref.empty()) {
        ASSERT_FALSE(heap.empty());
        EXPECT_EQ(heap.topAt(), ref.begin()->first);
        EXPECT_EQ(heap.topId(), ref.begin()->second);
        at.erase(ref.begin()->second), ref.erase(ref.begin());
        heap.pop();
      }
      ASSERT_EQ(heap.size(), ref.size());
    }
    while (!ref.empty()) {  // drains in order
      ASSERT_FALSE(heap.empty());
      EXPECT_EQ(heap.topId(), ref.begin()->second);
      EXPECT_EQ(heap.topAt(), ref.begin()->first);
      ref.erase(ref.begin()), heap.pop();
    }
    EXPECT_TRUE(heap.empty());
  }
}

TEST(NetsimFinishHeap, ErasingAnIdWithoutAnEntryChangesNothing) {
  FinishHeap heap;
  heap.erase(7);  // never seen
  heap.set(3, 2.0), heap.set(5, 1.0);
  heap.erase(4), heap.erase(100);
  ASSERT_EQ(heap.size(), 2u);
  EXPECT_EQ(heap.topId(), 5);
  heap.set(5, 9.0);  // moved down past 3
  EXPECT_EQ(heap.topId(), 3);
  heap.erase(3);
  EXPECT_EQ(heap.topId(), 5);
  EXPECT_EQ(heap.topAt(), 9.0);
}

}  // namespace
}  // namespace myriad::netsim
