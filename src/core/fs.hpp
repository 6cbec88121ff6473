// The few file-system operations opbench needs, on POSIX calls. Not std::filesystem: the
// libtorch.so of the torch 2.11 wheels exports its own copies of std::filesystem functions,
// which then replace libstdc++'s in every binary that links LibTorch (remove_all crashed).
// Torch-free.
#pragma once
#include <string>
#include <vector>

namespace opbench::fs {

bool exists(const std::string& path);
bool is_regular_file(const std::string& path);
bool is_directory(const std::string& path);
// `path` made absolute with symbolic links and ".." resolved, as far as it exists: the real
// path of the file, else that of its directory followed by its name, else `path` itself
// (absolute). Two names of one file (or of one file to be) resolve alike.
std::string resolved(const std::string& path);
// The same file (device and inode) under two names.
bool same_file(const std::string& a, const std::string& b);
// Creates the directories above `path` (like mkdir -p of its parent); throws RuntimeFailure.
void make_parent_dirs(const std::string& path);
// Writes `text` to `path` through a temporary file and a rename: readers never see half a file.
void write_atomic(const std::string& path, const std::string& text);
// Creates the folder `dir` and those above it (mkdir -p); throws RuntimeFailure.
void make_dirs(const std::string& dir);
// The whole file into `text`; false when it cannot be read.
bool read_file(const std::string& path, std::string* text);
// The names in a folder ("." and ".." included; empty when it cannot be read).
std::vector<std::string> list_dir(const std::string& dir);
// Removes a file, a link or a folder with everything in it (links are removed, never
// followed); nothing when `path` does not exist. Throws RuntimeFailure.
void remove_tree(const std::string& path);
// Renames `from` to `to` (one file system); throws RuntimeFailure.
void rename_path(const std::string& from, const std::string& to);
// The last component of a path ("a/b.pt2" -> "b.pt2").
std::string base_name(const std::string& path);

}  // namespace opbench::fs
