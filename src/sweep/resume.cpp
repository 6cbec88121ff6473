#include "sweep/resume.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"

namespace opbench {

std::vector<std::string> sweep_providers(const Config& cfg, const Sweep& sw) {
  std::set<std::string> used;
  for (const auto& p : sw.points) used.insert(p.provider);
  std::vector<std::string> out;
  for (const auto& [provider, label] : cfg.providers)
    if (used.count(provider)) out.push_back(provider);
  return out;
}

std::string canonical_device(const std::string& device) { return device == "cuda" ? "cuda:0" : device; }

std::vector<std::pair<std::string, std::string>> option_rows(const RunOptions& s) {
  std::vector<std::pair<std::string, std::string>> out;
  if (s.devices.empty()) out.emplace_back("device", s.device);
  else out.emplace_back("devices", join_list(s.devices));
  out.emplace_back("providers", join_list(s.providers));
  if (!s.filter.empty()) out.emplace_back("filter", s.filter);
  if (!s.shard.empty()) out.emplace_back("shard", s.shard);
  return out;
}

RunOptions stored_options(const Store& store, const RunInfo& run) {
  RunOptions s;
  s.config = run.config_path;
  s.label = run.label;
  s.device = run.env.device;
  for (const auto& [label, provider] : run.notation) s.providers.push_back(provider);
  for (const auto& [name, value] : store.run_options(run.id)) {
    if (name == "device") s.device = value;
    if (name == "providers") s.providers = split_list(value);
    if (name == "filter") s.filter = value;
    if (name == "devices") s.devices = split_list(value);
    if (name == "shard") s.shard = value;
  }
  if (!s.devices.empty()) s.device.clear();
  return s;
}

RunOptions resume_options(const RunOptions& stored, const RunOptions& given, int64_t run_id, bool suite) {
  const std::string run = "run " + std::to_string(run_id);
  // `was`: the stored option as the resume command repeats it
  auto refuse_as = [&](const std::string& option, const std::string& was, const std::string& now) {
    throw InputError(option, now,
                     run + " was measured with " + was + "; a resumed run keeps its options (leave " + option + " out)");
  };
  auto refuse = [&](const std::string& option, const std::string& was, const std::string& now) {
    refuse_as(option, option + " " + (was.empty() ? "''" : was), now);
  };
  const std::string stored_devices =
      stored.devices.empty() ? "--device " + stored.device : "--devices " + join_list(stored.devices);
  if (!given.device.empty() && (!stored.devices.empty() || canonical_device(given.device) != canonical_device(stored.device)))
    refuse_as("--device", stored_devices, given.device);
  if (!given.devices.empty() && given.devices != stored.devices)
    refuse_as("--devices", stored_devices, join_list(given.devices));
  const std::set<std::string> want(given.providers.begin(), given.providers.end()),
      had(stored.providers.begin(), stored.providers.end());
  const bool includes = std::includes(want.begin(), want.end(), had.begin(), had.end());
  if (!given.providers.empty() && (suite ? !includes : want != had))
    refuse("--providers", join_list(stored.providers), join_list(given.providers));
  if (!given.label.empty() && given.label != stored.label) refuse("--label", stored.label, given.label);
  if (!given.filter.empty() && given.filter != stored.filter) refuse("--filter", stored.filter, given.filter);
  if (!given.shard.empty() && given.shard != stored.shard) refuse("--shard", stored.shard, given.shard);
  RunOptions out = stored;
  if (!given.config.empty()) out.config = given.config;
  return out;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string resume_command(const RunOptions& s, const std::string& db, int64_t run_id) {
  return sweep_command({s.config}, s, db) + " --resume " + std::to_string(run_id);
}

std::string sweep_command(const std::vector<std::string>& configs, const RunOptions& s, const std::string& db) {
  std::string cmd = "opbench sweep";
  for (const auto& c : configs) cmd += " " + shell_quote(c);
  cmd += " --db " + shell_quote(db);
  if (!s.devices.empty()) cmd += " --devices " + shell_quote(join_list(s.devices));
  else if (!s.device.empty()) cmd += " --device " + shell_quote(s.device);
  if (!s.providers.empty()) cmd += " --providers " + shell_quote(join_list(s.providers));
  if (!s.label.empty()) cmd += " --label " + shell_quote(s.label);
  if (!s.filter.empty()) cmd += " --filter " + shell_quote(s.filter);
  if (!s.shard.empty()) cmd += " --shard " + shell_quote(s.shard);
  return cmd;
}

}  // namespace opbench
