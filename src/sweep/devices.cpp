#include "sweep/devices.hpp"

#include <map>
#include <set>

#include "core/error.hpp"
#include "sweep/resume.hpp"

namespace opbench {

namespace {

// cuda:N's N, or -1 for a name that is not cuda:N.
int cuda_index(const std::string& name) {
  if (name.rfind("cuda:", 0) != 0) return -1;
  const std::string idx = name.substr(5);
  if (idx.empty() || idx.size() > 4 || idx.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(idx);
}

std::vector<std::string> all_cuda(int cuda_count, const std::string& option) {
  if (cuda_count < 1) throw InputError(option, "all", "no CUDA device is visible here");
  std::vector<std::string> out;
  for (int i = 0; i < cuda_count; ++i) out.push_back("cuda:" + std::to_string(i));
  return out;
}

// An empty item ("cpu,", "cpu,,cpu", ",cuda:0"): a device left out by mistake, refused.
void refuse_empty_items(const std::string& text, const std::string& option) {
  size_t start = 0, item = 1;
  for (;; ++item) {
    const size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (part.find_first_not_of(' ') == std::string::npos && text.find_first_not_of(' ') != std::string::npos)
      throw InputError(option, text, "item " + std::to_string(item) + " is empty (a device name between every comma)");
    if (comma == std::string::npos) return;
    start = comma + 1;
  }
}

}  // namespace

std::vector<WorkerSlot> parse_devices(const std::string& text, int cuda_count, const std::string& option) {
  refuse_empty_items(text, option);
  const std::vector<std::string> names = text == "all" ? all_cuda(cuda_count, option) : split_list(text);
  if (names.empty()) throw InputError(option, text, "names no device (e.g. cuda:0,cuda:1, or all)");
  std::vector<WorkerSlot> out;
  std::map<std::string, int> seen;
  for (const auto& given : names) {
    const std::string device = canonical_device(given);
    const int idx = cuda_index(device);
    if (device != "cpu" && idx < 0) throw InputError(option, given, "unknown device (cpu, cuda or cuda:N)");
    if (idx >= cuda_count)
      throw InputError(option, given,
                       "no such CUDA device (" + std::to_string(cuda_count) + (cuda_count == 1 ? " is" : " are") +
                           " present)");
    const int n = ++seen[device];
    if (n > 1 && device != "cpu") throw InputError(option, given, "named twice (only cpu may be)");
    out.push_back({n == 1 ? device : device + "#" + std::to_string(n), device});
  }
  if (seen.count("cpu") && seen.size() > 1)
    throw InputError(option, text, "the CPU and CUDA devices cannot measure one run");
  return out;
}

std::string devices_text(const std::vector<WorkerSlot>& slots) {
  std::vector<std::string> devices;
  for (const auto& s : slots) devices.push_back(s.device);
  return join_list(devices);
}

void check_one_model(const std::vector<RunDevice>& devices, bool allow_mixed, const std::string& option) {
  std::set<std::string> models;
  for (const auto& d : devices) models.insert(d.gpu);
  if (models.size() <= 1 || allow_mixed) return;
  std::string list, names;
  for (const auto& d : devices) {
    list += (list.empty() ? "" : ", ") + d.device + " is " + (d.gpu.empty() ? "unknown" : "'" + d.gpu + "'");
    names += (names.empty() ? "" : ",") + d.device;
  }
  throw InputError(option, names,
                   "the devices are different models (" + list +
                       "); one run measures one model (--allow-mixed to measure on them all the same)");
}

}  // namespace opbench
