// rados:POOL/NAME, and the clear refusal of anything else.
#include <gtest/gtest.h>

#include "rados_target.h"

namespace ckptfs {
namespace {

TEST(RadosTargetTest, ParsesPoolAndImage) {
  auto t = ParseRadosSpec("rados:ckptfs/node-0.step_1");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->pool, "ckptfs");
  EXPECT_EQ(t->image, "node-0.step_1");
  EXPECT_EQ(t->ToString(), "rados:ckptfs/node-0.step_1");
  EXPECT_TRUE(IsRadosSpec("rados:a/b"));
  EXPECT_FALSE(IsRadosSpec("/var/tmp/store.img"));
}

TEST(RadosTargetTest, RefusesMalformedSpecsSayingWhy) {
  for (const char* bad : {"rados:", "rados:pool", "rados:/name", "rados:pool/", "rados:pool/a/b",
                          "rados:pool/has space", "ceph:pool/name"}) {
    auto t = ParseRadosSpec(bad);
    EXPECT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find(bad), std::string::npos) << t.status().ToString();
  }
  EXPECT_FALSE(ParseRadosSpec("rados:p/" + std::string(65, 'x')).ok());
}

}  // namespace
}  // namespace ckptfs
