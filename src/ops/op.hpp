// What an operator declares to the harness: its axes and their validation, the table title
// (a template that renders and parses), its input tensors (abstractly: shapes, dtypes, how to
// fill them), its output shape and the minimal bytes one call must move. The one place an
// op's facts are written: config, points, measurement, the importer, the compiled baselines'
// exporter (through its request) and `opbench list --format json` read them here. Torch-free.
// One file per op in src/ops/, each registering itself (OpRegistration).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/value.hpp"

namespace opbench {

enum class AxisKind { Int, Word };

// A point's axes that the op rejects: `field` names the axis, what() says why.
class AxisError : public std::invalid_argument {
 public:
  AxisError(std::string field, const std::string& message)
      : std::invalid_argument(message), field(std::move(field)) {}
  std::string field;
};

struct AxisSpec {
  std::string name;
  AxisKind kind = AxisKind::Int;
  std::optional<Value> fallback;     // used when the config does not set the axis
  std::vector<std::string> choices;  // Word axes: allowed words
  bool positive = true;              // Int axes: must be > 0 (false: any, the op validates)
  std::string help;
};

// How an input tensor is filled (seeded per point).
enum class Fill { Normal, Uniform01, Theta };  // Theta: rotary frequencies 10000^(-k/d)-like

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  bool storage_dtype = true;  // true: the point's dtype; false: float32 (theta)
  Fill fill = Fill::Normal;
  bool differentiable = false;  // backward computes its gradient
};

// The minimal bytes of a call, counted per docs/ops.md.
struct ByteCount {
  double bytes = 0;
};

struct OpSpec {
  std::string name;
  std::string help;
  std::vector<AxisSpec> axes;      // every axis the op takes (batch, head, ..., dtype, mode, metric)
  std::vector<std::string> modes;  // fwd and bwd, or fwd alone
  std::vector<std::string> x_axes; // axes allowed as the table's index column (n or m ...)
  // Int axes, not x axes, that change tensor sizes alone (batch ...): a compiled package may
  // leave them dynamic, as it leaves x, so that tables differing only in these share one
  // package (baselines/compiled/compiled.h). Empty: one package per table.
  std::vector<std::string> shared_axes;
  // The providers that implement the op (name, what it is). A provider that is declared here
  // but not linked into this build (no CUDA) is listed as "not built" and skipped.
  std::vector<std::pair<std::string, std::string>> providers;

  // The reference title of a table (src/ops/title.hpp's syntax), e.g.
  // "{op}-{metric}-{mode}-batch{batch}-dim{dim}-act_{act}{?act=softmax:-dim_{act_dim}}-{dtype}".
  std::string title;

  // Throws AxisError naming the axis for a shape the op rejects.
  std::function<void(const Params&)> validate;
  std::function<std::vector<TensorSpec>(const Params&)> inputs;
  std::function<std::vector<int64_t>(const Params&)> output_shape;
  std::function<double(const Params&)> min_bytes;  // mode-aware (p.s("mode"))

  const AxisSpec* axis(const std::string& name) const;
  // The title template rendered for a table's axes.
  std::string default_title(const Params& p) const;
  // The axes a title names when it is this op's title for axes the op accepts: true, and the
  // axes spelt in the title in `axes`; false otherwise. Checked by rendering the title back
  // (the other axes at their defaults) and validating.
  bool parse_title(const std::string& title, Params* axes) const;
  // Every axis filled: `p`'s values, the defaults for the rest (the x axes at 1 when unset).
  Params with_defaults(Params p) const;
};

// A fill's name in messages and JSON: normal, uniform01, theta.
const char* fill_name(Fill f);

// Bytes per element of a dtype word: bf16, fp16 = 2, fp32 = 4.
int dtype_bytes(const std::string& dtype);
int64_t numel(const std::vector<int64_t>& shape);

// Shared axes.
AxisSpec axis_int(std::string name, std::optional<int64_t> fallback, std::string help,
                  bool positive = true);
AxisSpec axis_word(std::string name, std::optional<std::string> fallback,
                   std::vector<std::string> choices, std::string help);
std::vector<AxisSpec> common_axes();  // dtype, mode, metric
// act and act_dim, with validation of the pair through validate_act().
std::vector<AxisSpec> act_axes(int64_t default_act_dim);
void validate_act(const Params& p, const std::vector<int64_t>& allowed_dims);
// "act_{act}{?act=softmax:-dim_{act_dim}}": how the reference titles spell the act axes.
extern const char* const kActTitle;

// Registers an op: one static instance in the op's own file,
//   static const OpRegistration registration(make_spec);
// `make` runs once, on the registry's first use.
class OpRegistration {
 public:
  explicit OpRegistration(std::function<OpSpec()> make);
};

// The registered ops, in name order (src/ops/registry.cpp).
const std::vector<const OpSpec*>& all_ops();
const OpSpec* find_op(const std::string& name);

}  // namespace opbench

namespace opbench {
// The parts lrpe_cosine and lrpe_rotate share: axes (b, n, h, d, act, act_dim in {-1, 1},
// offset), x (b, n, h, d) and a float32 theta (h, d / theta_div), the title template, the
// output (b, n, h, out_parts * d) and its minimal bytes (lrpe_min_bytes).
OpSpec lrpe_1d_base(const std::string& name, int64_t theta_div, int64_t out_parts);
// Minimal bytes of an lrpe op whose output is out_parts times x (x_size bytes): forward reads
// x and writes the output; backward reads the output's gradient and writes dx, and reads x
// again when the act needs it.
double lrpe_min_bytes(const Params& p, double x_size, int64_t out_parts);
// Bytes of x for a point (b * n * h * d * dtype size).
double x_bytes(const Params& p);
}  // namespace opbench
