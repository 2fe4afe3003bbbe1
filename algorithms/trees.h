// Trees over the members of a communicator, as plain values: a rank's parent and children. Two shapes:
// heap order rooted at any rank (broadcast.tree, reduce.tree) and the balanced in-order tree whose leaves
// and inner nodes alternate, used twice, shifted or mirrored, by allreduce.tree (a double binary tree:
// nearly every rank is a leaf in one of the two trees, so each rank's links carry about one tree's worth).
#pragma once

#include <vector>

namespace myriad {

struct TreeNode {
  int parent = -1;  // -1 at the root
  std::vector<int> children;
};

// Binary tree in heap order over virtual ranks v = (rank - root) mod n: children 2v+1 and 2v+2.
TreeNode heapTree(int n, int root, int rank);

// Balanced in-order binary tree over 0..n-1 (the root is the middle rank, each subtree a contiguous range).
TreeNode inorderTree(int n, int rank);

// The two trees of a double binary tree: tree 0 is inorderTree; tree 1 is it shifted by one rank (even n)
// or mirrored (odd n), so that the leaves of one tree are inner nodes of the other.
TreeNode doubleTree(int n, int rank, int which);

}  // namespace myriad
