// A JSON object of a runs document (or of a worker's line) being read into records, with where
// it lies in the document: its readers throw InputError(path, "runs[2].points[5].stats.count",
// why) for a field that is missing or of another type. Torch-free.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

namespace opbench {

class JsonReader {
 public:
  using json = nlohmann::ordered_json;
  // `j` (which must be an object) lies at `where` ("runs[2].points[5]", "" the top) of `path`.
  JsonReader(const json& j, std::string where, const std::string& path);

  [[noreturn]] void fail(const std::string& key, const std::string& why) const;

  bool has(const std::string& key) const { return j_.contains(key); }
  const json& at(const std::string& key) const;
  std::string str(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  bool boolean(const std::string& key) const;
  // A number as record/json_number.hpp writes it.
  double num(const std::string& key) const { return number_of(at(key), key); }
  double number_of(const json& v, const std::string& key) const;
  const json& array(const std::string& key) const;
  // The object under `key`, and item i of the array under it.
  JsonReader obj(const std::string& key) const { return JsonReader(at(key), sub(key), path_); }
  JsonReader item(const std::string& key, size_t i) const;
  const json& raw() const { return j_; }

  // The value under `key` read by `parse`, a record's own reader (which throws
  // std::invalid_argument), its message naming the field.
  template <class Parse>
  auto parsed(const std::string& key, Parse parse) const -> decltype(parse(json())) {
    try {
      return parse(at(key));
    } catch (const std::invalid_argument& e) {
      fail(key, e.what());
    }
  }

 private:
  std::string sub(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }

  const json& j_;
  std::string where_;
  const std::string& path_;
};

}  // namespace opbench
