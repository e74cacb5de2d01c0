// Who may change GPU settings through the agent's control socket (smi_settings.h): root alone.
// The agent runs as root; a local user whose request it applied would borrow that privilege.
#include <gtest/gtest.h>

#include "cli/smi/smi_settings.h"
#include "node/control_protocol.h"

namespace gw::cli::smi {
namespace {

TEST(SmiSettingsAuth, RootMayChangeSettings) {
  node::control::Peer root{1234, 0, 0};
  EXPECT_EQ(settingsRefusal(root), "");
}

TEST(SmiSettingsAuth, AnyOtherUidIsRefusedByName) {
  for (uid_t uid : {1u, 1000u, 65534u}) {
    node::control::Peer user{4321, uid, 100};
    const std::string why = settingsRefusal(user);
    EXPECT_NE(why.find("uid " + std::to_string(uid) + " is not allowed to change GPU settings"), std::string::npos)
        << why;
    EXPECT_NE(why.find("control socket refused"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace gw::cli::smi
