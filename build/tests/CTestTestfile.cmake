# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[unit_]=] "/work/main/build/tests/hpcz_tests" "unit_")
set_tests_properties([=[unit_]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;9;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[roundtrip_]=] "/work/main/build/tests/hpcz_tests" "roundtrip_")
set_tests_properties([=[roundtrip_]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;9;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[adv_]=] "/work/main/build/tests/hpcz_tests" "adv_")
set_tests_properties([=[adv_]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;9;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[corrupt_]=] "/work/main/build/tests/hpcz_tests" "corrupt_")
set_tests_properties([=[corrupt_]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;9;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[golden_]=] "/work/main/build/tests/hpcz_tests" "golden_")
set_tests_properties([=[golden_]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;9;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[cli]=] "/work/main/tests/cli_test.sh" "/work/main/build/hpcz" "/work/main")
set_tests_properties([=[cli]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;11;add_test;/work/main/tests/CMakeLists.txt;0;")
