// Tree shapes; every rank computes its own node from (n, root, rank) alone, so all agree.
#include "algorithms/trees.h"

namespace myriad {

TreeNode heapTree(int n, int root, int rank) {
  TreeNode t;
  int v = ((rank - root) % n + n) % n;
  auto real = [&](int u) { return (u + root) % n; };
  if (v > 0) t.parent = real((v - 1) / 2);
  for (int c : {2 * v + 1, 2 * v + 2})
    if (c < n) t.children.push_back(real(c));
  return t;
}

TreeNode inorderTree(int n, int rank) {
  TreeNode t;
  // Descend from the whole range towards `rank`, remembering the last node passed.
  int lo = 0, hi = n - 1, parent = -1;
  while (true) {
    int mid = lo + (hi - lo) / 2;
    if (mid == rank) {
      t.parent = parent;
      if (lo <= mid - 1) t.children.push_back(lo + (mid - 1 - lo) / 2);
      if (mid + 1 <= hi) t.children.push_back(mid + 1 + (hi - mid - 1) / 2);
      return t;
    }
    parent = mid;
    if (rank < mid)
      hi = mid - 1;
    else
      lo = mid + 1;
  }
}

TreeNode doubleTree(int n, int rank, int which) {
  if (which == 0) return inorderTree(n, rank);
  // Tree 1 is tree 0 drawn over relabelled ranks: to(v) is the real rank at tree-0 position v.
  bool shift = n % 2 == 0;
  auto to = [&](int v) { return shift ? (v + 1) % n : n - 1 - v; };
  int v = shift ? (rank + n - 1) % n : n - 1 - rank;
  TreeNode base = inorderTree(n, v), t;
  t.parent = base.parent < 0 ? -1 : to(base.parent);
  for (int c : base.children) t.children.push_back(to(c));
  return t;
}

}  // namespace myriad
