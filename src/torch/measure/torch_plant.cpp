#include "torch/measure/torch_plant.hpp"

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"

namespace opbench {

namespace {

constexpr int64_t kTailBlock = 256;
constexpr double kWrongScale = 1.05;

Plant parse_one(const std::string& item) {
  const size_t colon = item.find(':');
  const auto bad = [&](const std::string& why) -> InputError {
    return InputError(kPlantVariable, item,
                      why + " (expected PROVIDER:element|scale|tail|slow=F, optionally @I, comma-separated)");
  };
  if (colon == std::string::npos || colon == 0) throw bad("no provider");
  Plant p;
  p.provider = item.substr(0, colon);
  std::string kind = item.substr(colon + 1);
  if (const size_t at = kind.find('@'); at != std::string::npos) {
    const std::string i = kind.substr(at + 1);
    if (i.empty() || i.size() > 2 || i.find_first_not_of("0123456789") != std::string::npos)
      throw bad("@I needs a process index, 0 to 99");
    p.process = std::stoi(i);
    kind = kind.substr(0, at);
  }
  if (kind == "element") p.kind = Plant::element;
  else if (kind == "scale") p.kind = Plant::scale;
  else if (kind == "tail") p.kind = Plant::tail;
  else if (kind.rfind("slow=", 0) == 0) {
    p.kind = Plant::slow;
    char* end = nullptr;
    const std::string f = kind.substr(5);
    p.slow_fraction = std::strtod(f.c_str(), &end);
    if (f.empty() || *end != '\0' || !(p.slow_fraction > 0 && p.slow_fraction <= 100)) throw bad("slow=F needs 0 < F <= 100");
  } else {
    throw bad("unknown kind '" + kind + "'");
  }
  return p;
}

// Busy-waits until `seconds` have passed since `from`.
void spin_until(std::chrono::steady_clock::time_point from, double seconds) {
  const auto until = from + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(seconds));
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace

std::vector<Plant> parse_plants(const std::string& spec) {
  std::vector<Plant> out;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(parse_one(item));
  if (out.empty()) throw InputError(kPlantVariable, spec, "names no plant (expected PROVIDER:KIND, comma-separated)");
  return out;
}

std::vector<Plant> plants_in_process(const std::vector<Plant>& plants, int process) {
  std::vector<Plant> out;
  for (const Plant& p : plants)
    if (p.process < 0 || p.process == process) out.push_back(p);
  return out;
}

std::vector<Plant> plants_from_environment() {
  const char* spec = std::getenv(kPlantVariable);
  if (!spec) return {};
  return plants_in_process(parse_plants(spec), round_process_index());
}

at::Tensor plant_fault(const at::Tensor& out, Plant::Kind kind) {
  at::Tensor o = out.clone(at::MemoryFormat::Contiguous);
  const int64_t n = o.numel();
  if (n == 0) return o;
  at::Tensor flat = o.view({-1});
  // a value of the output's size that the truth does not hold (one for an all-zero output)
  at::Tensor rms = out.to(at::kFloat).pow(2).mean().sqrt();
  rms = at::where(rms > 0, rms, at::ones_like(rms)).to(o.scalar_type());
  if (kind == Plant::element) flat.narrow(0, n / 2, 1).add_(rms);
  else if (kind == Plant::scale) o.mul_(kWrongScale);
  else if (kind == Plant::tail && n % kTailBlock != 0) flat.narrow(0, n - n % kTailBlock, n % kTailBlock).fill_(rms);
  return o;
}

static bool names(const Plant& p, const std::string& provider) { return p.provider == "*" || p.provider == provider; }

bool alters_output(const std::vector<Plant>& plants, const std::string& provider) {
  for (const Plant& p : plants)
    if (names(p, provider) && p.kind != Plant::slow) return true;
  return false;
}

double planted_stretch(const std::vector<Plant>& plants, const std::string& provider) {
  double stretch = 1;
  for (const Plant& p : plants)
    if (names(p, provider) && p.kind == Plant::slow) stretch *= 1 + p.slow_fraction;
  return stretch;
}

Call planted(const std::vector<Plant>& plants, const std::string& provider, Call call, bool queued) {
  for (const Plant& p : plants) {
    if (!names(p, provider) || (queued && p.kind == Plant::slow)) continue;
    if (p.kind == Plant::slow) {
      call = [call = std::move(call), f = p.slow_fraction]() {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<at::Tensor> out = call();
        spin_until(t0, (1 + f) * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return out;
      };
    } else {
      call = [call = std::move(call), kind = p.kind]() {
        std::vector<at::Tensor> out = call();
        for (auto& t : out) t = plant_fault(t, kind);
        return out;
      };
    }
  }
  return call;
}

}  // namespace opbench
