// The store's private state: one SQLite connection.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "zlcore/history.hpp"

namespace zl::history {

struct Store::Impl {
  std::string path;
  SQLite::Database db;
  explicit Impl(const std::string& p);
};

}  // namespace zl::history
