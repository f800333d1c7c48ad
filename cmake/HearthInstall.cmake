# Installs the libraries, their public headers and a CMake package, one
# install component per library, so that
#   find_package(hearth CONFIG REQUIRED [COMPONENTS reference sim cuda])
#   target_link_libraries(app PRIVATE hearth::hearth [hearth::sim ...])
# works against the install prefix. `cmake --install <build> --component sim`
# installs one of them; without --component, all.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HEARTH_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hearth)

# hearth_install_component(<component> TARGET <target>...
#                          [DEPENDENCIES <package>...] [COMPONENTS <component>...])
# Installs each <target> with its header file set as install component
# <component>, exports it as hearth::<its EXPORT_NAME>, and writes
# hearth-<component>.cmake, which the package config includes when the
# component is asked for: it loads the hearth COMPONENTS it builds on, finds
# the DEPENDENCIES (every package the target links, PRIVATE ones included:
# a static library's consumer links them too), then imports the target.
function(hearth_install_component component)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "TARGET;DEPENDENCIES;COMPONENTS")
  install(TARGETS ${arg_TARGET} EXPORT hearth-${component}-targets COMPONENT ${component}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT hearth-${component}-targets NAMESPACE hearth:: COMPONENT ${component}
          DESTINATION ${HEARTH_PACKAGE_DIR})
  set(loader "")
  foreach(needed IN LISTS arg_COMPONENTS)
    string(APPEND loader "include(\"\${CMAKE_CURRENT_LIST_DIR}/hearth-${needed}.cmake\")\n")
  endforeach()
  foreach(package IN LISTS arg_DEPENDENCIES)
    string(APPEND loader "find_dependency(${package})\n")
  endforeach()
  string(APPEND loader "include(\"\${CMAKE_CURRENT_LIST_DIR}/hearth-${component}-targets.cmake\")\n")
  set(file ${PROJECT_BINARY_DIR}/hearth-${component}.cmake)
  file(WRITE ${file} "# Component ${component} of the hearth package; included by hearthConfig.cmake.\n"
                     "include(CMakeFindDependencyMacro)\n${loader}")
  install(FILES ${file} COMPONENT ${component} DESTINATION ${HEARTH_PACKAGE_DIR})
endfunction()

# The one table of what each component links from outside Hearth.
hearth_install_component(core TARGET hearth DEPENDENCIES absl nlohmann_json)
hearth_install_component(reference TARGET hearth_reference)
hearth_install_component(sim TARGET hearth_sim DEPENDENCIES tomlplusplus nlohmann_json)
# The job queues: their own threads, hence Threads (the core it links is
# always loaded first by hearthConfig.cmake).
hearth_install_component(jobs TARGET hearth_jobs DEPENDENCIES Threads)
if(HEARTH_WITH_CUDA)
  set(_hearth_cuda_dependencies CUDAToolkit)
endif()
hearth_install_component(cuda TARGET hearth_cuda
                         COMPONENTS reference DEPENDENCIES ${_hearth_cuda_dependencies})
# The C API: the shared library (hearth::c) and the static one
# (hearth::c_static, which links the core). The shared library links Abseil
# privately, but its imported target still names the libraries it needs at
# run time, hence absl.
hearth_install_component(c TARGET hearth_c hearth_c_static DEPENDENCIES absl)
# hearth/c/hearth.h includes hearth/version.h, which the core installs; a
# C-only install needs it too.
install(FILES ${PROJECT_BINARY_DIR}/include/hearth/version.h COMPONENT c
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hearth)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/hearth.pc
              ${PROJECT_BINARY_DIR}/pkgconfig/hearth-static.pc
        COMPONENT c DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The simulator's command line, as bin/hearth-sim (built with the examples).
if(TARGET hearth_sim_cli)
  install(PROGRAMS $<TARGET_FILE:hearth_sim_cli> COMPONENT sim
          DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME hearth-sim)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hearthConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hearthConfig.cmake
  INSTALL_DESTINATION ${HEARTH_PACKAGE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hearthConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hearthConfig.cmake
              ${PROJECT_BINARY_DIR}/hearthConfigVersion.cmake
        COMPONENT core DESTINATION ${HEARTH_PACKAGE_DIR})
