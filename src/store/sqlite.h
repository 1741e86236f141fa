// Thin RAII owners for the SQLite C API, used only by the journal: one owner per sqlite3*
// and per sqlite3_stmt*, movable and non-copyable, with no exceptions (SQLite reports
// through return codes; the journal turns them into Result errors that name the file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

// The C library's own opaque handles (sqlite3.h declares them the same way), so that
// including the journal does not pull sqlite3.h into the CLI.
struct sqlite3;
struct sqlite3_stmt;

namespace headroom {

class SqliteDb {
 public:
  SqliteDb() = default;
  explicit SqliteDb(sqlite3* db) : db_(db) {}  // takes ownership, even of a failed open
  ~SqliteDb();
  SqliteDb(SqliteDb&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  sqlite3* get() const { return db_; }
  // Runs statements that return no rows (pragmas, BEGIN, COMMIT, schema). false on error;
  // ErrorText() then says why.
  bool Exec(const char* sql);
  // The last error: SQLite's message, plus the system call's reason where there was one
  // ("unable to open database file: Permission denied").
  std::string ErrorText() const;
  int ErrorCode() const;         // primary result code of the last error (SQLITE_BUSY, ...)
  int64_t Changes() const;       // rows the last INSERT, UPDATE or DELETE touched
  int64_t LastInsertId() const;  // rowid of this connection's last INSERT

 private:
  sqlite3* db_ = nullptr;
};

class SqliteStatement {
 public:
  // nullopt when SQLite refuses the text; the connection's ErrorText() says why.
  static std::optional<SqliteStatement> Prepare(const SqliteDb& db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Parameters are numbered from 1, as in SQL's "?1". A failed bind is remembered and
  // reported by the next Step(), so a run of binds needs one check.
  void Bind(int index, int64_t value);
  void Bind(int index, double value);
  void Bind(int index, std::string_view text);
  void BindNull(int index);
  template <typename T>
  void Bind(int index, const std::optional<T>& value) {
    value ? Bind(index, *value) : BindNull(index);
  }

  enum class StepResult { kRow, kDone, kError };
  StepResult Step();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  std::optional<int64_t> OptionalInt(int column) const;
  std::optional<std::string> OptionalText(int column) const;

 private:
  explicit SqliteStatement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* stmt_ = nullptr;
  int bind_error_ = 0;  // first failed bind's result code, 0 when all succeeded
};

// The loop every SELECT of the journal runs: steps `select` to its end and reads each row
// into a new element with `read_row(select, row)`. A `read_row` that returns bool stops
// the loop with false (it keeps its own reason: a stored value it cannot parse). nullopt
// when a step fails (the connection's ErrorText() says why) or `read_row` stopped it.
template <typename Row, typename ReadRow>
std::optional<std::vector<Row>> ReadAllRows(SqliteStatement& select, ReadRow&& read_row) {
  std::vector<Row> rows;
  for (auto step = select.Step(); step != SqliteStatement::StepResult::kDone;
       step = select.Step()) {
    if (step == SqliteStatement::StepResult::kError) return std::nullopt;
    Row& row = rows.emplace_back();
    if constexpr (std::is_same_v<std::invoke_result_t<ReadRow&, const SqliteStatement&, Row&>,
                                 bool>) {
      if (!read_row(std::as_const(select), row)) return std::nullopt;
    } else {
      read_row(std::as_const(select), row);
    }
  }
  return rows;
}

// BEGIN IMMEDIATE ... COMMIT, rolled back when dropped without a commit. IMMEDIATE takes
// the write lock at BEGIN, where the busy timeout applies; a deferred transaction that
// upgrades a read to a write can fail with SQLITE_BUSY at once, without waiting.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db) : db_(db), begun_(db.Exec("BEGIN IMMEDIATE")) {}
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;

  bool begun() const { return begun_; }
  bool Commit();

 private:
  SqliteDb& db_;
  bool begun_ = false;
  bool committed_ = false;
};

}  // namespace headroom
