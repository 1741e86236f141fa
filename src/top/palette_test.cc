#include "top/palette.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

std::vector<Role> AllRoles() {
  std::vector<Role> roles;
  for (size_t r = 0; r < kRoleCount; ++r) roles.push_back(static_cast<Role>(r));
  return roles;
}

TEST(TopPalette, ChoosesTheModeFromTheTerminalAndNoColor) {
  EXPECT_EQ(ChooseColourMode(true, 256, false), ColourMode::k256);
  EXPECT_EQ(ChooseColourMode(true, 16777216, false), ColourMode::k256);  // direct colour
  EXPECT_EQ(ChooseColourMode(true, 16, false), ColourMode::k16);
  EXPECT_EQ(ChooseColourMode(true, 8, false), ColourMode::k8);
  EXPECT_EQ(ChooseColourMode(true, 2, false), ColourMode::kMono);
  EXPECT_EQ(ChooseColourMode(false, 256, false), ColourMode::kMono);  // vt100, xterm-mono
  EXPECT_EQ(ChooseColourMode(true, 256, true), ColourMode::kMono);    // NO_COLOR, --no-color
}

TEST(TopPalette, MonochromeUsesAttributesOnly) {
  for (Role r : AllRoles()) {
    const Style s = StyleFor(r, ColourMode::kMono);
    EXPECT_EQ(s.fg, -1) << RoleName(r);
    EXPECT_EQ(s.bg, -1) << RoleName(r);
  }
  // What colour would single out still stands out.
  EXPECT_TRUE(StyleFor(Role::kTitle, ColourMode::kMono).reverse);
  EXPECT_TRUE(StyleFor(Role::kHeader, ColourMode::kMono).reverse);
  EXPECT_TRUE(StyleFor(Role::kPaused, ColourMode::kMono).reverse);
  EXPECT_TRUE(StyleFor(Role::kWarn, ColourMode::kMono).bold);
  const Style crit = StyleFor(Role::kCrit, ColourMode::kMono);
  EXPECT_TRUE(crit.bold && crit.reverse);
  EXPECT_TRUE(StyleFor(Role::kKey, ColourMode::kMono).underline);
  EXPECT_TRUE(StyleFor(Role::kBarUsed, ColourMode::kMono).reverse);  // the used part of a bar
}

TEST(TopPalette, EachModeStaysWithinItsColours) {
  for (Role r : AllRoles()) {
    for (auto [mode, max] :
         {std::pair{ColourMode::k8, 7}, {ColourMode::k16, 15}, {ColourMode::k256, 255}}) {
      const Style s = StyleFor(r, mode);
      EXPECT_LE(s.fg, max) << RoleName(r) << " " << ColourModeName(mode);
      EXPECT_GE(s.fg, -1);
      EXPECT_EQ(s.bg, -1) << "backgrounds stay the terminal's";
    }
  }
  // Warnings and critical readings differ from plain values in every colour mode.
  for (ColourMode mode : {ColourMode::k8, ColourMode::k16, ColourMode::k256}) {
    EXPECT_NE(StyleFor(Role::kWarn, mode).fg, StyleFor(Role::kValue, mode).fg);
    EXPECT_NE(StyleFor(Role::kCrit, mode).fg, StyleFor(Role::kWarn, mode).fg);
  }
  EXPECT_GT(StyleFor(Role::kCrit, ColourMode::k16).fg, 7);  // bright red where there is one
  EXPECT_TRUE(StyleFor(Role::kCrit, ColourMode::k8).bold);  // brightness from bold
  EXPECT_GT(StyleFor(Role::kLabel, ColourMode::k256).fg, 15);
}

}  // namespace
}  // namespace headroom
