// CephCluster: see ceph_cluster.h.
#include "ceph_cluster.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>

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

}  // namespace

const std::string& CephCluster::Dir() { return ClusterDir(); }

int CephCluster::Script(const std::string& verb, const std::string& args) {
  return MountedStore::Run(std::string(CKPTFS_SOURCE_DIR) + "/tools/ceph-dev-cluster " + verb + " " +
                           ClusterDir() + " " + args + " >>" + ClusterDir() + "/tests.log 2>&1");
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
}

void CephCluster::TearDown() {
  if (!StartedHere()) return;
  Script("destroy");
}

std::string CephCluster::UniqueImage(const std::string& stem) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return stem + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(rd() % 100000);
}

}  // namespace ckptfs::testing
