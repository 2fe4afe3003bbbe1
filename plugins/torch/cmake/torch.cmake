# Finds the torch of Python_EXECUTABLE through cmake/torch_build_flags.py and defines the imported target
# torch_myriad::torch: its headers, the libraries an extension links (c10, torch, torch_cpu, torch_python)
# and its C++ ABI. Sets TORCH_VERSION and TORCH_HAS_CUDA. torch is not found through its CMake package:
# that one needs the CUDA toolkit for a CUDA torch, and this extension needs none. Nothing is cached, so a
# build folder reused with another Python follows its torch.
#
# Under pip's build isolation the interpreter is the target environment's own, but pip hides that environment's
# packages through PYTHONPATH (a sitecustomize that drops its site-packages). The interpreter run with -E (no
# PYTHON* variables) sees them again, so `pip install ./plugins/torch` builds against the torch it installs
# beside, and never against one the isolated build would download. Build frontends that isolate with another
# interpreter (not pip) need --no-build-isolation, and the error says so.
execute_process(COMMAND "${Python_EXECUTABLE}" "${CMAKE_CURRENT_LIST_DIR}/torch_build_flags.py"
  RESULT_VARIABLE torch_rc OUTPUT_VARIABLE torch_out ERROR_VARIABLE torch_err)
if(NOT torch_rc EQUAL 0)
  execute_process(COMMAND "${Python_EXECUTABLE}" -E "${CMAKE_CURRENT_LIST_DIR}/torch_build_flags.py"
    RESULT_VARIABLE torch_rc_env OUTPUT_VARIABLE torch_out_env ERROR_QUIET)
  if(torch_rc_env EQUAL 0)
    message(STATUS "torch_myriad: an isolated build; using the torch of the environment being installed into")
    set(torch_out "${torch_out_env}")
  else()
    string(STRIP "${torch_err}" torch_err)
    message(FATAL_ERROR "torch_myriad is built against the torch of the environment it installs into, but "
      "${Python_EXECUTABLE} ${torch_err}, with or without the build frontend's environment. Install torch "
      "first into the environment that installs torch_myriad; a frontend that isolates the build with another "
      "interpreter needs isolation off:\n"
      "  pip install scikit-build-core\n  pip install --no-build-isolation ./plugins/torch")
  endif()
endif()
string(REPLACE "\n" ";" torch_lines "${torch_out}")
foreach(line IN LISTS torch_lines)
  if(line MATCHES "^([a-z_0-9]+)=(.*)$")
    set(torch_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()
string(REPLACE "|" ";" torch_include_dirs "${torch_include_dirs}")
string(REPLACE "|" ";" torch_library_dirs "${torch_library_dirs}")
set(TORCH_VERSION ${torch_version})
set(TORCH_HAS_CUDA ${torch_cuda})

add_library(torch_myriad_torch INTERFACE)
add_library(torch_myriad::torch ALIAS torch_myriad_torch)
target_include_directories(torch_myriad_torch SYSTEM INTERFACE ${torch_include_dirs})
target_compile_definitions(torch_myriad_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${torch_cxx11_abi})
foreach(lib c10 torch torch_cpu torch_python)
  find_library(torch_lib_${lib} ${lib} PATHS ${torch_library_dirs} NO_DEFAULT_PATH NO_CACHE REQUIRED)
  target_link_libraries(torch_myriad_torch INTERFACE ${torch_lib_${lib}})
endforeach()
