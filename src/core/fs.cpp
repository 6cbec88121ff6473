#include "core/fs.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
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

std::string resolved(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) return buf;
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (::realpath(dir.c_str(), buf)) return std::string(buf) + (std::string(buf) == "/" ? "" : "/") + name;
  if (!path.empty() && path[0] == '/') return path;
  return ::getcwd(buf, sizeof buf) ? std::string(buf) + "/" + path : path;
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

bool read_file(const std::string& path, std::string* text) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  std::string out;
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

void write_atomic(const std::string& path, const std::string& text) {
  make_parent_dirs(path);
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw RuntimeFailure("cannot write " + tmp + ": " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    std::remove(tmp.c_str());
    throw RuntimeFailure("cannot write " + path + ": " + std::strerror(e));
  }
}

}  // namespace opbench::fs
