// libibverbs, opened with dlopen at run time: the library loads and runs on machines without rdma-core,
// and the transport then says why it is unavailable. Only the entry points Myriad calls are looked up;
// the data-path calls (post_send, post_recv, poll_cq) are inline in verbs.h and go through the device's
// own function table, so they need no symbol. Invariant: once loaded, the table is never unloaded.
#pragma once

#include <infiniband/verbs.h>

#include "base/status.h"

namespace myriad {

struct Verbs {
  ibv_device** (*getDeviceList)(int*);
  void (*freeDeviceList)(ibv_device**);
  const char* (*getDeviceName)(ibv_device*);
  ibv_context* (*openDevice)(ibv_device*);
  int (*closeDevice)(ibv_context*);
  int (*queryDevice)(ibv_context*, ibv_device_attr*);
  int (*queryPort)(ibv_context*, uint8_t, ibv_port_attr*);
  int (*queryGid)(ibv_context*, uint8_t, int, ibv_gid*);
  ibv_pd* (*allocPd)(ibv_context*);
  int (*deallocPd)(ibv_pd*);
  ibv_mr* (*regMr)(ibv_pd*, void*, size_t, int);
  int (*deregMr)(ibv_mr*);
  ibv_cq* (*createCq)(ibv_context*, int, void*, ibv_comp_channel*, int);
  int (*destroyCq)(ibv_cq*);
  ibv_qp* (*createQp)(ibv_pd*, ibv_qp_init_attr*);
  int (*modifyQp)(ibv_qp*, ibv_qp_attr*, int);
  int (*queryQp)(ibv_qp*, ibv_qp_attr*, int, ibv_qp_init_attr*);
  int (*destroyQp)(ibv_qp*);
  const char* (*wcStatusStr)(ibv_wc_status);
  // Seam for GPUDirect RDMA: CUDA buffers will register through their dma-buf (rdma-core >= 34); may be null.
  ibv_mr* (*regDmabufMr)(ibv_pd*, uint64_t, size_t, uint64_t, int, int);
};

// The loaded table, or why there is none (NotSupported: no libibverbs.so.1, or a symbol missing).
Result<const Verbs*> loadVerbs();

}  // namespace myriad
