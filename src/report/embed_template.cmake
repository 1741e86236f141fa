# Writes OUT, a C++ file holding IN (the report page's template) as bytes, so the binary
# carries its template and never looks for an install path. Run by CMakeLists.txt at build
# time whenever share/report/report.html changes.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}.tmp"
  "// Generated from share/report/report.html by src/report/embed_template.cmake; do not edit.\n"
  "#include <string_view>\n\n#include \"report/report_data.h\"\n\nnamespace headroom {\nnamespace {\n"
  "constexpr unsigned char kTemplate[] = {${bytes}};\n}  // namespace\n\n"
  "std::string_view ReportTemplate() {\n"
  "  return {reinterpret_cast<const char*>(kTemplate), sizeof kTemplate};\n}\n\n}  // namespace headroom\n")
file(RENAME "${OUT}.tmp" "${OUT}")
