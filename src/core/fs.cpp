#include "core/fs.hpp"

#include "core/cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"

namespace opbench::fs {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

namespace {

// realpath(3) into a string; false when the path does not resolve.
bool real_path(const std::string& path, std::string* out) {
  char* p = ::realpath(path.c_str(), nullptr);
  if (!p) return false;
  *out = p;
  std::free(p);
  return true;
}

std::string current_dir() {
  char* p = ::getcwd(nullptr, 0);
  if (!p) return ".";
  std::string out = p;
  std::free(p);
  return out;
}

}  // namespace

std::string temp_folder() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

std::string dir_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string resolved(const std::string& path) {
  std::string real;
  if (real_path(path, &real)) return real;
  const auto slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (real_path(dir_name(path), &real)) return real + (real == "/" ? "" : "/") + name;
  if (!path.empty() && path[0] == '/') return path;
  return current_dir() + "/" + path;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void make_parent_dirs(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return;
  make_dirs(path.substr(0, slash));
}

void make_dirs(const std::string& dir) {
  const auto creating = hold_creation();
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
      throw RuntimeFailure("cannot create " + part + ": " + std::strerror(errno));
  }
  struct stat st;
  if (!dir.empty() && (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)))
    throw RuntimeFailure("cannot create " + dir + ": not a folder");
}

long long file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? (long long)st.st_size : -1;
}

bool read_file(const std::string& path, std::string* text) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  std::string out;
  struct stat st;
  if (::fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) out.reserve(size_t(st.st_size));  // not twice the file
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  if (ok) *text = std::move(out);
  return ok;
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (struct dirent* e = ::readdir(d)) names.push_back(e->d_name);
  ::closedir(d);
  return names;
}

void remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw RuntimeFailure("cannot remove " + path + ": " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    for (const auto& name : list_dir(path))
      if (name != "." && name != "..") remove_tree(path + "/" + name);
    if (::rmdir(path.c_str()) != 0) throw RuntimeFailure("cannot remove " + path + ": " + std::strerror(errno));
  } else if (::unlink(path.c_str()) != 0) {
    throw RuntimeFailure("cannot remove " + path + ": " + std::strerror(errno));
  }
}

void rename_path(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw RuntimeFailure("cannot rename " + from + " to " + to + ": " + std::strerror(errno));
}

std::string base_name(const std::string& path) {
  const size_t p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

namespace {

// `path` and each path its symbolic links lead to, in turn (at most 40).
std::vector<std::string> link_chain(const std::string& path) {
  std::vector<std::string> chain{path};
  for (int hops = 0; hops < 40; ++hops) {
    const std::string& p = chain.back();
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    std::string to(size_t(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    const ssize_t n = ::readlink(p.c_str(), &to[0], to.size());
    if (n < 0 || size_t(n) >= to.size()) break;
    to.resize(size_t(n));
    chain.push_back(to[0] == '/' ? to : dir_name(p) + "/" + to);
  }
  return chain;
}

}  // namespace

std::string link_target(const std::string& path) { return link_chain(path).back(); }

std::string file_kind(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  if (S_ISREG(st.st_mode)) return "a regular file";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string output_problem(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) return "";
  return "is " + file_kind(path) + ", not a file to write";
}

namespace {

[[noreturn]] void write_failed(const std::string& path, int err) {
  throw RuntimeFailure("cannot write " + path + ": " + std::strerror(err));
}

// All of `text` to `fd`; false (errno set) when a write fails.
bool write_all_to(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += size_t(n);
  }
  return true;
}

// Opens what is there and writes into it: no new file, no rename.
void write_in_place(const std::string& path, const std::string& text, int flags) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags);
  if (fd < 0) write_failed(path, errno);
  const bool ok = write_all_to(fd, text);
  const int err = errno;
  if (::close(fd) != 0 && ok) write_failed(path, errno);
  if (!ok) write_failed(path, err);
}

// A temporary file beside `target` renamed over it (`mode`: the permissions to keep, or -1).
void write_replacing(const std::string& path, const std::string& target, const std::string& text, int mode) {
  const std::string tmp = target + ".tmp" + std::to_string(::getpid());
  int fd = -1;
  {
    const auto creating = hold_creation();
    make_parent_dirs(target);
    remove_stale(target + ".tmp");  // left by a process that was killed
    remove_on_stop(tmp);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  }
  if (fd < 0) {
    const int err = errno;
    keep_on_stop(tmp);
    write_failed(path, err);
  }
  bool ok = (mode < 0 || ::fchmod(fd, mode_t(mode)) == 0) && write_all_to(fd, text) && ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 && ok) ok = false, err = errno;
  if (ok) {
    const auto creating = hold_creation();
    if (std::rename(tmp.c_str(), target.c_str()) != 0) ok = false, err = errno;
  }
  if (!ok) std::remove(tmp.c_str());
  keep_on_stop(tmp);
  if (!ok) write_failed(path, err);
}

// A name of an open descriptor rather than of a file: /dev/stdout, /dev/fd/1, /proc/self/fd/1.
bool names_a_descriptor(const std::string& path) {
  for (const char* prefix : {"/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"})
    if (path.rfind(prefix, 0) == 0) return true;
  return path.rfind("/proc/", 0) == 0 && path.find("/fd/") != std::string::npos;
}

}  // namespace

std::string database_problem(const std::string& path, bool write) {
  if (path.empty()) return "must name a file, got an empty string";
  const std::string kind = file_kind(path);
  if (kind == "a folder") return "is a directory, not a database file";
  if (!kind.empty() && kind != "a regular file") return "is " + kind + ", not a database file";
  const std::string target = link_target(path);
  if (kind.empty() && target != path) return "is a symbolic link to " + target + ", which does not exist";
  if (!write) return "";
  // The database and its -wal, -shm and -journal files live in its folder (made when missing).
  std::string dir = dir_name(target);
  while (!exists(dir) && dir != dir_name(dir)) dir = dir_name(dir);
  if (!is_directory(dir)) return "cannot be created: " + dir + " is not a folder";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot be written: its folder " + dir + " is not writable (the database's -wal and -shm files go there)";
  return "";
}

void write_file(const std::string& path, const std::string& text) {
  const std::string why = output_problem(path);
  if (!why.empty()) throw InputError(path, "", why);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    write_replacing(path, link_target(path), text, -1);  // missing: created (at a link's target)
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    write_in_place(path, text, 0);  // a FIFO, a terminal, /dev/null, /dev/full
    return;
  }
  const std::vector<std::string> chain = link_chain(path);
  if (std::any_of(chain.begin(), chain.end(), names_a_descriptor)) {
    write_in_place(path, text, O_APPEND);  // stdout sent to a file: after what it holds, as >> would
    return;
  }
  const std::string& target = chain.back();
  struct stat at;
  if (::stat(target.c_str(), &at) != 0 || at.st_dev != st.st_dev || at.st_ino != st.st_ino) {
    write_in_place(path, text, O_TRUNC);  // reached through a link we cannot follow by name
    return;
  }
  write_replacing(path, target, text, int(st.st_mode & 07777));
}

}  // namespace opbench::fs
