// The srun rendezvous of the perf binaries (benchmarks/common/slurm_env.h): Slurm's hostlist syntax, the
// port of a job step, and a clear error for every malformed input.
#include "benchmarks/common/slurm_env.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace myriad::bench {
namespace {

std::string firstHost(const std::string& list) {
  std::string host = "unset";
  std::string error;
  EXPECT_TRUE(slurmFirstHost(list, &host, &error)) << list << ": " << error;
  return host;
}

std::string hostError(const std::string& list) {
  std::string host = "unset";
  std::string error;
  EXPECT_FALSE(slurmFirstHost(list, &host, &error)) << list << " parsed as " << host;
  EXPECT_EQ(host, "unset") << list;
  return error;
}

TEST(SlurmHostlist, FirstHost) {
  EXPECT_EQ(firstHost("node01"), "node01");
  EXPECT_EQ(firstHost("node[01-04,07],gpu-a[1-2]"), "node01");
  EXPECT_EQ(firstHost("gpu-a[1-2],node[01-04,07]"), "gpu-a1");
  EXPECT_EQ(firstHost("node[7,01-04]"), "node7");
  EXPECT_EQ(firstHost("n[008-010]"), "n008");  // zero padding is the width of the lower bound
  EXPECT_EQ(firstHost("n[0]"), "n0");
  EXPECT_EQ(firstHost("rack[2-3]-node[05-06]"), "rack2-node05");
  EXPECT_EQ(firstHost("node[3-4]-ib"), "node3-ib");
  EXPECT_EQ(firstHost("a,b[1-2],c"), "a");
  EXPECT_EQ(firstHost("[10-12]"), "10");
}

TEST(SlurmHostlist, MalformedIsAnErrorNamingTheFault) {
  EXPECT_NE(hostError("").find("empty hostlist"), std::string::npos);
  EXPECT_NE(hostError("a,,b").find("empty host name"), std::string::npos);
  EXPECT_NE(hostError("a,").find("empty host name"), std::string::npos);
  EXPECT_NE(hostError(",a").find("empty host name"), std::string::npos);
  EXPECT_NE(hostError("node[1-4").find("'[' without ']'"), std::string::npos);
  EXPECT_NE(hostError("node1-4]").find("']' without '['"), std::string::npos);
  EXPECT_NE(hostError("node[]").find("empty brackets"), std::string::npos);
  EXPECT_NE(hostError("node[[1-2]]").find("nested"), std::string::npos);
  EXPECT_NE(hostError("node[a-b]").find("not a number"), std::string::npos);
  EXPECT_NE(hostError("node[1-]").find("not a number"), std::string::npos);
  EXPECT_NE(hostError("node[-3]").find("not a number"), std::string::npos);
  EXPECT_NE(hostError("node[1,,2]").find("not a number"), std::string::npos);
  EXPECT_NE(hostError("node[1-2-3]").find("not a number"), std::string::npos);
  EXPECT_NE(hostError("node[5-3]").find("runs backwards"), std::string::npos);
  // A fault after the first entry is still a fault: the whole list is checked.
  EXPECT_NE(hostError("node[01-02],gpu[2-1]").find("'gpu[2-1]'"), std::string::npos);
}

int port(const std::string& job, const std::string& step) {
  int p = -1;
  std::string error;
  EXPECT_TRUE(slurmPort(job, step, &p, &error)) << job << "." << step << ": " << error;
  return p;
}

TEST(SlurmPort, InTheDocumentedRangeAndDistinctPerStep) {
  EXPECT_EQ(port("0", "0"), kSlurmPortBase);
  EXPECT_EQ(port("1", "2"), kSlurmPortBase + kSlurmPortStride + 2);
  std::set<int> steps;
  for (int step = 0; step < 50; ++step) steps.insert(port("123456", std::to_string(step)));
  EXPECT_EQ(steps.size(), 50u);
  for (const char* job : {"0", "1", "99999", "4294967295"}) {
    for (const char* step : {"0", "7", "4294967294"}) {
      const int p = port(job, step);
      EXPECT_GE(p, kSlurmPortBase);
      EXPECT_LT(p, kSlurmPortBase + kSlurmPortSpan);
      EXPECT_LT(p, 32768);  // below Linux's ephemeral ports
    }
  }
}

TEST(SlurmPort, MalformedIdsAreErrors) {
  int p = -1;
  std::string error;
  EXPECT_FALSE(slurmPort("", "0", &p, &error));
  EXPECT_NE(error.find("job id ''"), std::string::npos) << error;
  EXPECT_FALSE(slurmPort("12a", "0", &p, &error));
  EXPECT_NE(error.find("job id '12a'"), std::string::npos) << error;
  EXPECT_FALSE(slurmPort("4294967296", "0", &p, &error));
  EXPECT_NE(error.find("below 2^32"), std::string::npos) << error;
  EXPECT_FALSE(slurmPort("12", "batch", &p, &error));
  EXPECT_NE(error.find("step id 'batch'"), std::string::npos) << error;
  EXPECT_FALSE(slurmPort("12", "-1", &p, &error));
  EXPECT_EQ(p, -1);
}

class SlurmEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* n : kNames) unsetenv(n);
  }
  void TearDown() override { SetUp(); }
  static constexpr const char* kNames[] = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_JOB_ID",
                                           "SLURM_STEP_ID"};
};

TEST_F(SlurmEnv, CommIdFromTheStepVariables) {
  setenv("SLURM_JOB_NODELIST", "login[1-2]", 1);
  setenv("SLURM_STEP_NODELIST", "gpu[003-004]", 1);
  setenv("SLURM_JOB_ID", "1", 1);
  setenv("SLURM_STEP_ID", "2", 1);
  std::string id;
  std::string error;
  ASSERT_TRUE(slurmCommId(&id, &error)) << error;
  EXPECT_EQ(id, "gpu003:" + std::to_string(kSlurmPortBase + kSlurmPortStride + 2));
  unsetenv("SLURM_STEP_NODELIST");  // the job's list when the step's is not there
  ASSERT_TRUE(slurmCommId(&id, &error)) << error;
  EXPECT_EQ(id.substr(0, id.find(':')), "login1");
}

TEST_F(SlurmEnv, MissingOrMalformedVariablesAreNamed) {
  std::string id;
  std::string error;
  EXPECT_FALSE(slurmCommId(&id, &error));
  EXPECT_NE(error.find("SLURM_JOB_NODELIST is not set"), std::string::npos) << error;
  setenv("SLURM_STEP_NODELIST", "gpu[4-3]", 1);
  setenv("SLURM_JOB_ID", "1", 1);
  EXPECT_FALSE(slurmCommId(&id, &error));
  EXPECT_NE(error.find("SLURM_STEP_ID is not set"), std::string::npos) << error;
  setenv("SLURM_STEP_ID", "0", 1);
  EXPECT_FALSE(slurmCommId(&id, &error));
  EXPECT_NE(error.find("SLURM_STEP_NODELIST: hostlist 'gpu[4-3]'"), std::string::npos) << error;
  setenv("SLURM_STEP_NODELIST", "gpu[3-4]", 1);
  setenv("SLURM_JOB_ID", "x", 1);
  EXPECT_FALSE(slurmCommId(&id, &error));
  EXPECT_NE(error.find("job id 'x'"), std::string::npos) << error;
}

}  // namespace
}  // namespace myriad::bench
