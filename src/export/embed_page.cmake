# Writes OUT, a C++ file holding IN (the live page, share/export/live.html) as bytes, so the
# binary serves its page and never looks for an install path. Run by CMakeLists.txt at build
# time whenever share/export/live.html changes.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}.tmp"
  "// Generated from share/export/live.html by src/export/embed_page.cmake; do not edit.\n"
  "#include <string_view>\n\n#include \"export/live.h\"\n\nnamespace headroom {\nnamespace {\n"
  "constexpr unsigned char kLivePage[] = {${bytes}};\n}  // namespace\n\n"
  "std::string_view LivePage() {\n"
  "  return {reinterpret_cast<const char*>(kLivePage), sizeof kLivePage};\n}\n\n}  // namespace headroom\n")
file(RENAME "${OUT}.tmp" "${OUT}")
