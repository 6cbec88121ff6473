// What the fuzz targets share: the input as text, and the rule that bad input may only ever
// be an InputError (anything else escaping a target -- another exception, a crash, a
// sanitizer report -- is a finding). Torch-free.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace opbench::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// Runs `body`; an InputError (the documented answer to bad input) ends it quietly.
template <class F>
void refusing_bad_input(F&& body) {
  try {
    body();
  } catch (const InputError&) {
  }
}

}  // namespace opbench::fuzz
