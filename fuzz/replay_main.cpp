// Runs a fuzz target's entry point over files without libFuzzer: each argument is a file or
// a directory of files (not descended into further); a directory that does not exist holds
// no input yet. Built with the ordinary compiler, so ctest replays the seeds and every kept
// crash input on every build. Torch-free.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/fs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> files_of(const std::string& arg) {
  if (!opbench::fs::exists(arg)) return {};
  if (!opbench::fs::is_directory(arg)) return {arg};
  std::vector<std::string> out;
  for (const std::string& name : opbench::fs::list_dir(arg)) {
    if (name == "." || name == ".." || opbench::fs::is_directory(arg + "/" + name)) continue;
    out.push_back(arg + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 0;
  for (int i = 1; i < argc; ++i)
    for (const auto& path : files_of(argv[i])) {
      std::string bytes;
      if (!opbench::fs::read_file(path, &bytes)) {
        std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return 2;
      }
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++n;
    }
  std::printf("replay: %zu inputs, none crashed\n", n);
  return 0;
}
