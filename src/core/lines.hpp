// Lines over a file descriptor (a pipe): whole lines written, lines read back as they arrive.
// POSIX, torch-free.
#pragma once
#include <string>

namespace opbench {

// Writes all of `text` (EINTR retried); false when the reader is gone or the write fails.
bool write_all(int fd, const std::string& text);

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // One read(2) of what is there (blocks when nothing is); false at the end of the input or on
  // an error.
  bool fill();
  // The next whole line read so far, without its newline; false when none is whole yet.
  bool next(std::string& line);
  // Blocks until a whole line is read (true) or the input ends (false).
  bool read_line(std::string& line);

 private:
  int fd_;
  std::string buf_;
};

}  // namespace opbench
