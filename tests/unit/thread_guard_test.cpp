// A background thread whose work throws ends the process with a sentence in the log and exit
// code 70, not through std::terminate.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <thread>

#include "platform/thread_guard.h"

namespace gw::platform {
namespace {

TEST(ThreadGuardDeathTest, AFailedAllocationInAThreadIsNamedAndExits70) {
  EXPECT_EXIT(
      {
        std::thread t(guardedThread("sampler", [] { throw std::bad_alloc(); }));
        t.join();
      },
      ::testing::ExitedWithCode(kExitThreadFailed), "thread 'sampler' failed: std::bad_alloc");
  EXPECT_EXIT(guardedThread("store", [] { throw std::runtime_error("disk on fire"); })(),
              ::testing::ExitedWithCode(kExitThreadFailed), "thread 'store' failed: disk on fire");
}

TEST(ThreadGuard, WorkThatReturnsIsUntouched) {
  int ran = 0;
  guardedThread("ok", [&] { ++ran; })();
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace gw::platform
