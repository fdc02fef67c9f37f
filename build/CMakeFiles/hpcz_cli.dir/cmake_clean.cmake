file(REMOVE_RECURSE
  "CMakeFiles/hpcz_cli.dir/cli/bench.cpp.o"
  "CMakeFiles/hpcz_cli.dir/cli/bench.cpp.o.d"
  "CMakeFiles/hpcz_cli.dir/cli/main.cpp.o"
  "CMakeFiles/hpcz_cli.dir/cli/main.cpp.o.d"
  "hpcz"
  "hpcz.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/hpcz_cli.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
