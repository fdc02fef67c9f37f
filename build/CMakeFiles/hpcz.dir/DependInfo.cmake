
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/pipeline/gpu_backend.cu" "CMakeFiles/hpcz.dir/src/pipeline/gpu_backend.cu.o" "gcc" "CMakeFiles/hpcz.dir/src/pipeline/gpu_backend.cu.o.d"
  "/work/main/src/format/archive.cpp" "CMakeFiles/hpcz.dir/src/format/archive.cpp.o" "gcc" "CMakeFiles/hpcz.dir/src/format/archive.cpp.o.d"
  "/work/main/src/metrics/metrics.cpp" "CMakeFiles/hpcz.dir/src/metrics/metrics.cpp.o" "gcc" "CMakeFiles/hpcz.dir/src/metrics/metrics.cpp.o.d"
  "/work/main/src/pipeline/api.cpp" "CMakeFiles/hpcz.dir/src/pipeline/api.cpp.o" "gcc" "CMakeFiles/hpcz.dir/src/pipeline/api.cpp.o.d"
  "/work/main/src/pipeline/c_api.cpp" "CMakeFiles/hpcz.dir/src/pipeline/c_api.cpp.o" "gcc" "CMakeFiles/hpcz.dir/src/pipeline/c_api.cpp.o.d"
  "/work/main/src/pipeline/cpu_backend.cpp" "CMakeFiles/hpcz.dir/src/pipeline/cpu_backend.cpp.o" "gcc" "CMakeFiles/hpcz.dir/src/pipeline/cpu_backend.cpp.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
