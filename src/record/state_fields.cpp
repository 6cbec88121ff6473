// The fields of the GPU's state, one row each (state_fields.hpp). Torch-free.
#include "record/state_fields.hpp"

namespace opbench {

namespace {

struct Row : FieldRow<Row, StateField> {
  // In the column `column`, exported under its name.
  template <class V>
  Row(const char* n, const char* column, V& (*get)(DeviceState&)) {
    name = n;
    reaching(get).stored(column).exported("", n);
  }
};

}  // namespace

const std::vector<StateField>& state_fields() {
  static const std::vector<StateField> rows = {
      Row("sm_mhz", "gpu_sm_mhz", member<&DeviceState::sm_mhz>),
      Row("memory_mhz", "gpu_memory_mhz", member<&DeviceState::memory_mhz>),
      Row("sm_default_mhz", "gpu_sm_default_mhz", member<&DeviceState::sm_default_mhz>),
      Row("temperature_c", "gpu_temperature_c", member<&DeviceState::temperature_c>),
      Row("power_w", "gpu_power_w", member<&DeviceState::power_w>),
      Row("reasons", "gpu_reasons", member<&DeviceState::reasons>),
      Row("throttled", "gpu_throttled", member<&DeviceState::throttled>),
  };
  return rows;
}

}  // namespace opbench
