#include "record/run_device_json.hpp"

#include "record/json_number.hpp"

namespace opbench {

nlohmann::ordered_json run_device_to_json(const RunDevice& d) {
  return {{"device", d.device}, {"gpu", d.gpu}, {"peak_gbps", number_json(d.peak_gbps)}, {"cells", d.cells},
          {"points", d.points}, {"busy_s", number_json(d.busy_s)}, {"cpus", d.cpus}, {"pinned", d.pinned},
          {"threads", d.threads}, {"memory", d.memory}, {"identity", identity_json(d.identity)},
          {"calibration", calibration_json(d.calibration)}};
}

namespace {

RunDevice run_device_from(const JsonReader& d) {
  RunDevice rd;
  rd.device = d.str("device");
  rd.gpu = d.str("gpu");
  rd.peak_gbps = d.num("peak_gbps");
  if (d.has("cells")) {  // version 6
    rd.cells = d.integer("cells");
    rd.points = d.integer("points");
    rd.busy_s = d.num("busy_s");
    rd.cpus = d.str("cpus");
    rd.pinned = d.boolean("pinned");
    rd.threads = d.integer("threads");
    rd.memory = d.str("memory");
  }
  if (d.has("identity")) {  // version 9
    rd.identity = d.parsed("identity", identity_from_json);
    rd.calibration = d.parsed("calibration", calibration_from_json);
  }
  return rd;
}

}  // namespace

std::vector<RunDevice> run_devices_from(const JsonReader& run) {
  std::vector<RunDevice> out;
  if (!run.has("devices")) return out;  // versions 1 and 2
  for (size_t i = 0; i < run.array("devices").size(); ++i) out.push_back(run_device_from(run.item("devices", i)));
  return out;
}

}  // namespace opbench
