#include "record/point.hpp"

namespace opbench {

std::string Point::key() const {
  return title + "\x1f" + std::to_string(x_value) + "\x1f" + provider;
}

}  // namespace opbench
