#include "core/lines.hpp"

#include <unistd.h>

#include <cerrno>

namespace opbench {

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

bool LineReader::fill() {
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf_.append(chunk, size_t(n));
    return true;
  }
}

bool LineReader::next(std::string& line) {
  const size_t nl = buf_.find('\n');
  if (nl == std::string::npos) return false;
  line = buf_.substr(0, nl);
  buf_.erase(0, nl + 1);
  return true;
}

bool LineReader::read_line(std::string& line) {
  while (!next(line))
    if (!fill()) return false;
  return true;
}

}  // namespace opbench
