#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "measure/device.hpp"

namespace opbench {

void ensure_parent_dir(const std::string& path) { fs::make_parent_dirs(path); }

std::unique_ptr<Store> open_existing_store(const std::string& path) {
  if (!fs::is_regular_file(path)) throw InputError(path, "--db", "no such database");
  return std::make_unique<Store>(path, /*create=*/false);
}

void write_output(const std::string& text, const std::string& out_path) {
  if (out_path.empty()) {
    std::cout << text << std::flush;
    return;
  }
  fs::write_atomic(out_path, text);
}

std::string default_device() { return cuda_present() ? "cuda" : "cpu"; }

}  // namespace opbench
