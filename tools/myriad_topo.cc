// myriad-topo: the topology of this machine (detected) or of a file (NCCL topology XML or hwloc XML, sniffed).
//   myriad-topo [--file F]        the nvidia-smi topo -m style matrix, NUMA affinity, each GPU's NIC, rings
//   myriad-topo --json            the same as JSON (shape in tools/topo/topo_report.h)
//   myriad-topo --dot | --png F   a Graphviz graph, or a PNG rendered with Graphviz's dot
//   myriad-topo --nccl-xml        the topology as NCCL topology XML (for NCCL_TOPO_FILE)
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tools/topo/topo_report.h"
#include "topology/detect.h"
#include "topology/topology_file.h"

extern char** environ;

namespace {

// Pipes `dot` text into `dot -Tpng -o path` (no shell: the path is passed as one argument).
int renderPng(const std::string& dot, const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) return std::perror("myriad-topo: pipe"), 1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string out = "-o" + path;
  char* argv[] = {const_cast<char*>("dot"), const_cast<char*>("-Tpng"), out.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (rc != 0) {
    close(fds[1]);
    std::fprintf(stderr, "myriad-topo: cannot run dot (install graphviz): %s\n", std::strerror(rc));
    return 1;
  }
  size_t off = 0;
  while (off < dot.size()) {
    ssize_t n = write(fds[1], dot.data() + off, dot.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "myriad-topo: dot failed writing %s\n", path.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"myriad-topo: GPUs, NICs, NUMA nodes and the paths between them"};
  std::string file, png;
  bool json = false, dot = false, ncclXml = false, notes = false;
  app.add_option("--file,-f", file, "NCCL topology XML or hwloc XML file instead of detecting this machine");
  app.add_flag("--json", json, "print JSON");
  app.add_flag("--dot", dot, "print a Graphviz graph");
  app.add_option("--png", png, "render the graph to this PNG file (needs graphviz)");
  app.add_flag("--nccl-xml", ncclXml, "print NCCL topology XML");
  app.add_flag("--notes", notes, "detection: also print what each source found (stderr)");
  CLI11_PARSE(app, argc, argv);

  myriad::Topology topo;
  if (!file.empty()) {
    auto r = myriad::loadTopologyFile(file);
    if (!r.isOk()) return std::fprintf(stderr, "myriad-topo: %s\n", r.status().message().c_str()), 1;
    topo = r.take();
  } else {
    auto r = myriad::detectMachine();
    if (!r.isOk()) return std::fprintf(stderr, "myriad-topo: %s\n", r.status().message().c_str()), 1;
    if (notes) {
      for (const std::string& n : r.value().notes) std::fprintf(stderr, "myriad-topo: %s\n", n.c_str());
    }
    topo = std::move(r.value().topo);
  }
  if (!png.empty()) return renderPng(myriad::topologyDot(topo), png);
  if (dot) return std::fputs(myriad::topologyDot(topo).c_str(), stdout) < 0;
  if (ncclXml) return std::fputs(myriad::writeNcclXml(topo).c_str(), stdout) < 0;
  if (json) return std::puts(myriad::topologyJson(topo).dump(2).c_str()) < 0;
  return std::fputs(myriad::topologyMatrix(topo).c_str(), stdout) < 0;
}
