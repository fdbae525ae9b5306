# Included by scripts/setup.sh's colcon build (CMAKE_PROJECT_INCLUDE, after each package's
# project()): rosidl_generate_interfaces then runs only the generators that Python needs.
#
# rclpy reaches a message through its C type support (rosidl_generator_c, rosidl_typesupport_c,
# dispatching to rosidl_typesupport_fastrtps_c for rmw_fastrtps_* and to
# rosidl_typesupport_introspection_c for rmw_cyclonedds_cpp, rmw_zenoh_cpp and the dynamic RMWs),
# and rosidl_generator_py's extension module over it; rosidl_generator_type_description gives the
# type hashes. The C++ generators and type supports (rosidl_generator_cpp, rosidl_typesupport_cpp,
# rosidl_typesupport_fastrtps_cpp, rosidl_typesupport_introspection_cpp) serve only C++ nodes, and
# nothing in C++ uses the packages built here. Every generator registers itself as an ament
# extension when its package is found (the ROS wheels' geometry_msgs alone finds all of them), so
# the index cannot leave them out; ament_execute_extensions' EXCLUDE can, at the one point where
# rosidl_generate_interfaces runs them. RBD_ROSIDL_EXCLUDE (a CMake list) overrides the set.
find_package(ament_cmake_core REQUIRED)
if(NOT DEFINED RBD_ROSIDL_EXCLUDE)
  set(RBD_ROSIDL_EXCLUDE
    rosidl_generator_cpp rosidl_typesupport_cpp
    rosidl_typesupport_fastrtps_cpp rosidl_typesupport_introspection_cpp)
endif()
if(NOT _RBD_ROSIDL_FILTER)  # once: a second wrapper would call itself
  set(_RBD_ROSIDL_FILTER TRUE)
  macro(ament_execute_extensions extension_point)
    if("${extension_point}" STREQUAL "rosidl_generate_idl_interfaces")
      message(STATUS "rosidl generators left out (scripts/cmake/python_typesupports_only.cmake): ${RBD_ROSIDL_EXCLUDE}")
      _ament_execute_extensions(${ARGV} EXCLUDE ${RBD_ROSIDL_EXCLUDE})
    else()
      _ament_execute_extensions(${ARGV})
    endif()
  endmacro()
endif()
