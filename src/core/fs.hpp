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
// The folder for temporary files: $TMPDIR, else /tmp.
std::string temp_folder();
// `path` made absolute with symbolic links and ".." resolved, as far as it exists: the real
// path of the file, else that of its directory followed by its name, else `path` itself
// (absolute). Two names of one file (or of one file to be) resolve alike.
std::string resolved(const std::string& path);
// The same file (device and inode) under two names.
bool same_file(const std::string& a, const std::string& b);
// Creates the directories above `path` (like mkdir -p of its parent); throws RuntimeFailure.
void make_parent_dirs(const std::string& path);
// Writes `text` to `path`, replacing what it held, never what it is: a regular file (or a
// missing one) through a temporary file beside it and a rename, so that readers never see half
// a file (an existing file keeps its permissions); a symbolic link through to its target (the
// link stays); a FIFO or a character device (/dev/stdout, a terminal) directly, as are the
// names of an open descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N), appended to when they
// name a regular file. Throws RuntimeFailure naming `path` when the write fails (/dev/full),
// InputError for anything else (a socket, a block device, a folder).
void write_file(const std::string& path, const std::string& text);
// Why `path` cannot take what opbench writes (write_file), or "" when it can: a missing path,
// a regular file, a FIFO or a character device, through any symbolic links.
std::string output_problem(const std::string& path);
// What kind of file `path` is, through links ("a character device", "a FIFO", "a folder",
// ...), or "" when nothing is there.
std::string file_kind(const std::string& path);
// Why `path` cannot be a database file, or "" when it can: not empty; when something is there,
// a regular file (through any links; a link to nothing is refused too). With `write`, also the
// folder it lies in (or the nearest one above that exists, for a path to be made) must be
// writable: SQLite puts the -wal and -shm files beside the database.
std::string database_problem(const std::string& path, bool write);
// Where the symbolic links starting at `path` lead (the path itself when it is none; a link to
// nothing leads to the missing path it names).
std::string link_target(const std::string& path);
// The folder a path lies in ("a/b" -> "a", "b" -> ".", "/b" -> "/").
std::string dir_name(const std::string& path);
// Creates the folder `dir` and those above it (mkdir -p); throws RuntimeFailure.
void make_dirs(const std::string& dir);
// The size of a file in bytes (through links), -1 when it cannot be read.
long long file_size(const std::string& path);
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
