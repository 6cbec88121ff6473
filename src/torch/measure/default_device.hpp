// The device a command measures on when none is named: cuda when LibTorch sees one, else cpu.
#pragma once
#include <string>

namespace opbench {

std::string default_device();

}  // namespace opbench
