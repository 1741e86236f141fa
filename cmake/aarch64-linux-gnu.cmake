# Cross-compiling for aarch64 (DGX OS is Ubuntu on arm64) with Debian's cross toolchain and
# multiarch libraries (scripts/install-arm64-deps). Test programs run under qemu-user:
# CMake puts the emulator in front of every target it runs (gtest discovery, the man-page
# generation), and ctest in front of each test.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: arm64 libraries and their CMake packages are in /usr/lib/aarch64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config (RE2) reads the arm64 .pc files, not the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
# The arm64 loader and libc are installed by libc6:arm64 at their native paths, so qemu
# needs no -L prefix.
find_program(HEADROOM_QEMU_AARCH64 qemu-aarch64-static REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${HEADROOM_QEMU_AARCH64})
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
