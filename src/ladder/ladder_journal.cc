// Implementation notes: every change is one BEGIN IMMEDIATE transaction (entries plus the
// ladder's new state), and Advance compares the stored state under the write lock, so two
// `ladder record` calls racing for one job cannot both move it.
#include "ladder/ladder_journal.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "base/message.h"
#include "base/stored_message.h"

namespace headroom {

namespace {

bool IsJsonObject(const std::string& text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_object();
}

}  // namespace

std::optional<Error> LadderJournal::Append(int64_t ladder_id,
                                           const std::vector<LadderEntry>& entries, WallTime now) {
  for (const auto& e : entries) {
    if (!IsJsonObject(e.evidence_json)) {
      return journal_.Refuse("ladder entry", "the evidence is not a JSON object");
    }
    auto insert = SqliteStatement::Prepare(
        journal_.db_,
        "INSERT INTO ladder_entries (ladder_id, step, kind, text, result, note, evidence_json, at, "
        "text_message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!insert) return journal_.Fail("ladder entry");
    insert->Bind(1, ladder_id);
    insert->Bind(2, int64_t{e.step});
    insert->Bind(3, e.kind);
    insert->Bind(4, EnglishText(e.text));
    insert->Bind(5, e.result);
    insert->Bind(6, e.note);
    insert->Bind(7, e.evidence_json);
    insert->Bind(8, e.at.empty() ? FormatUtcIso8601(now) : e.at);
    insert->Bind(9, MessageToJsonText(e.text));
    if (insert->Step() != SqliteStatement::StepResult::kDone) return journal_.Fail("ladder entry");
  }
  return std::nullopt;
}

Result<int64_t> LadderJournal::Start(const LadderRow& ladder,
                                     const std::vector<LadderEntry>& entries, WallTime now) {
  if (auto error = journal_.CheckWritable("start ladder")) return *error;
  SqliteTransaction tx(journal_.db_);
  if (!tx.begun()) return journal_.Fail("start ladder");
  auto insert = SqliteStatement::Prepare(
      journal_.db_,
      "INSERT INTO ladders (job, symptom, match_text, plan_args, status, current_step, "
      "started_at, plan_request) VALUES (?1, ?2, ?3, ?4, 'open', ?5, ?6, ?7)");
  if (!insert) return journal_.Fail("start ladder");
  insert->Bind(1, ladder.job);
  insert->Bind(2, ladder.symptom);
  insert->Bind(3, ladder.match_text);
  insert->Bind(4, ladder.plan_args);
  insert->Bind(5, int64_t{ladder.state.step});
  insert->Bind(6, FormatUtcIso8601(now));
  if (ladder.plan_request.empty()) {
    insert->BindNull(7);
  } else {
    insert->Bind(7, ladder.plan_request);
  }
  if (insert->Step() != SqliteStatement::StepResult::kDone) {
    // The partial unique index: this job has an open ladder already.
    if (sqlite3_extended_errcode(journal_.db_.get()) == SQLITE_CONSTRAINT_UNIQUE) {
      return Error{Msg("job '{}' already has an open ladder", ladder.job)};
    }
    return journal_.Fail("start ladder");
  }
  const int64_t id = journal_.db_.LastInsertId();
  if (auto error = Append(id, entries, now)) return *error;
  if (!tx.Commit()) return journal_.Fail("start ladder");
  return id;
}

Result<bool> LadderJournal::Advance(int64_t ladder_id, const LadderState& from,
                                    const LadderState& to, const std::vector<LadderEntry>& entries,
                                    WallTime now) {
  if (auto error = journal_.CheckWritable("advance ladder")) return *error;
  SqliteTransaction tx(journal_.db_);
  if (!tx.begun()) return journal_.Fail("advance ladder");
  auto update =
      SqliteStatement::Prepare(journal_.db_,
                               "UPDATE ladders SET status = ?2, current_step = ?3, ended_at = ?4 "
                               "WHERE id = ?1 AND status = ?5 AND current_step = ?6");
  if (!update) return journal_.Fail("advance ladder");
  update->Bind(1, ladder_id);
  update->Bind(2, Name(to.status));
  update->Bind(3, int64_t{to.step});
  if (to.status == LadderStatus::kOpen) {
    update->BindNull(4);
  } else {
    update->Bind(4, FormatUtcIso8601(now));
  }
  update->Bind(5, Name(from.status));
  update->Bind(6, int64_t{from.step});
  if (update->Step() != SqliteStatement::StepResult::kDone) return journal_.Fail("advance ladder");
  if (journal_.db_.Changes() != 1) {
    return Error{
        Msg("ladder {} changed meanwhile (another headroom recorded it); look "
            "again with `headroom ladder`",
            ladder_id)};
  }
  if (auto error = Append(ladder_id, entries, now)) return *error;
  if (!tx.Commit()) return journal_.Fail("advance ladder");
  return true;
}

Result<std::vector<LadderRow>> LadderJournal::Select(const char* where, const std::string* job) {
  // A read-only journal never written has no tables yet: no ladders.
  if (journal_.schema_version_ == 0) return std::vector<LadderRow>{};
  auto select = SqliteStatement::Prepare(
      journal_.db_,
      fmt::format("SELECT id, job, symptom, match_text, plan_args, status, current_step, "
                  "started_at, ended_at, {} FROM ladders WHERE {} ORDER BY id",
                  journal_.schema_version_ >= 5 ? "plan_request" : "NULL", where));
  if (!select) return journal_.Fail("read ladders");
  if (job) select->Bind(1, *job);
  std::optional<Error> bad_status;  // a stored status this version does not know
  auto rows = ReadAllRows<LadderRow>(*select, [&](const SqliteStatement& s, LadderRow& row) {
    row.id = s.Int(0);
    row.job = s.Text(1);
    row.symptom = s.Text(2);
    row.match_text = s.Text(3);
    row.plan_args = s.Text(4);
    auto status = ParseLadderStatus(s.Text(5));
    if (!status) {
      bad_status = journal_.Refuse("read ladders", "status " + EnglishText(status.error().what));
      return false;
    }
    row.state = LadderState{static_cast<int>(s.Int(6)), *status};
    row.started_at = s.Text(7);
    row.ended_at = s.OptionalText(8);
    row.plan_request = s.OptionalText(9).value_or("");
    return true;
  });
  if (bad_status) return *bad_status;
  if (!rows) return journal_.Fail("read ladders");
  return std::move(*rows);
}

Result<std::optional<LadderRow>> LadderJournal::FindOpen(const std::string& job) {
  auto rows = Select("status = 'open' AND job = ?1", &job);
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<LadderRow>{};
  return std::optional<LadderRow>{rows->front()};
}

Result<std::vector<LadderRow>> LadderJournal::Open() { return Select("status = 'open'", nullptr); }

Result<std::vector<LadderEntryRow>> LadderJournal::Entries(int64_t ladder_id) {
  if (journal_.schema_version_ == 0) return std::vector<LadderEntryRow>{};
  // A read-only reader of a version 3 file (before text_message) reads NULL for it.
  auto select = SqliteStatement::Prepare(
      journal_.db_, fmt::format("SELECT id, ladder_id, step, kind, text, result, note, "
                                "evidence_json, at, {} FROM ladder_entries WHERE ladder_id = ?1 "
                                "ORDER BY id",
                                journal_.schema_version_ >= 4 ? "text_message" : "NULL"));
  if (!select) return journal_.Fail("read ladder entries");
  select->Bind(1, ladder_id);
  auto rows =
      ReadAllRows<LadderEntryRow>(*select, [](const SqliteStatement& s, LadderEntryRow& row) {
        row.id = s.Int(0);
        row.ladder_id = s.Int(1);
        row.step = static_cast<int>(s.Int(2));
        row.kind = s.Text(3);
        // Rows from before schema version 4 have no stored message: their English text.
        row.text = StoredMessageOr(s.OptionalText(9), s.Text(4));
        row.result = s.OptionalText(5);
        row.note = s.Text(6);
        row.evidence_json = s.Text(7);
        row.at = s.Text(8);
      });
  if (!rows) return journal_.Fail("read ladder entries");
  return std::move(*rows);
}

}  // namespace headroom
