// opbench list: the ops, their axes and providers, and which providers run here.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.hpp"
#include "measure/torch_executor.hpp"
#include "ops/describe.hpp"
#include "ops/op.hpp"

namespace opbench {

namespace {

// Every op's facts (describe_op), each provider with whether it runs on `dev` here.
std::string list_json(TorchExecutor& ex, const std::string& dev) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto* op : all_ops()) {
    nlohmann::ordered_json j = describe_op(*op);
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
    std::string device, format = "text", out;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("list", "list ops, axes and providers, and which providers run here");
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--format", o->format, "text, or json: every op's facts (axes, modes, x axes, title template, inputs, providers)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "write to this file instead of stdout");
  cmd->callback([o, &cli] {
    std::string dev = o->device.empty() ? default_device() : o->device;
    TorchExecutor ex(dev);
    if (o->format == "json") {
      write_output(list_json(ex, dev), o->out);
      cli.status = kExitOk;
      return;
    }
    std::ostringstream out;
    out << "device: " << dev << "\n";
    for (const auto* op : all_ops()) {
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
