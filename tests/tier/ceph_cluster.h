// CephCluster: the real Ceph cluster the tier tests run against. CI starts
// one for the whole run (tools/run-tests.sh exports CKPTFS_CEPH_DIR); when
// that is not set, the test binary starts its own with
// tools/ceph-dev-cluster and stops it when the tests end, so `ctest` alone
// works too.
#pragma once

#include <gtest/gtest.h>

#include <sys/types.h>

#include <string>
#include <vector>

namespace ckptfs::testing {

class CephCluster : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;

  // The cluster's directory (its ceph.conf is there) and the pool.
  static const std::string& Dir();
  static std::string Conf() { return Dir() + "/ceph.conf"; }
  static constexpr const char* kPool = "ckptfs";
  // `tools/ceph-dev-cluster VERB DIR ARGS`; its exit code.
  static int Script(const std::string& verb, const std::string& args = "");
  // `ceph ARGS` against the cluster, its output in DIR/tests.log; its exit
  // code.
  static int Ceph(const std::string& args);
  // An image name no other test (or earlier run) uses. Its objects are
  // removed at TearDown when the cluster outlives the tests.
  static std::string UniqueImage(const std::string& stem);
};

// Every OSD of the cluster stopped (SIGSTOP) for the object's life, then let
// go on (SIGCONT), whatever the test's outcome. They keep their connections
// and answer nothing, as hung OSDs do: a client's calls time out, and what
// it sent waits in the sockets and lands once they go on.
class FrozenOsds {
 public:
  FrozenOsds();
  ~FrozenOsds();
  FrozenOsds(const FrozenOsds&) = delete;
  FrozenOsds& operator=(const FrozenOsds&) = delete;
  bool frozen() const { return frozen_; }

 private:
  std::vector<pid_t> pids_;
  bool frozen_ = false;
};

}  // namespace ckptfs::testing
