
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/tests/harness_main.cpp" "tests/CMakeFiles/hpcz_tests.dir/harness_main.cpp.o" "gcc" "tests/CMakeFiles/hpcz_tests.dir/harness_main.cpp.o.d"
  "/work/main/tests/test_adversarial.cpp" "tests/CMakeFiles/hpcz_tests.dir/test_adversarial.cpp.o" "gcc" "tests/CMakeFiles/hpcz_tests.dir/test_adversarial.cpp.o.d"
  "/work/main/tests/test_block.cpp" "tests/CMakeFiles/hpcz_tests.dir/test_block.cpp.o" "gcc" "tests/CMakeFiles/hpcz_tests.dir/test_block.cpp.o.d"
  "/work/main/tests/test_corrupt.cpp" "tests/CMakeFiles/hpcz_tests.dir/test_corrupt.cpp.o" "gcc" "tests/CMakeFiles/hpcz_tests.dir/test_corrupt.cpp.o.d"
  "/work/main/tests/test_golden.cpp" "tests/CMakeFiles/hpcz_tests.dir/test_golden.cpp.o" "gcc" "tests/CMakeFiles/hpcz_tests.dir/test_golden.cpp.o.d"
  "/work/main/tests/test_roundtrip.cpp" "tests/CMakeFiles/hpcz_tests.dir/test_roundtrip.cpp.o" "gcc" "tests/CMakeFiles/hpcz_tests.dir/test_roundtrip.cpp.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/main/build/CMakeFiles/hpcz.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
