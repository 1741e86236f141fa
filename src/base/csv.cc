// Implementation notes: a single pass state machine over the bytes. A field is quoted only
// when its first byte is '"'; inside quotes "" is a quote and anything else is literal.
#include "base/csv.h"

#include <fmt/format.h>

#include "base/message.h"

namespace headroom {

Result<std::vector<CsvRow>> ParseCsv(std::string_view text, size_t max_fields) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  size_t line = 1;
  size_t i = 0;
  bool field_started = false;  // something (even an empty quoted field) was read
  auto end_field = [&]() -> bool {
    row.push_back(std::move(field));
    field.clear();
    field_started = false;
    return row.size() <= max_fields;
  };
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == '"' && field.empty() && !field_started) {
      // Quoted field.
      const size_t start_line = line;
      ++i;
      for (;;) {
        if (i >= text.size()) {
          return Error{Msg("line {}: unterminated quoted field", start_line)};
        }
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (text[i] == '\n') ++line;
        field.push_back(text[i++]);
      }
      field_started = true;
      if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
        return Error{Msg("line {}: text after a closing quote", line)};
      }
      continue;
    }
    if (ch == ',') {
      if (!end_field()) return Error{Msg("line {}: more than {} fields", line, max_fields)};
      ++i;
      continue;
    }
    if (ch == '\r' || ch == '\n') {
      if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++i;
      if (!end_field()) return Error{Msg("line {}: more than {} fields", line, max_fields)};
      // A blank line is no row.
      if (!(row.size() == 1 && row[0].empty())) rows.push_back(std::move(row));
      row.clear();
      ++line;
      continue;
    }
    if (ch == '"') return Error{Msg("line {}: quote inside an unquoted field", line)};
    field.push_back(ch);
    field_started = true;
    ++i;
  }
  if (field_started || !field.empty() || !row.empty()) {
    if (!end_field()) return Error{Msg("line {}: more than {} fields", line, max_fields)};
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<CsvTable> CsvTable::Parse(std::string_view text) {
  auto rows = ParseCsv(text);
  if (!rows) return rows.error();
  if (rows->empty()) return Error{Msg("no header row")};
  CsvTable t;
  const CsvRow& header = rows->front();
  for (size_t i = 0; i < header.size(); ++i) {
    if (!t.index_.emplace(header[i], i).second) {
      return Error{Msg("duplicate column '{}'", header[i])};
    }
  }
  t.rows_.assign(std::make_move_iterator(rows->begin() + 1), std::make_move_iterator(rows->end()));
  return t;
}

std::string_view CsvTable::Get(size_t i, std::string_view column) const {
  auto it = index_.find(column);
  if (it == index_.end() || i >= rows_.size() || it->second >= rows_[i].size()) return {};
  return rows_[i][it->second];
}

}  // namespace headroom
