# Optional dependencies, recorded where each is looked for. myriad_missing(WHAT HOW) notes that WHAT is left out
# of this build (a transport, a tier of tests, a tool) and HOW to get it; the configure summary lists them.
# With MYRIAD_REQUIRE_ALL, or MYRIAD_NO_SKIP=1 in the configure's environment (scripts/test sets it), a missing
# dependency is a configure error instead, so CI can never pass a tier it did not build.
option(MYRIAD_REQUIRE_ALL "Fail the configure when an optional dependency is missing (also: MYRIAD_NO_SKIP=1)" OFF)

function(myriad_missing what how)
  set_property(GLOBAL APPEND PROPERTY MYRIAD_MISSING "${what} (${how})")
  message(STATUS "Myriad: ${what}: ${how}")
endfunction()

# Called once, after every subdirectory: lists what was left out, and stops here under MYRIAD_REQUIRE_ALL.
function(myriad_report_missing)
  get_property(missing GLOBAL PROPERTY MYRIAD_MISSING)
  if(NOT missing)
    message(STATUS "  left out          : nothing")
    return()
  endif()
  list(JOIN missing "\n    " text)
  if(MYRIAD_REQUIRE_ALL OR "$ENV{MYRIAD_NO_SKIP}" STREQUAL "1")
    message(FATAL_ERROR "MYRIAD_REQUIRE_ALL or MYRIAD_NO_SKIP=1: this build would leave out:\n    ${text}\n"
      "Install what is named (scripts/lib/deps.sh lists the packages), or configure with MYRIAD_NO_SKIP=0 and -DMYRIAD_REQUIRE_ALL=OFF.")
  endif()
  message(STATUS "  left out          :\n    ${text}")
endfunction()
