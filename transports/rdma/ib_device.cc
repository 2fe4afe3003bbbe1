// Device and port enumeration, opening, and GID choice (see ib_device.h).
#include "transports/rdma/ib_device.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace myriad {
namespace {

struct Candidate {
  ibv_device* dev;
  std::string name;
  int port;
};

const char* portStateName(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_DOWN: return "down";
    case IBV_PORT_INIT: return "init";
    case IBV_PORT_ARMED: return "armed";
    case IBV_PORT_ACTIVE: return "active";
    default: return "not active";
  }
}

}  // namespace

std::vector<GidEntry> readGidTable(const std::string& root, const std::string& device, int port, int length) {
  std::vector<GidEntry> table;
  const std::string base = root + "/" + device + "/ports/" + std::to_string(port);
  for (int i = 0; i < length; ++i) {
    std::ifstream g(base + "/gids/" + std::to_string(i));
    std::string text;
    if (!std::getline(g, text)) break;
    GidEntry e;
    e.index = i;
    if (!parseGid(text, &e.gid) || gidIsZero(e.gid)) continue;
    std::ifstream t(base + "/gid_attrs/types/" + std::to_string(i));
    std::getline(t, e.type);
    table.push_back(e);
  }
  return table;
}

Result<std::unique_ptr<IbDevice>> IbDevice::open(const Verbs& v, const Config& config, const NicChoice& topo,
                                                 int pick) {
  MYR_ASSIGN_OR_RETURN(HcaFilter filter, parseHcaList(config.ibHca));
  int n = 0;
  ibv_device** list = v.getDeviceList(&n);
  if (!list)  // ENOSYS: the kernel has no RDMA support loaded (no /sys/class/infiniband)
    return notSupported(systemError("rdma: no RDMA devices (ibv_get_device_list failed)", errno).message());
  struct ListGuard {
    const Verbs& v;
    ibv_device** l;
    ~ListGuard() { v.freeDeviceList(l); }
  } guard{v, list};
  if (n == 0) return notSupported("rdma: no RDMA devices (ibv_get_device_list found none)");

  // Every selected device's active ports, in device order; the reasons others were skipped, for the message.
  std::vector<Candidate> found;
  std::string skipped;
  for (int i = 0; i < n; ++i) {
    std::string name = v.getDeviceName(list[i]);
    ibv_context* ctx = v.openDevice(list[i]);
    if (!ctx) {
      skipped += "; " + name + ": cannot open (" + std::strerror(errno) + ")";
      continue;
    }
    ibv_device_attr da{};
    int ports = v.queryDevice(ctx, &da) == 0 ? da.phys_port_cnt : 0;
    for (int p = 1; p <= ports; ++p) {
      ibv_port_attr pa{};
      if (!hcaSelected(filter, name, p)) {
        skipped += "; " + name + ":" + std::to_string(p) + " not in MYRIAD_IB_HCA";
        continue;
      }
      if (v.queryPort(ctx, static_cast<uint8_t>(p), &pa) != 0 || pa.state != IBV_PORT_ACTIVE) {
        skipped += "; " + name + ":" + std::to_string(p) + " " + portStateName(pa.state);
        continue;
      }
      found.push_back({list[i], name, p});
    }
    v.closeDevice(ctx);
  }
  if (found.empty())
    return notSupported("rdma: no usable RDMA port (" + (skipped.empty() ? std::string("none") : skipped.substr(2)) +
                        ")");

  std::vector<IbPortName> names;
  for (const Candidate& f : found) names.push_back({f.name, f.port});
  std::string why;
  const int matched = matchNic(names, topo, &why);
  const size_t index = matched >= 0 ? static_cast<size_t>(matched) : static_cast<size_t>(pick) % found.size();
  const Candidate& c = found[index];
  std::unique_ptr<IbDevice> d(new IbDevice(v));
  d->byTopology_ = matched >= 0;
  d->choiceNote_ = matched >= 0 ? "the topology's NIC for " + topo.via
                                : "port " + std::to_string(index) + " of " + std::to_string(found.size()) +
                                      " by rank, not by the topology: " + why;
  d->name_ = c.name;
  d->port_ = c.port;
  d->ctx_ = v.openDevice(c.dev);
  if (!d->ctx_) return notSupported(systemError("rdma: cannot open " + c.name, errno).message());
  if (v.queryDevice(d->ctx_, &d->devAttr_) != 0 ||
      v.queryPort(d->ctx_, static_cast<uint8_t>(c.port), &d->portAttr_) != 0)
    return notSupported(systemError("rdma: cannot query " + c.name, errno).message());
  d->pd_ = v.allocPd(d->ctx_);
  if (!d->pd_) return notSupported(systemError("rdma: ibv_alloc_pd on " + c.name + " failed", errno).message());
  d->roce_ = d->portAttr_.link_layer == IBV_LINK_LAYER_ETHERNET;
  auto table = readGidTable("/sys/class/infiniband", c.name, c.port, d->portAttr_.gid_tbl_len);
  auto gi = pickGid(table, d->roce_, config.ibGidIndex, config.ibRoceVersion);
  if (!gi.isOk()) {
    Status s = gi.takeStatus();
    return Status(s.code(), "rdma: " + c.name + ":" + std::to_string(c.port) + ": " + s.message());
  }
  d->gidIndex_ = gi.value();
  if (v.queryGid(d->ctx_, static_cast<uint8_t>(c.port), d->gidIndex_, &d->gid_) != 0)
    return notSupported(systemError("rdma: ibv_query_gid on " + c.name, errno).message());
  return d;
}

IbDevice::~IbDevice() {
  if (pd_) verbs_.deallocPd(pd_);
  if (ctx_) verbs_.closeDevice(ctx_);
}

std::string IbDevice::describe() const {
  std::array<uint8_t, 16> g;
  std::memcpy(g.data(), gid_.raw, 16);
  return name_ + ":" + std::to_string(port_) +
         (roce_ ? " gid " + std::to_string(gidIndex_) + " " + gidToString(g) : " lid " + std::to_string(portAttr_.lid));
}

}  // namespace myriad
