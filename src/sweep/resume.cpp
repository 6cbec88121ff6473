#include "sweep/resume.hpp"

#include <set>

#include "core/error.hpp"

namespace opbench {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

std::vector<std::string> sweep_providers(const Config& cfg, const Sweep& sw) {
  std::set<std::string> used;
  for (const auto& p : sw.points) used.insert(p.provider);
  std::vector<std::string> out;
  for (const auto& [provider, label] : cfg.providers)
    if (used.count(provider)) out.push_back(provider);
  return out;
}

std::string canonical_device(const std::string& device) { return device == "cuda" ? "cuda:0" : device; }

std::vector<std::pair<std::string, std::string>> shape_options(const RunShape& s) {
  std::vector<std::pair<std::string, std::string>> out = {{"device", s.device}, {"providers", join(s.providers)}};
  if (!s.filter.empty()) out.emplace_back("filter", s.filter);
  return out;
}

RunShape stored_shape(const Store& store, const RunInfo& run) {
  RunShape s;
  s.config = run.config_path;
  s.label = run.label;
  s.device = run.env.device;
  for (const auto& [label, provider] : run.notation) s.providers.push_back(provider);
  for (const auto& [name, value] : store.run_options(run.id)) {
    if (name == "device") s.device = value;
    if (name == "providers") s.providers = split_list(value);
    if (name == "filter") s.filter = value;
  }
  return s;
}

RunShape resume_shape(const RunShape& stored, const RunShape& given, int64_t run_id) {
  const std::string run = "run " + std::to_string(run_id);
  auto refuse = [&](const std::string& option, const std::string& was, const std::string& now) {
    throw InputError(option, now,
                     run + " was measured with " + option + " " + (was.empty() ? "''" : was) +
                         "; a resumed run keeps its options (leave " + option + " out)");
  };
  if (!given.device.empty() && canonical_device(given.device) != canonical_device(stored.device))
    refuse("--device", stored.device, given.device);
  if (!given.providers.empty() && std::set<std::string>(given.providers.begin(), given.providers.end()) !=
                                      std::set<std::string>(stored.providers.begin(), stored.providers.end()))
    refuse("--providers", join(stored.providers), join(given.providers));
  if (!given.label.empty() && given.label != stored.label) refuse("--label", stored.label, given.label);
  if (!given.filter.empty() && given.filter != stored.filter) refuse("--filter", stored.filter, given.filter);
  RunShape out = stored;
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

std::string resume_command(const RunShape& s, const std::string& db, int64_t run_id) {
  std::string cmd = "opbench sweep " + shell_quote(s.config) + " --db " + shell_quote(db);
  if (!s.device.empty()) cmd += " --device " + shell_quote(s.device);
  if (!s.providers.empty()) cmd += " --providers " + shell_quote(join(s.providers));
  if (!s.label.empty()) cmd += " --label " + shell_quote(s.label);
  if (!s.filter.empty()) cmd += " --filter " + shell_quote(s.filter);
  return cmd + " --resume " + std::to_string(run_id);
}

}  // namespace opbench
