"""`headroom guard --hooks`: the companion wired in without code changes (docs/companion.md).

The guard's sitecustomize (guard/torch_cap.cc, which chains the job's own sitecustomize) calls
install() at interpreter start when HEADROOM_HOOKS=1. It opens the step records (a "start"
record naming this process and the signal it handles, so the guard knows whom to ask) and
puts a finder on sys.meta_path that, once transformers.trainer is imported, wraps
Trainer.__init__ so that every Trainer gets a HeadroomCallback unless it already has one.
A plain loop still has to call headroom.step and headroom.on_save: nothing outside the loop
knows where its steps end or how it saves.
"""
import importlib.abc
import importlib.util
import sys

import headroom


def _patch_trainer(module):
    trainer_cls = getattr(module, "Trainer", None)
    if trainer_cls is None or getattr(trainer_cls, "_headroom_hooked", False):
        return
    from headroom.trainer import HeadroomCallback

    original = trainer_cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        try:
            handler = self.callback_handler
            if not any(isinstance(c, HeadroomCallback) for c in handler.callbacks):
                self.add_callback(HeadroomCallback())
        except Exception as e:  # never break the job over its records
            sys.stderr.write("headroom: --hooks: Trainer callback not added: %s\n" % (e,))

    trainer_cls.__init__ = __init__
    trainer_cls._headroom_hooked = True


class _TrainerFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != "transformers.trainer":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            try:
                _patch_trainer(module)
            except Exception as e:
                sys.stderr.write("headroom: --hooks: %s\n" % (e,))

        spec.loader.exec_module = exec_and_patch
        return spec


def install():
    headroom._state.ensure("hooks")
    if "transformers.trainer" in sys.modules:
        _patch_trainer(sys.modules["transformers.trainer"])
    else:
        sys.meta_path.insert(0, _TrainerFinder())
