# The ops' docstrings live in their doc pages (docs/**/*.md), one region per op:
#   <!-- begin docstring NAME -->  a ```text block  <!-- end docstring -->
# ptocpu_embed_docstrings(OUT) writes those regions, page after page, into one C++ string
# (pto::generated::kDocstringRegions) for the op table (src/ops/op_table.cpp) and re-runs when
# a page changes.
function(ptocpu_embed_docstrings out_var)
  set(begin_marker "<!-- begin docstring ")
  set(end_marker "<!-- end docstring -->")
  file(GLOB_RECURSE pages CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
  list(SORT pages)
  set(regions "")
  foreach(page IN LISTS pages)
    file(READ "${page}" text)
    while(TRUE)
      string(FIND "${text}" "${begin_marker}" start)
      if(start EQUAL -1)
        break()
      endif()
      string(SUBSTRING "${text}" ${start} -1 text)
      string(FIND "${text}" "${end_marker}" stop)
      if(stop EQUAL -1)
        message(FATAL_ERROR "${page}: a docstring region without its '${end_marker}' line")
      endif()
      string(LENGTH "${end_marker}" end_length)
      math(EXPR stop "${stop} + ${end_length}")
      string(SUBSTRING "${text}" 0 ${stop} region)
      string(APPEND regions "${region}\n")
      string(SUBSTRING "${text}" ${stop} -1 text)
    endwhile()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${pages})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/generated/docstrings.cpp")
  # Written only when it changes, so a configure run does not rebuild the library.
  file(CONFIGURE OUTPUT "${out}" CONTENT
       "// Generated from docs/**/*.md by cmake/Docstrings.cmake: do not edit.\nnamespace pto::generated {\nextern const char kDocstringRegions[];\nconst char kDocstringRegions[] = R\"pto_doc(\${regions})pto_doc\";\n}  // namespace pto::generated\n"
)
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
