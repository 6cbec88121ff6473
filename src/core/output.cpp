#include "core/output.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace opbench {

std::string output_lost(int err) {
  return std::string("cannot write to standard output") + (err ? std::string(": ") + std::strerror(err) : "");
}

void write_output(const std::string& text, const std::string& out_path) {
  if (out_path.empty()) {
    errno = 0;  // a closed standard output fails without a cause of its own
    std::cout << text << std::flush;
    if (!std::cout) throw RuntimeFailure(output_lost(errno));
    return;
  }
  fs::write_file(out_path, text);
}

}  // namespace opbench
