// HostLayout construction: hosts numbered in order of their lowest rank, ranks in rank order within each.
#include "plan/comm_view.h"

#include <map>

namespace myriad {
namespace {

int evenHostSizeOf(const HostLayout& l) {
  if (l.hosts.empty()) return 0;
  const size_t g = l.hosts.front().size();
  for (size_t r = 0; r < l.hostOf.size(); ++r)
    if (static_cast<size_t>(l.hostOf[r]) != r / g || l.hosts[static_cast<size_t>(l.hostOf[r])].size() != g) return 0;
  return static_cast<int>(g);
}

}  // namespace

std::shared_ptr<const HostLayout> HostLayout::fromLabels(const std::vector<std::string>& labels) {
  auto l = std::make_shared<HostLayout>();
  size_t n = labels.size();
  l->hostOf.assign(n, -1);
  l->localIndex.assign(n, -1);
  std::map<std::string, int> index;
  for (size_t r = 0; r < n; ++r) {
    auto [it, fresh] = index.emplace(labels[r], static_cast<int>(l->hosts.size()));
    if (fresh) l->hosts.emplace_back();
    auto& host = l->hosts[static_cast<size_t>(it->second)];
    l->hostOf[r] = it->second;
    l->localIndex[r] = static_cast<int>(host.size());
    host.push_back(static_cast<int>(r));
  }
  l->evenHostSize = evenHostSizeOf(*l);
  return l;
}

std::shared_ptr<const HostLayout> HostLayout::fromHostOf(const std::vector<int>& hostOf) {
  std::vector<std::string> labels;
  labels.reserve(hostOf.size());
  for (int h : hostOf) labels.push_back(std::to_string(h));
  return fromLabels(labels);
}

std::shared_ptr<const HostLayout> HostLayout::single(int n) {
  auto l = std::make_shared<HostLayout>();
  l->hosts.emplace_back();
  for (int r = 0; r < n; ++r) {
    l->hosts[0].push_back(r);
    l->hostOf.push_back(0);
    l->localIndex.push_back(r);
  }
  l->evenHostSize = evenHostSizeOf(*l);
  return l;
}

std::shared_ptr<const HostLayout> HostLayout::onMachines(const HostLayout& base,
                                                         const std::vector<std::string>& machineOfRank,
                                                         const std::vector<int>& coresOfRank) {
  auto l = std::make_shared<HostLayout>(base);
  l->machineOf.clear();
  l->machineCores.clear();
  std::map<std::string, int> index;
  for (const std::vector<int>& host : base.hosts) {
    auto [it, fresh] = index.emplace(machineOfRank[static_cast<size_t>(host.front())], static_cast<int>(index.size()));
    if (fresh) l->machineCores.push_back(0);
    l->machineOf.push_back(it->second);
    int& cores = l->machineCores[static_cast<size_t>(it->second)];
    for (int r : host) {
      const int c = coresOfRank[static_cast<size_t>(r)];
      if (c > 0 && (cores == 0 || c < cores)) cores = c;
    }
  }
  return l;
}

std::string HostLayout::describeMachines() const {
  if (machineOf.empty()) return "";
  std::map<int, int> byCores;  // cores -> machines
  for (int c : machineCores) ++byCores[c];
  std::string out;
  for (auto [cores, count] : byCores)
    out += std::string(out.empty() ? " on " : " and ") + std::to_string(count) +
           (count == 1 ? " machine" : " machines") +
           (cores > 0 ? " of " + std::to_string(cores) + (cores == 1 ? " core" : " cores") : " of unknown size");
  return out;
}

std::string HostLayout::describe() const {
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : "+") + std::to_string(h.size());
  return out;
}

}  // namespace myriad
