file(REMOVE_RECURSE
  "CMakeFiles/hpcz_tests.dir/harness_main.cpp.o"
  "CMakeFiles/hpcz_tests.dir/harness_main.cpp.o.d"
  "CMakeFiles/hpcz_tests.dir/test_adversarial.cpp.o"
  "CMakeFiles/hpcz_tests.dir/test_adversarial.cpp.o.d"
  "CMakeFiles/hpcz_tests.dir/test_block.cpp.o"
  "CMakeFiles/hpcz_tests.dir/test_block.cpp.o.d"
  "CMakeFiles/hpcz_tests.dir/test_corrupt.cpp.o"
  "CMakeFiles/hpcz_tests.dir/test_corrupt.cpp.o.d"
  "CMakeFiles/hpcz_tests.dir/test_golden.cpp.o"
  "CMakeFiles/hpcz_tests.dir/test_golden.cpp.o.d"
  "CMakeFiles/hpcz_tests.dir/test_roundtrip.cpp.o"
  "CMakeFiles/hpcz_tests.dir/test_roundtrip.cpp.o.d"
  "hpcz_tests"
  "hpcz_tests.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/hpcz_tests.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
