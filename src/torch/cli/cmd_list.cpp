// opbench list: the ops, their axes and providers, and which providers run here.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "ops/describe.hpp"
#include "ops/op.hpp"
#include "sweep/resume.hpp"
#include "torch/measure/default_device.hpp"
#include "torch/measure/torch_executor.hpp"

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
nlohmann::ordered_json list_ops(TorchExecutor& ex, const std::string& only, const std::string& at) {
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
  return ops;
}

std::string value_text(const nlohmann::ordered_json& v) {
  return v.is_null() ? "required" : v.is_string() ? v.get<std::string>() : v.dump();
}

// The same facts as text, one block per op.
std::string list_text(const std::string& dev, const nlohmann::ordered_json& ops) {
  std::ostringstream out;
  out << "device: " << dev << "\n";
  for (const auto& op : ops) {
    out << "\n" << op["name"].get<std::string>() << ": " << op["help"].get<std::string>() << "\n  axes:\n";
    for (const auto& a : op["axes"]) {
      out << "    " << a["name"].get<std::string>() << " (" << a["kind"].get<std::string>();
      if (!a["choices"].empty()) {
        out << ":";
        for (const auto& c : a["choices"]) out << " " << value_text(c);
      }
      out << "; default " << value_text(a["default"]) << ") " << a["help"].get<std::string>() << "\n";
    }
    out << "  x axis: " << op["x_axes"].front().get<std::string>() << "\n  title: " << op["title"].get<std::string>()
        << "\n  inputs:\n";
    for (const auto& t : op["inputs"]) {
      out << "    " << t["name"].get<std::string>();
      if (t.contains("shape")) out << " " << t["shape"].dump();
      out << " (" << t["dtype"].get<std::string>() << ")\n";
    }
    out << "  providers:\n";
    for (const auto& p : op["providers"])
      out << "    " << p["name"].get<std::string>() << ": " << p["help"].get<std::string>() << " ["
          << (p["runs_here"].get<bool>() ? "runs here" : p["unavailable"].get<std::string>()) << "]\n";
  }
  return out.str();
}

}  // namespace

void add_list_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string device, format = "text", out, op, at;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("list", kListHelp);
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--format", o->format, "text, or json: every op's facts (axes, modes, x axes, title template, inputs, providers)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "write to this file instead of stdout")->check(file_arg());
  cmd->add_option("--op", o->op, "only this op");
  cmd->add_option("--at", o->at, "a point of --op (AXIS=VALUE,...; other axes at their defaults): each input's shape there");
  cmd->callback([o, &cli] {
    std::string dev = o->device.empty() ? default_device() : o->device;
    TorchExecutor ex(dev);
    const auto ops = list_ops(ex, o->op, o->at);
    write_output(o->format == "json" ? nlohmann::ordered_json{{"device", dev}, {"ops", ops}}.dump(2) + "\n"
                                     : list_text(dev, ops),
                 o->out);
    cli.status = kExitOk;
  });
}

}  // namespace opbench
