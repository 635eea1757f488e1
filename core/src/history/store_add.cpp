// Importing an entry: one transaction, so a kill at any moment leaves the
// entry as it was before (absent, or its previous import) and never half of
// it. A directory imported again replaces its entry: a resumed batch has
// more ops, a finished ab more rounds.
#include <chrono>
#include <ctime>

#include "store_impl.hpp"
#include "zlcore/errors.hpp"

namespace zl::history {
namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void forget_entry(SQLite::Database& db, std::int64_t id) {
  for (const char* sql : {"DELETE FROM rows WHERE run IN (SELECT id FROM runs WHERE entry=?)",
                          "DELETE FROM identity WHERE run IN (SELECT id FROM runs WHERE entry=?)",
                          "DELETE FROM runs WHERE entry=?", "DELETE FROM entries WHERE id=?"}) {
    SQLite::Statement q(db, sql);
    q.bind(1, id);
    q.exec();
  }
}

void write_run(SQLite::Database& db, std::int64_t entry, const Run& r) {
  SQLite::Statement q(db, "INSERT INTO runs(entry, op, dir, run_id, status, started, segment) VALUES(?,?,?,?,?,?,?)");
  q.bind(1, entry);
  q.bind(2, r.op);
  q.bind(3, r.dir);
  q.bind(4, r.run_id);
  q.bind(5, r.status);
  q.bind(6, r.started);
  q.bind(7, r.segment);
  q.exec();
  const std::int64_t run = db.getLastInsertRowid();
  SQLite::Statement id(db, "INSERT INTO identity(run, key, value) VALUES(?,?,?)");
  for (const auto& [k, v] : r.identity) {
    id.bind(1, run);
    id.bind(2, k);
    id.bind(3, v);
    id.exec();
    id.reset();
  }
  SQLite::Statement row(db,
                        "INSERT INTO rows(run, op, dtype, shape, side, median_ms, lo_ms, hi_ms, n, timer) "
                        "VALUES(?,?,?,?,?,?,?,?,?,?)");
  for (const Row& w : r.rows) {
    row.bind(1, run);
    row.bind(2, w.op);
    row.bind(3, w.dtype);
    row.bind(4, w.shape);
    row.bind(5, w.side);
    row.bind(6, w.median_ms);
    row.bind(7, w.lo_ms);
    row.bind(8, w.hi_ms);
    row.bind(9, w.n);
    row.bind(10, w.timer);
    row.exec();
    row.reset();
  }
}

}  // namespace

const char* outcome_name(AddOutcome o) {
  switch (o) {
    case AddOutcome::Added: return "added";
    case AddOutcome::Updated: return "updated";
    case AddOutcome::Unchanged: return "unchanged";
  }
  return "?";
}

AddOutcome Store::add(const Entry& e, const std::function<void(size_t)>& after_run) {
  SQLite::Database& db = impl_->db;
  const std::string digest = fingerprint(e);
  try {
    SQLite::Transaction t(db);
    SQLite::Statement find(db, "SELECT id, fingerprint FROM entries WHERE path=?");
    find.bind(1, e.path);
    AddOutcome outcome = AddOutcome::Added;
    if (find.executeStep()) {
      if (find.getColumn(1).getString() == digest) return AddOutcome::Unchanged;
      forget_entry(db, find.getColumn(0).getInt64());
      outcome = AddOutcome::Updated;
    }
    find.reset();
    SQLite::Statement ins(db, "INSERT INTO entries(path, kind, started, fingerprint, added) VALUES(?,?,?,?,?)");
    ins.bind(1, e.path);
    ins.bind(2, e.kind);
    ins.bind(3, e.started);
    ins.bind(4, digest);
    ins.bind(5, utc_now());
    ins.exec();
    const std::int64_t entry = db.getLastInsertRowid();
    for (size_t i = 0; i < e.runs.size(); ++i) {
      write_run(db, entry, e.runs[i]);
      if (after_run) after_run(i);
    }
    t.commit();
    return outcome;
  } catch (const SQLite::Exception& err) {
    throw std::runtime_error("history add: " + e.path + " not added (" + err.what() + "); the database " + impl_->path +
                             " is as it was");
  }
}

}  // namespace zl::history
