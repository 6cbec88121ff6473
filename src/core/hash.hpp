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

// A UUID derived from `key` (128 bits: the hash of the key and of the key salted, laid out as
// a version 8 UUID, 8-4-4-4-12 lower-case hex): equal keys give equal uuids, so two copies of
// the same content agree on theirs.
inline std::string content_uuid(const std::string& key) {
  std::string h = content_hash(key) + content_hash("opbench-run-uuid\x1f" + key);
  h[12] = '8';
  h[16] = "89ab"[std::stoi(h.substr(16, 1), nullptr, 16) & 3];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20, 12);
}

}  // namespace opbench
