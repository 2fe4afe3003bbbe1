// unit tier: detectLauncher (precedence of Open MPI, PMI, Slurm, torchrun; malformed values name the
// variable) and the MYRIAD_COMM_ID unique id (the same on every call, keyed by MYRIAD_COMM_SECRET, flagged
// "rank 0 hosts the root at init"). No rank listens here: myrGetUniqueId starts nothing in that mode.
#include "rendezvous/launch.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <map>
#include <string>

#include "myriad/myriad.h"
#include "rendezvous/comm_id.h"
#include "rendezvous/unique_id.h"

namespace myriad {
namespace {

constexpr const char* kVars[] = {"OMPI_COMM_WORLD_RANK",
                                 "OMPI_COMM_WORLD_SIZE",
                                 "OMPI_COMM_WORLD_LOCAL_RANK",
                                 "PMI_RANK",
                                 "PMI_SIZE",
                                 "MPI_LOCALRANKID",
                                 "PMI_LOCAL_RANK",
                                 "SLURM_PROCID",
                                 "SLURM_NTASKS",
                                 "SLURM_LOCALID",
                                 "RANK",
                                 "WORLD_SIZE",
                                 "LOCAL_RANK",
                                 "MYRIAD_COMM_ID",
                                 "MYRIAD_COMM_SECRET"};

// Clears every variable above for the test and restores the process's values afterwards.
class LaunchEnv : public testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      if (const char* old = getenv(v)) saved_[v] = old;
      unsetenv(v);
    }
  }
  void TearDown() override {
    for (const char* v : kVars) unsetenv(v);
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  static void set(const char* name, const char* value) { setenv(name, value, 1); }

 private:
  std::map<std::string, std::string> saved_;
};

using Launch = LaunchEnv;

TEST_F(Launch, NoneWithoutLauncherVariables) {
  auto l = detectLauncher();
  ASSERT_TRUE(l.isOk()) << l.status().message();
  EXPECT_EQ(l.value().kind, "none");
  EXPECT_EQ(l.value().rank, 0);
  EXPECT_EQ(l.value().size, 1);
  EXPECT_EQ(l.value().localRank, 0);
}

TEST_F(Launch, PrecedenceIsOmpiPmiSlurmTorchrun) {
  set("RANK", "3"), set("WORLD_SIZE", "8"), set("LOCAL_RANK", "1");
  EXPECT_EQ(detectLauncher().value().kind, "torchrun");
  set("SLURM_PROCID", "5"), set("SLURM_NTASKS", "6"), set("SLURM_LOCALID", "2");
  auto slurm = detectLauncher().value();
  EXPECT_EQ(slurm.kind, "slurm");
  EXPECT_EQ(slurm.rank, 5);
  EXPECT_EQ(slurm.size, 6);
  EXPECT_EQ(slurm.localRank, 2);
  set("PMI_RANK", "1"), set("PMI_SIZE", "2");
  EXPECT_EQ(detectLauncher().value().kind, "pmi");
  set("OMPI_COMM_WORLD_RANK", "0"), set("OMPI_COMM_WORLD_SIZE", "4"), set("OMPI_COMM_WORLD_LOCAL_RANK", "0");
  auto ompi = detectLauncher().value();
  EXPECT_EQ(ompi.kind, "ompi");
  EXPECT_EQ(ompi.size, 4);
}

TEST_F(Launch, PmiLocalRankFromEitherVariable) {
  set("PMI_RANK", "3"), set("PMI_SIZE", "4");
  EXPECT_EQ(detectLauncher().value().localRank, 0);  // the launcher does not say
  set("PMI_LOCAL_RANK", "1");
  EXPECT_EQ(detectLauncher().value().localRank, 1);
  set("MPI_LOCALRANKID", "2");  // MPICH / Intel MPI's name comes first
  EXPECT_EQ(detectLauncher().value().localRank, 2);
}

