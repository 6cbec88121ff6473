// opbench list: the ops, their axes and providers, and which providers run here.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "measure/torch_executor.hpp"
#include "ops/describe.hpp"
#include "ops/op.hpp"
#include "sweep/resume.hpp"

namespace opbench {

namespace {

// "batch=8,n=256,act=silu" -> axis values (integers where the value is one).
Params parse_point(const std::string& text) {
  Params p;
  for (const auto& item : split_list(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--at", item, "must read AXIS=VALUE");
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    const bool number = !value.empty() && value.find_first_not_of("-0123456789") == std::string::npos &&
                        value.size() < 19 && value.find('-', 1) == std::string::npos && value != "-";
    if (number) p.set(name, int64_t(std::stoll(value)));
    else p.set(name, value);
  }
  return p;
}

// Every op's facts (describe_op), each provider with whether it runs on `dev` here; with a
// point, the one op's inputs with their shapes there.
std::string list_json(TorchExecutor& ex, const std::string& dev, const std::string& only, const std::string& at) {
  if (!at.empty() && only.empty()) throw InputError("--at", at, "needs --op (the op whose point it is)");
  if (!only.empty() && !find_op(only)) throw InputError("--op", only, "no such op");
  const Params point = parse_point(at);
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto* op : all_ops()) {
    if (!only.empty() && op->name != only) continue;
    nlohmann::ordered_json j;
    try {
      j = describe_op(*op, at.empty() ? nullptr : &point);
    } catch (const AxisError& e) {
      throw InputError("--at", e.field, e.what());
    }
    for (auto& p : j["providers"]) {
      const std::string why = ex.unavailable(op->name, p["name"].get<std::string>());
      p["runs_here"] = why.empty();
      if (!why.empty()) p["unavailable"] = why;
    }
    ops.push_back(j);
  }
  return nlohmann::ordered_json{{"device", dev}, {"ops", ops}}.dump(2) + "\n";
}

}  // namespace

void add_list_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string device, format = "text", out, op, at;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("list", "list ops, axes and providers, and which providers run here");
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--format", o->format, "text, or json: every op's facts (axes, modes, x axes, title template, inputs, providers)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "write to this file instead of stdout")->check(file_arg());
  cmd->add_option("--op", o->op, "only this op");
  cmd->add_option("--at", o->at, "json: a point of --op (AXIS=VALUE,...; other axes at their defaults): each input's shape there");
  cmd->callback([o, &cli] {
    std::string dev = o->device.empty() ? default_device() : o->device;
    TorchExecutor ex(dev);
    if (o->format == "json") {
      write_output(list_json(ex, dev, o->op, o->at), o->out);
      cli.status = kExitOk;
      return;
    }
    std::ostringstream out;
    out << "device: " << dev << "\n";
    for (const auto* op : all_ops()) {
      if (!o->op.empty() && op->name != o->op) continue;
      out << "\n" << op->name << ": " << op->help << "\n  axes:\n";
      for (const auto& a : op->axes) {
        std::string def = a.fallback ? to_string(*a.fallback) : "required";
        out << "    " << a.name << " (" << (a.kind == AxisKind::Int ? "int" : "word");
        if (!a.choices.empty()) {
          out << ":";
          for (const auto& c : a.choices) out << " " << c;
        }
        out << "; default " << def << ") " << a.help << "\n";
      }
      out << "  x axis: " << op->x_axes.front() << "\n  title: " << op->title << "\n  providers:\n";
      for (const auto& [name, help] : op->providers) {
        std::string why = ex.unavailable(op->name, name);
        out << "    " << name << ": " << help << " [" << (why.empty() ? "runs here" : why) << "]\n";
      }
    }
    write_output(out.str(), o->out);
    cli.status = kExitOk;
  });
}

}  // namespace opbench
