// RadosTarget parsing.
#include "rados_target.h"

#include <algorithm>
#include <cctype>

namespace ckptfs {

Result<RadosTarget> ParseRadosSpec(std::string_view spec) {
  const std::string form = " (the form is rados:POOL/NAME)";
  if (!IsRadosSpec(spec)) return Status::Invalid(std::string(spec) + ": not a RADOS image" + form);
  std::string_view rest = spec.substr(kRadosScheme.size());
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) {
    return Status::Invalid(std::string(spec) + ": needs a pool and an image name" + form);
  }
  RadosTarget t;
  t.pool = std::string(rest.substr(0, slash));
  t.image = std::string(rest.substr(slash + 1));
  const bool name_ok = t.image.size() <= 64 && std::all_of(t.image.begin(), t.image.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                                c == '-';
                       });
  if (!name_ok) {
    return Status::Invalid(std::string(spec) + ": the image name may have 1-64 letters, digits, '.', '_' or '-'");
  }
  return t;
}

Result<RadosTarget> ParseRadosSpec(std::string_view spec, const std::string& ceph_conf,
                                   const std::string& ceph_id, unsigned timeout_seconds) {
  CKPTFS_ASSIGN_OR_RETURN(RadosTarget t, ParseRadosSpec(spec));
  t.ceph_conf = ceph_conf;
  t.ceph_id = ceph_id;
  t.timeout_seconds = timeout_seconds;
  return t;
}

}  // namespace ckptfs
