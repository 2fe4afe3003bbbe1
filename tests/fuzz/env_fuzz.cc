// The environment parser (base/config.h) on arbitrary values of its own variables: every line of the input
// is one assignment, its first byte choosing the variable from the table and the rest its value. A value
// that is refused is refused naming its variable.
#include <cstdlib>
#include <vector>

#include "base/config.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto table = myriad::envTable();
  std::vector<const char*> set;
  size_t start = 0;
  for (size_t i = 0; i <= size && set.size() < 8; ++i) {
    if (i < size && data[i] != '\n') continue;
    if (i > start) {
      const char* name = table[data[start] % table.size()].name;
      std::string value(reinterpret_cast<const char*>(data + start + 1), i - start - 1);
      if (value.find('\0') == std::string::npos) {
        setenv(name, value.c_str(), 1);
        set.push_back(name);
      }
    }
    start = i + 1;
  }
  auto config = myriad::Config::fromEnv();
  if (!config.isOk()) {
    const std::string& why = config.status().message();
    bool named = false;
    for (const char* name : set) named = named || why.find(name) != std::string::npos;
    FUZZ_CHECK(named, why.c_str());
  }
  for (const char* name : set) unsetenv(name);
  return 0;
}
