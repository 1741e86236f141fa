# `make deb`: a Debian package of what cmake/install.cmake installs, prefix /usr.
# Dependencies come from dpkg-shlibdeps (the libraries the binary links: libc6, libstdc++6,
# libgcc-s1, libfmt, libsqlite3, libre2, libssl3 for libcrypto, libncursesw6/libtinfo6), so they are right on each release
# it is built on (Debian 12, Ubuntu 24.04 on arm64 for DGX OS). NVML and libcuda are loaded
# with dlopen when present and are not dependencies: headroom runs without a GPU.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME headroom)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "keep long ML training jobs alive on unified-memory machines")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Plans, guards, sweeps and watches ML training jobs on machines whose CPU and GPU share one\n"
    "memory pool (NVIDIA DGX Spark, GB10) and on any Linux machine with or without a GPU: will\n"
    "it fit (plan), run it so an OOM kills the job and not the machine (guard), find the\n"
    "largest safe batch (sweep), sample and explain slowdowns (watch, explain), preflight\n"
    "checks (doctor), who holds the pool (ps), a live view (top), Prometheus metrics (export)\n"
    "and an HTML report (report).")
string(REPLACE ";" "" CPACK_DEBIAN_PACKAGE_DESCRIPTION "${CPACK_DEBIAN_PACKAGE_DESCRIPTION}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "headroom developers <headroom-dev@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # headroom_0.1.0_arm64.deb
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, tmux")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
include(CPack)
