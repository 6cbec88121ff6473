#include "ops/describe.hpp"

#include "core/value_json.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

json axis_json(const AxisSpec& a) {
  return {{"name", a.name},
          {"kind", a.kind == AxisKind::Int ? "int" : "word"},
          {"default", a.fallback ? value_json(*a.fallback) : json(nullptr)},
          {"choices", a.choices},
          {"positive", a.kind == AxisKind::Int && a.positive},
          {"help", a.help}};
}

// The inputs' facts: those that hold at every point, taken at the axes' defaults; with a
// point (`at`), also each input's shape there.
json inputs_json(const OpSpec& op, const Params* at) {
  json out = json::array();
  Params p;
  if (at) {
    p = *at;
  } else {
    for (const auto& a : op.axes)
      if (a.fallback) p.set(a.name, *a.fallback);
  }
  p = op.with_defaults(p);
  if (at) op.validate(p);
  for (const auto& t : op.inputs(p)) {
    out.push_back({{"name", t.name},
                   {"dtype", t.storage_dtype ? "storage" : "fp32"},
                   {"fill", fill_name(t.fill)},
                   {"differentiable", t.differentiable}});
    if (at) out.back()["shape"] = t.shape;
  }
  return out;
}

}  // namespace

json describe_op(const OpSpec& op, const Params* at) {
  json axes = json::array(), providers = json::array();
  for (const auto& a : op.axes) axes.push_back(axis_json(a));
  for (const auto& [name, help] : op.providers) providers.push_back({{"name", name}, {"help", help}});
  return {{"name", op.name}, {"help", op.help},   {"axes", axes},
          {"modes", op.modes}, {"x_axes", op.x_axes}, {"shared_axes", op.shared_axes}, {"title", op.title},
          {"inputs", inputs_json(op, at)}, {"providers", providers}};
}

}  // namespace opbench
