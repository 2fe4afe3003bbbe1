// unit tier: MrCache, the rdma transport's memory registrations, against a fake verbs table that records
// every ibv_reg_mr / ibv_dereg_mr (no device). Per-message registrations come and go with each message;
// a pinned range (myrCommRegister, scratch) is registered once and serves every message inside it; unpin
// makes the range unfindable at once and deregisters it when its last message ends; kept registrations
// (MYRIAD_IB_REG_CACHE=1) are reused, dropped when a pin over them ends, and evicted least-recently-used.
#include "transports/rdma/mr_cache.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace myriad {
namespace {

// The fake device: live registrations by pointer, plus counts.
struct FakeNic {
  std::set<ibv_mr*> live;
  int regs = 0, deregs = 0;
};
FakeNic* gNic = nullptr;

ibv_mr* fakeReg(ibv_pd*, void* p, size_t n, int) {
  auto* mr = new ibv_mr{};
  mr->addr = p;
  mr->length = n;
  gNic->live.insert(mr);
  ++gNic->regs;
  return mr;
}

int fakeDereg(ibv_mr* mr) {
  EXPECT_EQ(gNic->live.erase(mr), 1u) << "deregistered twice, or never registered";
  ++gNic->deregs;
  delete mr;
  return 0;
}

class MrCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    gNic = &nic_;
    verbs_.regMr = fakeReg;
    verbs_.deregMr = fakeDereg;
  }
  void TearDown() override {
    EXPECT_TRUE(nic_.live.empty()) << nic_.live.size() << " registrations outlived the cache";
    gNic = nullptr;
  }
  MrCache make(bool keep) { return MrCache(verbs_, nullptr, keep, "fake0:1"); }
  ibv_mr* acquire(MrCache& c, size_t offset, size_t n) {
    auto mr = c.acquire(buf_.data() + offset, n);
    EXPECT_TRUE(mr.isOk()) << mr.status().message();
    return mr.isOk() ? mr.value() : nullptr;
  }
  bool covers(ibv_mr* mr, size_t offset, size_t n) const {
    auto* a = static_cast<const char*>(mr->addr);
    return a <= buf_.data() + offset && buf_.data() + offset + n <= a + mr->length;
  }

  FakeNic nic_;
  Verbs verbs_{};
  std::vector<char> buf_ = std::vector<char>(1 << 20);
};

TEST_F(MrCacheTest, PerMessageRegistrationsEndWithTheirMessage) {
  {
    MrCache c = make(false);
    for (int i = 0; i < 3; ++i) {
      ibv_mr* mr = acquire(c, 4096, 1000);
      ASSERT_TRUE(covers(mr, 4096, 1000));
      EXPECT_EQ(nic_.live.size(), 1u);
      c.release(mr);
      EXPECT_TRUE(nic_.live.empty());
    }
    EXPECT_EQ(nic_.regs, 3);
    EXPECT_EQ(c.stats().registrations, 3u);
    EXPECT_EQ(c.stats().acquires, 3u);
  }
}

TEST_F(MrCacheTest, PinnedRangeServesEveryMessageInsideIt) {
  MrCache c = make(false);
  ASSERT_TRUE(c.pin(1, buf_.data() + 65536, 65536).isOk());
  EXPECT_EQ(nic_.regs, 1);
  for (size_t off : {size_t{65536}, size_t{70000}, size_t{131072 - 16}}) {
    ibv_mr* mr = acquire(c, off, 16);
    EXPECT_TRUE(covers(mr, off, 16));
    c.release(mr);
  }
  EXPECT_EQ(nic_.regs, 1) << "a message inside the pin registered its own memory";
  EXPECT_EQ(c.stats().pinnedHits, 3u);
  // Straddling the pin's end: not covered, registered for the message alone.
  ibv_mr* out = acquire(c, 131072 - 8, 16);
  EXPECT_EQ(nic_.regs, 2);
  c.release(out);
  EXPECT_EQ(nic_.live.size(), 1u);
  c.unpin(1);
  EXPECT_TRUE(nic_.live.empty());
  c.unpin(1);  // unknown now: ignored
  EXPECT_EQ(nic_.deregs, 2);
}

TEST_F(MrCacheTest, UnpinInUseIsUnfindableAtOnceAndGoesWithItsLastMessage) {
  MrCache c = make(false);
  ASSERT_TRUE(c.pin(7, buf_.data(), 8192).isOk());
  ibv_mr* inFlight = acquire(c, 0, 100);
  c.unpin(7);
  EXPECT_EQ(nic_.deregs, 0) << "deregistered while a message still used it";
  ibv_mr* after = acquire(c, 0, 100);
  EXPECT_NE(after, inFlight) << "the unpinned range was found again";
  EXPECT_EQ(nic_.regs, 2);
  c.release(inFlight);
  EXPECT_EQ(nic_.deregs, 1);
  c.release(after);
  EXPECT_TRUE(nic_.live.empty());
}

TEST_F(MrCacheTest, KeptRegistrationsAreReusedAndDroppedByAnUnpinOverThem) {
  MrCache c = make(true);
  ibv_mr* first = acquire(c, 1000, 500);
  c.release(first);
  ibv_mr* again = acquire(c, 1200, 100);  // inside the kept one
  EXPECT_EQ(again, first);
  c.release(again);
  EXPECT_EQ(nic_.regs, 1);
  EXPECT_EQ(c.stats().keptHits, 1u);
  // The user registers and deregisters a range over it (the memory is about to be freed): the kept
  // registration must not outlive that.
  ASSERT_TRUE(c.pin(2, buf_.data(), 4096).isOk());
  c.unpin(2);
  EXPECT_TRUE(nic_.live.empty()) << "a kept registration inside a deregistered range survived";
  ibv_mr* fresh = acquire(c, 1200, 100);
  EXPECT_EQ(nic_.regs, 3);
  c.release(fresh);
}

TEST_F(MrCacheTest, KeptRegistrationsAreEvictedLeastRecentlyUsedFirst) {
  MrCache c = make(true);
  for (size_t i = 0; i < 65; ++i) c.release(acquire(c, i * 1024, 1024));
  EXPECT_EQ(nic_.live.size(), 64u) << "more than 64 unused registrations kept";
  // The first one went: using it again registers anew; the second is still there.
  ibv_mr* second = acquire(c, 1024, 1024);
  EXPECT_EQ(nic_.regs, 65);
  c.release(second);
  c.release(acquire(c, 0, 1024));
  EXPECT_EQ(nic_.regs, 66);
}

TEST_F(MrCacheTest, PinsOfTheSameIdAreRefusedAndFailedRegistrationsReported) {
  MrCache c = make(false);
  ASSERT_TRUE(c.pin(3, buf_.data(), 100).isOk());
  EXPECT_FALSE(c.pin(3, buf_.data() + 200, 100).isOk());
  verbs_.regMr = [](ibv_pd*, void*, size_t, int) -> ibv_mr* {
    errno = ENOMEM;
    return nullptr;
  };
  auto mr = c.acquire(buf_.data() + 500, 100);
  ASSERT_FALSE(mr.isOk());
  EXPECT_NE(mr.status().message().find("fake0:1"), std::string::npos) << mr.status().message();
  EXPECT_NE(mr.status().message().find("ulimit -l"), std::string::npos) << mr.status().message();
  EXPECT_FALSE(c.pin(4, buf_.data() + 500, 100).isOk());
  c.unpin(3);
}

}  // namespace
}  // namespace myriad
