// Stages, their keys and names, and the seconds charged to each (stage_times.hpp). Torch-free.
#include "record/stage_times.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace opbench {

namespace {

struct StageInfo {
  const char* key;
  const char* name;
};

constexpr std::array<StageInfo, kStageCount> kStages{{
    {"startup", "start-up"},
    {"bandwidth", "bandwidth probe"},
    {"packages", "package loading"},
    {"placement", "allocation and placement"},
    {"estimate", "first call and estimate"},
    {"warmup", "warm-up"},
    {"timed", "timed calls"},
    {"flush", "L2 flushes"},
    {"check", "check"},
    {"control", "control workload"},
    {"memory", "memory points"},
    {"gpu_state", "GPU state reads"},
    {"calibration", "device calibration"},
    {"store", "store writes"},
    {"workers", "worker starts"},
    {"other", "other"},
}};

}  // namespace

const char* stage_key(Stage s) { return kStages[size_t(s)].key; }
const char* stage_name(Stage s) { return kStages[size_t(s)].name; }

std::optional<Stage> stage_of_key(const std::string& key) {
  for (int i = 0; i < kStageCount; ++i)
    if (key == kStages[size_t(i)].key) return Stage(i);
  return std::nullopt;
}

double StageTimes::wall() const {
  double sum = 0;
  for (double s : seconds) sum += s;
  return sum;
}

double StageTimes::timed() const { return (*this)[Stage::warmup] + (*this)[Stage::timed] + (*this)[Stage::flush]; }

StageTimes& StageTimes::operator+=(const StageTimes& o) {
  for (size_t i = 0; i < seconds.size(); ++i) seconds[i] += o.seconds[i];
  return *this;
}

nlohmann::ordered_json stages_json(const StageTimes& t) {
  if (t.empty()) return nullptr;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (int i = 0; i < kStageCount; ++i)
    if (t.seconds[size_t(i)] != 0) out[stage_key(Stage(i))] = t.seconds[size_t(i)];
  return out;
}

StageTimes stages_of_json(const nlohmann::ordered_json& j) {
  StageTimes t;
  if (!j.is_object()) return t;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (const auto s = stage_of_key(it.key()); s && it.value().is_number()) t[*s] = it.value().get<double>();
  return t;
}

std::string stages_text(const StageTimes& t) {
  const double wall = t.wall(), timed = t.timed();
  if (!(wall > 0)) return "";
  char buf[160];
  if (timed > 0)
    std::snprintf(buf, sizeof buf, "%.1f s wall, %.2fx the %.1f s timed (warm-up, timed calls, L2 flushes)", wall,
                  wall / timed, timed);
  else
    std::snprintf(buf, sizeof buf, "%.1f s wall", wall);
  std::string out = buf;
  std::vector<int> order;
  for (int i = 0; i < kStageCount; ++i)
    if (t.seconds[size_t(i)] >= 0.05) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return t.seconds[size_t(a)] > t.seconds[size_t(b)]; });
  for (size_t k = 0; k < order.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%s %s %.1f s", k ? "," : ":", stage_name(Stage(order[k])), t.seconds[size_t(order[k])]);
    out += buf;
  }
  return out;
}

}  // namespace opbench
