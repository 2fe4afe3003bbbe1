// Every algorithm in one table: greppable, no static self-registration.
#include "algorithms/registry.h"

namespace myriad {

const Algorithm& allreduceRing();

std::span<const Algorithm* const> allAlgorithms() {
  static const Algorithm* const kTable[] = {
      &allreduceRing(),
  };
  return kTable;
}

const Algorithm* findAlgorithm(const std::string& name) {
  for (const Algorithm* a : allAlgorithms())
    if (name == a->name()) return a;
  return nullptr;
}

Status validateAlgoOverride(const std::string& name) {
  if (name.empty() || findAlgorithm(name)) return Status::ok();
  std::string known;
  for (const Algorithm* a : allAlgorithms()) known += std::string(known.empty() ? "" : ", ") + a->name();
  return invalidArgument("MYRIAD_ALGO='" + name + "' names no algorithm; known: " + known);
}

Result<const Algorithm*> chooseAlgorithm(const CollArgs& args, const Comm& comm) {
  const std::string& forced = comm.config().algo;
  if (!forced.empty()) {
    const Algorithm* a = findAlgorithm(forced);
    if (a && a->kind() == args.kind) {
      Status s = a->supports(args, comm);
      if (!s.isOk())
        return invalidUsage(std::string("MYRIAD_ALGO=") + forced + " cannot run this call: " + s.message());
      return a;
    }
  }
  for (const Algorithm* a : allAlgorithms())
    if (a->kind() == args.kind && a->supports(args, comm).isOk()) return a;
  return internalError("no algorithm supports this call");
}

}  // namespace myriad
