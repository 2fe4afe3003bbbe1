// C API: buffer registration (myrCommRegister / myrCommDeregister). A handle is the registration's number,
// never a pointer to anything: a stale or foreign handle is found out by lookup, not dereferenced.
#include <cstdint>

#include "capi/handles.h"
#include "capi/internal.h"
#include "dispatch/group.h"

using namespace myriad;
using namespace myriad::capi;

extern "C" myrResult_t myrCommRegister(const myrComm_t comm, void* buff, size_t size, void** handle) {
  if (!handle) return finish(comm, invalidArgument("handle (the output pointer) is NULL"), __func__);
  *handle = nullptr;
  if (!buff) return finish(comm, invalidArgument("buff is NULL"), __func__);
  if (size == 0) return finish(comm, invalidArgument("size is 0"), __func__);
  if (groupActive())
    return finish(comm, invalidUsage("myrCommRegister between myrGroupStart and myrGroupEnd"), __func__);
  auto c = ready(comm);
  if (!c.isOk()) return finish(comm, c.status(), __func__);
  auto id = c.value()->registerBuffer(buff, size);
  if (!id.isOk()) return finish(comm, id.takeStatus(), __func__);
  *handle = reinterpret_cast<void*>(static_cast<uintptr_t>(id.value()));
  return myrSuccess;
}

extern "C" myrResult_t myrCommDeregister(const myrComm_t comm, void* handle) {
  if (!handle) return finish(comm, invalidArgument("handle is NULL"), __func__);
  if (groupActive())
    return finish(comm, invalidUsage("myrCommDeregister between myrGroupStart and myrGroupEnd"), __func__);
  auto c = ready(comm);
  if (!c.isOk()) return finish(comm, c.status(), __func__);
  return finish(comm, c.value()->deregisterBuffer(reinterpret_cast<uintptr_t>(handle)), __func__);
}
