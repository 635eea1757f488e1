// Reading the store back for a report: rows in entry order, oldest first.
// The file is read as any input is: it may have been edited or damaged since
// zlcore wrote it. Its text goes through printable() (a report lands on
// terminals and in HTML; identity values and segments keep their lines), a
// row whose numbers no import writes is skipped and counted, and an SQLite
// error names the file (exit 2).
#include <cmath>

#include "../util/printable.hpp"
#include "row_summary.hpp"
#include "store_impl.hpp"
#include "zlcore/errors.hpp"

namespace zl::history {
namespace {

template <typename F>
auto reading(const std::string& path, F&& read) {
  try {
    return read();
  } catch (const SQLite::Exception& e) {
    throw UsageError("history: --db " + path + " is not a readable history: " + e.what());
  }
}

}  // namespace

size_t Store::entry_count() const {
  return reading(impl_->path, [&] {
    SQLite::Statement q(impl_->db, "SELECT count(*) FROM entries");
    q.executeStep();
    return static_cast<size_t>(q.getColumn(0).getInt64());
  });
}

std::vector<StoredRow> Store::rows(const std::string& since, const std::string& op, size_t* skipped) const {
  return reading(impl_->path, [&] { return read_rows(since, op, skipped); });
}

std::vector<StoredRow> Store::read_rows(const std::string& since, const std::string& op, size_t* skipped) const {
  if (skipped != nullptr) *skipped = 0;
  SQLite::Statement q(impl_->db,
                      "SELECT e.id, e.path, e.started, r.id, r.segment, w.op, w.dtype, w.shape, w.side, "
                      "w.median_ms, w.lo_ms, w.hi_ms, w.n, w.timer "
                      "FROM rows w JOIN runs r ON w.run = r.id JOIN entries e ON r.entry = e.id "
                      "WHERE e.started >= ? AND (? = '' OR w.op = ?) "
                      "ORDER BY e.started, e.id, w.rowid");
  q.bind(1, since);
  q.bind(2, op);
  q.bind(3, op);
  std::vector<StoredRow> out;
  while (q.executeStep()) {
    StoredRow s;
    s.entry_id = q.getColumn(0).getInt64();
    s.entry_path = printable(q.getColumn(1).getString());
    s.entry_started = printable(q.getColumn(2).getString());
    s.run_id = q.getColumn(3).getInt64();
    s.segment = printable_lines(q.getColumn(4).getString());
    s.row.op = printable(q.getColumn(5).getString());
    s.row.dtype = printable(q.getColumn(6).getString());
    s.row.shape = printable(q.getColumn(7).getString());
    s.row.side = printable(q.getColumn(8).getString());
    s.row.median_ms = q.getColumn(9).getDouble();
    s.row.lo_ms = q.getColumn(10).getDouble();
    s.row.hi_ms = q.getColumn(11).getDouble();
    s.row.n = q.getColumn(12).getInt();
    s.row.timer = printable(q.getColumn(13).getString());
    if (!plausible(s.row)) {
      if (skipped != nullptr) ++*skipped;
      continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, std::string> Store::identity(std::int64_t run_id) const {
  return reading(impl_->path, [&] {
    SQLite::Statement q(impl_->db, "SELECT key, value FROM identity WHERE run=?");
    q.bind(1, run_id);
    std::map<std::string, std::string> out;
    while (q.executeStep()) out[printable(q.getColumn(0).getString())] = printable_lines(q.getColumn(1).getString());
    return out;
  });
}

}  // namespace zl::history
