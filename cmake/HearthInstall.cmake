# Installs the library, its public headers and a CMake package so that
#   find_package(hearth CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE hearth::hearth)
# works against the install prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS hearth EXPORT hearthTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/hearth
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT hearthTargets NAMESPACE hearth::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hearth)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hearthConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hearthConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hearth)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hearthConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hearthConfig.cmake
              ${PROJECT_BINARY_DIR}/hearthConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hearth)
