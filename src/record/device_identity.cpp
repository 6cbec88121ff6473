// A device's identity and calibration, and their JSON (device_identity.hpp). Torch-free.
#include "record/device_identity.hpp"

#include <cmath>
#include <stdexcept>

#include "core/text.hpp"
#include "record/stats.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

// The identity's fields: its key, and its member (text or number).
struct IdentityField {
  const char* key;
  std::string DeviceIdentity::*text = nullptr;
  double DeviceIdentity::*number = nullptr;
};

const std::vector<IdentityField>& identity_fields() {
  static const std::vector<IdentityField> rows = {
      {"uuid", &DeviceIdentity::uuid},
      {"pci_bus_id", &DeviceIdentity::pci_bus_id},
      {"serial", &DeviceIdentity::serial},
      {"vbios", &DeviceIdentity::vbios},
      {"ecc", &DeviceIdentity::ecc},
      {"power_limit_w", nullptr, &DeviceIdentity::power_limit_w},
      {"app_sm_mhz", nullptr, &DeviceIdentity::app_sm_mhz},
      {"app_memory_mhz", nullptr, &DeviceIdentity::app_memory_mhz},
      {"default_app_sm_mhz", nullptr, &DeviceIdentity::default_app_sm_mhz},
      {"max_sm_mhz", nullptr, &DeviceIdentity::max_sm_mhz},
  };
  return rows;
}

std::string mhz_pair(double a, double b) {
  return number_text("%.0f", a) + "/" + number_text("%.0f", b) + " MHz";
}

// A bandwidth in words: TB/s from 1000 GB/s on.
std::string bandwidth_text(double gbps) {
  return gbps >= 1000 ? number_text("%.3g", gbps / 1000) + " TB/s" : number_text("%.3g", gbps) + " GB/s";
}

}  // namespace

bool DeviceIdentity::operator==(const DeviceIdentity& o) const {
  for (const auto& f : identity_fields())
    if (f.text ? this->*f.text != o.*f.text : this->*f.number != o.*f.number) return false;
  return true;
}

bool CalibrationSample::operator==(const CalibrationSample& o) const {
  for (const auto& f : calibration_figures())
    if (this->*f.value != o.*f.value) return false;
  return true;
}

const std::vector<CalibrationFigure>& calibration_figures() {
  static const std::vector<CalibrationFigure> rows = {
      {"launch_us", "launch", "us", false, &CalibrationSample::launch_us},
      {"sync_us", "launch and wait", "us", false, &CalibrationSample::sync_us},
      {"chase_ns", "dependent load", "ns", false, &CalibrationSample::chase_ns},
      {"l2_gbps", "L2 read", "GB/s", true, &CalibrationSample::l2_gbps},
      {"dram_gbps", "DRAM copy", "GB/s", true, &CalibrationSample::dram_gbps},
      {"narrow_gbps", "8-block read", "GB/s", true, &CalibrationSample::narrow_gbps},
      {"sm_mhz", "SM clock under load", "MHz", true, &CalibrationSample::sm_mhz},
  };
  return rows;
}

std::vector<double> Calibration::values(const CalibrationFigure& f) const {
  std::vector<double> out;
  for (const auto& s : samples)
    if (std::isfinite(s.*f.value) && s.*f.value > 0) out.push_back(s.*f.value);
  return out;
}

double Calibration::median(const CalibrationFigure& f) const {
  const std::vector<double> v = values(f);
  return v.empty() ? std::nan("") : summarize(v).median;
}

std::string identity_text(const DeviceIdentity& id) {
  if (!id.known()) return "";
  std::string out = id.uuid.empty() ? "" : id.uuid;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (!id.pci_bus_id.empty()) add("PCI " + id.pci_bus_id);
  if (!id.serial.empty()) add("serial " + id.serial);
  if (!id.vbios.empty()) add("VBIOS " + id.vbios);
  if (id.power_limit_w > 0) add("power limit " + number_text("%.0f", id.power_limit_w) + " W");
  if (id.app_sm_mhz > 0) add("application clocks " + mhz_pair(id.app_sm_mhz, id.app_memory_mhz));
  if (!id.ecc.empty()) add("ECC " + id.ecc);
  return one_line(out);
}

