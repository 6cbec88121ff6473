// The temporaries of a stopped command (src/core/cleanup.hpp): a stop removes what is named, and
// nothing another thread was creating at that moment survives it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "core/cleanup.hpp"
#include "core/fs.hpp"

namespace opbench {
namespace {

// In a child: a folder named for removal, a thread writing files into subfolders of it as fast
// as it can (each write re-creates the subfolders), then SIGTERM. Returns the child's status.
int stopped_while_writing(const std::string& dir) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    install_cleanup_signals();
    remove_on_stop(dir);
    std::thread([dir] {
      for (int i = 0;; ++i) {
        try {
          fs::write_file(dir + "/a/b/f" + std::to_string(i % 8), "x");
        } catch (...) {
        }
      }
    }).detach();
    ::usleep(3000);
    ::kill(::getpid(), SIGTERM);
    ::sleep(30);
    ::_exit(1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(Cleanup, AStopLeavesNothingThatAnotherThreadWasCreating) {
  const auto root = std::filesystem::temp_directory_path() / ("opbench_cleanup_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string dir = (root / ("t" + std::to_string(trial))).string();
    const int status = stopped_while_writing(dir);
    ASSERT_TRUE(WIFEXITED(status)) << trial;
    EXPECT_EQ(WEXITSTATUS(status), 130) << trial;
    EXPECT_FALSE(std::filesystem::exists(dir)) << "trial " << trial << " left " << dir;
  }
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace opbench
