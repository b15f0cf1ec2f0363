// CephCluster: see ceph_cluster.h.
#include "ceph_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <vector>

#include "mounted_store.h"

namespace ckptfs::testing {
namespace {

std::string& ClusterDir() {
  static std::string dir;
  return dir;
}
bool& StartedHere() {
  static bool started = false;
  return started;
}
std::vector<std::string>& MadeImages() {
  static std::vector<std::string> images;
  return images;
}

}  // namespace

const std::string& CephCluster::Dir() { return ClusterDir(); }

int CephCluster::Script(const std::string& verb, const std::string& args) {
  return MountedStore::Run(std::string(CKPTFS_SOURCE_DIR) + "/tools/ceph-dev-cluster " + verb + " " +
                           ClusterDir() + " " + args + " >>" + ClusterDir() + "/tests.log 2>&1");
}

int CephCluster::Ceph(const std::string& args) {
  // Bounded: a cluster that is down fails the call instead of hanging it.
  return MountedStore::Run("ceph --connect-timeout 60 -c " + Conf() + " " + args + " >>" + ClusterDir() +
                           "/tests.log 2>&1");
}

void CephCluster::SetUp() {
  if (const char* dir = std::getenv("CKPTFS_CEPH_DIR"); dir && *dir) {
    ClusterDir() = dir;
  } else {
    char tmpl[] = "/var/tmp/ckptfs-tier-tests.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    ClusterDir() = tmpl;
    StartedHere() = true;
    ASSERT_EQ(Script("start", "--osds 3"), 0) << "tools/ceph-dev-cluster could not start a cluster; see "
                                              << ClusterDir() << "/tests.log";
  }
  ASSERT_EQ(access(Conf().c_str(), R_OK), 0) << "no " << Conf();
  setenv("CEPH_CONF", Conf().c_str(), 1);
  // A run killed while a test had the cluster paused (PausedCluster) left
  // it so; unpausing a cluster that is not paused changes nothing.
  ASSERT_EQ(Ceph("osd unpause"), 0) << "see " << ClusterDir() << "/tests.log";
}

void CephCluster::TearDown() {
  Ceph("osd unpause");  // as at SetUp, for whoever uses the cluster next
  if (StartedHere()) {
    Script("destroy");
    return;
  }
  // A cluster others use (CI's, for the whole run) gets its pool back as
  // the tests found it: a few GB of images per run would add up.
  const std::string rados = "rados -c " + Conf() + " -p " + kPool + " -N ";
  for (const std::string& image : MadeImages()) {
    MountedStore::Run(rados + image + " ls 2>/dev/null | xargs -r -n 64 " + rados + image + " rm >>" +
                      ClusterDir() + "/tests.log 2>&1");
  }
}

std::string CephCluster::UniqueImage(const std::string& stem) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  std::string image = stem + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
                      std::to_string(rd() % 100000);
  MadeImages().push_back(image);
  return image;
}

FrozenOsds::FrozenOsds() {
  std::ifstream count(CephCluster::Dir() + "/osds");
  int osds = 0;
  count >> osds;
  for (int id = 0; id < osds; ++id) {
    std::ifstream pid_file(CephCluster::Dir() + "/run/osd." + std::to_string(id) + ".pid");
    pid_t pid = 0;
    if (pid_file >> pid && pid > 0 && kill(pid, SIGSTOP) == 0) pids_.push_back(pid);
  }
  frozen_ = osds > 0 && pids_.size() == static_cast<size_t>(osds);
}

FrozenOsds::~FrozenOsds() {
  for (pid_t pid : pids_) kill(pid, SIGCONT);
}

}  // namespace ckptfs::testing
