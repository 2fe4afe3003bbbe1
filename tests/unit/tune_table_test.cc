// unit tier: myriad-info --tune (tools/tune_table.h), and its --direct check of the tuner's extrapolation.
#include "tools/tune_table.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace myriad::tools {
namespace {

// 256 ranks on 32 hosts: beyond 64 ranks, so the tuner extrapolates from cuts and --direct prices every
// rank beside it; every candidate's line carries the ratio, and ring, halving-doubling and hier (whose
// forms the extrapolation recovers) are within 1 %.
TEST(TuneTable, DirectPricesEveryCandidateBesideTheTunersExtrapolation) {
  std::string out, error;
  ASSERT_TRUE(tuneTable(
      {"--tune", "--coll", "allreduce", "--ranks", "256", "--hosts", "32", "--bytes", "4M", "--direct"}, &out, &error))
      << error;
  EXPECT_NE(out.find("extrapolated from its first 2, 4, 8, 16 hosts"), std::string::npos) << out;
  EXPECT_NE(out.find("priced on every rank (--direct):"), std::string::npos) << out;
  std::istringstream lines(out.substr(out.find("(--direct):")));
  std::string line;
  int ratios = 0;
  while (std::getline(lines, line)) {
    const size_t at = line.find("(tuner / direct ");
    if (at == std::string::npos) continue;
    ++ratios;
    const double r = std::atof(line.c_str() + at + 16);
    if (line.find("allreduce.tree") == std::string::npos) {
      EXPECT_NEAR(r, 1.0, 0.01) << line;
    }
  }
  EXPECT_EQ(ratios, 4) << out;
}

TEST(TuneTable, RefusesWhatItCannotPrice) {
  std::string out, error;
  EXPECT_FALSE(tuneTable({"--tune", "--coll", "allreduce", "--ranks", "8", "--bytes", "1Q"}, &out, &error));
  EXPECT_NE(error.find("--bytes 1Q"), std::string::npos) << error;
  EXPECT_FALSE(tuneTable({"--tune", "--coll", "nosuch", "--ranks", "8", "--bytes", "1M"}, &out, &error));
  EXPECT_NE(error.find("'nosuch'"), std::string::npos) << error;
}

}  // namespace
}  // namespace myriad::tools
