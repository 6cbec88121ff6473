// Errors that carry a documented exit status. Torch-free.
#pragma once
#include <stdexcept>
#include <string>

#include "core/text.hpp"

namespace opbench {

// Exit statuses of the opbench command (docs/cli.md, exit codes).
enum ExitCode : int {
  kExitOk = 0,
  kExitRegression = 1,  // diff --fail-on-regression found a regression
  kExitUsage = 2,       // bad command line, config or input file
  kExitRuntime = 3,     // a failure while running (database, device, I/O)
};

// Bad user input: a config, a selector, a file. `where` names the file (and line if known),
// `field` the offending key or value; what() is the one-line message shown to the user (any
// line break or other control character the input put into it shown as a space).
class InputError : public std::runtime_error {
 public:
  InputError(std::string where, std::string field, const std::string& message)
      : std::runtime_error(one_line(where + (field.empty() ? "" : ": " + field) + ": " + message)),
        where_(std::move(where)), field_(std::move(field)) {}
  const std::string& where() const { return where_; }
  const std::string& field() const { return field_; }

 private:
  std::string where_, field_;
};

// A failure at run time (database, device): exit status 3.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace opbench
