// A stored point as the runs document writes it (exchange/runs_json.hpp): its fields as their
// rows of record/point_fields.hpp say, each under its key in its object (the point, or its
// `stats`), in the table's order. What the workers of a sweep on several devices send their
// parent too (sweep/worker_protocol.hpp). Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "record/json_reader.hpp"
#include "record/point_fields.hpp"

namespace opbench {

// A field of a point as the document writes it (a text, an integer, a number or null, true or
// false, or the kind's own array or object).
nlohmann::ordered_json point_field_to_json(const PointField& f, const StoredPoint& p);

nlohmann::ordered_json point_to_json(const StoredPoint& p);

// A point's fields, each from its object: a field added after version 1 is read where the
// point holds it (or the first field its version added with it), an older document's point
// lacking it. The readers throw InputError(where, "field", why).
StoredPoint point_from(const JsonReader& o);
StoredPoint point_from_json(const nlohmann::ordered_json& j, const std::string& where, const std::string& path);

}  // namespace opbench
