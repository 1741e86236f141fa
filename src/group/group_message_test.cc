#include "group/group_message.h"

#include <gtest/gtest.h>

#include <string>

namespace headroom::group {
namespace {

constexpr std::string_view kMessageSecret = "0123456789abcdef-secret";
constexpr std::string_view kJob = "slurm-4242";

GroupMessage Memory() {
  GroupMessage m;
  m.job_id = std::string(kJob);
  m.node_rank = 1;
  m.run = 0x5eed'0000'0000'0001;
  m.sequence = 7;
  m.sent_unix_ms = 1'800'000'000'000;
  m.kind = MessageKind::kEndedForMemory;
  m.available_bytes = 3'328'599'654;  // 3.1 GiB
  m.level_bytes = 4ull << 30;
  return m;
}

std::string Frame(const GroupMessage& m) {
  auto frame = EncodeMessage(m, kMessageSecret);
  EXPECT_TRUE(frame.ok()) << EnglishText(frame.error().what);
  return frame.ok() ? *frame : std::string();
}

std::string Why(const Result<GroupMessage>& r) { return r ? "" : EnglishText(r.error().what); }

TEST(GroupMessage, RoundTripsEveryKind) {
  for (const MessageKind kind :
       {MessageKind::kJoin, MessageKind::kHeartbeat, MessageKind::kEndedForMemory,
        MessageKind::kFailed, MessageKind::kAbort, MessageKind::kDone, MessageKind::kWelcome}) {
    GroupMessage m = Memory();
    m.kind = kind;
    if (kind == MessageKind::kJoin) m.run = 0;  // a join comes before the run is known
    if (kind == MessageKind::kJoin || kind == MessageKind::kWelcome) m.challenge = ~0ull - 1;
    if (kind != MessageKind::kEndedForMemory) m.available_bytes = m.level_bytes = 0;
    if (kind == MessageKind::kFailed) m.status = -3;  // negative survives the u32 field
    if (kind == MessageKind::kAbort) {                // the abort names its origin and cause
      m.cause = AbortCause::kFailed;
      m.origin_rank = 513;
      m.status = 137;
    }
    const std::string frame = Frame(m);
    EXPECT_EQ(frame.size(), kHeaderBytes + kJob.size() + kMacBytes);
    const auto length = FrameLength(frame);
    ASSERT_TRUE(length.ok());
    EXPECT_EQ(**length, frame.size());
    const auto back = DecodeMessage(frame, kMessageSecret, kJob);
    ASSERT_TRUE(back.ok()) << Why(back);
    EXPECT_EQ(*back, m) << MessageKindName(kind);
  }
}

TEST(GroupMessage, RefusesEveryFlippedBit) {
  // Any single bit changed anywhere (length, header, fields, job id or MAC) is refused.
  const std::string frame = Frame(Memory());
  for (size_t i = 0; i < frame.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = frame;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_FALSE(DecodeMessage(bad, kMessageSecret, kJob).ok()) << "byte " << i << " bit " << bit;
    }
  }
}

TEST(GroupMessage, RefusesTheWrongSecretAndAnotherJob) {
  const std::string frame = Frame(Memory());
  EXPECT_EQ(Why(DecodeMessage(frame, "another-secret-of-16+", kJob)),
            "group message: authentication failed");
  EXPECT_EQ(Why(DecodeMessage(frame, kMessageSecret, "slurm-4243")),
            "group message: for another job");
  EXPECT_EQ(Why(DecodeMessage(frame, "short", kJob)), "group secret: shorter than 16 bytes");
}

TEST(GroupMessage, ForgedAbortWithoutTheSecretIsRefused) {
  // An attacker who knows the layout but not the secret: a MAC under a guessed key.
  GroupMessage abort;
  abort.job_id = std::string(kJob);
  abort.sequence = 1;
  abort.run = 1;
  abort.kind = MessageKind::kAbort;
  abort.cause = AbortCause::kLost;
  const auto forged = EncodeMessage(abort, "guessed-secret-guessed");
  ASSERT_TRUE(forged.ok());
  EXPECT_EQ(Why(DecodeMessage(*forged, kMessageSecret, kJob)),
            "group message: authentication failed");
  std::string zero_mac = *forged;
  zero_mac.replace(zero_mac.size() - kMacBytes, kMacBytes, std::string(kMacBytes, '\0'));
  EXPECT_FALSE(DecodeMessage(zero_mac, kMessageSecret, kJob).ok());
}

TEST(GroupMessage, RefusesHostileLengthsAndTruncations) {
  const std::string frame = Frame(Memory());
  for (size_t n = 0; n < frame.size(); ++n) {
    EXPECT_FALSE(DecodeMessage(frame.substr(0, n), kMessageSecret, kJob).ok()) << n;
  }
  EXPECT_FALSE(DecodeMessage(frame + "x", kMessageSecret, kJob).ok());
  EXPECT_FALSE(FrameLength(std::string("\xff\xff", 2)).ok());  // 65537 bytes claimed
  EXPECT_FALSE(FrameLength(std::string("\x00\x00", 2)).ok());
  EXPECT_FALSE(FrameLength(std::string(1, '\0')).value().has_value());  // wait for more
  const std::string huge(kMaxFrameBytes + 1, 'A');
  EXPECT_FALSE(DecodeMessage(huge, kMessageSecret, kJob).ok());
}

TEST(GroupMessage, EncoderRefusesWhatTheDecoderWould) {
  GroupMessage m = Memory();
  m.job_id = std::string(kMaxJobIdBytes + 1, 'j');
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m.job_id = "has space";
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m = Memory();
  m.sequence = 0;
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m = Memory();
  m.kind = MessageKind::kHeartbeat;  // a heartbeat carrying a reading
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m = Memory();
  m.level_bytes = 0;
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m = Memory();
  m.cause = AbortCause::kMemory;  // only an abort has a cause
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m = Memory();
  m.kind = MessageKind::kAbort;  // an abort without a cause
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m.cause = AbortCause::kLost;  // a lost node has no reading
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m.cause = AbortCause::kMemory;
  EXPECT_TRUE(EncodeMessage(m, kMessageSecret).ok());
  m.cause = static_cast<AbortCause>(4);
  EXPECT_FALSE(EncodeMessage(m, kMessageSecret).ok());
  m = Memory();
  m.job_id = std::string(kMaxJobIdBytes, 'j');
  m.level_bytes = 1;
  const auto longest = EncodeMessage(m, kMessageSecret);
  ASSERT_TRUE(longest.ok());
  EXPECT_EQ(longest->size(), kMaxFrameBytes);
}

TEST(GroupMessage, OnlyAJoinComesWithoutARunAndOnlyJoinAndWelcomeCarryAChallenge) {
  GroupMessage m = Memory();
  m.run = 0;
  EXPECT_EQ(EnglishText(EncodeMessage(m, kMessageSecret).error().what),
            "group message: ended-for-memory without a run");
  m = Memory();
  m.challenge = 5;
  EXPECT_EQ(EnglishText(EncodeMessage(m, kMessageSecret).error().what),
            "group message: ended-for-memory carries a challenge");
  GroupMessage join;
  join.job_id = std::string(kJob);
  join.node_rank = 1;
  join.sequence = 1;
  join.kind = MessageKind::kJoin;
  EXPECT_EQ(EnglishText(EncodeMessage(join, kMessageSecret).error().what),
            "group message: join without a challenge");
  join.challenge = 42;
  EXPECT_TRUE(EncodeMessage(join, kMessageSecret).ok());
  join.run = 7;
  EXPECT_EQ(EnglishText(EncodeMessage(join, kMessageSecret).error().what),
            "group message: join carries a run");
  GroupMessage welcome = join;
  welcome.kind = MessageKind::kWelcome;
  welcome.node_rank = 0;
  EXPECT_TRUE(EncodeMessage(welcome, kMessageSecret).ok());
  welcome.run = 0;
  EXPECT_EQ(EnglishText(EncodeMessage(welcome, kMessageSecret).error().what),
            "group message: welcome without a run");
  // A version 2 frame (no run, no challenge: 16 bytes shorter) is refused: by its length
  // here, by its version where its job id makes it long enough.
  std::string v2 = Frame(Memory());
  v2.erase(9, 16);
  v2[0] = 0;
  v2[1] = static_cast<char>(v2.size() - 2);
  v2[5] = 2;
  EXPECT_EQ(Why(DecodeMessage(v2, kMessageSecret, kJob)),
            "group message: frame length 91 outside 98..161");
  std::string version2 = Frame(Memory());
  version2[5] = 2;
  EXPECT_EQ(Why(DecodeMessage(version2, kMessageSecret, kJob)),
            "group message: version 2, this guard speaks 3");
}

TEST(FrameReader, CutsAStreamFedByteByByteAndInOneGo) {
  const std::string a = Frame(Memory());
  GroupMessage h = Memory();
  h.kind = MessageKind::kHeartbeat;
  h.available_bytes = h.level_bytes = 0;
  const std::string b = Frame(h);
  const std::string stream = a + b + a.substr(0, 10);
  FrameReader bytewise;
  std::vector<std::string> frames;
  for (const char c : stream) {
    ASSERT_TRUE(bytewise.Feed(std::string_view(&c, 1), frames).ok());
    EXPECT_LE(bytewise.buffered(), kMaxFrameBytes);
  }
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], a);
  EXPECT_EQ(frames[1], b);
  EXPECT_EQ(bytewise.buffered(), 10u);
  FrameReader whole;
  frames.clear();
  ASSERT_TRUE(whole.Feed(stream, frames).ok());
  EXPECT_EQ(frames.size(), 2u);
  EXPECT_EQ(whole.buffered(), 10u);
}

