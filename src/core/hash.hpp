// A stable content hash (64-bit FNV-1a, hex) for config texts and cache keys. Torch-free.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace opbench {

inline std::string content_hash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace opbench
