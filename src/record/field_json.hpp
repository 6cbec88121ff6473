// A scalar field of any field table (record/field_table.hpp) in the runs document: its value
// as the document writes it and reads it back, and whether an object of the document is to
// hold it (the export version that added it against the object's). The run's, the point's and
// the GPU state's codecs (record/run_json.hpp, record/point_json.hpp, record/state_json.hpp)
// read and write their scalars by these, their structured kinds beside them. Torch-free.
#pragma once
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "record/field_table.hpp"
#include "record/json_number.hpp"
#include "record/json_reader.hpp"

namespace opbench {

// A scalar as the document writes it: a text, an integer, a number or null
// (record/json_number.hpp), true or false; null for a structured kind.
template <class R>
nlohmann::ordered_json scalar_to_json(const Field<R>& f, const R& r) {
  switch (f.scalar_kind()) {
    case Scalar::text: return f.text_of(r);
    case Scalar::integer: return f.integer_of(r);
    case Scalar::real: return number_json(f.real_of(r));
    case Scalar::flag: return f.flag_of(r);
    case Scalar::bits: return f.bits_of(r);
    case Scalar::none: break;
  }
  return nullptr;
}

// A scalar from its key of `o`; a real's null reads as its unknown value where the store keeps
// that as NULL. Throws InputError for a value of another type.
template <class R>
void scalar_from_json(const Field<R>& f, const JsonReader& o, R& r) {
  switch (f.scalar_kind()) {
    case Scalar::text: f.text(r) = o.str(f.key); return;
    case Scalar::integer: f.integer(r) = o.integer(f.key); return;
    case Scalar::real: {
      const double v = o.num(f.key);
      f.real(r) = f.null_unknown && std::isnan(v) ? f.unknown : v;
      return;
    }
    case Scalar::flag: f.flag(r) = o.boolean(f.key); return;
    case Scalar::bits: f.bits(r) = uint64_t(o.integer(f.key)); return;
    case Scalar::none: return;
  }
}

// Whether `o`, an object of the document that export version `object_since` added, is to hold
// the field: one as old as its object must be there; one added later is read only where `o`
// holds its key (or that of `with`, the first field its version added).
template <class R>
bool held(const Field<R>& f, const JsonReader& o, int object_since) {
  return f.since <= object_since || o.has(*f.with ? f.with : f.key);
}

}  // namespace opbench
