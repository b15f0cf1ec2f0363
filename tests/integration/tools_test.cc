// Unmodified programs use the mount as a checkpoint directory: PyTorch's
// torch.save / torch.load, and dd with fsync.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "file_util.h"
#include "mounted_test.h"

namespace ckptfs::testing {
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, with python3-torch

class ToolsTest : public MountedTest {
 protected:
  ToolsTest() : MountedTest("1G") {}
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = store_.dir() + "/" + name;
    std::ofstream(path) << body;
    return path;
  }
};

TEST_F(ToolsTest, TorchSaveThenLoadInAFreshProcessAfterRemount) {
  ASSERT_EQ(access(kPython, X_OK), 0) << "python3-torch is required";
  std::string save = Script("save.py", R"(
import os, sys, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64))
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    loss = model(torch.randn(32, 256)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
ckpt_dir = sys.argv[1]
tmp = os.path.join(ckpt_dir, "ckpt.pt.tmp")
torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": 3}, tmp)
fd = os.open(tmp, os.O_RDONLY); os.fsync(fd); os.close(fd)
os.rename(tmp, os.path.join(ckpt_dir, "ckpt.pt"))
dfd = os.open(ckpt_dir, os.O_RDONLY); os.fsync(dfd); os.close(dfd)  # the rename itself
torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "step": 3},
           os.path.join(sys.argv[2], "ref.pt"))
)");
  std::string load = Script("load.py", R"(
import sys, torch
a = torch.load(sys.argv[1] + "/ckpt.pt")
b = torch.load(sys.argv[2] + "/ref.pt")
assert a["step"] == 3
for k in b["model"]:
    assert torch.equal(a["model"][k], b["model"][k]), k
for i, st in b["optim"]["state"].items():
    for k in ("exp_avg", "exp_avg_sq"):
        assert torch.equal(a["optim"]["state"][i][k], st[k]), (i, k)
print("identical")
)");
  ASSERT_EQ(MountedStore::Run(std::string(kPython) + " " + save + " " + store_.mountpoint() + " " +
                              store_.dir()),
            0);
  store_.Kill();  // the fsyncs of the file and its directory made it durable
  ASSERT_TRUE(store_.Mount()) << store_.log();
  EXPECT_EQ(MountedStore::Run(std::string(kPython) + " " + load + " " + store_.mountpoint() + " " +
                              store_.dir()),
            0);
}

TEST_F(ToolsTest, DdWithFsyncRoundTrips) {
  std::string src = store_.dir() + "/src.bin";
  ASSERT_TRUE(WriteFile(src, Random(64 << 20, 11)));
  ASSERT_EQ(MountedStore::Run("dd if=" + src + " of=" + store_.Path("dd.bin") +
                              " bs=1M conv=fsync status=none"),
            0);
  EXPECT_EQ(MountedStore::Run("cmp " + src + " " + store_.Path("dd.bin")), 0);
}

}  // namespace
}  // namespace ckptfs::testing
