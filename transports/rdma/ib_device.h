// The RDMA port this process uses: found by enumerating devices and ports (MYRIAD_IB_HCA filters them),
// opened with a protection domain, its GID chosen from the sysfs GID table (RoCE v2, IPv4-mapped first
// unless MYRIAD_IB_GID_INDEX / MYRIAD_IB_ROCE_VERSION say otherwise). Invariant: an IbDevice exists only
// with an active port and a usable GID; its destructor releases the domain and the context.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "transports/rdma/ib_params.h"
#include "transports/rdma/nic_choice.h"
#include "transports/rdma/verbs.h"

namespace myriad {

class IbDevice {
 public:
  // Opens the topology's choice among the usable ports that MYRIAD_IB_HCA selects, else (saying why in
  // choiceNote()) the `pick`-th of them modulo their number; NotSupported with the reason when there is none.
  static Result<std::unique_ptr<IbDevice>> open(const Verbs& verbs, const Config& config, const NicChoice& topo,
                                                int pick);
  ~IbDevice();

  const Verbs& verbs() const { return verbs_; }
  ibv_context* context() const { return ctx_; }
  ibv_pd* pd() const { return pd_; }
  const std::string& name() const { return name_; }
  int port() const { return port_; }
  bool roce() const { return roce_; }
  int gidIndex() const { return gidIndex_; }
  const ibv_gid& gid() const { return gid_; }
  uint16_t lid() const { return portAttr_.lid; }
  ibv_mtu activeMtu() const { return portAttr_.active_mtu; }
  size_t maxMsg() const { return portAttr_.max_msg_sz ? portAttr_.max_msg_sz : size_t{1} << 30; }
  int maxQpWr() const { return devAttr_.max_qp_wr; }
  // "rxe1:1 gid 1 ::ffff:10.20.0.1"
  std::string describe() const;
  // How the port was chosen: "by the topology (NUMA node 1)" or "rank mod 2: <why not the topology>".
  const std::string& choiceNote() const { return choiceNote_; }
  bool chosenByTopology() const { return byTopology_; }

 private:
  IbDevice(const Verbs& v) : verbs_(v) {}
  const Verbs& verbs_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  std::string name_;
  std::string choiceNote_;
  bool byTopology_ = false;
  int port_ = 0;
  bool roce_ = false;
  int gidIndex_ = 0;
  ibv_gid gid_{};
  ibv_device_attr devAttr_{};
  ibv_port_attr portAttr_{};
};

// The GID table of a port as sysfs shows it (/sys/class/infiniband/<dev>/ports/<port>/gids, gid_attrs/types).
std::vector<GidEntry> readGidTable(const std::string& sysfsRoot, const std::string& device, int port, int length);

}  // namespace myriad
