// A user who is not root mounts a store they own on a mountpoint they own
// (through fusermount3), a trainer running as that user checkpoints into
// it, and with allow_other another user's access follows the mode bits.
// A mount that fails (the user cannot open /dev/fuse) exits non-zero with
// the reason. The test makes its own accounts; it opens /dev/fuse to users
// as Debian's udev rule does (0666) and allows user_allow_other in
// /etc/fuse.conf, and puts both back, whatever happens.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "file_util.h"
#include "mounted_store.h"
#include "temp_dir.h"

namespace ckptfs::testing {
namespace {

constexpr const char* kOwner = "ckptfs-owner";
constexpr const char* kOther = "ckptfs-other";
constexpr const char* kPython = "/usr/bin/python3";
constexpr const char* kFuseConf = "/etc/fuse.conf";

std::string Bin(const std::string& tool) { return MountedStore::BinDir() + "/" + tool; }

std::string DataScript(const std::string& name) {
  return (std::filesystem::path(__FILE__).parent_path() / "data" / name).string();
}

// Runs `command` through a login-less shell of `user`; stdout and stderr.
CommandOutput As(const std::string& user, const std::string& command) {
  return Capture("runuser -u " + std::string(user) + " -- env HOME=/tmp /bin/sh -c '" + command + "' 2>&1");
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What the test changes on the machine, undone by the destructor.
class MachineChanges {
 public:
  MachineChanges() {
    struct stat st;
    fuse_mode_ = stat("/dev/fuse", &st) == 0 ? (st.st_mode & 07777) : 0600;
    had_conf_ = std::filesystem::exists(kFuseConf);
    conf_ = had_conf_ ? Slurp(kFuseConf) : "";
    for (const char* user : {kOwner, kOther}) {
      if (!getpwnam(user)) {
        created_users_ = true;
        MountedStore::Run(std::string("useradd --no-create-home --shell /bin/sh ") + user);
      }
    }
  }
  ~MachineChanges() {
    chmod("/dev/fuse", fuse_mode_);
    if (had_conf_) {
      std::ofstream(kFuseConf) << conf_;
    } else {
      std::filesystem::remove(kFuseConf);
    }
    if (created_users_) {
      for (const char* user : {kOwner, kOther}) {
        MountedStore::Run(std::string("userdel ") + user + " 2>/dev/null");
      }
    }
  }
  void OpenDevFuse() { ASSERT_EQ(chmod("/dev/fuse", 0666), 0); }
  void CloseDevFuse() { ASSERT_EQ(chmod("/dev/fuse", 0600), 0); }
  void AllowOther() { std::ofstream(kFuseConf) << conf_ << "\nuser_allow_other\n"; }

 private:
  mode_t fuse_mode_ = 0600;
  bool had_conf_ = false;
  std::string conf_;
  bool created_users_ = false;
};

class UnprivilegedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    dir_ = temp_.path();
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
    ASSERT_NE(getpwnam(kOwner), nullptr) << "useradd " << kOwner << " failed";
    ASSERT_EQ(MountedStore::Run("chown " + std::string(kOwner) + " " + dir_), 0);
    store_ = dir_ + "/store.img";
    mnt_ = dir_ + "/mnt";
    ASSERT_EQ(As(kOwner, "mkdir " + mnt_).rc, 0);
  }
  void TearDown() override {
    MountedStore::Run("fusermount3 -u -z " + mnt_ + " 2>/dev/null");
    // The daemon lets go of the store once flushed; then nothing is left.
    Capture(Bin("ckptfs-fsck") + " --wait 30 --quiet " + store_);
  }

  MachineChanges machine_;
  TempDir temp_{"ckptfs-user"};
  std::string dir_, store_, mnt_;
};

TEST_F(UnprivilegedTest, AMountThatFailsExitsNonZeroWithTheReason) {
  machine_.CloseDevFuse();
  ASSERT_EQ(As(kOwner, Bin("mkfs.ckptfs") + " --size 512M " + store_).rc, 0);
  CommandOutput out = As(kOwner, Bin("ckptfs") + " " + store_ + " " + mnt_);
  EXPECT_NE(out.rc, 0) << out.out;
  EXPECT_NE(out.out.find("/dev/fuse"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("cannot mount on " + mnt_), std::string::npos) << out.out;
  EXPECT_EQ(out.out.find("store flushed"), std::string::npos) << out.out;
  // The same with the daemon in the foreground.
  out = As(kOwner, Bin("ckptfs") + " " + store_ + " " + mnt_ + " -f");
  EXPECT_NE(out.rc, 0) << out.out;
}

TEST_F(UnprivilegedTest, UserMountsCheckpointsAndOthersFollowTheModeBits) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " (python3-torch) is required";
  machine_.OpenDevFuse();
  machine_.AllowOther();
  ASSERT_EQ(As(kOwner, Bin("mkfs.ckptfs") + " --size 1G " + store_).rc, 0);
  CommandOutput mounted = As(kOwner, Bin("ckptfs") + " " + store_ + " " + mnt_ + " -o allow_other");
  ASSERT_EQ(mounted.rc, 0) << mounted.out;

  // The owner's trainer checkpoints and resumes, as that user.
  const std::string trainer = std::string(kPython) + " " + DataScript("trainer.py") + " --dir " +
                              mnt_ + "/run --every 2 --keep 2 --seed 3";
  ASSERT_EQ(As(kOwner, "mkdir " + mnt_ + "/run").rc, 0);
  CommandOutput trained = As(kOwner, trainer + " --steps 4");
  ASSERT_EQ(trained.rc, 0) << trained.out;
  CommandOutput resumed = As(kOwner, trainer + " --steps 6 --resume");
  ASSERT_EQ(resumed.rc, 0) << resumed.out;
  struct stat st;
  ASSERT_EQ(stat((mnt_ + "/run/ckpt-000006.pt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, getpwnam(kOwner)->pw_uid);

  // Another user: what the mode bits allow, and nothing more.
  ASSERT_EQ(As(kOwner, "echo shared > " + mnt_ + "/shared && chmod 0644 " + mnt_ + "/shared").rc, 0);
  ASSERT_EQ(As(kOwner, "echo secret > " + mnt_ + "/secret && chmod 0600 " + mnt_ + "/secret").rc, 0);
  CommandOutput read_shared = As(kOther, "cat " + mnt_ + "/shared");
  EXPECT_EQ(read_shared.rc, 0) << read_shared.out;
  EXPECT_EQ(read_shared.out, "shared\n");
  CommandOutput read_secret = As(kOther, "cat " + mnt_ + "/secret");
  EXPECT_NE(read_secret.rc, 0);
  EXPECT_NE(read_secret.out.find("Permission denied"), std::string::npos) << read_secret.out;
  CommandOutput write_shared = As(kOther, "echo x >> " + mnt_ + "/shared");
  EXPECT_NE(write_shared.rc, 0);
  EXPECT_NE(As(kOther, "touch " + mnt_ + "/run/intruder").rc, 0);

  // The owner unmounts; the daemon flushes and exits, and the store is clean.
  CommandOutput unmounted = As(kOwner, "fusermount3 -u " + mnt_);
  ASSERT_EQ(unmounted.rc, 0) << unmounted.out;
  CommandOutput fsck = As(kOwner, Bin("ckptfs-fsck") + " --wait 30 " + store_);
  EXPECT_EQ(fsck.rc, 0) << fsck.out;
}

}  // namespace
}  // namespace ckptfs::testing
