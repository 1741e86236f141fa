// Which versions of a shared library the dynamic loader can find: the directories named by
// etc/ld.so.conf (and the files it includes), plus the loader's default directories, scanned
// for SONAME.MAJOR files. This is what ldconfig builds /etc/ld.so.cache from; reading the
// configuration rather than the binary cache keeps it testable with fixture trees.
//
// For `doctor` G1: libcudart.so.12 and libcudart.so.13 both registered is a classic cause of
// "libcudart.so.12: cannot open shared object file" and of the wrong runtime being loaded.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sys/sysroot.h"

namespace headroom {

// The loader's directories as paths on the target ("/usr/local/cuda/lib64"), in order, each
// once: the directories from etc/ld.so.conf and its includes (a relative include glob is
// taken from the including file's directory, as ldconfig does), then /lib, /usr/lib, /lib64,
// /usr/lib64 and /usr/lib/*-linux-gnu. `include` nesting is followed 8 levels deep and at most 256
// files are read.
std::vector<std::string> LoaderDirectories(const SysRoot& root);

// One file of a library: "/usr/local/cuda-12.8/lib64/libcudart.so.12.8.90".
struct SharedLibFile {
  int major = 0;
  std::string path;  // as on the target
};

// Files named STEM.MAJOR or STEM.MAJOR.MINOR... ("libcudart.so.12", "libcudart.so.12.8.90")
// in `dirs` (paths on the target, read below `root`), grouped by major version. Symlinks
// count: the soname link is what the loader registers.
std::map<int, std::vector<SharedLibFile>> FindLibraryMajors(const SysRoot& root,
                                                            const std::vector<std::string>& dirs,
                                                            std::string_view stem);

// The major version of a file name STEM.MAJOR[.x...]; -1 when it is not one.
int LibraryMajor(std::string_view filename, std::string_view stem);

}  // namespace headroom
