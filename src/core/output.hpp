// A command's text output: to standard output, or to the file an option names. Torch-free.
#pragma once
#include <string>

namespace opbench {

// Writes `text` to `out_path`, or to standard output when it is empty (RuntimeFailure when
// standard output cannot take it).
void write_output(const std::string& text, const std::string& out_path);
// "cannot write to standard output", with errno's cause when there is one (a closed descriptor
// fails without one).
std::string output_lost(int err);

}  // namespace opbench