TEST(FrameReader, ABadLengthBreaksTheStreamForGood) {
  FrameReader reader;
  std::vector<std::string> frames;
  // 64 KiB claimed: refused at once, without buffering toward it.
  EXPECT_FALSE(reader.Feed(std::string("\xff\xff", 2), frames).ok());
  EXPECT_EQ(reader.buffered(), 0u);
  EXPECT_FALSE(reader.Feed(Frame(Memory()), frames).ok());
  EXPECT_TRUE(frames.empty());
  FrameReader after_good;
  const std::string good = Frame(Memory());
  EXPECT_FALSE(after_good.Feed(good + std::string(2, '\0'), frames).ok());
  EXPECT_EQ(frames.size(), 1u);  // the frame before the break still came out
}

TEST(ReplayGuard, RefusesReplaysStaleFramesAndUnknownRanks) {
  ReplayGuard guard(/*nodes=*/2, /*window_ms=*/30'000);
  GroupMessage m = Memory();
  const uint64_t now = m.sent_unix_ms + 100;
  EXPECT_TRUE(guard.Accept(m, now).ok());
  EXPECT_FALSE(guard.Accept(m, now).ok());  // the same frame again
  m.sequence = 6;
  EXPECT_FALSE(guard.Accept(m, now).ok());  // an older one
  m.sequence = 8;
  EXPECT_FALSE(guard.Accept(m, now + 30'101).ok());             // too old
  EXPECT_FALSE(guard.Accept(m, m.sent_unix_ms - 30'001).ok());  // from the future
  EXPECT_TRUE(guard.Accept(m, now).ok());
  m.node_rank = 0;
  m.sequence = 1;  // each rank counts on its own
  EXPECT_TRUE(guard.Accept(m, now).ok());
  m.node_rank = 2;
  m.sequence = 100;
  EXPECT_FALSE(guard.Accept(m, now).ok());
}

}  // namespace
}  // namespace headroom::group
