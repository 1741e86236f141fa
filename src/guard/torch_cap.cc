#include "guard/torch_cap.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace headroom {
namespace {

// The hook. It must never break the job: every failure is one line on stderr.
constexpr const char* kSiteCustomize =
    R"PY(# Installed by `headroom guard --torch-cap` or `--hooks` (docs/guard.md). Sets torch's per-process
# memory fraction once torch is imported, so the allocator raises a catchable
# torch.OutOfMemoryError before the memory pool runs out.
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _chain_existing_sitecustomize():
    path = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def _apply(torch):
    cap = int(os.environ.get("HEADROOM_TORCH_CAP_BYTES", "0"))
    try:
        if cap <= 0 or not torch.cuda.is_available():
            return
        total = torch.cuda.get_device_properties(0).total_memory
        fraction = max(0.01, min(1.0, cap / float(total)))
        for device in range(torch.cuda.device_count()):
            torch.cuda.set_per_process_memory_fraction(fraction, device)
        sys.stderr.write("headroom: torch memory fraction %.4f (%d of %d bytes)\n"
                         % (fraction, cap, total))
    except Exception as e:  # never break the job over its cap
        sys.stderr.write("headroom: --torch-cap not applied: %s\n" % (e,))


class _TorchCapFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_cap(module):
            exec_module(module)
            _apply(module)

        spec.loader.exec_module = exec_and_cap
        return spec


def _companion_hooks():
    # `guard --hooks` (docs/companion.md): step records, the save handler, the Trainer
    # callback. The package from the job's Python path, else from headroom's own.
    if os.environ.get("HEADROOM_HOOKS") != "1":
        return
    try:
        import headroom._hooks
    except ImportError:
        extra = os.environ.get("HEADROOM_COMPANION_DIR")
        if not extra:
            raise
        sys.path.append(extra)
        import headroom._hooks
    headroom._hooks.install()


try:
    _chain_existing_sitecustomize()
except Exception as e:
    sys.stderr.write("headroom: the job's own sitecustomize failed: %s\n" % (e,))
if int(os.environ.get("HEADROOM_TORCH_CAP_BYTES", "0") or "0") > 0:
    sys.meta_path.insert(0, _TorchCapFinder())
try:
    _companion_hooks()
except Exception as e:
    sys.stderr.write("headroom: --hooks not applied: %s\n" % (e,))
)PY";

}  // namespace

void TorchCap::Remove() const {
  std::error_code ec;
  if (!dir.empty()) std::filesystem::remove_all(dir, ec);
}

Result<TorchCap> InstallTorchCap(const std::string& tmp_dir, uint64_t cap_bytes,
                                 const std::string& existing_pythonpath) {
  std::string templ = tmp_dir + "/headroom-torch-cap-XXXXXX";
  if (!::mkdtemp(templ.data())) return ErrnoError("--torch-cap: mkdtemp(" + templ + ")");
  TorchCap cap;
  cap.dir = templ;
  std::ofstream out(cap.dir + "/sitecustomize.py");
  out << kSiteCustomize;
  if (!out) {
    cap.Remove();
    return Error{"--torch-cap: cannot write " + cap.dir + "/sitecustomize.py"};
  }
  cap.env.push_back("PYTHONPATH=" + cap.dir +
                    (existing_pythonpath.empty() ? "" : ":" + existing_pythonpath));
  cap.env.push_back(fmt::format("HEADROOM_TORCH_CAP_BYTES={}", cap_bytes));
  return cap;
}

}  // namespace headroom
