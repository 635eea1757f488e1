// Reading the store back for a report: rows in entry order, oldest first.
#include "store_impl.hpp"

namespace zl::history {

size_t Store::entry_count() const {
  SQLite::Statement q(impl_->db, "SELECT count(*) FROM entries");
  q.executeStep();
  return static_cast<size_t>(q.getColumn(0).getInt64());
}

std::vector<StoredRow> Store::rows(const std::string& since, const std::string& op) const {
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
    s.entry_path = q.getColumn(1).getString();
    s.entry_started = q.getColumn(2).getString();
    s.run_id = q.getColumn(3).getInt64();
    s.segment = q.getColumn(4).getString();
    s.row.op = q.getColumn(5).getString();
    s.row.dtype = q.getColumn(6).getString();
    s.row.shape = q.getColumn(7).getString();
    s.row.side = q.getColumn(8).getString();
    s.row.median_ms = q.getColumn(9).getDouble();
    s.row.lo_ms = q.getColumn(10).getDouble();
    s.row.hi_ms = q.getColumn(11).getDouble();
    s.row.n = q.getColumn(12).getInt();
    s.row.timer = q.getColumn(13).getString();
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, std::string> Store::identity(std::int64_t run_id) const {
  SQLite::Statement q(impl_->db, "SELECT key, value FROM identity WHERE run=?");
  q.bind(1, run_id);
  std::map<std::string, std::string> out;
  while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getString();
  return out;
}

}  // namespace zl::history
