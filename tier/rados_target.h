// RadosTarget: where a store's image lives in RADOS, as the user names it:
// "rados:POOL/NAME", plus how to reach the cluster (ceph.conf, client id)
// and how long any one call may take before it fails instead of hanging.
#pragma once

#include <string>
#include <string_view>

#include "ckptfs/status.h"

namespace ckptfs {

struct RadosTarget {
  std::string pool;
  std::string image;      // NAME: the RADOS namespace that holds the image's objects
  std::string ceph_conf;  // empty: $CEPH_CONF or Ceph's default search
  std::string ceph_id;    // client id without "client."; empty: admin
  unsigned timeout_seconds = 30;  // monitor and OSD operations, and connecting

  std::string ToString() const { return "rados:" + pool + "/" + image; }
};

inline constexpr std::string_view kRadosScheme = "rados:";

// True when `spec` names a RADOS image rather than a local store.
inline bool IsRadosSpec(std::string_view spec) { return spec.substr(0, kRadosScheme.size()) == kRadosScheme; }

// Parses "rados:POOL/NAME". NAME is 1-64 characters of [A-Za-z0-9._-], so it
// is one RADOS namespace and one line in any listing.
Result<RadosTarget> ParseRadosSpec(std::string_view spec);
// ParseRadosSpec, with how to reach the cluster (empty: the defaults).
Result<RadosTarget> ParseRadosSpec(std::string_view spec, const std::string& ceph_conf,
                                   const std::string& ceph_id, unsigned timeout_seconds);

}  // namespace ckptfs
