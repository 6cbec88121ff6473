#include "sweep/reexec.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

namespace opbench {

namespace {

std::vector<std::string> own_command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  std::string cur;
  for (char c : all) {
    if (c) {
      cur += c;
    } else {
      out.push_back(cur);
      cur.clear();
    }
  }
  return out;
}

// Every descriptor but stdin, stdout and stderr closes in the new image (the database, the
// device's handles: a hung device context goes with them).
void close_on_exec_all() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return;
  const int own = dirfd(d);
  while (dirent* e = readdir(d)) {
    const int fd = std::atoi(e->d_name);
    if (fd > 2 && fd != own) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  closedir(d);
}

}  // namespace

std::vector<std::string> resume_arguments(const std::vector<std::string>& argv, int64_t run_id) {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--resume") {
      ++i;  // and its value
      continue;
    }
    if (argv[i].rfind("--resume=", 0) == 0) continue;
    out.push_back(argv[i]);
  }
  out.push_back("--resume");
  out.push_back(std::to_string(run_id));
  return out;
}

void reexec_resuming(int64_t run_id) {
  const std::vector<std::string> args = resume_arguments(own_command_line(), run_id);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout << std::flush;
  std::cerr << "continuing run " << run_id << " in a new process\n" << std::flush;
  close_on_exec_all();
  execv("/proc/self/exe", argv.data());
  std::cerr << "opbench: cannot restart to continue run " << run_id << "\n";
  _exit(3);
}

}  // namespace opbench
