// A field of a record, one row of its table: the machinery the run's, the point's and the GPU
// state's field tables (record/run_fields.hpp, record/point_fields.hpp,
// record/state_fields.hpp) are instances of. A row says the field's column of the store, its
// object and key in the export and the export version that added it, and, for a scalar (a
// text, an integer, a real, a flag or a set of bits), the way to its value in the record and
// the value that means unknown. What every table shares is written here once: the scalar kinds
// and their accessors, whether a scalar is known, and the setters of a row; the store binds and
// reads a scalar's column by it (store/statement.hpp), the export writes and reads a scalar's
// key by it (record/field_json.hpp). Each table adds its own members (the run: its structured
// kinds, listing, timing phrase and diff warning; the point: its structured kinds, check, CSV
// header and time stamp; the state: none). Torch-free.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

namespace opbench {

// The kinds of value every table shares; a table's structured kinds are none of these.
enum class Scalar { none, text, integer, real, flag, bits };

template <class Record>
struct Field {
  const char* name = "";  // as messages name it
  // --- the store: its column ("" none); whether the store writes it (false: the store or a
  // query fills it); whether its unknown value is stored as NULL (a real's NaN always is).
  const char* column = "";
  bool written = true;
  bool null_unknown = false;
  // --- the export: the object of its record it sits in ("" the record itself) and its key
  // there ("" not exported, or a part of its own); the export version that added it: an object
  // older than that may lack it, and it is read where the object holds the key `with` ("" its
  // own), the first field of those its version added together.
  const char* section = "";
  const char* key = "";
  int since = 1;
  const char* with = "";
  // --- its value, by scalar kind (one is set; a structured kind is reached through the record).
  std::string& (*text)(Record&) = nullptr;
  int64_t& (*integer)(Record&) = nullptr;
  double& (*real)(Record&) = nullptr;
  bool& (*flag)(Record&) = nullptr;
  uint64_t& (*bits)(Record&) = nullptr;
  // A number's value that means unknown, which a NULL column reads as (a text's is "", a
  // flag's false); `known_above`: any number at or below it is unknown too, else only it (and
  // NaN) is.
  double unknown = 0;
  bool known_above = false;

  Scalar scalar_kind() const {
    if (text) return Scalar::text;
    if (integer) return Scalar::integer;
    if (real) return Scalar::real;
    if (flag) return Scalar::flag;
    return bits ? Scalar::bits : Scalar::none;
  }
  bool scalar() const { return scalar_kind() != Scalar::none; }
  bool exported() const { return *section || *key; }
  // The field as messages name it: its key within its object ("stats.count").
  std::string path() const { return *section ? std::string(section) + "." + key : std::string(key); }
  // Whether a scalar's value is other than unknown (a flag: set; a structured kind: false).
  bool scalar_known(const Record& r) const {
    switch (scalar_kind()) {
      case Scalar::text: return !text_of(r).empty();
      case Scalar::integer: return number_known(double(integer_of(r)));
      case Scalar::real: return number_known(real_of(r));
      case Scalar::flag: return flag_of(r);
      case Scalar::bits: return bits_of(r) != 0;
      case Scalar::none: break;
    }
    return false;
  }
  bool number_known(double v) const { return known_above ? v > unknown : !std::isnan(v) && v != unknown; }
  // Its value for reading only.
  const std::string& text_of(const Record& r) const { return text(const_cast<Record&>(r)); }
  int64_t integer_of(const Record& r) const { return integer(const_cast<Record&>(r)); }
  double real_of(const Record& r) const { return real(const_cast<Record&>(r)); }
  bool flag_of(const Record& r) const { return flag(const_cast<Record&>(r)); }
  uint64_t bits_of(const Record& r) const { return bits(const_cast<Record&>(r)); }
};

// A member of a record, as a field's way to its value.
template <class M>
struct member_owner;
template <class T, class C>
struct member_owner<T C::*> {
  using type = C;
};
template <auto M>
auto& member(typename member_owner<decltype(M)>::type& r) {
  return r.*M;
}

// A row being built by chained calls: the setters of what every table's rows say. A table's
// row type derives from FieldRow<ItsRow, ItsField> and adds its own.
template <class Row, class F>
struct FieldRow : F {
  // The value reached by `get`, in the slot of its scalar kind.
  template <class V, class R>
  Row& reaching(V& (*get)(R&)) {
    if constexpr (std::is_same_v<V, std::string>) this->text = get;
    else if constexpr (std::is_same_v<V, int64_t>) this->integer = get;
    else if constexpr (std::is_same_v<V, double>) this->real = get;
    else if constexpr (std::is_same_v<V, bool>) this->flag = get;
    else this->bits = get;
    return self();
  }
  // Stored in column `c`; `null_when_unknown`: NULL when unknown.
  Row& stored(const char* c, bool null_when_unknown = false) {
    this->column = c;
    this->null_unknown = null_when_unknown;
    return self();
  }
  // Filled by the store or a query: read from column `c`, never written.
  Row& filled(const char* c) {
    this->column = c;
    this->written = false;
    return self();
  }
  // Exported in the object `in`, under `as`, since export `version`.
  Row& exported(const char* in, const char* as, int version = 1) {
    this->section = in;
    this->key = as;
    this->since = version;
    return self();
  }
  // Read from an object that holds `first`, the first field its version added.
  Row& along(const char* first) {
    this->with = first;
    return self();
  }
  Row& unknown_at(double v) {
    this->unknown = v;
    return self();
  }

 protected:
  Row& self() { return static_cast<Row&>(*this); }
};

}  // namespace opbench
