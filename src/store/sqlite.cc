#include "store/sqlite.h"

#include <sqlite3.h>

#include <cstring>
#include <utility>

namespace headroom {

SqliteDb::~SqliteDb() {
  // sqlite3_close_v2 defers the close until every statement is finalized, so the order in
  // which a owner's members are destroyed cannot leak the handle.
  if (db_) sqlite3_close_v2(db_);
}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

bool SqliteDb::Exec(const char* sql) {
  return db_ && sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}

std::string SqliteDb::ErrorText() const {
  if (!db_) return "out of memory";  // sqlite3_open_v2 leaves no handle only then
  std::string text = sqlite3_errmsg(db_);
  // The errno behind an I/O or open failure is what tells "permission denied" from "no
  // such directory"; SQLite's own message is the same for both.
  const int code = sqlite3_errcode(db_) & 0xFF;
  const int sys = sqlite3_system_errno(db_);
  if (sys != 0 && (code == SQLITE_CANTOPEN || code == SQLITE_IOERR || code == SQLITE_READONLY)) {
    text += ": ";
    text += std::strerror(sys);
  }
  return text;
}

int SqliteDb::ErrorCode() const { return db_ ? sqlite3_errcode(db_) & 0xFF : SQLITE_NOMEM; }
int64_t SqliteDb::Changes() const { return sqlite3_changes64(db_); }
int64_t SqliteDb::LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

std::optional<SqliteStatement> SqliteStatement::Prepare(const SqliteDb& db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
      SQLITE_OK) {
    sqlite3_finalize(stmt);
    return std::nullopt;
  }
  return SqliteStatement(stmt);
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }  // a no-op on nullptr

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), bind_error_(other.bind_error_) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

namespace {
void Remember(int rc, int& first_error) {
  if (rc != SQLITE_OK && first_error == 0) first_error = rc;
}
}  // namespace

void SqliteStatement::Bind(int index, int64_t value) {
  Remember(sqlite3_bind_int64(stmt_, index, value), bind_error_);
}
void SqliteStatement::Bind(int index, double value) {
  Remember(sqlite3_bind_double(stmt_, index, value), bind_error_);
}
void SqliteStatement::Bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies the text, so the caller's buffer may go away before Step.
  Remember(
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      bind_error_);
}
void SqliteStatement::BindNull(int index) {
  Remember(sqlite3_bind_null(stmt_, index), bind_error_);
}

SqliteStatement::StepResult SqliteStatement::Step() {
  if (bind_error_ != 0) return StepResult::kError;
  switch (sqlite3_step(stmt_)) {
    case SQLITE_ROW:
      return StepResult::kRow;
    case SQLITE_DONE:
      return StepResult::kDone;
    default:
      return StepResult::kError;
  }
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double SqliteStatement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string SqliteStatement::Text(int column) const {
  // column_text before column_bytes, as SQLite documents, so the length is of the UTF-8 form.
  const auto* p = sqlite3_column_text(stmt_, column);
  const int n = sqlite3_column_bytes(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

std::optional<int64_t> SqliteStatement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}
std::optional<std::string> SqliteStatement::OptionalText(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Text(column);
}

SqliteTransaction::~SqliteTransaction() {
  if (begun_ && !committed_) db_.Exec("ROLLBACK");
}

bool SqliteTransaction::Commit() {
  committed_ = begun_ && db_.Exec("COMMIT");
  return committed_;
}

}  // namespace headroom
