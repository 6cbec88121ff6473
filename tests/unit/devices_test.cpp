// --devices: the list parsed against the CUDA devices present (all, cpu named again as cpu#2,
// bad names refused naming the option), and the check that refuses several GPU models in one
// run unless allowed.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "sweep/devices.hpp"

using namespace opbench;

namespace {

std::string error_of(const std::string& text, int cuda) {
  try {
    parse_devices(text, cuda);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << text;
  return "";
}

std::vector<std::string> names(const std::vector<WorkerSlot>& slots) {
  std::vector<std::string> out;
  for (const auto& s : slots) out.push_back(s.name + "=" + s.device);
  return out;
}

}  // namespace

TEST(Devices, ParsesLists) {
  EXPECT_EQ(names(parse_devices("cuda:0,cuda:1", 2)), (std::vector<std::string>{"cuda:0=cuda:0", "cuda:1=cuda:1"}));
  EXPECT_EQ(names(parse_devices("all", 3)),
            (std::vector<std::string>{"cuda:0=cuda:0", "cuda:1=cuda:1", "cuda:2=cuda:2"}));
  EXPECT_EQ(names(parse_devices("cuda", 1)), (std::vector<std::string>{"cuda:0=cuda:0"}));
  EXPECT_EQ(names(parse_devices("cpu, cpu,cpu", 0)),
            (std::vector<std::string>{"cpu=cpu", "cpu#2=cpu", "cpu#3=cpu"}));
  EXPECT_EQ(devices_text(parse_devices("cpu,cpu", 0)), "cpu,cpu");
  EXPECT_EQ(devices_text(parse_devices("cuda,cuda:1", 2)), "cuda:0,cuda:1");
}

TEST(Devices, RefusesBadListsNamingTheOption) {
  struct Case {
    const char* text;
    int cuda;
    const char* says;
  };
  for (const Case& c : {Case{"", 2, "names no device"}, Case{",", 2, "item 1 is empty"}, Case{"cpu,", 2, "item 2 is empty"},
                        Case{"cpu,,cpu", 2, "item 2 is empty"}, Case{" , cpu", 2, "item 1 is empty"},
                        Case{"cuda:9", 2, "no such CUDA device (2 are present)"},
                        Case{"cuda:0", 0, "no such CUDA device (0 are present)"},
                        Case{"all", 0, "no CUDA device is visible here"}, Case{"tpu", 2, "unknown device"},
                        Case{"cuda:x", 2, "unknown device"}, Case{"cuda:0,cuda:0", 2, "named twice"},
                        Case{"cuda,cuda:0", 2, "named twice"}, Case{"cpu,cuda:0", 2, "CPU and CUDA devices"}}) {
    const std::string msg = error_of(c.text, c.cuda);
    EXPECT_EQ(msg.rfind("--devices: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(c.says), std::string::npos) << c.text << ": " << msg;
  }
}

TEST(Devices, OneModelUnlessAllowed) {
  const std::vector<RunDevice> same = {{"cuda:0", "NVIDIA H100 80GB HBM3", 3000}, {"cuda:1", "NVIDIA H100 80GB HBM3", 2990}};
  EXPECT_NO_THROW(check_one_model(same, false, "--devices"));
  const std::vector<RunDevice> mixed = {{"cuda:0", "NVIDIA H100 80GB HBM3", 3000}, {"cuda:1", "NVIDIA A100-SXM4-80GB", 1900}};
  try {
    check_one_model(mixed, false, "--devices");
    ADD_FAILURE() << "mixed models accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("--devices: cuda:0,cuda:1: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("cuda:0 is 'NVIDIA H100 80GB HBM3', cuda:1 is 'NVIDIA A100-SXM4-80GB'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--allow-mixed"), std::string::npos) << msg;
  }
  EXPECT_NO_THROW(check_one_model(mixed, true, "--devices"));
  EXPECT_NO_THROW(check_one_model({}, false, "--devices"));
}
