file(REMOVE_RECURSE
  "CMakeFiles/hpcz.dir/src/format/archive.cpp.o"
  "CMakeFiles/hpcz.dir/src/format/archive.cpp.o.d"
  "CMakeFiles/hpcz.dir/src/metrics/metrics.cpp.o"
  "CMakeFiles/hpcz.dir/src/metrics/metrics.cpp.o.d"
  "CMakeFiles/hpcz.dir/src/pipeline/api.cpp.o"
  "CMakeFiles/hpcz.dir/src/pipeline/api.cpp.o.d"
  "CMakeFiles/hpcz.dir/src/pipeline/c_api.cpp.o"
  "CMakeFiles/hpcz.dir/src/pipeline/c_api.cpp.o.d"
  "CMakeFiles/hpcz.dir/src/pipeline/cpu_backend.cpp.o"
  "CMakeFiles/hpcz.dir/src/pipeline/cpu_backend.cpp.o.d"
  "CMakeFiles/hpcz.dir/src/pipeline/gpu_backend.cu.o"
  "CMakeFiles/hpcz.dir/src/pipeline/gpu_backend.cu.o.d"
  "libhpcz.a"
  "libhpcz.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CUDA CXX)
  include(CMakeFiles/hpcz.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
