// dlopen of libibverbs.so.1 and the symbol table (see verbs.h). Loaded once per process, thread-safe.
#include "transports/rdma/verbs.h"

#include <dlfcn.h>

#include <string>

namespace myriad {
namespace {

struct Loaded {
  Verbs verbs{};
  std::string error;  // empty: loaded
};

template <typename F>
bool bind(void* lib, const char* name, F* out, std::string* error) {
  void* sym = dlsym(lib, name);
  if (!sym && error->empty()) *error = std::string("libibverbs.so.1 has no ") + name;
  *out = reinterpret_cast<F>(sym);
  return sym != nullptr;
}

Loaded load() {
  Loaded l;
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    l.error = std::string("cannot load libibverbs.so.1 (rdma-core not installed?): ") + (why ? why : "");
    return l;
  }
  Verbs& v = l.verbs;
  std::string& e = l.error;
  bind(lib, "ibv_get_device_list", &v.getDeviceList, &e);
  bind(lib, "ibv_free_device_list", &v.freeDeviceList, &e);
  bind(lib, "ibv_get_device_name", &v.getDeviceName, &e);
  bind(lib, "ibv_open_device", &v.openDevice, &e);
  bind(lib, "ibv_close_device", &v.closeDevice, &e);
  bind(lib, "ibv_query_device", &v.queryDevice, &e);
  bind(lib, "ibv_query_port", &v.queryPort, &e);
  bind(lib, "ibv_query_gid", &v.queryGid, &e);
  bind(lib, "ibv_alloc_pd", &v.allocPd, &e);
  bind(lib, "ibv_dealloc_pd", &v.deallocPd, &e);
  bind(lib, "ibv_reg_mr", &v.regMr, &e);
  bind(lib, "ibv_dereg_mr", &v.deregMr, &e);
  bind(lib, "ibv_create_cq", &v.createCq, &e);
  bind(lib, "ibv_destroy_cq", &v.destroyCq, &e);
  bind(lib, "ibv_create_qp", &v.createQp, &e);
  bind(lib, "ibv_modify_qp", &v.modifyQp, &e);
  bind(lib, "ibv_query_qp", &v.queryQp, &e);
  bind(lib, "ibv_destroy_qp", &v.destroyQp, &e);
  bind(lib, "ibv_wc_status_str", &v.wcStatusStr, &e);
  std::string optional;
  bind(lib, "ibv_reg_dmabuf_mr", &v.regDmabufMr, &optional);
  return l;
}

}  // namespace

Result<const Verbs*> loadVerbs() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) return notSupported(loaded.error);
  return &loaded.verbs;
}

}  // namespace myriad