std::string calibration_text(const Calibration& c) {
  if (!c.known()) return "";
  std::string out;
  for (const auto& f : calibration_figures()) {
    const double m = c.median(f);
    if (!std::isfinite(m)) continue;
    const std::string unit = f.unit;
    const std::string value = unit == "GB/s" ? bandwidth_text(m) : number_text("%.3g", m) + " " + unit;
    out += (out.empty() ? "" : ", ") + std::string(f.name) + " " + value;
  }
  const size_t n = c.samples.size();
  return out + " (median of " + std::to_string(n) + (n == 1 ? " pass)" : " passes)");
}

json identity_json(const DeviceIdentity& id) {
  if (!id.known()) return nullptr;
  json out = json::object();
  for (const auto& f : identity_fields()) {
    if (f.text) out[f.key] = id.*f.text;
    else out[f.key] = id.*f.number;
  }
  return out;
}

DeviceIdentity identity_from_json(const json& j) {
  DeviceIdentity id;
  if (j.is_null()) return id;
  if (!j.is_object()) throw std::invalid_argument("identity: expected an object or null");
  for (const auto& f : identity_fields()) {
    auto it = j.find(f.key);
    if (it == j.end()) continue;  // a field a later opbench adds, or one this device lacks
    if (f.text && it->is_string()) id.*f.text = it->get<std::string>();
    else if (f.number && it->is_number()) id.*f.number = it->get<double>();
    else throw std::invalid_argument(std::string("identity.") + f.key + ": expected a " + (f.text ? "string" : "number"));
  }
  return id;
}

json calibration_json(const Calibration& c) {
  if (!c.known()) return nullptr;
  json figures = json::array(), samples = json::array();
  for (const auto& f : calibration_figures()) figures.push_back(f.key);
  for (const auto& s : c.samples) {
    json row = json::array();
    for (const auto& f : calibration_figures()) row.push_back(std::isfinite(s.*f.value) ? json(s.*f.value) : json(nullptr));
    samples.push_back(row);
  }
  return {{"figures", figures}, {"samples", samples}};
}

namespace {

// Which member each column of the samples fills (nullptr: a figure this opbench does not know).
std::vector<double CalibrationSample::*> columns_of(const json& figures) {
  if (!figures.is_array()) throw std::invalid_argument("calibration.figures: expected an array of names");
  std::vector<double CalibrationSample::*> out;
  for (const auto& name : figures) {
    if (!name.is_string()) throw std::invalid_argument("calibration.figures: expected names");
    double CalibrationSample::*member = nullptr;
    for (const auto& f : calibration_figures())
      if (name == f.key) member = f.value;
    out.push_back(member);
  }
  return out;
}

}  // namespace

Calibration calibration_from_json(const json& j) {
  Calibration c;
  if (j.is_null()) return c;
  if (!j.is_object() || !j.contains("figures") || !j.contains("samples") || !j["samples"].is_array())
    throw std::invalid_argument("calibration: expected {\"figures\": [...], \"samples\": [[...]...]} or null");
  const auto columns = columns_of(j["figures"]);
  for (const auto& row : j["samples"]) {
    if (!row.is_array() || row.size() != columns.size())
      throw std::invalid_argument("calibration.samples: each sample needs one value per figure");
    CalibrationSample s;
    for (size_t k = 0; k < columns.size(); ++k) {
      if (!row[k].is_null() && !row[k].is_number()) throw std::invalid_argument("calibration.samples: expected numbers");
      if (columns[k]) s.*columns[k] = row[k].is_null() ? std::nan("") : row[k].get<double>();
    }
    c.samples.push_back(s);
  }
  return c;
}

}  // namespace opbench
