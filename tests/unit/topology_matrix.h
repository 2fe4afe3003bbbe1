// Test helpers for path-type matrices in `nvidia-smi topo -m` form: one row per GPU (orderedGpus), its path
// to every GPU and then to every NIC (orderedNics), as one space-separated string; and the GPU rows of an
// `nvidia-smi topo -m` block read from a ground-truth text file.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/topology_fixtures.h"
#include "topology/paths.h"

namespace myriad::test {

inline std::vector<std::string> pathMatrix(const Topology& t) {
  std::vector<std::string> rows;
  std::vector<int> gpus = orderedGpus(t);
  std::vector<int> columns = gpus;
  for (int n : orderedNics(t)) columns.push_back(n);
  for (int g : gpus) {
    std::string row;
    for (int c : columns) row += (row.empty() ? "" : " ") + pathName(pathBetween(t, g, c));
    rows.push_back(row);
  }
  return rows;
}

// Compares pathMatrix(t) with `want` row by row, naming the GPU of a row that differs.
inline void expectMatrix(const Topology& t, const std::vector<std::string>& want) {
  std::vector<std::string> got = pathMatrix(t);
  ASSERT_EQ(got.size(), want.size()) << "GPU rows";
  std::vector<int> gpus = orderedGpus(t);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "GPU" << i << " " << t.nodes[gpus[i]].busId;
}

// One `nvidia-smi topo -m` table: per GPU row, its GPU-to-GPU cells and its NUMA affinity (the last cell).
struct SmiTable {
  std::vector<std::string> rows;
  std::vector<int> numa;
};

// The first `nvidia-smi topo -m` table after the line holding `title` in the fixture `name`: the header's
// GPU columns, then each "GPUk ..." row cut to that many cells.
inline SmiTable nvidiaSmiTable(const std::string& name, const std::string& title) {
  std::ifstream in(fixturePath(name));
  EXPECT_TRUE(in.good()) << fixturePath(name);
  std::string line;
  while (std::getline(in, line) && line.find(title) == std::string::npos) {
  }
  size_t gpuColumns = 0;
  SmiTable table;
  std::vector<std::string>& rows = table.rows;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first, cell;
    words >> first;
    if (line.rfind("GPU", 0) != 0) {  // rows start at the margin; the header is indented
      if (!rows.empty()) break;       // the end of this table
      if (first.rfind("GPU", 0) == 0) {
        for (std::istringstream header(line); header >> cell;) gpuColumns += cell.rfind("GPU", 0) == 0;
      }
      continue;
    }
    std::string row;
    for (size_t k = 0; k < gpuColumns && words >> cell; ++k) row += (row.empty() ? "" : " ") + cell;
    rows.push_back(row);
    std::string last = cell;
    while (words >> cell) last = cell;
    table.numa.push_back(std::stoi(last));
  }
  EXPECT_FALSE(rows.empty()) << "no nvidia-smi table after \"" << title << "\" in " << name;
  return table;
}

}  // namespace myriad::test
