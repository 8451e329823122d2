# Runs a command that must fail: a non-zero exit status and output matching
# EXPECT (a regular expression). For the tests of a job that must end with a
# message instead of hanging (ctest's PASS_REGULAR_EXPRESSION alone would
# accept exit status 0).
#   cmake -DEXPECT=<regex> -P expect_failure.cmake -- <command> <arguments>...
set(command "")
set(collect FALSE)
foreach(i RANGE ${CMAKE_ARGC})
  if(collect)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(collect TRUE)
  endif()
endforeach()
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(status EQUAL 0)
  message(FATAL_ERROR "expect_failure: the command exited with status 0")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "expect_failure: the output does not match: ${EXPECT}")
endif()
message("expect_failure: exit status ${status} and the expected message")
