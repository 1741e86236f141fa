#include "guardian/on_event.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "testing_files.h"

namespace headroom {
namespace {

double OnEventNow() {
  using std::chrono::steady_clock;
  return std::chrono::duration<double>(steady_clock::now().time_since_epoch()).count();
}

GuardianEvent KillEvent() {
  return GuardianEvent{"kill", Msg("SIGTERM sent: victim {}", std::string("python3")),
                       nlohmann::ordered_json{{"available_bytes", 1024},
                                              {"victim", {{"pid", 4242}, {"name", "python3"}}}}};
}

TEST(EventEnvironment, EveryFieldFlattened) {
  const auto env = EventEnvironment(KillEvent());
  EXPECT_EQ(env,
            (std::vector<std::string>{
                "HEADROOM_EVENT_TYPE=kill", "HEADROOM_EVENT_MESSAGE=SIGTERM sent: victim python3",
                "HEADROOM_EVENT_AVAILABLE_BYTES=1024", "HEADROOM_EVENT_VICTIM_PID=4242",
                "HEADROOM_EVENT_VICTIM_NAME=python3"}));
}

TEST(OnEventRunner, RunsTheCommandWithTheEventAndEndsItOnTime) {
  testing::TempDir dir("on-event");
  const std::string out = dir.File("out");
  {
    OnEventRunner runner("echo \"$HEADROOM_EVENT_TYPE $HEADROOM_EVENT_VICTIM_PID\" > " + out,
                         std::chrono::seconds(5));
    ASSERT_TRUE(runner.Start(KillEvent(), OnEventNow()));
    for (int i = 0; i < 500 && runner.Poll(OnEventNow()) > 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(runner.Poll(OnEventNow()), 0u);
  }
  EXPECT_EQ(testing::Slurp(out), "kill 4242\n");
  // A command that would run for a minute, and a child of it, are gone once the limit passed.
  OnEventRunner slow("sleep 60 & sleep 60", std::chrono::milliseconds(200));
  const double start = OnEventNow();
  ASSERT_TRUE(slow.Start(KillEvent(), start));
  for (int i = 0; i < 300 && slow.Poll(OnEventNow()) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(slow.Poll(OnEventNow()), 0u);
  EXPECT_LT(OnEventNow() - start, 2.0);
  // At most kMaxRunning at once: the next is refused, never queued behind them.
  OnEventRunner busy("sleep 60", std::chrono::seconds(60));
  for (size_t i = 0; i < OnEventRunner::kMaxRunning; ++i)
    EXPECT_TRUE(busy.Start(KillEvent(), OnEventNow()));
  EXPECT_FALSE(busy.Start(KillEvent(), OnEventNow()));
}  // ~OnEventRunner kills and reaps the four

}  // namespace
}  // namespace headroom
