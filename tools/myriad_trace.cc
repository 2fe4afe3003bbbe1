// myriad-trace: reads the flight-record dumps of a communicator's ranks (myrCommDump, MYRIAD_DUMP_ON_ERROR)
// and prints each rank's last call and whom it waits on, the wait-for chain and the first culprit.
//   myriad-trace DIR|FILE...     dumps as files, or every *.json in a directory
// Exit status: 0 when every file was a dump and the report was printed; 1 when a file could not be read or
// was not a flight record (the others are still reported); 2 for bad usage.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tools/trace/trace_report.h"

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxDumpBytes = 64u << 20;  // a ring of 1M calls with many peers stays well below

// The files named, with directories replaced by their *.json files in name order.
std::vector<std::string> expand(const std::vector<std::string>& args, int* bad) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      files.push_back(a);
      continue;
    }
    std::vector<std::string> inDir;
    for (fs::directory_iterator it(a, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json" && it->is_regular_file(ec)) inDir.push_back(it->path().string());
    if (ec) {
      std::fprintf(stderr, "myriad-trace: %s: %s\n", a.c_str(), ec.message().c_str());
      ++*bad;
    }
    std::sort(inDir.begin(), inDir.end());
    if (inDir.empty()) std::fprintf(stderr, "myriad-trace: %s: no *.json dumps in this directory\n", a.c_str());
    files.insert(files.end(), inDir.begin(), inDir.end());
  }
  return files;
}

bool readFile(const std::string& path, std::string* text, std::string* error) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return *error = ec.message(), false;
  if (size > kMaxDumpBytes)
    return *error = "larger than a flight record can be (" + std::to_string(size) + " bytes)", false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return *error = "cannot open", false;
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"myriad-trace: who waits on whom, from the flight records of a communicator's ranks"};
  std::vector<std::string> inputs;
  app.add_option("dumps", inputs, "Flight-record files (myrCommDump, MYRIAD_DUMP_ON_ERROR) or directories of them")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  int bad = 0;
  std::map<std::string, std::vector<myriad::trace::Dump>> byComm;  // a directory may hold several communicators
  for (const std::string& file : expand(inputs, &bad)) {
    std::string text, error;
    if (!readFile(file, &text, &error)) {
      std::fprintf(stderr, "myriad-trace: %s: %s\n", file.c_str(), error.c_str());
      ++bad;
      continue;
    }
    auto dump = myriad::trace::parseDump(text, file, &error);
    if (!dump) {
      std::fprintf(stderr, "myriad-trace: %s: %s\n", file.c_str(), error.c_str());
      ++bad;
      continue;
    }
    byComm[dump->comm].push_back(std::move(*dump));
  }
  if (byComm.empty()) {
    std::fprintf(stderr, "myriad-trace: no flight records to read\n");
    return 1;
  }
  bool firstGroup = true;
  for (const auto& [comm, dumps] : byComm) {
    std::printf("%s%s", firstGroup ? "" : "\n", myriad::trace::analyse(dumps).text.c_str());
    firstGroup = false;
  }
  return bad ? 1 : 0;
}