TEST_F(Launch, MalformedValuesNameTheVariable) {
  struct Case {
    std::map<std::string, std::string> env;
    const char* named;
  };
  const Case cases[] = {
      {{{"RANK", "x"}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", "-1"}, {"WORLD_SIZE", "2"}}, "RANK"},
      {{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1a"}}, "LOCAL_RANK"},
      {{{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}, "SLURM_PROCID"},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "0"}}, "SLURM_NTASKS"},
      {{{"PMI_SIZE", "4"}}, "PMI_RANK"},
      {{{"OMPI_COMM_WORLD_RANK", "1"}}, "OMPI_COMM_WORLD_SIZE"},
      {{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "99999999999"}}, "OMPI_COMM_WORLD_SIZE"},
      // A broken Open MPI environment is an error, not a fall-through to the next launcher.
      {{{"OMPI_COMM_WORLD_RANK", "one"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}},
       "OMPI_COMM_WORLD_RANK"},
  };
  for (const Case& c : cases) {
    for (const char* v : kVars) unsetenv(v);
    for (const auto& [name, value] : c.env) set(name.c_str(), value.c_str());
    auto l = detectLauncher();
    ASSERT_FALSE(l.isOk()) << "expected an error naming " << c.named;
    EXPECT_EQ(l.status().code(), Code::kInvalidArgument);
    EXPECT_NE(l.status().message().find(c.named), std::string::npos) << l.status().message();
  }
}

// The C API over detectLauncher: the same numbers, the name truncated to the buffer, NULL outputs skipped,
// and a malformed environment as myrInvalidArgument whose text names the variable.
TEST_F(Launch, PublicLaunchInfo) {
  int rank = -1, nranks = -1, localRank = -1;
  char kind[16] = "x";
  ASSERT_EQ(myrLaunchInfo(&rank, &nranks, &localRank, kind, sizeof(kind)), myrSuccess);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(nranks, 1);
  EXPECT_EQ(localRank, 0);
  EXPECT_STREQ(kind, "none");
  set("SLURM_PROCID", "5"), set("SLURM_NTASKS", "6"), set("SLURM_LOCALID", "2");
  ASSERT_EQ(myrLaunchInfo(&rank, &nranks, &localRank, kind, sizeof(kind)), myrSuccess);
  EXPECT_EQ(rank, 5);
  EXPECT_EQ(nranks, 6);
  EXPECT_EQ(localRank, 2);
  EXPECT_STREQ(kind, "slurm");
  char small[4] = "abc";
  ASSERT_EQ(myrLaunchInfo(nullptr, nullptr, nullptr, small, sizeof(small)), myrSuccess);
  EXPECT_STREQ(small, "slu");
  ASSERT_EQ(myrLaunchInfo(nullptr, nullptr, nullptr, small, 0), myrSuccess);  // len 0: nothing written
  EXPECT_STREQ(small, "slu");
  set("SLURM_PROCID", "6");
  rank = -1;
  EXPECT_EQ(myrLaunchInfo(&rank, nullptr, nullptr, nullptr, 0), myrInvalidArgument);
  EXPECT_EQ(rank, -1);
  EXPECT_NE(std::string(myrGetLastError(nullptr)).find("SLURM_PROCID"), std::string::npos) << myrGetLastError(nullptr);
}

using CommIdEnv = LaunchEnv;

myrUniqueId getId() {
  myrUniqueId id;
  std::memset(&id, 0, sizeof(id));
  EXPECT_EQ(myrGetUniqueId(&id), myrSuccess) << myrGetLastError(nullptr);
  return id;
}

TEST_F(CommIdEnv, SameIdOnEveryCallFlaggedRootAtInit) {
  set("MYRIAD_COMM_ID", "127.0.0.1:29511");
  const myrUniqueId a = getId(), b = getId();
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(a)), 0);
  auto u = UniqueId::decode(a);
  ASSERT_TRUE(u.isOk()) << u.status().message();
  EXPECT_EQ(u.value().kind, IdKind::kTcp);
  EXPECT_TRUE(u.value().rootAtInit);
  EXPECT_EQ(u.value().tcpRoot.toString(), "127.0.0.1:29511");
  EXPECT_NE(u.value().secret, Secret{});
}

TEST_F(CommIdEnv, SecretDependsOnCommIdAndCommSecret) {
  set("MYRIAD_COMM_ID", "127.0.0.1:29511");
  const myrUniqueId plain = getId();
  set("MYRIAD_COMM_SECRET", "s3cret");
  const myrUniqueId keyed = getId();
  set("MYRIAD_COMM_SECRET", "s3creT");
  const myrUniqueId other = getId();
  set("MYRIAD_COMM_ID", "127.0.0.1:29512");
  const myrUniqueId otherPort = getId();
  auto secretOf = [](const myrUniqueId& id) { return UniqueId::decode(id).value().secret; };
  EXPECT_NE(secretOf(plain), secretOf(keyed));
  EXPECT_NE(secretOf(keyed), secretOf(other));
  EXPECT_NE(secretOf(other), secretOf(otherPort));
  EXPECT_TRUE(UniqueId::decode(keyed).value().rootAtInit);
}

TEST_F(CommIdEnv, MalformedCommIdNamesTheVariable) {
  for (const char* bad : {"no-port", "127.0.0.1:0", ":4000"}) {
    set("MYRIAD_COMM_ID", bad);
    myrUniqueId id;
    EXPECT_EQ(myrGetUniqueId(&id), myrInvalidArgument) << bad;
    EXPECT_NE(std::string(myrGetLastError(nullptr)).find("MYRIAD_COMM_ID"), std::string::npos)
        << myrGetLastError(nullptr);
  }
}

TEST(CommIdHash, FlagRoundTripsAndPlainIdsHaveNone) {
  UniqueId u;
  u.secret = deriveSecret("x");
  u.tcpRoot = SockAddr::parse("127.0.0.1:4000").value();
  EXPECT_FALSE(UniqueId::decode(u.encode()).value().rootAtInit);
  u.rootAtInit = true;
  myrUniqueId raw = u.encode();
  EXPECT_TRUE(UniqueId::decode(raw).value().rootAtInit);
  raw.internal[6] = static_cast<char>(0x80);  // a flag this library does not know
  EXPECT_EQ(UniqueId::decode(raw).status().code(), Code::kInvalidArgument);
}

TEST(CommIdHash, HashSecretIsDeterministicAndSpreads) {
  EXPECT_EQ(deriveSecret("abc"), deriveSecret("abc"));
  EXPECT_NE(deriveSecret("abc"), deriveSecret("abd"));
  EXPECT_NE(deriveSecret(""), deriveSecret(std::string(1, '\0')));
  // One changed input bit flips about half of the 128 output bits.
  const Secret a = deriveSecret("127.0.0.1:4000"), b = deriveSecret("127.0.0.1:4001");
  int flipped = 0;
  for (size_t i = 0; i < a.size(); ++i) flipped += __builtin_popcount(static_cast<unsigned>(a[i] ^ b[i]));
  EXPECT_GT(flipped, 40);
  EXPECT_LT(flipped, 88);
}

}  // namespace
}  // namespace myriad
