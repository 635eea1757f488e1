# Third-party libraries, all from Debian 12 packages. With ZL_STATIC_DEPS the
# installed zlcore carries them inside, so it runs on a host that has none of
# them (glibc and libstdc++ stay dynamic).
if(ZL_STATIC_DEPS)
  set(Boost_USE_STATIC_LIBS ON)
endif()
find_package(Boost 1.74 REQUIRED COMPONENTS program_options filesystem)
find_package(Threads REQUIRED)
find_package(RapidJSON REQUIRED)
if(ZL_STATIC_DEPS)
  # SQLiteCpp's package config links SQLite::SQLite3, found through this
  # variable; left alone it is the shared library, and the static zlcore
  # needed libsqlite3.so.0 on the host after all.
  find_library(ZL_SQLITE3_STATIC_LIB NAMES libsqlite3.a REQUIRED)
  set(SQLite3_LIBRARY ${ZL_SQLITE3_STATIC_LIB} CACHE FILEPATH "sqlite3, static for ZL_STATIC_DEPS" FORCE)
  set(ZL_SQLITE3_LIB ${ZL_SQLITE3_STATIC_LIB})
elseif(SQLite3_LIBRARY MATCHES "\\.a$")
  # A build directory switched off ZL_STATIC_DEPS: find the shared one again.
  unset(SQLite3_LIBRARY CACHE)
endif()
find_package(SQLiteCpp REQUIRED)

# One cache entry per kind, so a build directory can switch ZL_STATIC_DEPS.
if(ZL_STATIC_DEPS)
  find_library(ZL_YAML_CPP_STATIC_LIB NAMES libyaml-cpp.a REQUIRED)
  set(ZL_YAML_CPP_LIB ${ZL_YAML_CPP_STATIC_LIB})
else()
  find_library(ZL_YAML_CPP_SHARED_LIB NAMES yaml-cpp REQUIRED)
  find_library(ZL_SQLITE3_SHARED_LIB NAMES sqlite3 REQUIRED)
  set(ZL_YAML_CPP_LIB ${ZL_YAML_CPP_SHARED_LIB})
  set(ZL_SQLITE3_LIB ${ZL_SQLITE3_SHARED_LIB})
endif()
find_path(ZL_YAML_CPP_INCLUDE yaml-cpp/yaml.h REQUIRED)

add_library(zl_deps INTERFACE)
target_include_directories(zl_deps SYSTEM INTERFACE ${RapidJSON_INCLUDE_DIRS} ${RAPIDJSON_INCLUDE_DIRS} ${ZL_YAML_CPP_INCLUDE})
# Boost.DLL on std::filesystem, so Boost.Filesystem is needed only by nobody.
target_compile_definitions(zl_deps INTERFACE BOOST_DLL_USE_STD_FS RAPIDJSON_HAS_STDSTRING=1)
target_link_libraries(zl_deps INTERFACE
  Boost::headers Boost::program_options
  SQLiteCpp ${ZL_YAML_CPP_LIB} ${ZL_SQLITE3_LIB}
  Threads::Threads ${CMAKE_DL_LIBS})
