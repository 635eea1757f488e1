# zl_add_backend(<name> SOURCES ...): one backend MODULE, named
# zl_backend_<name>.so, exporting only ZL_BACKEND_ENTRY_SYMBOL and written to
# the plugin directory of the build tree (and of the install).
function(zl_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  set(target zl_backend_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY "${ZL_PLUGIN_OUTPUT_DIR}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden)
  target_link_libraries(${target} PRIVATE zl::sdk ${ARG_LIBS})
  # One version for every in-tree backend: zlcore's, not a string per file.
  target_compile_definitions(${target} PRIVATE ZL_BACKEND_VERSION="${name} ${PROJECT_VERSION}")
  target_link_options(${target} PRIVATE
    "-Wl,--version-script=${PROJECT_SOURCE_DIR}/sdk/cmake/backend.map"
    ${ZL_SHARED_NO_UNDEFINED})
  install(TARGETS ${target} LIBRARY DESTINATION "${ZL_PLUGIN_SUBDIR}")
endfunction()
