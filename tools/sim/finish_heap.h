// FinishHeap: the projected finishing time of every flow that will finish, at most one entry per flow,
// earliest first (ties to the lower flow id). The heap knows where each flow's entry is, so a rate change
// moves the entry in place and an ending flow takes its entry with it: the heap holds the active flows, not
// every projection ever made (a heap with stale entries skipped on pop holds one per rate change, and at a
// million flows each of those costs a cache miss per level).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace myriad::netsim {

class FinishHeap {
 public:
  // Sets flow `id`'s finishing time, inserting its entry or moving it.
  void set(int id, double at) {
    const auto u = static_cast<size_t>(id);
    if (u >= pos_.size()) pos_.resize(u + 1, kNone);
    if (pos_[u] == kNone) {
      heap_.push_back({at, id});
      up(heap_.size() - 1);
      return;
    }
    const size_t i = pos_[u];
    const Entry was = heap_[i];
    heap_[i].at = at;
    if (before(heap_[i], was))
      up(i);
    else
      down(i);
  }
  // Removes flow `id`'s entry, if it has one.
  void erase(int id) {
    const auto u = static_cast<size_t>(id);
    if (u >= pos_.size() || pos_[u] == kNone) return;
    removeAt(pos_[u]);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  double topAt() const { return heap_.front().at; }
  int topId() const { return heap_.front().id; }
  void pop() { removeAt(0); }

 private:
  struct Entry {
    double at;
    int id;
  };
  static constexpr uint32_t kNone = UINT32_MAX;
  static bool before(const Entry& a, const Entry& b) { return a.at != b.at ? a.at < b.at : a.id < b.id; }

  void put(size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[static_cast<size_t>(e.id)] = static_cast<uint32_t>(i);
  }
  void up(size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      put(i, heap_[parent]);
      i = parent;
    }
    put(i, e);
  }
  void down(size_t i) {
    const Entry e = heap_[i];
    const size_t n = heap_.size();
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      put(i, heap_[child]);
      i = child;
    }
    put(i, e);
  }
  void removeAt(size_t i) {
    pos_[static_cast<size_t>(heap_[i].id)] = kNone;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    heap_[i] = last;
    pos_[static_cast<size_t>(last.id)] = static_cast<uint32_t>(i);
    if (i > 0 && before(last, heap_[(i - 1) / 2]))
      up(i);
    else
      down(i);
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;  // per flow id: its entry's index in heap_, kNone when it has none
};

}  // namespace myriad::netsim
