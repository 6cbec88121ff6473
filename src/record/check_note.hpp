// A failed check of a point against the truth (record/check_rule.hpp) in words, as the sweep's
// progress and the report print it. Torch-free.
#pragma once
#include <string>

#include "record/result.hpp"

namespace opbench {

// One line for a failed check: "error 0.011 (reference code 0.012, tolerance 0.024); largest
// element 0.41 (reference code 0.03, tolerance 0.06)". A result stored before the reference
// figures existed: "relative error 0.011 over tolerance".
std::string check_note(const Result& r, const std::string& dtype);

}  // namespace opbench
