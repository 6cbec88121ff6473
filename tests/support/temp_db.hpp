// A database path of its own for a test: in the temporary folder, named after the test file's
// tag, the process and `name`, with no database (nor its -wal / -shm) left there from before.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

inline std::string fresh_db_path(const std::string& tag, const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("opbench_" + tag + "_" + std::to_string(getpid()) + "_" + name);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
  return p.string();
}
