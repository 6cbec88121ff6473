// opbench list: the ops, their axes and providers, and which providers run here.
#include <iostream>

#include "cli/cli.hpp"
#include "measure/torch_executor.hpp"
#include "ops/op.hpp"

namespace opbench {

void add_list_command(CLI::App& app, Cli& cli) {
  auto device = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("list", "list ops, axes and providers, and which providers run here");
  cmd->add_option("--device", *device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->callback([device, &cli] {
    std::string dev = device->empty() ? default_device() : *device;
    TorchExecutor ex(dev);
    std::cout << "device: " << dev << "\n";
    for (const auto* op : all_ops()) {
      std::cout << "\n" << op->name << ": " << op->help << "\n  axes:\n";
      for (const auto& a : op->axes) {
        std::string def = a.fallback ? to_string(*a.fallback) : "required";
        std::cout << "    " << a.name << " (" << (a.kind == AxisKind::Int ? "int" : "word");
        if (!a.choices.empty()) {
          std::cout << ":";
          for (const auto& c : a.choices) std::cout << " " << c;
        }
        std::cout << "; default " << def << ") " << a.help << "\n";
      }
      std::cout << "  x axis: " << op->x_axes.front() << "\n  providers:\n";
      for (const auto& [name, help] : op->providers) {
        std::string why = ex.unavailable(op->name, name);
        std::cout << "    " << name << ": " << help << " [" << (why.empty() ? "runs here" : why) << "]\n";
      }
    }
    cli.status = kExitOk;
  });
}

}  // namespace opbench
