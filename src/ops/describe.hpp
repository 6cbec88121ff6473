// An op's facts as JSON, for `opbench list --format json` (users and scripts). Torch-free.
#pragma once
#include <nlohmann/json.hpp>

#include "ops/op.hpp"

namespace opbench {

// {name, help, axes: [{name, kind: int|word, default (null: required), choices, positive,
// help}], modes, x_axes, title (the template), inputs: [{name, dtype: storage|fp32, fill,
// differentiable}], providers: [{name, help}]}. Input shapes depend on the point: with `at`
// (a point's axes; the others take their defaults) each input also has its `shape` there,
// and a point the op rejects throws AxisError.
nlohmann::ordered_json describe_op(const OpSpec& op, const Params* at = nullptr);

}  // namespace opbench
