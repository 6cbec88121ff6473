#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "measure/device.hpp"

namespace opbench {

void ensure_parent_dir(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw RuntimeFailure("cannot create " + parent.string() + ": " + ec.message());
}

void write_output(const std::string& text, const std::string& out_path) {
  if (out_path.empty()) {
    std::cout << text << std::flush;
    return;
  }
  ensure_parent_dir(out_path);
  // Write beside the target, then rename: a reader never sees half a report.
  std::string tmp = out_path + ".tmp";
  {
    std::ofstream o(tmp, std::ios::binary);
    o << text;
    if (!o) throw RuntimeFailure("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, out_path, ec);
  if (ec) throw RuntimeFailure("cannot write " + out_path + ": " + ec.message());
}

std::string default_device() { return cuda_present() ? "cuda" : "cpu"; }

}  // namespace opbench
