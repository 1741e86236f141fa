// CSV (RFC 4180): quoted fields with "" escapes, commas and newlines inside quotes, CRLF or
// LF line ends. Used for the planner's truth tables and, later, sample files.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace headroom {

using CsvRow = std::vector<std::string>;

// Parses a whole CSV text into rows. Errors (one line, with the 1-based line number): an
// unterminated quote, a quote in the middle of an unquoted field, text after a closing
// quote. `max_fields` bounds a hostile row.
Result<std::vector<CsvRow>> ParseCsv(std::string_view text, size_t max_fields = 4096);

// A CSV with a header row, addressed by column name.
class CsvTable {
 public:
  static Result<CsvTable> Parse(std::string_view text);
  size_t size() const { return rows_.size(); }
  // The value of `column` in row `i`; "" when the column is missing or the row is short.
  std::string_view Get(size_t i, std::string_view column) const;
  bool HasColumn(std::string_view column) const { return index_.count(std::string(column)); }

 private:
  std::vector<CsvRow> rows_;
  std::map<std::string, size_t, std::less<>> index_;
};

}  // namespace headroom
